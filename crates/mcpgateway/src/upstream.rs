//! One upstream server under supervision: started at once (or on first use, `lazy`), listed,
//! watched, and restarted with backoff when it fails to start or crashes.
//!
//! A server's state is a `watch` value, so requests can wait for a server that is starting and
//! fail at once for one that is down. While a server is down its tools, resources and prompts
//! are withdrawn (the gateway tells its clients the lists changed), calls in flight to it end
//! with an error as soon as its connection closes, and nothing else is affected.
//!
//! The layer beside it: the servers by number ([`roster`]), fair turns at a busy server
//! ([`fair`]), a config reload changing the set of servers ([`reload`]), and what health and
//! readiness say of them ([`health`]).

pub(crate) mod fair;
pub(crate) mod health;
pub(crate) mod reload;
pub(crate) mod roster;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use mcpclient::{
    Client, ClientError, ClientOptions, ConnectError, Connected, Discovery, Era, Event, Frame,
    Listing, Protocol, Reach, Spawn, StderrTail,
};
use serde_json::Value;
use tokio::sync::{mpsc, watch, Semaphore};

use crate::options::UpstreamConfig;
use crate::options::HEALTH_INTERVAL;
use crate::options::INITIAL_BACKOFF;
use crate::options::MAX_BACKOFF;
use crate::options::PROBE_TIMEOUT;
use crate::options::STABLE_AFTER;
use crate::options::STDERR_TAIL_LINES;

/// Where a server is in its life.
#[derive(Clone)]
pub(crate) enum State {
    /// Not started yet (lazy, before first use).
    Idle,
    /// Being started, for the first time or again.
    Starting,
    /// Running: its client and what it offers.
    Ready(Arc<Running>),
    /// Failed to start, or stopped; started again after a backoff.
    Down(String),
}

/// A running server.
pub(crate) struct Running {
    pub(crate) client: Client,
    pub(crate) lists: Mutex<Lists>,
}

/// The longest a modern request's result waits for the log messages its server sent before
/// it ([`Running::caught_up`]).
pub(crate) const CATCH_UP_WAIT: Duration = Duration::from_secs(1);

impl Running {
    /// Waits (at most [`CATCH_UP_WAIT`]) until what the server sent before now has been acted
    /// on: a response overtakes the notifications sent before it (they go through the event
    /// queue), and a request that asked for log messages gets them before its result.
    /// The loop acting on them ([`watch_events`]) takes the client's events in order and
    /// drops the [`Event::Mark`] when it reaches it.
    pub(crate) async fn caught_up(&self) {
        let _ = tokio::time::timeout(CATCH_UP_WAIT, self.client.caught_up()).await;
    }
}

/// What a server offers besides tools (the client keeps the tools), as listed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lists {
    pub(crate) resources: Vec<Value>,
    pub(crate) templates: Vec<Value>,
    pub(crate) prompts: Vec<Value>,
}

pub(crate) struct Upstream {
    pub(crate) index: usize,
    pub(crate) config: UpstreamConfig,
    state: watch::Sender<State>,
    /// When the state last changed.
    since: Mutex<Instant>,
    /// Told when an exchange with the (HTTP) server failed: the supervisor probes it.
    pub(crate) failed: tokio::sync::Notify,
    supervised: AtomicBool,
    /// Its supervisor, stopped when a config reload retires the server.
    supervisor: Mutex<Option<tokio::task::AbortHandle>>,
    /// Taken out of service by a config reload (see [`crate::upstream::roster`]).
    retired: AtomicBool,
    /// Its turns between sessions (shared connection).
    pub(crate) admission: Arc<crate::upstream::fair::Admission>,
    /// It has been running or down at least once: its first start is over, one way or the
    /// other (readiness, see `health`).
    settled_once: AtomicBool,
    /// The era its last start spoke: every later start speaks it at once.
    learnt: Mutex<Option<Era>>,
}

impl Upstream {
    pub(crate) fn new(index: usize, config: UpstreamConfig) -> Upstream {
        Upstream {
            index,
            config,
            state: watch::Sender::new(State::Idle),
            since: Mutex::new(Instant::now()),
            failed: tokio::sync::Notify::new(),
            supervised: AtomicBool::new(false),
            supervisor: Mutex::default(),
            retired: AtomicBool::new(false),
            admission: Arc::default(),
            settled_once: AtomicBool::new(false),
            learnt: Mutex::new(None),
        }
    }

    /// The protocol to start it with: as configured, unless the config leaves it to the probe
    /// and an era is known: the one its last start in this run spoke, else the one `memory`
    /// keeps from an earlier run ([`Protocol::Remembered`]).
    pub(crate) fn protocol(&self, memory: Option<&servercache::EraMemory>) -> Protocol {
        if self.config.protocol != Protocol::Auto {
            return self.config.protocol;
        }
        let learnt = *self.learnt.lock().unwrap_or_else(|p| p.into_inner());
        match (learnt, memory) {
            (Some(era), _) => Protocol::Remembered(era),
            (None, Some(memory)) => memory.protocol_for(&self.config.transport, Protocol::Auto),
            (None, None) => Protocol::Auto,
        }
    }

    /// Whether a config reload took the server out of service.
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::SeqCst)
    }

    /// Keeps the handle of the server's supervisor, to stop it when the server is retired.
    pub(crate) fn supervised_by(&self, task: tokio::task::AbortHandle) {
        *self.supervisor.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    /// Takes the server out of service for good (`why`: a reload removed or changed it): its
    /// supervisor stops and it is down; its running connection, if any, is returned to be
    /// closed once its calls in flight have finished.
    pub(crate) fn retire(&self, why: &str) -> Option<Arc<Running>> {
        self.retired.store(true, Ordering::SeqCst);
        let supervisor = self
            .supervisor
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(task) = supervisor {
            task.abort();
        }
        let running = self.running();
        self.set(State::Down(why.to_owned()));
        running
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    /// Whether the sessions share this server's connection. A per-session server's supervised
    /// connection only lists what it offers: what it logs or updates is nobody's, and the
    /// sessions' subscriptions and log levels go to their own connections.
    pub(crate) fn is_shared(&self) -> bool {
        self.config.isolation == crate::options::Isolation::Shared
    }

    pub(crate) fn state(&self) -> State {
        self.state.borrow().clone()
    }

    pub(crate) fn running(&self) -> Option<Arc<Running>> {
        match &*self.state.borrow() {
            State::Ready(running) => Some(running.clone()),
            _ => None,
        }
    }

    /// Whether the gateway starts this server before anyone asks for it.
    pub(crate) fn starts_eagerly(&self, lazy: bool) -> bool {
        !lazy || matches!(self.config.transport, Reach::Http(_))
    }

    /// Whether its first start is over: it ran, or failed (its start timeout included).
    pub(crate) fn has_settled(&self) -> bool {
        self.settled_once.load(Ordering::Relaxed)
    }

    /// Starts the supervisor unless it runs already; true when this call started it.
    pub(crate) fn claim(&self) -> bool {
        !self.supervised.swap(true, Ordering::SeqCst)
    }

    /// Waits (at most `within`) until the server is running or down, and returns the state.
    pub(crate) async fn settled(&self, within: Duration) -> State {
        let mut states = self.state.subscribe();
        let wait = async {
            let settled = states
                .wait_for(|s| matches!(s, State::Ready(_) | State::Down(_)))
                .await;
            settled.map(|s| s.clone())
        };
        match tokio::time::timeout(within, wait).await {
            Ok(Ok(state)) => state,
            _ => self.state(),
        }
    }

    /// Waits (at most `within`) until the server is running on an open connection, and
    /// returns the state.
    pub(crate) async fn ready_within(&self, within: Duration) -> State {
        let mut states = self.state.subscribe();
        let wait = async {
            let ready = states
                .wait_for(|s| matches!(s, State::Ready(r) if !r.client.is_closed()))
                .await;
            ready.map(|s| s.clone())
        };
        match tokio::time::timeout(within, wait).await {
            Ok(Ok(state)) => state,
            _ => self.state(),
        }
    }

    /// Why the server cannot take a request now, for the error its caller gets: its name, its
    /// state and since when, and its last error.
    pub(crate) fn unavailable(&self) -> String {
        let since = self
            .since
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed();
        let since = format!("{:.1} s", since.as_secs_f64());
        match self.state() {
            State::Down(reason) if self.is_retired() => {
                format!("server '{}' is no longer served: {reason}", self.name())
            }
            State::Down(reason) => format!(
                "server '{}' is down (restarting with backoff; down for {since}; last error: {reason})",
                self.name()
            ),
            State::Idle => format!("server '{}' has not started", self.name()),
            State::Starting => format!("server '{}' is starting (for {since})", self.name()),
            State::Ready(running) if running.client.is_closed() => format!(
                "server '{}' closed its connection (being stopped, then restarted with backoff)",
                self.name()
            ),
            State::Ready(_) => format!("server '{}' is running", self.name()),
        }
    }

    pub(crate) fn set(&self, state: State) {
        if matches!(state, State::Ready(_) | State::Down(_)) {
            self.settled_once.store(true, Ordering::Relaxed);
        }
        *self.since.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        self.state.send_replace(state);
    }

    /// Takes the running client away (at shutdown), leaving the server down.
    pub(crate) fn take_running(&self) -> Option<Arc<Running>> {
        match self
            .state
            .send_replace(State::Down("the gateway stopped".to_owned()))
        {
            State::Ready(running) => Some(running),
            _ => None,
        }
    }
}

/// What a supervised server tells the layer above, and what it needs of it. The gateway
/// implements it; supervision holds it weakly and never names it, so nothing here reaches up.
pub(crate) trait Supervisor: Send + Sync + 'static {
    /// The client options for a new connection to server `index`.
    fn client_options(&self, index: usize) -> ClientOptions;
    /// Server `index` started speaking the era `discovery` says: kept for later runs when
    /// it was learnt (probed, or fell back).
    fn learnt(&self, index: usize, discovery: &Discovery);
    /// A start of server `index` that spoke a remembered era failed: forgotten, so that the
    /// next one (in this run or a later one) probes again.
    fn unlearnt(&self, index: usize);
    /// Something happened to server `index`.
    fn report(self: Arc<Self>, index: usize, report: Report);
}

/// What happened to a supervised server.
pub(crate) enum Report {
    /// It started (`Ready`) or stopped (`Down`).
    State(State),
    /// Its tools, resources or prompts changed (relisted already).
    ListsChanged,
    /// A log message from a shared connection.
    Log(Frame),
    /// `notifications/resources/updated` from a shared connection.
    Updated(Frame),
}

/// Runs `upstream` until the gateway is gone: start (when one of the `starts` turns is free),
/// serve, and after a failure or crash wait (with jitter) and start again.
pub(crate) async fn supervise<S: Supervisor>(
    upstream: Arc<Upstream>,
    gateway: Weak<S>,
    starts: Arc<Semaphore>,
) {
    let mut backoff = INITIAL_BACKOFF;
    loop {
        upstream.set(State::Starting);
        let Some(options) = gateway.upgrade().map(|g| g.client_options(upstream.index)) else {
            return;
        };
        let remembered = options.protocol;
        let started = {
            // The semaphore is never closed; were it, starting without a turn is still right.
            let _turn = starts.acquire().await;
            start(&upstream.config, options).await
        };
        let (reason, stderr) = match started {
            Ok((running, events)) => {
                let since = Instant::now();
                let running = Arc::new(running);
                let found = running.client.discovery();
                *upstream.learnt.lock().unwrap_or_else(|p| p.into_inner()) = Some(found.era);
                tracing::info!(
                    server = upstream.name(),
                    protocol = running.client.protocol_version(),
                    era = found.era.name(),
                    why = found.why.describe(),
                    evidence = %found.evidence,
                    "server running"
                );
                match gateway.upgrade() {
                    Some(g) => {
                        g.learnt(upstream.index, &found);
                        g.report(upstream.index, Report::State(State::Ready(running.clone())))
                    }
                    None => return,
                }
                let reason = watch_events(&upstream, &running, events, &gateway).await;
                drop(running);
                if since.elapsed() >= STABLE_AFTER {
                    backoff = INITIAL_BACKOFF;
                }
                (reason, Vec::new())
            }
            Err(failure) => {
                if let Protocol::Remembered(_) = remembered {
                    *upstream.learnt.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    if let Some(g) = gateway.upgrade() {
                        g.unlearnt(upstream.index);
                    }
                }
                let stderr = failure.stderr_tail().await;
                (failure.reason, stderr)
            }
        };
        let retry_in = jittered(backoff);
        let server = upstream.name();
        if stderr.is_empty() {
            tracing::warn!(server, %reason, ?retry_in, ?backoff, "server down");
        } else {
            tracing::warn!(server, %reason, ?stderr, ?retry_in, ?backoff, "server down");
        }
        match gateway.upgrade() {
            Some(g) => g.report(upstream.index, Report::State(State::Down(reason))),
            None => return,
        }
        tokio::time::sleep(retry_in).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// `wait` less a random part of up to half of it ("equal jitter"): servers that failed
/// together (a network outage, a machine too busy for all of them) come back spread out
/// rather than all at once again.
fn jittered(wait: Duration) -> Duration {
    // Without randomness (it never fails on Linux) the wait is the plain one.
    let random = getrandom::u64().unwrap_or(0);
    let fraction = (random >> 11) as f64 / (1u64 << 53) as f64;
    wait.mul_f64(1.0 - fraction / 2.0)
}

/// Why a server did not start: what went wrong, and the stderr of a stdio server.
pub(crate) struct StartFailure {
    pub(crate) reason: String,
    stderr: Option<StderrTail>,
}

impl StartFailure {
    fn new(reason: impl std::fmt::Display, stderr: Option<StderrTail>) -> StartFailure {
        StartFailure {
            reason: reason.to_string(),
            stderr,
        }
    }

    /// The last [`STDERR_TAIL_LINES`] the server wrote to stderr (none for an HTTP server).
    pub(crate) async fn stderr_tail(&self) -> Vec<String> {
        match &self.stderr {
            Some(tail) => tail.settled(STDERR_TAIL_LINES).await,
            None => Vec::new(),
        }
    }
}

/// Connects and lists the tools (see [`mcpclient::connect_listing`]: a start that fails after
/// the `server/discover` probe is tried again without it, with a start timeout of its own),
/// then the rest of what the server offers, all within the server's start timeout.
pub(crate) async fn start(
    config: &UpstreamConfig,
    options: ClientOptions,
) -> Result<(Running, mpsc::Receiver<Event>), StartFailure> {
    let within = config.start_timeout;
    let deadline = tokio::time::Instant::now() + within;
    let late = || {
        format!(
            "did not start within {} s (its startupTimeout)",
            within.as_secs_f64()
        )
    };
    let connected = mcpclient::connect_listing(
        &config.transport,
        options,
        Spawn::Grouped,
        within,
        Listing::ToolsIfOffered,
    )
    .await;
    let Connected {
        client,
        events,
        stderr,
    } = match connected {
        Ok(connected) => connected,
        Err(ConnectError::Timeout { stderr, .. }) => return Err(StartFailure::new(late(), stderr)),
        Err(error) => {
            let stderr = error.stderr().cloned();
            return Err(StartFailure::new(error, stderr));
        }
    };
    let deadline = match client.discovery().why {
        mcpclient::Why::FellBack => tokio::time::Instant::now() + within,
        _ => deadline,
    };
    let lists = match tokio::time::timeout_at(deadline, list_others(&client)).await {
        Ok(lists) => lists,
        Err(_) => return Err(StartFailure::new(late(), stderr)),
    };
    let running = Running {
        client,
        lists: Mutex::new(lists),
    };
    Ok((running, events))
}

fn offers(client: &Client, capability: &str) -> bool {
    client.server_capabilities().get(capability).is_some()
}

/// Resources, resource templates and prompts, as far as the server offers them. A list that
/// fails is logged and left empty: the server's tools still work.
async fn list_others(client: &Client) -> Lists {
    let mut lists = Lists::default();
    if offers(client, "resources") {
        lists.resources = listed(client, "resources/list", "resources").await;
        lists.templates = listed(client, "resources/templates/list", "resourceTemplates").await;
    }
    if offers(client, "prompts") {
        lists.prompts = listed(client, "prompts/list", "prompts").await;
    }
    lists
}

async fn listed(client: &Client, method: &str, key: &str) -> Vec<Value> {
    client
        .list_all(method, key)
        .await
        .unwrap_or_else(|error: ClientError| {
            tracing::warn!(method, %error, "listing failed; treated as empty");
            Vec::new()
        })
}

/// Whether an HTTP server answers a `ping` within [`PROBE_TIMEOUT`]; why not, if it does not.
async fn probe(running: &Running) -> Result<(), String> {
    let options = mcpclient::CallOptions {
        timeout: Some(PROBE_TIMEOUT),
        ..mcpclient::CallOptions::default()
    };
    match running.client.request("ping", None, options).await {
        Ok(_) => Ok(()),
        // A server that does not know ping is there all the same.
        Err(ClientError::Rpc(mcpclient::RpcError::Remote { .. })) => Ok(()),
        Err(error) => Err(format!("did not answer a ping: {error}")),
    }
}

/// Acts on what the running server sends until its connection closes (or, for an HTTP server,
/// until it stops answering: probed every [`HEALTH_INTERVAL`], and at once after a failed
/// exchange); returns why it stopped.
async fn watch_events<S: Supervisor>(
    upstream: &Upstream,
    running: &Arc<Running>,
    mut events: mpsc::Receiver<Event>,
    gateway: &Weak<S>,
) -> String {
    let http = matches!(upstream.config.transport, Reach::Http(_));
    let mut health = tokio::time::interval(HEALTH_INTERVAL);
    health.tick().await;
    loop {
        let event = tokio::select! {
            event = events.recv() => match event {
                Some(event) => event,
                None => break,
            },
            _ = health.tick(), if http => {
                if let Err(reason) = probe(running).await {
                    return reason;
                }
                continue;
            }
            () = upstream.failed.notified(), if http => {
                if let Err(reason) = probe(running).await {
                    return reason;
                }
                continue;
            }
        };
        let Some(hub) = gateway.upgrade() else {
            break;
        };
        match event {
            Event::ToolsRelisted => hub.report(upstream.index, Report::ListsChanged),
            Event::Notification(frame) => {
                let method = frame
                    .head()
                    .and_then(|h| h.method.map(|m| m.into_owned()))
                    .unwrap_or_default();
                match method.as_str() {
                    "notifications/resources/list_changed"
                    | "notifications/prompts/list_changed" => {
                        let running = Arc::downgrade(running);
                        let index = upstream.index;
                        tokio::spawn(async move {
                            let Some(running) = running.upgrade() else {
                                return;
                            };
                            let lists = list_others(&running.client).await;
                            *running.lists.lock().unwrap_or_else(|p| p.into_inner()) = lists;
                            hub.report(index, Report::ListsChanged);
                        });
                    }
                    "notifications/message" if upstream.is_shared() => {
                        hub.report(upstream.index, Report::Log(frame))
                    }
                    "notifications/resources/updated" if upstream.is_shared() => {
                        hub.report(upstream.index, Report::Updated(frame));
                    }
                    _ => {}
                }
            }
            Event::TransportError(error) => {
                tracing::warn!(server = upstream.name(), %error, "transport");
                if http {
                    upstream.failed.notify_one();
                }
            }
            Event::Unmatched(frame) => {
                // A late answer after a timeout, a duplicate, or an invented id: only the id
                // is logged, since the answer may carry anything.
                let id = frame.head().and_then(|h| h.id_text().map(str::to_owned));
                tracing::warn!(
                    server = upstream.name(),
                    id = %id.as_deref().unwrap_or("none"),
                    "answer to no pending request; dropped"
                );
            }
            Event::Closed => return "the connection closed".to_owned(),
            // Everything before it was acted on: its waiter learns so as it is dropped.
            Event::Mark(mark) => drop(mark),
            _ => {}
        }
    }
    "the gateway stopped".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_takes_a_random_part_of_up_to_half_off() {
        let wait = Duration::from_secs(8);
        let waits: Vec<Duration> = (0..100).map(|_| jittered(wait)).collect();
        assert!(
            waits.iter().all(|w| *w >= wait / 2 && *w <= wait),
            "{waits:?}"
        );
        assert!(waits.iter().any(|w| *w != waits[0]), "{waits:?}");
    }
}
