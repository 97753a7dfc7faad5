//! The one small trait every transport implements.

use std::future::Future;

use thiserror::Error;

use crate::{Frame, FrameError};

/// Why a transport could not carry a frame.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The server process could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program named in the configuration.
        program: String,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// The peer sent something that is not a frame. The transport stays usable: later frames
    /// are still read.
    #[error("bad frame from the server: {0}")]
    BadFrame(#[from] FrameError),
    /// Reading or writing failed.
    #[error("transport I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The connection is closed.
    #[error("the connection is closed")]
    Closed,
    /// An HTTP exchange failed: an error status, a refused connection, a stream that broke
    /// before the answer. When the exchange carried a request, `request_id` is the text of its
    /// id: that call gets this error instead of an answer. The transport stays usable.
    #[error("{method} {url}: {message}")]
    Http {
        /// The id of the request the exchange carried, as JSON text.
        request_id: Option<String>,
        /// `POST`, `GET` or `DELETE`.
        method: &'static str,
        /// The endpoint.
        url: String,
        /// The HTTP status, when there was one.
        status: Option<u16>,
        /// What went wrong, with the start of the server's answer where it said something.
        message: String,
    },
    /// The transport's configuration cannot be used (a malformed URL or header).
    #[error("invalid transport configuration: {0}")]
    Config(String),
}

impl TransportError {
    /// The id (as JSON text) of the request this failure belongs to, if it belongs to one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            TransportError::Http { request_id, .. } => request_id.as_deref(),
            _ => None,
        }
    }
}

/// A bidirectional carrier of JSON-RPC frames.
pub trait Transport: Send {
    /// Sends one frame.
    fn send(&mut self, frame: &Frame) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Sends frames that are ready together, in order; a transport that can carry them in one
    /// write does (stdio).
    fn send_all(
        &mut self,
        frames: &[Frame],
    ) -> impl Future<Output = Result<(), TransportError>> + Send {
        async move {
            for frame in frames {
                self.send(frame).await?;
            }
            Ok(())
        }
    }

    /// The next frame from the peer: `None` once the peer has closed the connection. A
    /// [`TransportError::BadFrame`] leaves the transport usable.
    fn receive(&mut self) -> impl Future<Output = Option<Result<Frame, TransportError>>> + Send;

    /// Closes the connection and releases what it holds (for stdio: stops and reaps the child).
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;
}
