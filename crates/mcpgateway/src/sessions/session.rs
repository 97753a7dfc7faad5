//! One downstream client's session: what it declared at `initialize`, its requests in flight
//! (so that `notifications/cancelled` stops them, and the server's questions during a call reach
//! the client that made it), and the gateway's own requests to it (elicitation, sampling,
//! roots) waiting for their answers.

use mcpclient::codes;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpclient::Frame;

use crate::sessions::principal::Principal;
use crate::wire::lock;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

/// Where frames for the downstream client go. Stdio has one stream for everything. Streamable
/// HTTP has one per request (the stream of the POST that carried it, given to
/// [`crate::gateway::Gateway::receive_replying`], which gets the request's answer and what relates to
/// it) and the session's GET stream for the rest.
pub trait Outbox: Send + Sync + 'static {
    /// Sends a notification or request to the client. `related` is the id (JSON text) of the
    /// client's request it belongs to, if any.
    fn send(&self, frame: Frame, related: Option<&str>);

    /// Ends the client's request `id`: with its response, or with none when it was cancelled.
    fn finish(&self, id: &str, response: Option<Frame>);
}

/// Most requests of one session in flight at once; one more is answered at once with an error.
pub const MAX_REQUESTS_IN_FLIGHT: usize = 256;

/// The log levels of MCP (RFC 5424's), most verbose first.
pub(crate) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Where `level` is in [`LOG_LEVELS`].
pub(crate) fn level_index(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// What the client said about itself in `initialize`.
#[derive(Debug, Clone, Default)]
struct Declared {
    protocol_version: Option<String>,
    capabilities: Value,
}

struct InFlight {
    abort: Option<AbortHandle>,
    /// Where its answer, and what relates to it, goes when not to the session's outbox.
    reply: Option<Arc<dyn Outbox>>,
    /// The server a `tools/call` went to.
    upstream: Option<usize>,
    /// Order of arrival: the newest call to a server is the one its questions belong to.
    seq: u64,
    /// Its place in flight to a shared server ([`crate::upstream::fair`]), handed back when it ends or
    /// when it waits on the client.
    slot: Option<crate::upstream::fair::Slot>,
}

/// A downstream client's session with the gateway.
pub struct Session {
    outbox: Box<dyn Outbox>,
    declared: Mutex<Declared>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    /// Told whenever a request in flight ends.
    ended: tokio::sync::Notify,
    asked: Mutex<HashMap<String, oneshot::Sender<Frame>>>,
    next_id: AtomicU64,
    next_seq: AtomicU64,
    /// The session ended ([`Session::close`]): it takes no request and starts no server, even
    /// one whose body was still arriving when it ended.
    closed: AtomicBool,
    /// The resources this session subscribed to: (server, URI).
    subscriptions: Mutex<HashSet<(usize, String)>>,
    /// The log level it asked for (an index into [`LOG_LEVELS`]).
    log_level: Mutex<Option<usize>>,
    /// Set for the session of a modern (2026-07-28) request: see [`crate::protocol::mrtr`].
    modern: Option<Modern>,
    /// The session's number in this process, for the audit log and traces (an HTTP session's
    /// id is a secret, never written).
    pub(crate) serial: u64,
    /// Who opened it: what it may reach, and whose quotas it counts against.
    principal: Principal,
}

/// The number of the next session.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// What a modern request's session has instead of `initialize`: its `_meta` and where the
/// server's questions go (they become `input_required` answers, never requests to the client).
pub(crate) struct Modern {
    /// The least severe level of log messages it wants; none when it asked for none.
    pub(crate) log_level: Option<usize>,
    pub(crate) questions: tokio::sync::mpsc::UnboundedSender<crate::protocol::question::Question>,
    /// For a `subscriptions/listen` request: the list changes it opted in to.
    pub(crate) listening: Option<Filter>,
}

/// Waits until `ready()` holds, checking again each time `changed` is notified (with
/// `notify_waiters`). The wait is registered before each check, so a notification between the
/// check and the wait is not lost.
pub(crate) async fn wait_until(changed: &tokio::sync::Notify, ready: impl Fn() -> bool) {
    loop {
        let notified = changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if ready() {
            return;
        }
        notified.await;
    }
}

impl Session {
    pub(crate) fn new(outbox: Box<dyn Outbox>, principal: Principal) -> Session {
        Session {
            principal,
            outbox,
            declared: Mutex::default(),
            in_flight: Mutex::default(),
            ended: tokio::sync::Notify::new(),
            asked: Mutex::default(),
            next_id: AtomicU64::new(1),
            next_seq: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            subscriptions: Mutex::default(),
            log_level: Mutex::default(),
            modern: None,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The session of a modern request of `principal` that declared `capabilities`.
    pub(crate) fn modern(
        outbox: Box<dyn Outbox>,
        principal: Principal,
        capabilities: Value,
        modern: Modern,
    ) -> Session {
        let session = Session {
            modern: Some(modern),
            ..Session::new(outbox, principal)
        };
        lock(&session.declared).capabilities = capabilities;
        session
    }

    /// Who opened it.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// Who takes turns at a busy server with this session's requests ([`crate::upstream::fair`]): the
    /// session, for one opened with `initialize`; the client, for a 2026-07-28 request (each
    /// is a session of its own, and a burst of them must not buy a turn each).
    pub(crate) fn turn_key(&self) -> String {
        let client = self.principal.quota_key();
        if self.is_modern() {
            client.to_owned()
        } else {
            format!("{client}#{}", self.serial)
        }
    }

    /// Whether its client opened it with `initialize` (a legacy session, with state of its
    /// own across requests).
    pub(crate) fn is_legacy(&self) -> bool {
        self.modern.is_none() && self.protocol_version().is_some()
    }

    /// Whether this is a modern request's session.
    pub(crate) fn is_modern(&self) -> bool {
        self.modern.is_some()
    }

    /// Whether a log message at `level` goes to this session: at or above the level it chose (a
    /// legacy session that never chose gets everything; a modern one that did not ask, nothing).
    pub(crate) fn wants_log(&self, level: usize) -> bool {
        match &self.modern {
            Some(modern) => modern.log_level.is_some_and(|wanted| level >= wanted),
            None => level >= self.log_level().unwrap_or(0),
        }
    }

    /// Whether this modern request asked for log messages.
    pub(crate) fn asked_for_logs(&self) -> bool {
        self.modern.as_ref().is_some_and(|m| m.log_level.is_some())
    }

    /// The servers this session's requests in flight went to.
    pub(crate) fn upstreams_called(&self) -> Vec<usize> {
        lock(&self.in_flight)
            .values()
            .filter_map(|c| c.upstream)
            .collect()
    }

    /// Whether this `subscriptions/listen` session opted in to `notification`.
    pub(crate) fn listens_to(&self, notification: &str) -> bool {
        self.modern
            .as_ref()
            .and_then(|m| m.listening.as_ref())
            .is_some_and(|filter| filter.wants(notification))
    }

    /// Whether this session is subscribed to `uri` of server `upstream`.
    pub(crate) fn subscribed(&self, upstream: usize, uri: &str) -> bool {
        lock(&self.subscriptions).contains(&(upstream, uri.to_owned()))
    }

    pub(crate) fn set_subscribed(&self, upstream: usize, uri: &str, subscribed: bool) {
        let key = (upstream, uri.to_owned());
        let mut subscriptions = lock(&self.subscriptions);
        if subscribed {
            subscriptions.insert(key);
        } else {
            subscriptions.remove(&key);
        }
    }

    /// The URIs of server `upstream` this session is subscribed to.
    pub(crate) fn subscriptions_to(&self, upstream: usize) -> Vec<String> {
        lock(&self.subscriptions)
            .iter()
            .filter(|(u, _)| *u == upstream)
            .map(|(_, uri)| uri.clone())
            .collect()
    }

    /// Moves the subscriptions to server `from` over to server `to` (a reload changed the
    /// server: `to` is its new version).
    pub(crate) fn move_subscriptions(&self, from: usize, to: usize) {
        let mut subscriptions = lock(&self.subscriptions);
        let moved: Vec<(usize, String)> = subscriptions
            .iter()
            .filter(|(u, _)| *u == from)
            .cloned()
            .collect();
        for (_, uri) in moved {
            subscriptions.remove(&(from, uri.clone()));
            subscriptions.insert((to, uri));
        }
    }

    /// Every subscription, taken away (the session ended).
    pub(crate) fn take_subscriptions(&self) -> Vec<(usize, String)> {
        lock(&self.subscriptions).drain().collect()
    }

    /// The log level this session asked for, if it did.
    pub(crate) fn log_level(&self) -> Option<usize> {
        *lock(&self.log_level)
    }

    /// The session's log level by name, for a modern server (which takes it in each request).
    pub(crate) fn log_level_name(&self) -> Option<String> {
        self.log_level()
            .and_then(|l| LOG_LEVELS.get(l))
            .map(|l| (*l).to_owned())
    }

    pub(crate) fn set_log_level(&self, level: usize) {
        *lock(&self.log_level) = Some(level);
    }

    /// The protocol version agreed at `initialize`, once it is.
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.declared).protocol_version.clone()
    }

    pub(crate) fn initialized(&self, version: &str, capabilities: Value) {
        *lock(&self.declared) = Declared {
            protocol_version: Some(version.to_owned()),
            capabilities,
        };
    }

    /// Whether the client declared `capability` (`elicitation`, `sampling`, `roots`).
    pub(crate) fn declares(&self, capability: &str) -> bool {
        lock(&self.declared)
            .capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }

    /// What a modern server is told this client can answer, in the requests the gateway
    /// passes on for it: the questions the gateway relays (form elicitation, sampling, roots)
    /// that the client declared, so that a server that needs one the client lacks says so
    /// (-32021) instead of asking a question nobody will answer.
    pub(crate) fn relayed_capabilities(&self) -> Value {
        let mut relayed = serde_json::Map::new();
        let declared = &lock(&self.declared).capabilities;
        if let Some(elicitation) = declared.get("elicitation").filter(|c| c.is_object()) {
            // An empty object is form mode (2025-06-18); URL mode is not relayed.
            let form = elicitation.get("form").is_some()
                || elicitation.as_object().is_some_and(|e| e.is_empty());
            if form {
                relayed.insert("elicitation".into(), json!({"form": {}}));
            }
        }
        for capability in ["sampling", "roots"] {
            if declared.get(capability).is_some_and(Value::is_object) {
                relayed.insert(capability.into(), json!({}));
            }
        }
        Value::Object(relayed)
    }

    /// Sends `frame` to the client: on the stream of request `related` while it is in flight
    /// and has one, else through the session's outbox.
    pub(crate) fn send(&self, frame: Frame, related: Option<&str>) {
        let reply = related.and_then(|id| lock(&self.in_flight).get(id)?.reply.clone());
        match reply {
            Some(reply) => reply.send(frame, related),
            None => self.outbox.send(frame, related),
        }
    }

    /// Where request `id` ends: its own stream, or the session's outbox.
    fn finish(&self, id: &str, reply: Option<Arc<dyn Outbox>>, response: Option<Frame>) {
        match reply {
            Some(reply) => reply.finish(id, response),
            None => self.outbox.finish(id, response),
        }
    }

    /// Records a request from the client as in flight, answered on `reply` when given (else
    /// through the session's outbox); why not, when its id is in flight already (its answer
    /// would be ambiguous) or [`MAX_REQUESTS_IN_FLIGHT`] are. This is the one place either
    /// is checked.
    pub(crate) fn begin(&self, id: &str, reply: Option<Arc<dyn Outbox>>) -> Result<(), String> {
        let mut in_flight = lock(&self.in_flight);
        // Read under the lock [`Session::close`] drains under: a request is refused, or drained.
        if self.is_closed() {
            return Err("the session has ended".to_owned());
        }
        if in_flight.contains_key(id) {
            return Err(format!("a request with id {id} is in flight already"));
        }
        if in_flight.len() >= MAX_REQUESTS_IN_FLIGHT {
            return Err(format!(
                "too many requests in flight (at most {MAX_REQUESTS_IN_FLIGHT}); wait for answers"
            ));
        }
        in_flight.insert(
            id.to_owned(),
            InFlight {
                abort: None,
                reply,
                upstream: None,
                seq: self.next_seq.fetch_add(1, Ordering::Relaxed),
                slot: None,
            },
        );
        Ok(())
    }

    /// Answers a request that was never taken in flight (see [`Session::begin`]), on `reply`
    /// when it came with one.
    pub(crate) fn refuse(&self, id: &str, response: Frame, reply: Option<&Arc<dyn Outbox>>) {
        self.finish(id, reply.cloned(), Some(response));
    }

    /// Lets `notifications/cancelled` stop the task answering request `id`, unless it ended.
    pub(crate) fn abortable(&self, id: &str, abort: AbortHandle) {
        if let Some(call) = lock(&self.in_flight).get_mut(id) {
            call.abort = Some(abort);
        }
    }

    /// Records which server the request `id` went to, and the place in flight it holds there.
    pub(crate) fn calls(
        &self,
        id: &str,
        upstream: usize,
        slot: Option<crate::upstream::fair::Slot>,
    ) {
        if let Some(call) = lock(&self.in_flight).get_mut(id) {
            call.upstream = Some(upstream);
            call.slot = slot;
        }
    }

    /// Ends request `id` with its response.
    pub(crate) fn respond(&self, id: &str, response: Frame) {
        let call = lock(&self.in_flight).remove(id);
        if let Some(call) = call {
            self.finish(id, call.reply, Some(response));
            self.ended.notify_waiters();
        }
    }

    /// Waits until fewer than [`MAX_REQUESTS_IN_FLIGHT`] requests are in flight: a front that
    /// can hold its client's requests back (stdio) waits here instead of having them refused.
    pub(crate) async fn room_for_a_request(&self) {
        wait_until(&self.ended, || self.has_room_for_a_request()).await;
    }

    /// How many requests of this session are in flight.
    pub fn requests_in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// Waits until no request of this session is in flight.
    pub(crate) async fn all_answered(&self) {
        wait_until(&self.ended, || self.requests_in_flight() == 0).await;
    }

    /// Whether fewer than [`MAX_REQUESTS_IN_FLIGHT`] requests are in flight.
    pub(crate) fn has_room_for_a_request(&self) -> bool {
        lock(&self.in_flight).len() < MAX_REQUESTS_IN_FLIGHT
    }

    /// The client cancelled request `id`: its task stops (dropping its upstream call, which
    /// tells the server) and no response is sent. Whether it was in flight.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        let call = lock(&self.in_flight).remove(id);
        let Some(call) = call else {
            return false;
        };
        if let Some(abort) = call.abort {
            abort.abort();
        }
        self.finish(id, call.reply, None);
        self.ended.notify_waiters();
        true
    }

    /// The id of the newest request in flight to server `upstream`.
    pub(crate) fn newest_call_to(&self, upstream: usize) -> Option<(u64, String)> {
        lock(&self.in_flight)
            .iter()
            .filter(|(_, c)| c.upstream == Some(upstream))
            .map(|(id, c)| (c.seq, id.clone()))
            .max()
    }

    /// Asks the client something (`elicitation/create`, …) and waits at most `timeout` for the
    /// answer: its `result`, or the error object to pass on.
    pub(crate) async fn ask(
        &self,
        method: &str,
        params: Value,
        related: Option<&str>,
        timeout: Duration,
    ) -> Result<Value, Value> {
        // The call waits on its client now, not on the server: its place in flight goes to
        // the others (it is not taken again; the server already has the call).
        let slot = related.and_then(|id| lock(&self.in_flight).get_mut(id)?.slot.take());
        drop(slot);
        if let Some(modern) = &self.modern {
            return crate::protocol::question::ask(&modern.questions, method, params, timeout)
                .await;
        }
        let id = format!("mcpx-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let key = json!(id).to_string();
        let (answer, answered) = oneshot::channel();
        lock(&self.asked).insert(key.clone(), answer);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(Frame::from_value(&request), related);
        // Tells the client the question is withdrawn if this ends without its answer: timed
        // out, or dropped because the server cancelled its own request.
        let mut withdraw = Withdraw {
            session: self,
            key,
            id,
            related: related.map(str::to_owned),
            armed: true,
        };
        let frame = match tokio::time::timeout(timeout, answered).await {
            Ok(Ok(frame)) => frame,
            Ok(Err(_)) => {
                withdraw.armed = false;
                return Err(codes::error(
                    codes::INTERNAL_ERROR,
                    "the client's session ended before it answered",
                )
                .to_value());
            }
            Err(_) => {
                return Err(codes::error(
                    codes::INTERNAL_ERROR,
                    format!("the client did not answer {method} within {timeout:?}"),
                )
                .to_value())
            }
        };
        withdraw.armed = false;
        let values = mcpclient::count_values(frame.text());
        if values > mcpclient::MAX_ARGUMENT_VALUES {
            return Err(codes::error(
                codes::INTERNAL_ERROR,
                format!(
                    "the client's answer holds about {values} JSON values, over the {} mcpx reads",
                    mcpclient::MAX_ARGUMENT_VALUES
                ),
            )
            .to_value());
        }
        if let Some(duplicate) = schemaval::duplicate_member(frame.text()) {
            return Err(codes::error(
                codes::INVALID_PARAMS,
                format!("the client's answer is not taken: {duplicate}"),
            )
            .to_value());
        }
        let mut answer = frame.value().unwrap_or(Value::Null);
        let error = answer.get("error").cloned();
        match (answer.get_mut("result"), error) {
            (Some(result), None) => Ok(result.take()),
            (None, Some(error)) => Err(error),
            _ => Err(codes::error(
                codes::INTERNAL_ERROR,
                "the client's answer is not a JSON-RPC response",
            )
            .to_value()),
        }
    }

    /// Hands a response from the client to the question it answers; false when none waits.
    pub(crate) fn answered(&self, id: &str, frame: Frame) -> bool {
        match lock(&self.asked).remove(id) {
            Some(waiting) => waiting.send(frame).is_ok(),
            None => false,
        }
    }

    /// Ends every request in flight with an error answer saying `why` (the gateway is
    /// stopping): their tasks stop, and the client learns at once instead of waiting.
    pub(crate) fn stop(&self, why: &str) {
        let calls: Vec<(String, InFlight)> = lock(&self.in_flight).drain().collect();
        for (id, call) in calls {
            if let Some(abort) = call.abort {
                abort.abort();
            }
            let Ok(raw_id) = serde_json::value::RawValue::from_string(id.clone()) else {
                continue;
            };
            let error = codes::error(codes::INTERNAL_ERROR, why).to_raw();
            self.finish(&id, call.reply, Some(Frame::response(&raw_id, Err(&error))));
        }
        self.ended.notify_waiters();
        lock(&self.asked).clear();
    }

    /// Whether the session ended ([`Session::close`]).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Ends everything the session has in flight (its client went away); from now on it takes
    /// no request ([`Session::begin`]) and starts no server of its own.
    pub(crate) fn close(&self) {
        let mut in_flight = lock(&self.in_flight);
        self.closed.store(true, Ordering::SeqCst);
        for (_, call) in in_flight.drain() {
            if let Some(abort) = call.abort {
                abort.abort();
            }
        }
        self.ended.notify_waiters();
        lock(&self.asked).clear();
    }
}

/// Withdraws a question to the client when the wait for its answer ends without one.
struct Withdraw<'a> {
    session: &'a Session,
    key: String,
    id: String,
    related: Option<String>,
    armed: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        lock(&self.session.asked).remove(&self.key);
        if self.armed {
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": self.id, "reason": "the server withdrew the question, or no answer came in time"}});
            self.session
                .send(Frame::from_value(&cancel), self.related.as_deref());
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("declared", &*lock(&self.declared))
            .finish_non_exhaustive()
    }
}

/// The list changes a `subscriptions/listen` listener opted in to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

impl Filter {
    /// Whether `notification` (a list change) is one the listener wants.
    pub(crate) fn wants(&self, notification: &str) -> bool {
        match notification {
            "notifications/tools/list_changed" => self.tools,
            "notifications/prompts/list_changed" => self.prompts,
            "notifications/resources/list_changed" => self.resources,
            _ => false,
        }
    }
}
