//! What goes back to an HTTP client: the streams of its POSTs and its session's GET stream,
//! each bounded in what waits unread, and how a stream becomes a response (JSON alone, or SSE).
//!
//! A client that opens a stream and never reads it holds what the gateway queues for it. So
//! what is on the way (progress, log messages, list changes, the server's questions) may wait
//! unread up to [`HttpOptions::max_unread_stream_bytes`](super::HttpOptions) a stream; the frame
//! that would pass it ends the stream instead. A GET stream ends, and the client may open it
//! again; a POST's stream ends and its requests are cancelled upstream (nobody would read their
//! answers). A request's answer is never refused for the bound: it is the last thing on its
//! stream, and its size is the server's (bounded by [`mcpclient::MAX_FRAME_BYTES`]). A stream
//! with nothing unread takes one frame of any size, so a large notification still reaches a
//! client that keeps up.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, Weak};

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use mcpclient::{codes, Frame};
use tokio::sync::Notify;

use super::KEEP_ALIVE;
use crate::observe::Limit;
use crate::observe::Observe;
use crate::sessions::session::Outbox;
use crate::sessions::session::Session;
use crate::wire::lock;

/// Bytes of frames on the way that one stream may hold unread, unless configured
/// (`gateway.maxUnreadStreamBytes`). About a thousand progress or log notifications: a client
/// that reads at all never comes near it; one that never reads costs at most this much a
/// stream.
pub const MAX_UNREAD_STREAM_BYTES: usize = 1024 * 1024;

/// What goes to the client on a stream: something on the way (progress, a question, a list
/// change), or a request's answer, the last thing on its stream.
pub(super) enum ToClient {
    OnTheWay(Frame),
    Answer(Frame),
}

impl ToClient {
    fn frame(&self) -> &Frame {
        match self {
            ToClient::OnTheWay(frame) | ToClient::Answer(frame) => frame,
        }
    }

    fn into_frame(self) -> Frame {
        match self {
            ToClient::OnTheWay(frame) | ToClient::Answer(frame) => frame,
        }
    }
}

/// Why a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Everything was sent (the sender is gone).
    Sent,
    /// The client stopped reading it (its response was dropped).
    Reader,
    /// It held more unread than its bound.
    Overflow,
}

struct Shared {
    state: Mutex<State>,
    /// Told when an item arrives or the stream ends (one reader: a permit is kept).
    ready: Notify,
    limit: usize,
}

#[derive(Default)]
struct State {
    items: VecDeque<ToClient>,
    /// Bytes of the [`ToClient::OnTheWay`] frames in `items`.
    unread: usize,
    end: Option<End>,
}

/// The gateway's end of a stream.
pub(super) struct StreamSender(Arc<Shared>);

/// The response's end of a stream.
pub(super) struct StreamReceiver(Arc<Shared>);

/// Why an item was not queued.
pub(super) enum Unsent {
    /// The stream is closed (its client went away): the item, to go elsewhere.
    Closed(ToClient),
    /// The stream held too much unread and has ended (now, or before).
    Overflow,
}

/// A stream holding at most `limit` bytes on the way unread.
pub(super) fn stream(limit: usize) -> (StreamSender, StreamReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::default(),
        ready: Notify::new(),
        limit,
    });
    (StreamSender(shared.clone()), StreamReceiver(shared))
}

impl StreamSender {
    /// Queues `item`; an on-the-way frame past the bound ends the stream instead.
    pub(super) fn send(&self, item: ToClient) -> Result<(), Unsent> {
        let mut state = lock(&self.0.state);
        match state.end {
            Some(End::Overflow) => return Err(Unsent::Overflow),
            Some(_) => return Err(Unsent::Closed(item)),
            None => {}
        }
        if let ToClient::OnTheWay(frame) = &item {
            let size = frame.len();
            if state.unread > 0 && state.unread + size > self.0.limit {
                state.end = Some(End::Overflow);
                state.items.clear();
                state.unread = 0;
                drop(state);
                self.0.ready.notify_one();
                return Err(Unsent::Overflow);
            }
            state.unread += size;
        }
        state.items.push_back(item);
        drop(state);
        self.0.ready.notify_one();
        Ok(())
    }

    /// Whether the stream has ended (its client went away, or it overflowed).
    pub(super) fn is_closed(&self) -> bool {
        lock(&self.0.state).end.is_some()
    }
}

impl Drop for StreamSender {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        if state.end.is_none() {
            state.end = Some(End::Sent);
        }
        drop(state);
        self.0.ready.notify_one();
    }
}

impl StreamReceiver {
    /// The next item; `None` once the stream has ended (after the items sent before the end,
    /// unless it overflowed, which drops them).
    pub(super) async fn recv(&mut self) -> Option<ToClient> {
        loop {
            {
                let mut state = lock(&self.0.state);
                if let Some(item) = state.items.pop_front() {
                    if let ToClient::OnTheWay(frame) = &item {
                        state.unread -= frame.len();
                    }
                    return Some(item);
                }
                if state.end.is_some() {
                    return None;
                }
            }
            self.0.ready.notified().await;
        }
    }
}

impl Drop for StreamReceiver {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        if state.end.is_none() {
            state.end = Some(End::Reader);
        }
        state.items.clear();
        state.unread = 0;
    }
}

/// A session's GET stream, for what belongs to no request in flight.
pub(super) struct Streams {
    standalone: Mutex<Option<StreamSender>>,
    observe: Observe,
    limit: usize,
}

impl Streams {
    pub(super) fn new(observe: Observe, limit: usize) -> Streams {
        Streams {
            standalone: Mutex::default(),
            observe,
            limit,
        }
    }

    /// A new GET stream, unless one is open already.
    pub(super) fn open(&self) -> Option<StreamReceiver> {
        let mut standalone = lock(&self.standalone);
        if standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (sender, receiver) = stream(self.limit);
        *standalone = Some(sender);
        Some(receiver)
    }

    /// Whether its GET stream is open.
    pub(super) fn is_open(&self) -> bool {
        lock(&self.standalone)
            .as_ref()
            .is_some_and(|s| !s.is_closed())
    }

    /// Ends its GET stream.
    pub(super) fn end(&self) {
        *lock(&self.standalone) = None;
    }

    /// Sends `frame` on the GET stream, if one is open; one that overflows ends.
    fn send(&self, frame: Frame) {
        let mut standalone = lock(&self.standalone);
        let Some(stream) = standalone.as_ref() else {
            tracing::debug!("no open stream for a message to the client; dropped");
            return;
        };
        match stream.send(ToClient::OnTheWay(frame)) {
            Ok(()) => {}
            Err(Unsent::Closed(_)) => {
                *standalone = None;
                tracing::debug!("no open stream for a message to the client; dropped");
            }
            Err(Unsent::Overflow) => {
                *standalone = None;
                drop(standalone);
                self.observe.limited(Limit::UnreadGetStream);
                tracing::info!(
                    limit = self.limit,
                    "a GET stream held too much unread; ended (the client may open it again)"
                );
            }
        }
    }
}

/// A session's outbox: what belongs to no request in flight goes on its GET stream.
pub(super) struct HttpOutbox(pub(super) Arc<Streams>);

impl Outbox for HttpOutbox {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        self.0.send(frame);
    }

    fn finish(&self, id: &str, _response: Option<Frame>) {
        // Every request of an HTTP session is taken with its POST's stream.
        tracing::debug!(id, "an answer with no request stream; dropped");
    }
}

/// The stream of the POST that carried requests: their answers, and what relates to them
/// (progress, the server's questions); the session's GET stream when the client closed it.
/// The stream ends when the last request on it ends; when it holds too much unread, it ends
/// and its requests are cancelled.
pub(super) struct RequestStream {
    stream: StreamSender,
    session: Arc<Streams>,
    /// The gateway session its requests are in flight in, and their ids: cancelled when the
    /// stream overflows.
    owner: Weak<Session>,
    ids: Vec<String>,
}

impl RequestStream {
    pub(super) fn new(
        stream: StreamSender,
        session: Arc<Streams>,
        owner: &Arc<Session>,
        ids: Vec<String>,
    ) -> RequestStream {
        RequestStream {
            stream,
            session,
            owner: Arc::downgrade(owner),
            ids,
        }
    }
}

impl Outbox for RequestStream {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        match self.stream.send(ToClient::OnTheWay(frame)) {
            Ok(()) => {}
            Err(Unsent::Closed(unsent)) => self.session.send(unsent.into_frame()),
            Err(Unsent::Overflow) => {
                // Ended now or before: its requests are cancelled once (a cancelled request
                // is no longer in flight, so a second time finds nothing).
                let Some(owner) = self.owner.upgrade() else {
                    return;
                };
                let cancelled: Vec<&String> =
                    self.ids.iter().filter(|id| owner.cancel(id)).collect();
                if !cancelled.is_empty() {
                    self.session.observe.limited(Limit::UnreadPostStream);
                    tracing::info!(
                        limit = self.session.limit,
                        cancelled = cancelled.len(),
                        "a request's stream held too much unread; ended, its requests cancelled"
                    );
                }
            }
        }
    }

    fn finish(&self, _id: &str, response: Option<Frame>) {
        if let Some(frame) = response {
            let _ = self.stream.send(ToClient::Answer(frame));
        }
    }
}

/// For a client that takes either: when the first thing for the request, within [`KEEP_ALIVE`],
/// is its answer (most calls: no progress, no question to the client), the answer alone as JSON,
/// which costs the client no event parsing; else an SSE stream that starts with what came.
/// `keep` is kept until the response ends (with the stream, for an SSE one).
pub(super) async fn sse_unless_answered_at_once(
    mut frames: StreamReceiver,
    keep: impl Send + Sync + 'static,
) -> Response {
    match tokio::time::timeout(KEEP_ALIVE, frames.recv()).await {
        Ok(Some(ToClient::Answer(frame))) => json_body(frame),
        Ok(Some(on_the_way)) => sse(Some(on_the_way), frames, keep),
        // Cancelled before anything came: nothing to answer.
        Ok(None) => StatusCode::ACCEPTED.into_response(),
        Err(_) => sse(None, frames, keep),
    }
}

/// For a client that accepts only JSON: the response alone, once it is there (what belongs to
/// the request on the way is dropped: this client cannot take it).
pub(super) async fn json_answer(mut frames: StreamReceiver) -> Response {
    while let Some(item) = frames.recv().await {
        if let ToClient::Answer(frame) = item {
            return json_body(frame);
        }
    }
    StatusCode::ACCEPTED.into_response()
}

/// For a client that accepts only JSON and sent a batch: its `n` answers in one array, once
/// they are all there.
pub(super) async fn json_answers(mut frames: StreamReceiver, n: usize) -> Response {
    let mut answers = Vec::with_capacity(n);
    while let Some(item) = frames.recv().await {
        if let ToClient::Answer(frame) = item {
            answers.push(frame.chunks().concat());
        }
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        format!("[{}]", answers.join(",")),
    )
        .into_response()
}

/// An SSE response of `first` and then `frames`; `keep` lives as long as the stream.
pub(super) fn sse(
    first: Option<ToClient>,
    frames: StreamReceiver,
    keep: impl Send + Sync + 'static,
) -> Response {
    let events = stream::unfold(
        (first, frames, keep),
        |(first, mut frames, keep)| async move {
            let item = match first {
                Some(item) => item,
                None => frames.recv().await?,
            };
            let event = Event::default()
                .event("message")
                .data(item.frame().chunks().concat());
            Some((Ok::<_, Infallible>(event), (None, frames, keep)))
        },
    );
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    // Proxies (nginx) would otherwise hold events back.
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A frame as a JSON response body: 200, or 400 for the errors 2026-07-28 answers with it
/// (header mismatch, missing client capability, unsupported version), whoever sent them.
pub(super) fn json_body(frame: Frame) -> Response {
    // An error is a frame the gateway made, whole in its first piece; a forwarded result's
    // first piece is the head the gateway wrote around it.
    let modern_error = frame.chunks()[0].contains("-3202")
        && frame
            .value()
            .ok()
            .and_then(|v| v.pointer("/error/code").and_then(serde_json::Value::as_i64))
            .is_some_and(|code| {
                [
                    codes::HEADER_MISMATCH,
                    codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    codes::UNSUPPORTED_PROTOCOL_VERSION,
                ]
                .contains(&code)
            });
    let status = if modern_error {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::new(Chunks::from(frame)),
    )
        .into_response()
}

/// A body of a frame's pieces as they are ([`Frame::into_chunks`]: a forwarded result is
/// not copied), with its exact length.
struct Chunks(VecDeque<bytes::Bytes>);

impl From<Frame> for Chunks {
    fn from(frame: Frame) -> Chunks {
        Chunks(
            frame
                .into_chunks()
                .into_iter()
                .filter(|c| !c.is_empty())
                .collect(),
        )
    }
}

impl http_body::Body for Chunks {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Infallible>>> {
        std::task::Poll::Ready(self.0.pop_front().map(|c| Ok(http_body::Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.0.iter().map(|c| c.len() as u64).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn note(bytes: usize) -> ToClient {
        let text = "x".repeat(bytes);
        ToClient::OnTheWay(Frame::from_value(&json!({"jsonrpc": "2.0",
            "method": "notifications/message", "params": {"data": text}})))
    }

    #[tokio::test]
    async fn what_waits_unread_is_bounded_and_the_answer_always_goes() {
        let (sender, mut receiver) = stream(1000);
        // One frame of any size on an empty stream.
        assert!(sender.send(note(5000)).is_ok());
        assert!(receiver.recv().await.is_some());
        for _ in 0..5 {
            assert!(sender.send(note(100)).is_ok());
        }
        // An answer is queued whatever waits.
        let answer = Frame::from_value(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert!(sender.send(ToClient::Answer(answer)).is_ok());
        // The on-the-way frame that would pass the bound ends the stream, and what waited is
        // dropped.
        assert!(matches!(sender.send(note(100)), Err(Unsent::Overflow)));
        assert!(sender.is_closed());
        assert!(matches!(sender.send(note(1)), Err(Unsent::Overflow)));
        assert!(receiver.recv().await.is_none());
    }

    #[tokio::test]
    async fn a_reader_that_keeps_up_is_never_cut_off() {
        let (sender, mut receiver) = stream(1000);
        for _ in 0..100 {
            assert!(sender.send(note(600)).is_ok());
            assert!(receiver.recv().await.is_some());
        }
        drop(sender);
        assert!(receiver.recv().await.is_none(), "ended after what was sent");
    }

    #[tokio::test]
    async fn a_reader_gone_closes_the_stream_and_hands_back_the_item() {
        let (sender, receiver) = stream(1000);
        drop(receiver);
        assert!(sender.is_closed());
        assert!(matches!(sender.send(note(1)), Err(Unsent::Closed(_))));
    }
}
