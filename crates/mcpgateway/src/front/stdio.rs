//! The stdio front: the client spawns mcpx, one session over stdin/stdout.
//!
//! Frames are read under the same bound as from servers ([`mcpclient::MAX_FRAME_BYTES`]); a line
//! that is not JSON is answered with a parse error and reading goes on. A writer task owns
//! stdout so that answers from concurrent requests never interleave within a line. While more
//! than [`MAX_UNREAD_BYTES`] wait for the client to read them, its input is not read: a client
//! that does not read its answers holds itself up, not mcpx's memory. A client that pipelines
//! more requests than [`crate::sessions::session::MAX_REQUESTS_IN_FLIGHT`] is paced, not refused: its further
//! requests are held (up to [`MAX_HELD_BYTES`], then its input waits) while its responses (to
//! the gateway's questions) and notifications (cancellations) are still read and acted on, so
//! that the calls in flight can finish. When the input ends (the client closed it, as
//! `printf … | mcpx serve` does), the requests read so far are still answered, within a bound
//! (the drain's), before the session ends.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::wire::{response, unreadable};
use mcpclient::{gather, write_frames, Decoded, Frame, FrameReader, TransportError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, Notify};

use crate::gateway::Gateway;
use crate::sessions::session::wait_until;
use crate::sessions::session::Outbox;

/// Bytes of frames waiting to be written to the client above which mcpx stops reading the
/// client's input, until the client reads.
pub const MAX_UNREAD_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of the client's requests held back while [`crate::sessions::session::MAX_REQUESTS_IN_FLIGHT`] of its
/// requests are in flight; past them its input is not read until a request ends.
pub const MAX_HELD_BYTES: usize = 16 * 1024 * 1024;

/// What waits to be written to the client.
#[derive(Default)]
struct Backlog {
    bytes: AtomicUsize,
    drained: Notify,
    /// Nothing is written any more (the client's output broke): nothing holds the input back.
    closed: AtomicBool,
}

impl Backlog {
    /// Waits until at most [`MAX_UNREAD_BYTES`] wait.
    async fn room(&self) {
        wait_until(&self.drained, || {
            self.closed.load(Ordering::Acquire)
                || self.bytes.load(Ordering::Acquire) <= MAX_UNREAD_BYTES
        })
        .await;
    }
}

#[derive(Clone)]
struct StdioOutbox {
    frames: mpsc::UnboundedSender<Frame>,
    backlog: Arc<Backlog>,
}

impl StdioOutbox {
    fn queue(&self, frame: Frame) {
        // Counted before it is queued: the writer may write it and subtract its size at once,
        // and must never take the count below zero (which would read as a huge backlog and
        // hold the input back with nobody left to wake it).
        let size = frame.len();
        self.backlog.bytes.fetch_add(size, Ordering::AcqRel);
        if self.frames.send(frame).is_err() {
            self.backlog.bytes.fetch_sub(size, Ordering::AcqRel);
        }
    }
}

impl Outbox for StdioOutbox {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        self.queue(frame);
    }

    fn finish(&self, _id: &str, response: Option<Frame>) {
        if let Some(frame) = response {
            self.queue(frame);
        }
    }
}

/// Requests read while the session's in-flight requests are at their limit, in order.
#[derive(Default)]
struct Held {
    /// Each request, and the size of the frame it came in.
    frames: std::collections::VecDeque<(Decoded, usize)>,
    bytes: usize,
}

impl Held {
    fn push(&mut self, request: Decoded, size: usize) {
        self.bytes += size;
        self.frames.push_back((request, size));
    }

    fn pop(&mut self) -> Option<Decoded> {
        let (request, size) = self.frames.pop_front()?;
        self.bytes -= size;
        Some(request)
    }
}

/// Serves one client on `input`/`output` until the input ends; then the requests read so far
/// are answered (those held back go in as the others end), for at most `finish_within`, after
/// which those still in flight are answered with an error; what was queued for the client is
/// written, and the session ends.
///
/// # Errors
/// Reading the input failed.
pub async fn serve_stdio<R, W>(
    gateway: &Gateway,
    input: R,
    mut output: W,
    finish_within: Duration,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (frames, mut queued) = mpsc::unbounded_channel::<Frame>();
    let outbox = StdioOutbox {
        frames,
        backlog: Arc::default(),
    };
    let backlog = outbox.backlog.clone();
    let writer = tokio::spawn(async move {
        while let Some(frame) = queued.recv().await {
            let frames = gather(frame, || queued.try_recv().ok());
            let written = write_frames(&mut output, &frames).await;
            let size = frames.iter().map(|frame| frame.len()).sum();
            backlog.bytes.fetch_sub(size, Ordering::AcqRel);
            backlog.drained.notify_waiters();
            if written.is_err() {
                break;
            }
        }
        drop(queued);
        backlog.closed.store(true, Ordering::Release);
        backlog.drained.notify_waiters();
    });
    let session = gateway.open_session(
        outbox.clone(),
        crate::sessions::principal::Principal::local(),
    );
    let mut reader = FrameReader::new(input);
    let mut held = Held::default();
    let mut failed = None;
    loop {
        let can_read = held.bytes < MAX_HELD_BYTES;
        let frame = tokio::select! {
            // Held requests go in as the ones in flight end, oldest first.
            () = async {
                session.room_for_a_request().await;
                outbox.backlog.room().await;
            }, if !held.frames.is_empty() => {
                while session.has_room_for_a_request() {
                    let Some(frame) = held.pop() else { break };
                    gateway.receive(&session, frame);
                }
                continue;
            }
            // Not read while the client's answers pile up unread.
            frame = async {
                outbox.backlog.room().await;
                reader.next().await
            }, if can_read => frame,
        };
        let Some(frame) = frame else {
            break;
        };
        match frame {
            Ok(frame) => {
                // Decoded here, once: the gateway takes it as it is.
                let size = frame.len();
                let message = frame.decode();
                let pacing = !held.frames.is_empty() || !session.has_room_for_a_request();
                if pacing && message.is_request() {
                    held.push(message, size);
                } else {
                    gateway.receive(&session, message);
                }
            }
            Err(TransportError::BadFrame(error)) => {
                tracing::warn!(%error, "a line from the client that is not a frame");
                let (id, answer) = unreadable(&error);
                outbox.queue(response(&id, Err(answer)));
            }
            Err(error) => {
                failed = Some(std::io::Error::other(error.to_string()));
                break;
            }
        }
    }
    // The client sends no more, but may still read: what it asked is answered.
    let pending = session.requests_in_flight() + held.frames.len();
    if pending > 0 {
        tracing::info!(
            pending,
            ?finish_within,
            "the client's input ended; answering what it asked"
        );
    }
    let finished = async {
        while !held.frames.is_empty() {
            session.room_for_a_request().await;
            outbox.backlog.room().await;
            while session.has_room_for_a_request() {
                let Some(request) = held.pop() else { break };
                gateway.receive(&session, request);
            }
        }
        session.all_answered().await;
    };
    if tokio::time::timeout(finish_within, finished).await.is_err() {
        let left = session.requests_in_flight() + held.frames.len();
        tracing::warn!(
            left,
            ?finish_within,
            "the client's input ended; requests not answered in time are ended"
        );
        session.stop(
            "mcpx is shutting down (the client's input ended); the request was not completed",
        );
    }
    gateway.close_session(&session);
    drop(session);
    drop(outbox);
    let _ = writer.await;
    failed.map_or(Ok(()), Err)
}
