//! A transport wrapper for tests: every frame in both directions is checked against the
//! protocol schema, and kept.

use mcpclient::{Frame, Transport, TransportError};

use crate::{Conversation, Side, Spec};

/// Wraps the client's transport: frames it sends are the client's, frames it receives the
/// server's. The first invalid frame fails the test with its flat lines and the frame.
pub struct Recording<'s, T> {
    inner: T,
    conversation: Conversation<'s>,
    frames: Vec<(Side, Frame)>,
}

impl<'s, T: Transport> Recording<'s, T> {
    /// Checks `inner`'s traffic against `spec`.
    pub fn new(spec: &'s Spec, inner: T) -> Recording<'s, T> {
        Recording {
            inner,
            conversation: Conversation::new(spec),
            frames: Vec::new(),
        }
    }

    /// Every frame so far, in wire order, with the side that sent it.
    pub fn frames(&self) -> &[(Side, Frame)] {
        &self.frames
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    fn record(&mut self, from: Side, frame: &Frame) {
        let value = frame
            .value()
            .unwrap_or_else(|e| panic!("frame is not JSON ({e}): {frame}"));
        self.conversation.assert_valid(from, &value);
        self.frames.push((from, frame.clone()));
    }
}

impl<T: Transport> Transport for Recording<'_, T> {
    async fn send(&mut self, frame: &Frame) -> Result<(), TransportError> {
        self.record(Side::Client, frame);
        self.inner.send(frame).await
    }

    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        let received = self.inner.receive().await;
        if let Some(Ok(frame)) = &received {
            self.record(Side::Server, frame);
        }
        received
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.inner.close().await
    }
}
