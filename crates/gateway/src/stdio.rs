//! The stdio front: the client spawns mcpx, one session over stdin/stdout.
//!
//! Frames are read under the same bound as from servers ([`mcpclient::MAX_FRAME_BYTES`]); a line
//! that is not JSON is answered with a parse error and reading goes on. A writer task owns
//! stdout so that answers from concurrent requests never interleave within a line.

use mcpclient::{write_frame, Frame, FrameReader, TransportError};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use crate::{Gateway, Outbox};

struct StdioOutbox {
    frames: mpsc::UnboundedSender<Frame>,
}

impl Outbox for StdioOutbox {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        let _ = self.frames.send(frame);
    }

    fn finish(&self, _id: &str, response: Option<Frame>) {
        if let Some(frame) = response {
            let _ = self.frames.send(frame);
        }
    }
}

/// Serves one client on `input`/`output` until the input ends; then the session's requests in
/// flight stop and what was queued for the client is written.
///
/// # Errors
/// Reading the input failed.
pub async fn serve_stdio<R, W>(gateway: &Gateway, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (frames, mut queued) = mpsc::unbounded_channel::<Frame>();
    let writer = tokio::spawn(async move {
        while let Some(frame) = queued.recv().await {
            if write_frame(&mut output, &frame).await.is_err() {
                break;
            }
        }
    });
    let session = gateway.open_session(StdioOutbox {
        frames: frames.clone(),
    });
    let mut reader = FrameReader::new(input);
    let mut failed = None;
    while let Some(frame) = reader.next().await {
        match frame {
            Ok(frame) => gateway.receive(&session, frame),
            Err(TransportError::BadFrame(error)) => {
                tracing::warn!(%error, "a line from the client that is not a frame");
                let answer = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("parse error: {error}")}});
                let _ = frames.send(Frame::from_value(&answer));
            }
            Err(error) => {
                failed = Some(std::io::Error::other(error.to_string()));
                break;
            }
        }
    }
    gateway.close_session(&session);
    drop(session);
    drop(frames);
    let _ = writer.await;
    failed.map_or(Ok(()), Err)
}
