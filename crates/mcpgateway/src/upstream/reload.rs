//! A new list of servers while the gateway runs (a config reload): servers added are started,
//! servers removed are stopped, servers whose entry changed are restarted with the new entry;
//! the others, and every client session, go on untouched.
//!
//! The design keeps the change out of the request paths. Every place that holds a server holds
//! its number, and numbers are never reused ([`crate::upstream::roster`]): a reload retires the old
//! entries and appends new ones, so no route, session, subscription or call in flight can
//! find another server under its number. A changed server is a retired old entry and a new
//! one under the same name; what points at the old number by name (the tools the gateway knows,
//! the sessions' resource subscriptions) is moved to the new number, so a call to one of its
//! tools while it restarts waits for it, as after a crash, and its subscriptions are made again
//! when it is up. The catalog is rebuilt from the servers in service, and the clients are told
//! which lists changed (`notifications/tools/list_changed` and the prompt and resource ones),
//! once for the withdrawal and again when each new server has listed.
//!
//! A retired server's connections (its shared one and every session's own) are not cut: calls
//! in flight on them finish (each is bounded by the call timeout), and the connection is closed
//! once none is left, or after the call timeout at the latest.
//!
//! Options of the gateway itself (the front, its address, the policies) are not reloaded: the
//! caller compares them and says that they need a restart.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crate::gateway::Gateway;
use crate::gateway::Hub;
use crate::options::UpstreamConfig;
use crate::upstream::Running;
use crate::wire::lock;

/// How often a retired connection is checked for calls still in flight.
pub const DRAIN_POLL: Duration = Duration::from_millis(50);

/// What a reload changed: the servers' names, in config order (removed ones in their old
/// order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// Servers new to the config: started (stdio ones on first use when the gateway is lazy).
    pub added: Vec<String>,
    /// Servers no longer in the config: stopped once their calls in flight finished.
    pub removed: Vec<String>,
    /// Servers whose entry changed: the old version stopped like a removed one, the new one
    /// started.
    pub changed: Vec<String>,
    /// Servers left as they were.
    pub unchanged: usize,
}

impl Reloaded {
    /// Whether the reload changed no server.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl Gateway {
    /// Serves `upstreams` from now on, in place of the servers it serves (see the module
    /// documentation of `reload`): what changed, by name. The caller has checked the list
    /// (names unique, prefixes apart) as for [`Gateway::start`].
    pub fn reload(&self, upstreams: Vec<UpstreamConfig>) -> Reloaded {
        self.hub.reload(upstreams)
    }
}

impl Hub {
    fn reload(self: &Arc<Self>, configs: Vec<UpstreamConfig>) -> Reloaded {
        let _one_at_a_time = lock(&self.reloading);
        let mut reloaded = Reloaded::default();
        let wanted: HashSet<&str> = configs.iter().map(|c| c.name.as_str()).collect();
        let mut retiring = Vec::new();
        for old in self.upstreams.iter() {
            if !wanted.contains(old.name()) {
                reloaded.removed.push(old.name().to_owned());
                retiring.push((old.clone(), "removed from the config"));
            }
        }
        let mut fresh = Vec::new();
        for config in configs {
            match self.upstreams.named(&config.name) {
                Some(old) if old.config == config => reloaded.unchanged += 1,
                Some(old) => {
                    reloaded.changed.push(config.name.clone());
                    retiring.push((old.clone(), "its config entry changed"));
                    fresh.push((Some(old.index), config));
                }
                None => {
                    reloaded.added.push(config.name.clone());
                    fresh.push((None, config));
                }
            }
        }
        let mut connections = Vec::new();
        for (old, why) in &retiring {
            connections.extend(old.retire(why));
            connections.extend(self.instances.take_server(old.index));
            tracing::info!(server = old.name(), why, "server retired");
        }
        let mut started = Vec::new();
        for (old, config) in fresh {
            let new = self.upstreams.add(config);
            if let Some(old) = old {
                self.renumber(old, new.index);
            }
            started.push(new);
        }
        lock(&self.known_tools).retain(|_, index| !self.upstreams[*index].is_retired());
        self.changed();
        for upstream in &started {
            if upstream.starts_eagerly(self.options.lazy) {
                self.supervise(upstream);
            }
        }
        let within = self.options.timeout;
        for running in connections {
            tokio::spawn(close_when_drained(running, within));
        }
        reloaded
    }

    /// What points at server `from` by name now points at `to`, its new version: the tools
    /// known to be its, and the sessions' subscriptions.
    fn renumber(&self, from: usize, to: usize) {
        for index in lock(&self.known_tools).values_mut() {
            if *index == from {
                *index = to;
            }
        }
        for session in self.registry.sessions() {
            session.move_subscriptions(from, to);
        }
    }
}

/// Closes a retired connection once no call holds it any more, or after `within` (the call
/// timeout: no call on it can last longer).
async fn close_when_drained(running: Arc<Running>, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    while Arc::strong_count(&running) > 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(DRAIN_POLL).await;
    }
    running.client.close().await;
}
