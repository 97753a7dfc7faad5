//! The gateway: one MCP server in front of many, whatever front its clients come through.
//!
//! A front (stdio, Streamable HTTP) opens a [`Session`] per client with an [`Outbox`] for what
//! goes back, and hands every frame the client sends to [`Gateway::receive`]. Each request is
//! answered in a task of its own, so a slow server holds up no other request, and a
//! `notifications/cancelled` stops that task, which cancels its upstream call too.
//!
//! `tools/call` is where the schemas are enforced: arguments that violate the tool's
//! `inputSchema` never leave (error -32602 with the flat lines, or an `isError` result), and
//! results are forwarded as the exact JSON text the server sent, an `outputSchema` mismatch
//! being only logged and counted.

use mcpclient::codes;
use mcpclient::ErrorObject;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use mcpclient::{ClientOptions, Decoded, Frame};
use serde_json::json;
use serde_json::value::RawValue;
use tokio::task::AbortHandle;

use crate::observe::ratelog::RateLimitedLog;
use crate::options::GatewayOptions;
use crate::options::UpstreamConfig;
use crate::options::MAX_CONCURRENT_STARTS;
use crate::options::SETTLE_TIMEOUT;
use crate::policy::catalog::{changes, Catalog};
use crate::protocol::modern::Read;
use crate::requests::Params;
use crate::sessions::bridge::Bridge;
use crate::sessions::instances::Instances;
use crate::sessions::principal::Principal;
use crate::sessions::registry::Registry;
use crate::sessions::session::Outbox;
use crate::sessions::session::Session;
use crate::upstream::roster::Roster;
use crate::upstream::{self, State, Upstream};
use crate::wire::{lock, null_id, response};

/// The gateway. Cloning it gives another handle to the same gateway.
#[derive(Clone)]
pub struct Gateway {
    pub(crate) hub: Arc<Hub>,
}

/// What the gateway is: its servers, catalog, sessions and the tables of what is in flight. The
/// request paths (requests, isolated, mrtr, listen, stateless) act on it; [`Gateway`] is the handle.
pub(crate) struct Hub {
    pub(crate) options: GatewayOptions,
    /// Every server it has had, by number; those a reload took out are retired.
    pub(crate) upstreams: Arc<Roster>,
    /// The turns to start a server ([`MAX_CONCURRENT_STARTS`]).
    starts: Arc<tokio::sync::Semaphore>,
    /// Held while a config reload changes the servers, one reload at a time.
    pub(crate) reloading: Mutex<()>,
    catalog: RwLock<Arc<Catalog>>,
    /// The sessions and their calls in flight.
    pub(crate) registry: Arc<Registry>,
    supervisors: Mutex<Vec<AbortHandle>>,
    pub(crate) output_warnings: AtomicU64,
    pub(crate) rejected_calls: AtomicU64,
    /// Every exposed tool name a server has listed, and its server: a call to one whose server
    /// is restarting waits for it instead of being told the tool is unknown.
    pub(crate) known_tools: Mutex<HashMap<String, usize>>,
    /// Refused requests, logged at a bounded rate.
    pub(crate) refusals: RateLimitedLog,
    /// Held while subscriptions and log levels change, so that what each server is told
    /// follows the sessions' wishes in order.
    pub(crate) scoped: tokio::sync::Mutex<()>,
    /// The log level last sent to the servers (an index into the MCP levels).
    pub(crate) applied_level: Mutex<Option<usize>>,
    /// The connections of per-session servers, by session.
    pub(crate) instances: Instances,
    /// Modern clients' calls waiting for their input (MRTR).
    pub(crate) parked: crate::protocol::conversation::Parked,
    /// The exposure plan of the catalog and each session's described tools.
    pub(crate) exposure: crate::policy::exposure::State,
    /// Tool pinning: the lock file and what was reported of it.
    pins: Arc<crate::policy::pinning::Pins>,
}

impl Gateway {
    /// A gateway in front of `upstreams`; servers start at once (stdio ones on first use when
    /// `options.lazy`). Must be called inside a Tokio runtime.
    pub fn start(upstreams: Vec<UpstreamConfig>, options: GatewayOptions) -> Gateway {
        let pins = Arc::new(crate::policy::pinning::Pins::new(options.lock_file.clone()));
        let inner = Arc::new(Hub {
            upstreams: Arc::new(Roster::new(upstreams)),
            starts: Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_STARTS)),
            reloading: Mutex::default(),
            options,
            catalog: RwLock::default(),
            registry: Arc::default(),
            supervisors: Mutex::default(),
            output_warnings: AtomicU64::new(0),
            rejected_calls: AtomicU64::new(0),
            known_tools: Mutex::default(),
            refusals: RateLimitedLog::new("a request refused"),
            scoped: tokio::sync::Mutex::new(()),
            applied_level: Mutex::default(),
            instances: Instances::default(),
            parked: crate::protocol::conversation::Parked::default(),
            exposure: crate::policy::exposure::State::default(),
            pins,
        });
        inner.observe_upstreams();
        for upstream in inner.upstreams.iter() {
            if upstream.starts_eagerly(inner.options.lazy) {
                inner.supervise(upstream);
            }
        }
        let hub = Arc::downgrade(&inner);
        let approvals = crate::policy::pinning::watch(inner.pins.clone(), move || {
            hub.upgrade().map(|hub| hub.changed()).is_some()
        });
        lock(&inner.supervisors).push(tokio::spawn(approvals).abort_handle());
        Gateway { hub: inner }
    }

    /// A new session of `principal`'s client, whose frames go to `outbox`.
    pub fn open_session(&self, outbox: impl Outbox, principal: Principal) -> Arc<Session> {
        let session = Arc::new(Session::new(Box::new(outbox), principal));
        self.hub.registry.register(&session);
        self.hub.observe_sessions();
        session
    }

    /// The client of `session` went away: its requests in flight stop, and the subscriptions
    /// only it had end upstream.
    pub fn close_session(&self, session: &Arc<Session>) {
        self.hub.close_session(session);
    }

    /// Takes one frame from the client of `session`. Requests are answered through the
    /// session's outbox, in tasks of their own; a message that is no request, notification or
    /// response is answered with -32600 (with its id when it has a readable one). A batch is
    /// taken element by element in a session that negotiated 2025-03-26 (each answer on its
    /// own), and refused element by element otherwise.
    pub fn receive(&self, session: &Arc<Session>, message: impl Into<Decoded>) {
        self.take(session, message.into(), None);
    }

    /// Like [`Gateway::receive`], but the answers to the requests in `message`, and what
    /// relates to them (progress, the server's questions), go to `reply` instead of the
    /// session's outbox: the stream of the HTTP POST that carried them.
    pub fn receive_replying(
        &self,
        session: &Arc<Session>,
        message: impl Into<Decoded>,
        reply: Arc<dyn Outbox>,
    ) {
        self.take(session, message.into(), Some(&reply));
    }

    /// A modern request whose params the front has read already (to check its headers against
    /// them): taken as [`Gateway::receive_replying`] takes it, without reading them again.
    pub(crate) fn receive_modern(
        &self,
        session: &Arc<Session>,
        request: (Box<RawValue>, String, Option<Box<RawValue>>),
        read: Read,
        reply: Arc<dyn Outbox>,
    ) {
        let (id, method, params) = request;
        self.request(session, id, method, params, Some(read), Some(&reply));
    }

    fn take(&self, session: &Arc<Session>, message: Decoded, reply: Option<&Arc<dyn Outbox>>) {
        match message {
            Decoded::Request { id, method, params } => {
                self.request(session, id, method, params, None, reply);
            }
            Decoded::Notification { method, params } => {
                self.hub.notice(session, &method, params.as_deref());
            }
            Decoded::Response { id, frame } => {
                if !session.answered(id.get(), frame) {
                    tracing::debug!(
                        id = id.get(),
                        "an answer from the client that nothing waits for"
                    );
                }
            }
            Decoded::Batch(elements) => self.batch(session, elements, reply),
            Decoded::Invalid { id, reason } => {
                let answer =
                    codes::error(codes::INVALID_REQUEST, format!("invalid request: {reason}"));
                match id {
                    Some(id) => session.refuse(id.get(), response(&id, Err(answer)), reply),
                    None => session.send(response(null_id(), Err(answer)), None),
                }
            }
        }
    }

    fn request(
        &self,
        session: &Arc<Session>,
        id: Box<RawValue>,
        method: String,
        params: Option<Box<RawValue>>,
        known: Option<Read>,
        reply: Option<&Arc<dyn Outbox>>,
    ) {
        if let Err(reason) = session.begin(id.get(), reply.cloned()) {
            self.hub.refusals.note(&reason);
            session.refuse(
                id.get(),
                response(&id, Err(codes::error(codes::INVALID_REQUEST, reason))),
                reply,
            );
            return;
        }
        // What the gateway checks is what it forwards: params that name a member twice have
        // two readings, and the server's parser may act on the one nobody checked.
        if let Some(duplicate) = params
            .as_deref()
            .and_then(|p| schemaval::duplicate_member(p.get()))
        {
            self.hub.refusals.note("a request naming a member twice");
            let refused = codes::error(
                codes::INVALID_PARAMS,
                format!("invalid params: {duplicate}"),
            );
            session.respond(id.get(), response(&id, Err(refused)));
            return;
        }
        let inner = self.hub.clone();
        let for_task = session.clone();
        let abort_id = id.get().to_owned();
        // Boxed before it is spawned: a request's future is kilobytes, and the task moves what
        // it is given several times (spawning, storing, finishing); a box moves once.
        let task = tokio::spawn(Box::pin(async move {
            let key = id.get();
            let era = known.or_else(|| crate::protocol::modern::era(&method, params.as_deref()));
            let answer = match era {
                Some(read) => {
                    inner
                        .serve_modern(&for_task, key, &method, params, read)
                        .await
                }
                None => {
                    inner
                        .handle(&for_task, key, &method, Params::Text(params))
                        .await
                }
            };
            for_task.respond(key, response(&id, answer));
        }));
        session.abortable(&abort_id, task.abort_handle());
    }

    /// A batch: taken in a 2025-03-26 session, where MCP allows them; else each request in it
    /// is refused with -32600 (its notifications and responses are dropped, and logged).
    fn batch(
        &self,
        session: &Arc<Session>,
        elements: Vec<Decoded>,
        reply: Option<&Arc<dyn Outbox>>,
    ) {
        let version = session.protocol_version();
        let allowed = version.as_deref() == Some("2025-03-26");
        for element in elements {
            if allowed || matches!(element, Decoded::Invalid { .. }) {
                self.take(session, element, reply);
                continue;
            }
            let reason = format!(
                "invalid request: batches are not part of MCP {} (only 2025-03-26 has them); send each message on its own",
                version.as_deref().unwrap_or("before initialize")
            );
            match element {
                Decoded::Request { id, .. } => {
                    session.refuse(
                        id.get(),
                        response(&id, Err(codes::error(codes::INVALID_REQUEST, reason))),
                        reply,
                    );
                }
                other => {
                    tracing::warn!(
                        method = other.method(),
                        "a notification or response in a refused batch; dropped"
                    )
                }
            }
        }
    }

    /// Results whose `structuredContent` did not match the tool's `outputSchema` (delivered
    /// unchanged) so far.
    pub fn output_warnings(&self) -> u64 {
        self.hub.output_warnings.load(Ordering::Relaxed)
    }

    /// Calls refused so far because their arguments violated the tool's `inputSchema`.
    pub fn rejected_calls(&self) -> u64 {
        self.hub.rejected_calls.load(Ordering::Relaxed)
    }

    /// Tool changes since pinned reported so far (each classified change once while it stays;
    /// see [`crate::options::Pinning`]).
    pub fn pin_changes(&self) -> u64 {
        self.hub.pins.changes()
    }

    /// The gateway is stopping: every session's requests in flight are answered at once with
    /// an error saying so (and their upstream calls cancelled).
    pub fn end_sessions(&self) {
        for session in self.hub.registry.sessions() {
            session.stop("mcpx is shutting down; the request was not completed");
        }
    }

    /// Stops supervising and closes every server at once (stdio children are stopped and
    /// reaped, each within [`mcpclient::STOP_GRACE`] twice).
    pub async fn shutdown(&self) {
        for supervisor in lock(&self.hub.supervisors).drain(..) {
            supervisor.abort();
        }
        let running: Vec<_> = self
            .hub
            .upstreams
            .iter()
            .filter_map(|u| u.take_running())
            .collect();
        futures_util::future::join_all(running.iter().map(|r| r.client.close())).await;
    }
}

impl upstream::Supervisor for Hub {
    fn client_options(&self, index: usize) -> ClientOptions {
        self.upstream_options(index)
    }

    fn learnt(&self, index: usize, discovery: &mcpclient::Discovery) {
        let (Some(memory), Some(upstream)) = (&self.options.eras, self.upstreams.get(index)) else {
            return;
        };
        if let Err(error) = memory.learn(&upstream.config.transport, discovery) {
            tracing::warn!(server = upstream.name(), %error, "the protocol era learnt could not be kept");
        }
    }

    fn unlearnt(&self, index: usize) {
        let (Some(memory), Some(upstream)) = (&self.options.eras, self.upstreams.get(index)) else {
            return;
        };
        if let Err(error) = memory.forget(&upstream.config.transport) {
            tracing::warn!(server = upstream.name(), %error, "the protocol era remembered could not be forgotten");
        }
    }

    fn report(self: Arc<Self>, index: usize, report: upstream::Report) {
        let upstream = &self.upstreams[index];
        if upstream.is_retired() {
            // Its supervisor was stopped on the way; what it started is dropped.
            return;
        }
        self.observe_report(upstream, &report);
        match report {
            upstream::Report::State(state) => self.transition(upstream, state),
            upstream::Report::ListsChanged => self.changed(),
            upstream::Report::Log(frame) => self.deliver_log(index, &frame),
            upstream::Report::Updated(frame) => self.deliver_update(index, &frame),
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        for supervisor in lock(&self.supervisors).drain(..) {
            supervisor.abort();
        }
    }
}

impl Hub {
    pub(crate) fn supervise(self: &Arc<Self>, upstream: &Arc<Upstream>) {
        if !upstream.is_retired() && upstream.claim() {
            let task = tokio::spawn(upstream::supervise(
                upstream.clone(),
                Arc::downgrade(self),
                self.starts.clone(),
            ));
            upstream.supervised_by(task.abort_handle());
            lock(&self.supervisors).push(task.abort_handle());
        }
    }

    pub(crate) fn upstream_options(&self, index: usize) -> ClientOptions {
        ClientOptions {
            client_info: json!({"name": "mcpx-gateway", "version": env!("CARGO_PKG_VERSION")}),
            handlers: self.bridge(index, None).handlers(),
            timeout: self.options.timeout,
            protocol: self
                .upstreams
                .get(index)
                .map(|u| u.protocol(self.options.eras.as_ref()))
                .unwrap_or_default(),
        }
    }

    /// What server `index` asks goes to the gateway's clients (to `session` alone, for a
    /// connection of its own).
    pub(crate) fn bridge(&self, index: usize, session: Option<Weak<Session>>) -> Bridge {
        Bridge {
            registry: self.registry.clone(),
            upstream: index,
            name: self.upstreams[index].name().to_owned(),
            timeout: self.options.timeout,
            observe: self.options.observe.clone(),
            session,
        }
    }

    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A server changed a list: rebuild the catalog and tell the clients which lists changed.
    pub(crate) fn changed(&self) {
        self.rebuild(None);
    }

    /// A server started or stopped. Its new state and the catalog that follows from it are
    /// published together: whoever sees the state sees the catalog.
    pub(crate) fn transition(self: &Arc<Self>, upstream: &Upstream, state: State) {
        let ready = matches!(state, State::Ready(_));
        self.rebuild(Some((upstream, state)));
        if ready {
            let inner = self.clone();
            let index = upstream.index;
            tokio::spawn(async move { inner.reapply(index).await });
        }
    }

    fn rebuild(&self, transition: Option<(&Upstream, State)>) {
        let (old, new) = {
            let mut catalog = self.catalog.write().unwrap_or_else(|p| p.into_inner());
            if let Some((upstream, state)) = transition {
                upstream.set(state);
            }
            let new = Arc::new(Catalog::build(
                &self.upstreams,
                self.options.downstream_dialect,
                &self.pins,
            ));
            let mut known = lock(&self.known_tools);
            for (name, route) in &new.tool_routes {
                known.insert(name.clone(), route.upstream);
            }
            drop(known);
            (std::mem::replace(&mut *catalog, new.clone()), new)
        };
        for method in changes(&old, &new) {
            self.registry.broadcast(&Frame::from_value(
                &json!({"jsonrpc": "2.0", "method": method}),
            ));
        }
    }

    /// `session` ended: its requests in flight stop, its own connections close, and the
    /// subscriptions only it had end upstream (the log level is worked out again if it chose
    /// one).
    pub(crate) fn close_session(self: &Arc<Self>, session: &Arc<Session>) {
        session.close();
        self.close_instances(session);
        self.registry.forget(session);
        self.observe_sessions();
        let gone = session.take_subscriptions();
        if gone.is_empty() && session.log_level().is_none() {
            return;
        }
        let inner = self.clone();
        tokio::spawn(async move { inner.release(gone).await });
    }

    /// The name of server `index`, for logs.
    pub(crate) fn upstream_name(&self, index: usize) -> &str {
        self.upstreams[index].name()
    }

    /// Starts what is not started yet and waits, at most [`SETTLE_TIMEOUT`], for every server
    /// that is starting.
    pub(crate) async fn settle(self: &Arc<Self>) {
        for upstream in self.upstreams.iter() {
            self.supervise(upstream);
        }
        let starting = self
            .upstreams
            .iter()
            .filter(|u| matches!(u.state(), State::Idle | State::Starting));
        futures_util::future::join_all(starting.map(|u| u.settled(SETTLE_TIMEOUT))).await;
    }

    /// The running server `index`: waiting for it (at most its start timeout) if it is
    /// starting, and (at most [`SETTLE_TIMEOUT`]) if it is down and about to be restarted;
    /// else the error naming it and its state. A server whose connection has closed is down,
    /// whether or not its supervisor has said so yet.
    pub(crate) async fn running(
        &self,
        index: usize,
    ) -> Result<Arc<upstream::Running>, ErrorObject> {
        let upstream = &self.upstreams[index];
        let open = |running: &Arc<upstream::Running>| !running.client.is_closed();
        if let Some(running) = upstream.running().filter(open) {
            return Ok(running);
        }
        let state = match upstream.state() {
            // A reload took it out: it comes back under another number, if at all.
            state @ State::Down(_) if upstream.is_retired() => state,
            State::Down(_) | State::Ready(_) => upstream.ready_within(SETTLE_TIMEOUT).await,
            _ => upstream.settled(upstream.config.start_timeout).await,
        };
        match state {
            State::Ready(running) if open(&running) => Ok(running),
            _ => Err(codes::error(
                codes::INTERNAL_ERROR,
                self.options.redactor.redact(&upstream.unavailable()),
            )),
        }
    }
}
