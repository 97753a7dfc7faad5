//! Per-session connections: a server configured with `"isolation": "per-session"` gets a
//! connection (for stdio, a process) of its own for each client session, started on that
//! session's first call to it and stopped when the session ends. What such a connection asks,
//! logs or updates reaches that session alone. A connection that closes is forgotten, and the
//! session's next call starts another.

use mcpclient::codes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use mcpclient::{CallOptions, Event};
use serde_json::{json, Value};
use tokio::sync::{mpsc, OnceCell};

use crate::gateway::Inner;
use crate::session::{level_index, LOG_LEVELS};
use crate::upstream::{self, Running};
use crate::wire::lock;
use crate::{Session, START_TIMEOUT};
use mcpclient::codes::error;

/// A session (by the address of its `Arc`) and a server.
type Key = (usize, usize);

/// The per-session connections, each started once.
#[derive(Default)]
pub(crate) struct Instances(Mutex<HashMap<Key, Arc<OnceCell<Arc<Running>>>>>);

fn key(session: &Arc<Session>, index: usize) -> Key {
    (Arc::as_ptr(session) as usize, index)
}

impl Instances {
    /// The connections of `session` that are running, by server.
    pub(crate) fn of(&self, session: &Arc<Session>) -> Vec<(usize, Arc<Running>)> {
        let owner = Arc::as_ptr(session) as usize;
        lock(&self.0)
            .iter()
            .filter(|((s, _), _)| *s == owner)
            .filter_map(|((_, index), cell)| Some((*index, cell.get()?.clone())))
            .collect()
    }

    /// Takes away (to be closed) every connection of `session`.
    fn take(&self, session: &Arc<Session>) -> Vec<Arc<Running>> {
        let owner = Arc::as_ptr(session) as usize;
        let mut instances = lock(&self.0);
        let keys: Vec<Key> = instances
            .keys()
            .filter(|(s, _)| *s == owner)
            .copied()
            .collect();
        keys.iter()
            .filter_map(|k| instances.remove(k))
            .filter_map(|cell| cell.get().cloned())
            .collect()
    }

    /// Forgets the connection under `key` if it is still `running` (it closed).
    fn forget(&self, key: Key, running: &Arc<Running>) {
        let mut instances = lock(&self.0);
        let same = instances
            .get(&key)
            .and_then(|cell| cell.get())
            .is_some_and(|kept| Arc::ptr_eq(kept, running));
        if same {
            instances.remove(&key);
        }
    }
}

impl Inner {
    /// The connection `session`'s request goes through to server `index`: the shared one, or
    /// for a per-session server the session's own (started now if it has none).
    pub(crate) async fn connection_for(
        self: &Arc<Self>,
        session: &Arc<Session>,
        index: usize,
    ) -> Result<Arc<Running>, Value> {
        if self.upstreams[index].is_shared() {
            return self.running(index).await;
        }
        let cell = lock(&self.instances.0)
            .entry(key(session, index))
            .or_default()
            .clone();
        let running = cell
            .get_or_try_init(|| self.start_instance(session, index))
            .await?;
        Ok(running.clone())
    }

    async fn start_instance(
        self: &Arc<Self>,
        session: &Arc<Session>,
        index: usize,
    ) -> Result<Arc<Running>, Value> {
        let upstream = &self.upstreams[index];
        let mut options = self.upstream_options(index);
        options.handlers =
            upstream::handlers(Arc::downgrade(self), index, Some(Arc::downgrade(session)));
        let name = upstream.name();
        let started =
            tokio::time::timeout(START_TIMEOUT, upstream::start(&upstream.config, options))
                .await
                .unwrap_or_else(|_| Err(format!("did not start within {START_TIMEOUT:?}")));
        let (running, events) = started.map_err(|reason| {
            error(
                codes::INTERNAL_ERROR,
                format!("server '{name}' (this session's own connection) did not start: {reason}"),
            )
        })?;
        let running = Arc::new(running);
        tracing::info!(server = name, "a per-session connection started");
        if let Some(level) = session.log_level() {
            let params = json!({"level": LOG_LEVELS[level]});
            if let Err(error) = running
                .client
                .request("logging/setLevel", Some(params), CallOptions::default())
                .await
            {
                tracing::warn!(server = name, %error, "logging/setLevel failed");
            }
        }
        tokio::spawn(watch(
            Arc::downgrade(self),
            Arc::downgrade(session),
            index,
            Arc::downgrade(&running),
            events,
        ));
        Ok(running)
    }

    /// `session` ended: its own connections are closed.
    pub(crate) fn close_instances(&self, session: &Arc<Session>) {
        for running in self.instances.take(session) {
            tokio::spawn(async move { running.client.close().await });
        }
    }
}

/// What a per-session connection sends goes to its session alone; when it closes, it is
/// forgotten.
async fn watch(
    gateway: Weak<Inner>,
    session: Weak<Session>,
    index: usize,
    running: Weak<Running>,
    mut events: mpsc::Receiver<Event>,
) {
    let owner = session.as_ptr() as usize;
    while let Some(event) = events.recv().await {
        match event {
            Event::Notification(frame) => {
                let Some(session) = session.upgrade() else {
                    continue;
                };
                let Ok(value) = frame.value() else { continue };
                match value["method"].as_str() {
                    Some("notifications/message") => {
                        let level = value["params"]["level"]
                            .as_str()
                            .and_then(level_index)
                            .unwrap_or(0);
                        if session.wants_log(level) {
                            session.send(frame, None);
                        }
                    }
                    Some("notifications/resources/updated") => {
                        let uri = value["params"]["uri"].as_str().unwrap_or_default();
                        if session.subscribed(index, uri) {
                            session.send(frame, None);
                        }
                    }
                    _ => {}
                }
            }
            Event::Closed => break,
            _ => {}
        }
    }
    if let (Some(gateway), Some(running)) = (gateway.upgrade(), running.upgrade()) {
        tracing::info!(
            server = gateway.upstream_name(index),
            "a per-session connection closed"
        );
        gateway.instances.forget((owner, index), &running);
    }
}
