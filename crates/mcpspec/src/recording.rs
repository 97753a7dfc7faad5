//! A transport wrapper for tests: every frame in both directions is checked against the
//! protocol schema, and kept.
//!
//! The halves of a connection run in tasks of their own, where a panic would end only that
//! task (and the test could pass): a frame that breaks the protocol ends the whole test
//! process at once instead, with the frame and its flat lines on stderr.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use mcpclient::{Frame, FrameSink, FrameSource, Received, Transport, TransportError};

use crate::{Conversation, Side, Spec};

/// Wraps the client's transport: frames it sends are the client's, frames it receives the
/// server's. The first invalid frame ends the test process with its flat lines and the frame.
pub struct Recording<'s, T: Transport> {
    sink: RecordingSink<'s, T::Sink>,
    source: RecordingSource<'s, T::Source>,
}

/// The sending half of a [`Recording`].
pub struct RecordingSink<'s, S> {
    inner: S,
    log: Log<'s>,
}

/// The receiving half of a [`Recording`].
pub struct RecordingSource<'s, R> {
    inner: R,
    log: Log<'s>,
}

/// What both halves record into: a response is checked against the request the other side sent.
#[derive(Clone)]
struct Log<'s>(Arc<Mutex<Kept<'s>>>);

struct Kept<'s> {
    conversation: Conversation<'s>,
    frames: Vec<(Side, Frame)>,
}

impl<'s, T: Transport> Recording<'s, T> {
    /// Checks `inner`'s traffic against `spec`.
    pub fn new(spec: &'s Spec, inner: T) -> Recording<'s, T> {
        let log = Log(Arc::new(Mutex::new(Kept {
            conversation: Conversation::new(spec),
            frames: Vec::new(),
        })));
        let (sink, source) = inner.split();
        Recording {
            sink: RecordingSink {
                inner: sink,
                log: log.clone(),
            },
            source: RecordingSource { inner: source, log },
        }
    }

    /// Every frame so far, in wire order, with the side that sent it.
    pub fn frames(&self) -> Vec<(Side, Frame)> {
        self.sink.log.kept().frames.clone()
    }
}

impl<'s> Log<'s> {
    fn kept(&self) -> MutexGuard<'_, Kept<'s>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, from: Side, frame: &Frame) {
        let mut kept = self.kept();
        let problems = match frame.value() {
            Ok(value) => kept.conversation.problems(from, &value),
            Err(e) => Some(format!("frame is not JSON ({e})")),
        };
        if let Some(problems) = problems {
            fail(&format!("{problems}\nframe: {frame}"));
        }
        kept.frames.push((from, frame.clone()));
    }
}

/// Ends the test process: wherever the frame was checked, the test fails now.
fn fail(message: &str) -> ! {
    // Written straight to the process's stderr: the test harness's capture would lose it.
    let _ = writeln!(std::io::stderr(), "protocol violation: {message}");
    std::process::abort()
}

impl<'s, T: Transport> Transport for Recording<'s, T>
where
    T::Sink: 's,
    T::Source: 's,
{
    type Sink = RecordingSink<'s, T::Sink>;
    type Source = RecordingSource<'s, T::Source>;

    fn split(self) -> (Self::Sink, Self::Source) {
        (self.sink, self.source)
    }

    fn halves(&mut self) -> (&mut Self::Sink, &mut Self::Source) {
        (&mut self.sink, &mut self.source)
    }
}

impl<S: FrameSink> FrameSink for RecordingSink<'_, S> {
    async fn send_all(&mut self, frames: &[Frame]) -> Result<(), TransportError> {
        for frame in frames {
            self.log.record(Side::Client, frame);
        }
        self.inner.send_all(frames).await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.inner.close().await
    }
}

impl<R: FrameSource> FrameSource for RecordingSource<'_, R> {
    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        self.receive_related()
            .await
            .map(|received| received.map(|r| r.frame))
    }

    async fn receive_related(&mut self) -> Option<Result<Received, TransportError>> {
        let received = self.inner.receive_related().await;
        if let Some(Ok(received)) = &received {
            self.log.record(Side::Server, &received.frame);
        }
        received
    }
}
