//! JSON-RPC over a transport: requests matched to responses by id, each with a timeout.
//!
//! The transport's two halves are driven by two tasks: a writer that takes frames from a queue,
//! and a reader that routes what arrives. Neither ever waits for the other, so a peer that
//! blocks writing its answers while mcpx writes it a long request still gets read (a single
//! task awaiting the write would stop reading, and both sides would wait forever). Calls hand
//! the writer frames through a channel and wait on a one-shot for the response with their id. A call that times out, or whose future is dropped,
//! is withdrawn and the peer is sent `notifications/cancelled`; an answer that arrives later is
//! not delivered to anyone else's call but reported as [`Event::Unmatched`].

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::{to_raw_value, RawValue};
use serde_json::{json, Value};
use thiserror::Error;
use tokio::sync::{mpsc, oneshot, watch};

use crate::codes::ErrorObject;
use crate::frame::{null, Members, Span, Wire};
use crate::lines::gather;
use crate::{Frame, FrameSink, FrameSource, Received, Transport, TransportError};

/// Frames waiting to be written to the transport; a full queue makes callers wait.
pub const MAX_QUEUED_FRAMES: usize = 256;

/// Events waiting for the application. A full queue stops reading from the transport until
/// the application catches up (backpressure, as on a socket), so the receiver must be read.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// What arrives from the peer that is not the answer to one of our calls.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A notification (a frame with `method` and no `id`).
    Notification(Frame),
    /// A request from the peer (`method` and `id`), to be answered with [`Connection::send`].
    Request {
        /// The request.
        frame: Frame,
        /// The tag of our call it came with (see [`Connection::request_tagged`]), where the
        /// transport tells which call that is (Streamable HTTP: it arrived on the call's
        /// response stream) and the call is still waiting.
        during: Option<String>,
    },
    /// A response whose id no call is waiting for: late, duplicated, or invented.
    Unmatched(Frame),
    /// Something that is not a frame, or an exchange of the transport that failed without
    /// being anyone's call; the connection goes on.
    TransportError(TransportError),
    /// The application's queue was full and this many events were dropped (the client did
    /// what it must with them regardless).
    Lagged {
        /// How many.
        dropped: u64,
    },
    /// The tools were listed and compiled again after the server said they changed; the
    /// client's tool list is the new one.
    ToolsRelisted,
    /// The peer closed the connection; nothing more will arrive.
    Closed,
    /// A place in the queue, put there by [`Connection::caught_up`] behind every event that
    /// came before it: the application drops it once it has acted on those (by taking events
    /// in order, dropping it when it comes).
    Mark(Mark),
}

/// See [`Event::Mark`]: whoever waits on it learns it was reached when it is dropped.
#[derive(Debug)]
pub struct Mark {
    _reached: oneshot::Sender<()>,
}

/// Why a call has no result.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RpcError {
    /// No answer within the call's timeout; the peer was sent `notifications/cancelled`.
    #[error("{method}: no answer within {after:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// The timeout.
        after: Duration,
    },
    /// The connection closed before the answer came; the request may have reached the peer.
    #[error("the connection closed before the answer")]
    Closed,
    /// The connection had closed before the request was handed to it: the request never left,
    /// so it can be sent again on another connection without the peer seeing it twice.
    #[error("the connection had closed; the request was not sent")]
    NotSent,
    /// The peer answered with a JSON-RPC error.
    #[error("{0}")]
    Remote(ErrorObject),
    /// The answer is not a valid JSON-RPC response (both `result` and `error`, or neither).
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    /// The transport failed to carry this call (for HTTP: an error status, a broken stream).
    #[error(transparent)]
    Transport(TransportError),
}

/// The successful answer to a call: the whole response frame, as received.
#[derive(Debug, Clone)]
pub struct Response {
    frame: Frame,
    /// Where the `result` member's text is in the frame, found once when it arrived.
    result: Range<usize>,
}

impl Response {
    /// The answer in `frame`: its result located; the peer's error, or why it is no answer.
    ///
    /// # Errors
    /// [`RpcError::Remote`] for the peer's error; [`RpcError::InvalidResponse`] for a frame
    /// that is no response.
    pub fn from_frame(frame: Frame) -> Result<Response, RpcError> {
        let invalid = |e: serde_json::Error| RpcError::InvalidResponse(e.to_string());
        // Where the parse that checked the frame found its members; a frame decoded later
        // (a batch element, a composed frame) is read here, the same way.
        let members = match frame.members() {
            Some(members) => *members,
            None => Members::of(
                frame.text(),
                &serde_json::from_str::<Wire<'_>>(frame.text()).map_err(invalid)?,
            ),
        };
        // A `null` result or error counts as absent: peers write `"error": null` beside
        // their result.
        let given = |span: Span| span.filter(|_| frame.member(span) != Some("null"));
        let result = given(members.result).map(|(start, end)| start as usize..end as usize);
        let error = match given(members.error).and_then(|span| frame.member(Some(span))) {
            Some(error) => Some(serde_json::from_str::<Value>(error).map_err(invalid)?),
            None => None,
        };
        match (result, error) {
            (Some(result), None) => Ok(Response { frame, result }),
            (None, Some(error)) => Err(RpcError::Remote(ErrorObject::from_value(&error))),
            (Some(_), Some(_)) => Err(RpcError::InvalidResponse(
                "both result and error".to_owned(),
            )),
            (None, None) => Err(RpcError::InvalidResponse(
                "neither result nor error".to_owned(),
            )),
        }
    }

    /// The response to request `id` of another peer, carrying this result as it arrived:
    /// written around its bytes, not copied ([`Frame::chunks`]).
    pub fn into_answer(self, id: &RawValue) -> Frame {
        Frame::answering(id, self.frame, self.result, Vec::new())
    }

    /// [`Response::into_answer`] with texts written into the result, each before the byte of
    /// [`Response::result_text`] it names (in order, at most [`MAX_INSERTS`](crate::MAX_INSERTS)
    /// for the result to go uncopied): what a gateway adds to a result it forwards.
    pub fn into_answer_with(self, id: &RawValue, inserts: Vec<(usize, String)>) -> Frame {
        Frame::answering(id, self.frame, self.result, inserts)
    }

    /// The response frame exactly as the peer sent it.
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The exact text of the `result` member.
    pub fn result_text(&self) -> &str {
        self.frame.text().get(self.result.clone()).unwrap_or("null")
    }

    /// The `result` member as the peer wrote it.
    pub fn result_raw(&self) -> &RawValue {
        serde_json::from_str(self.result_text()).unwrap_or_else(|_| null())
    }

    /// The `result` member, parsed with numbers kept as written.
    ///
    /// # Errors
    /// None in practice: the text was checked when the response was accepted.
    pub fn result(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.result_text())
    }
}

type Answer = Result<Frame, TransportError>;

/// A call waiting for its answer.
struct Waiting {
    answer: oneshot::Sender<Answer>,
    /// The caller's tag for it.
    tag: Option<String>,
    /// Its answer is dropped without an [`Event::Unmatched`] (see [`Sent::ignore`]).
    quiet: bool,
}

type Pending = Arc<Mutex<HashMap<String, Waiting>>>;
/// Where the `params` of `notifications/progress` go, by the token's JSON text.
type Watchers = Arc<Mutex<HashMap<String, mpsc::Sender<Value>>>>;

/// A JSON-RPC connection over a transport.
pub struct Connection {
    outgoing: mpsc::Sender<Frame>,
    pending: Pending,
    next_id: AtomicU64,
    /// Set to end the connection: by [`Connection::close`], and by the halves when either ends.
    closing: Arc<watch::Sender<bool>>,
    stopped: watch::Receiver<bool>,
    progress: Watchers,
    /// The event queue, for [`Connection::caught_up`]'s mark (weak: the queue still ends when
    /// the reader does).
    events: mpsc::WeakSender<Event>,
}

impl Connection {
    /// Starts the driver task for `transport`; events from the peer arrive on the receiver.
    /// Dropping the connection closes the transport.
    pub fn start<T: Transport + 'static>(transport: T) -> (Connection, mpsc::Receiver<Event>) {
        let (outgoing, queue) = mpsc::channel(MAX_QUEUED_FRAMES);
        let (events, receiver) = mpsc::channel(MAX_QUEUED_EVENTS);
        let pending: Pending = Arc::default();
        let progress: Watchers = Arc::default();
        let closing = Arc::new(watch::Sender::new(false));
        let (stopped_tx, stopped) = watch::channel(false);
        let (sink, source) = transport.split();
        let writer = tokio::spawn(write(sink, queue, events.clone(), closing.clone()));
        let weak_events = events.downgrade();
        let reader = Reader {
            events,
            pending: pending.clone(),
            progress: progress.clone(),
            closing: closing.clone(),
        };
        tokio::spawn(async move {
            reader.read(source).await;
            // Calls still waiting learn the connection closed when their one-shot is dropped.
            locked(&reader.pending).clear();
            // The writer closes the transport (for stdio: stops and reaps the child).
            let _ = writer.await;
            stopped_tx.send_replace(true);
            let _ = reader.events.send(Event::Closed).await;
        });
        let connection = Connection {
            outgoing,
            pending,
            next_id: AtomicU64::new(1),
            closing,
            stopped,
            progress,
            events: weak_events,
        };
        (connection, receiver)
    }

    /// Sends the `params` of each `notifications/progress` carrying `token` (its JSON text)
    /// to `sender`, in the order they arrive and before any response that follows them, until
    /// [`Connection::unwatch_progress`]. Lossy when `sender` is full.
    pub(crate) fn watch_progress(&self, token: String, sender: mpsc::Sender<Value>) {
        lock_watchers(&self.progress).insert(token, sender);
    }

    pub(crate) fn unwatch_progress(&self, token: &str) {
        lock_watchers(&self.progress).remove(token);
    }

    /// Waits until the application has acted on every event that arrived before now: a
    /// [`Event::Mark`] goes into the queue behind them, and this returns when it is dropped
    /// (at once when the connection has ended). A response overtakes the notifications the
    /// peer sent before it (they wait in the queue); this puts them back in order. It waits as
    /// long as the application takes to get there: bound it with a timeout.
    pub async fn caught_up(&self) {
        let Some(events) = self.events.upgrade() else {
            return;
        };
        let (mark, reached) = oneshot::channel();
        if events
            .send(Event::Mark(Mark { _reached: mark }))
            .await
            .is_ok()
        {
            drop(events);
            let _ = reached.await;
        }
    }

    /// Closes the transport (for stdio: stops and reaps the child) and waits until it is
    /// closed. Calls still waiting end with [`RpcError::Closed`].
    pub async fn close(&self) {
        self.closing.send_replace(true);
        let mut stopped = self.stopped.clone();
        let _ = stopped.wait_for(|s| *s).await;
    }

    /// Whether the connection has closed or is closing: a request made now is refused unsent
    /// ([`RpcError::NotSent`]).
    pub fn is_closed(&self) -> bool {
        *self.closing.borrow()
    }

    /// Sends a frame as it is (a notification, or the answer to a peer's request).
    ///
    /// # Errors
    /// [`RpcError::Closed`] when the connection is closed.
    pub async fn send(&self, frame: Frame) -> Result<(), RpcError> {
        self.outgoing
            .send(frame)
            .await
            .map_err(|_| RpcError::Closed)
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// [`RpcError::Closed`] when the connection is closed.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RpcError> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(Frame::from_value(&message)).await
    }

    /// Calls `method` and waits at most `timeout` for the answer.
    ///
    /// # Errors
    /// [`RpcError`]: a timeout (after which the peer is told the call is cancelled), the
    /// connection closing, the peer's error, or an invalid response.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Response, RpcError> {
        let params = params.map(|p| to_raw_value(&p).expect("a Value serializes"));
        self.request_tagged(method, params, timeout, None).await
    }

    /// [`Connection::request`], with a tag of the caller's: a request from the peer that comes
    /// with this call carries it ([`Event::Request`]), so the caller can tell whose it is.
    ///
    /// # Errors
    /// As [`Connection::request`].
    pub async fn request_tagged(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        timeout: Duration,
        tag: Option<String>,
    ) -> Result<Response, RpcError> {
        let (id, key, answered) = self.register(tag)?;
        let message = Frame::request(id, method, params.as_deref());
        // Withdraws the call and tells the peer, if this future ends without an answer.
        let mut guard = Withdraw {
            pending: &self.pending,
            outgoing: &self.outgoing,
            key,
            id,
            armed: true,
        };
        // The timeout covers sending too: a peer that stops reading its input fills the queue
        // to it, and the call must still end.
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || RpcError::Timeout {
            method: method.to_owned(),
            after: timeout,
        };
        match tokio::time::timeout_at(deadline, self.send(message)).await {
            Ok(Ok(())) => {}
            // The writer is gone: the request was given back unqueued.
            Ok(Err(_)) => return Err(RpcError::NotSent),
            Err(_) => return Err(timed_out()),
        }
        let frame = match tokio::time::timeout_at(deadline, answered).await {
            Ok(Ok(Ok(frame))) => frame,
            Ok(Ok(Err(failed))) => {
                guard.armed = false;
                return Err(RpcError::Transport(failed));
            }
            Ok(Err(_)) => {
                guard.armed = false;
                return Err(RpcError::Closed);
            }
            Err(_) => return Err(timed_out()),
        };
        guard.armed = false;
        Response::from_frame(frame)
    }

    /// A new request id, registered as waiting for its answer (with `tag`): the id, its key
    /// in the pending calls, and where the answer comes.
    ///
    /// # Errors
    /// [`RpcError::Closed`] when the connection is closing.
    fn register(
        &self,
        tag: Option<String>,
    ) -> Result<(u64, String, oneshot::Receiver<Answer>), RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        let key = id.to_string();
        let waiting = Waiting {
            answer,
            tag,
            quiet: false,
        };
        locked(&self.pending).insert(key.clone(), waiting);
        // The reader marks the connection closing before it drops every waiting call: a call
        // registered after that drop sees the mark here, instead of waiting out its timeout.
        // It was never queued, so it never left.
        if self.is_closed() {
            locked(&self.pending).remove(&key);
            return Err(RpcError::NotSent);
        }
        Ok((id, key, answered))
    }

    /// Sends a request and returns at once: the answer is awaited with [`Sent::answer`], and
    /// several requests can be in flight and raced (the `server/discover` probe beside
    /// `initialize`). Dropping the handle withdraws the call without telling the peer.
    ///
    /// # Errors
    /// [`RpcError::Closed`] when the connection is closed.
    pub(crate) async fn send_request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<Sent, RpcError> {
        let (id, key, answered) = self.register(None)?;
        let sent = Sent {
            pending: self.pending.clone(),
            key,
            answered,
            kept: true,
        };
        self.send(Frame::request(id, method, params.as_deref()))
            .await?;
        Ok(sent)
    }
}

/// A request in flight ([`Connection::send_request`]).
pub(crate) struct Sent {
    pending: Pending,
    key: String,
    answered: oneshot::Receiver<Answer>,
    /// Withdrawn from the pending calls when dropped (not after [`Sent::ignore`]).
    kept: bool,
}

impl Sent {
    /// The answer, when it comes; cancel-safe, so it can be raced and awaited again.
    ///
    /// # Errors
    /// [`RpcError::Closed`] when the connection closed first; the peer's error; a transport
    /// failure; an invalid response.
    pub(crate) async fn answer(&mut self) -> Result<Response, RpcError> {
        match (&mut self.answered).await {
            Ok(Ok(frame)) => Response::from_frame(frame),
            Ok(Err(failed)) => Err(RpcError::Transport(failed)),
            Err(_) => Err(RpcError::Closed),
        }
    }

    /// Gives up on the answer without telling the peer (`initialize` must not be cancelled):
    /// it stays expected, and is dropped without an event when it comes. One entry per
    /// ignored request stays until then.
    pub(crate) fn ignore(mut self) {
        if let Some(waiting) = locked(&self.pending).get_mut(&self.key) {
            waiting.quiet = true;
        }
        self.kept = false;
    }
}

impl Drop for Sent {
    fn drop(&mut self) {
        if self.kept {
            locked(&self.pending).remove(&self.key);
        }
    }
}

struct Withdraw<'a> {
    pending: &'a Pending,
    outgoing: &'a mpsc::Sender<Frame>,
    key: String,
    id: u64,
    armed: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let was_pending = locked(self.pending).remove(&self.key).is_some();
        if was_pending {
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": self.id, "reason": "timed out or abandoned by the caller"}});
            let frame = Frame::from_value(&cancel);
            // A full queue must not lose the cancellation: hand it to a task that waits for
            // room. A closed connection leaves nothing to tell.
            if let Err(mpsc::error::TrySendError::Full(frame)) = self.outgoing.try_send(frame) {
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let outgoing = self.outgoing.clone();
                    runtime.spawn(async move { outgoing.send(frame).await });
                }
            }
        }
    }
}

/// Writes what the queue holds until the connection is closing, every handle is gone, or a
/// write fails; then closes the transport. A write still waiting for the peer when the
/// connection starts closing is abandoned.
async fn write<S: FrameSink>(
    mut sink: S,
    mut queue: mpsc::Receiver<Frame>,
    events: mpsc::Sender<Event>,
    closing: Arc<watch::Sender<bool>>,
) {
    let mut closed = closing.subscribe();
    loop {
        let frames = tokio::select! {
            _ = closed.wait_for(|c| *c) => break,
            outgoing = queue.recv() => match outgoing {
                Some(frame) => gather(frame, || queue.try_recv().ok()),
                None => break,
            },
        };
        let sent = tokio::select! {
            _ = closed.wait_for(|c| *c) => break,
            sent = sink.send_all(&frames) => sent,
        };
        if let Err(err) = sent {
            let _ = events.try_send(Event::TransportError(err));
            break;
        }
    }
    closing.send_replace(true);
    let _ = sink.close().await;
}

/// What the reading task owns besides the transport's receiving half.
struct Reader {
    events: mpsc::Sender<Event>,
    pending: Pending,
    progress: Watchers,
    closing: Arc<watch::Sender<bool>>,
}

impl Reader {
    /// Routes what arrives until the peer closes or the connection is closing.
    async fn read<R: FrameSource>(&self, mut source: R) {
        let mut closed = self.closing.subscribe();
        loop {
            let incoming = tokio::select! {
                _ = closed.wait_for(|c| *c) => break,
                incoming = source.receive_related() => incoming,
            };
            let event = match incoming {
                None => break,
                Some(Err(err)) => fail_call(err, &self.pending),
                Some(Ok(received)) => route(received, &self.pending, &self.progress),
            };
            if let Some(event) = event {
                // A full queue stops reading until the application catches up.
                tokio::select! {
                    _ = closed.wait_for(|c| *c) => break,
                    _ = self.events.send(event) => {}
                }
            }
        }
        self.closing.send_replace(true);
    }
}

fn lock_watchers(
    watchers: &Watchers,
) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<Value>>> {
    watchers.lock().unwrap_or_else(|p| p.into_inner())
}

fn locked(pending: &Pending) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
    pending.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hands a transport failure to the call it belongs to; other failures become events.
fn fail_call(err: TransportError, pending: &Pending) -> Option<Event> {
    let waiting = err.request_id().and_then(|id| locked(pending).remove(id));
    match waiting {
        Some(waiting) => match waiting.answer.send(Err(err)) {
            Ok(()) => None,
            Err(Err(err)) => Some(Event::TransportError(err)),
            Err(Ok(_)) => None,
        },
        None => Some(Event::TransportError(err)),
    }
}

/// Delivers a response to its call, and progress to the call that asked for it (here, so that
/// it comes before the response that follows it); everything else becomes an event.
fn route(received: Received, pending: &Pending, progress: &Watchers) -> Option<Event> {
    let Received { frame, related } = received;
    let Some(head) = frame.head() else {
        return Some(Event::Unmatched(frame));
    };
    let event = match (head.method.as_deref(), head.id_text()) {
        (Some(_), Some(_)) => {
            let during = related.and_then(|id| locked(pending).get(&id)?.tag.clone());
            Event::Request { frame, during }
        }
        (Some("notifications/progress"), None) => {
            route_progress(&frame, progress);
            Event::Notification(frame)
        }
        (Some(_), None) => Event::Notification(frame),
        (None, Some(id)) => {
            let waiting = locked(pending).remove(id);
            match waiting {
                Some(waiting) => match waiting.answer.send(Ok(frame)) {
                    Ok(()) => return None,
                    Err(Ok(_)) if waiting.quiet => return None,
                    Err(Ok(frame)) => Event::Unmatched(frame),
                    Err(Err(_)) => return None,
                },
                None => Event::Unmatched(frame),
            }
        }
        (None, None) => Event::Unmatched(frame),
    };
    Some(event)
}

fn route_progress(frame: &Frame, progress: &Watchers) {
    let Ok(mut notification) = frame.value() else {
        return;
    };
    let Some(params) = notification.get_mut("params").map(Value::take) else {
        return;
    };
    let Some(token) = params.get("progressToken").map(Value::to_string) else {
        return;
    };
    let waiting = lock_watchers(progress).get(&token).cloned();
    if let Some(sender) = waiting {
        // Lossy by design: a caller that does not keep up misses intermediate steps.
        let _ = sender.try_send(params);
    }
}
