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
    /// The request could not be authorized: no credentials could be had for it (a login is
    /// needed, or the authorization server refused). `source` is the [`crate::HttpAuth`]
    /// provider's error.
    #[error("{url}: {source}")]
    Auth {
        /// The id of the request, as JSON text, when it was one.
        request_id: Option<String>,
        /// The endpoint.
        url: String,
        /// The provider's error.
        source: crate::AuthFailure,
    },
}

impl TransportError {
    /// The id (as JSON text) of the request this failure belongs to, if it belongs to one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            TransportError::Http { request_id, .. } | TransportError::Auth { request_id, .. } => {
                request_id.as_deref()
            }
            // A message that could not be taken, but whose id was read (one nested too deep).
            TransportError::BadFrame(frame) => frame.id(),
            _ => None,
        }
    }
}

/// The sending half of a transport.
pub trait FrameSink: Send {
    /// Sends frames that are ready together, in order; a transport that can carry them in one
    /// write does (stdio).
    fn send_all(
        &mut self,
        frames: &[Frame],
    ) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Closes the connection and releases what it holds (for stdio: stops and reaps the child).
    /// The receiving half then ends.
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;
}

/// A frame from the peer, with the request of ours it came with, when the transport knows.
#[derive(Debug, Clone)]
pub struct Received {
    /// The frame.
    pub frame: Frame,
    /// The id (JSON text) of our request on whose exchange the frame arrived (Streamable HTTP:
    /// the request's response stream); `None` where the transport cannot tell (stdio) or the
    /// frame came unprompted.
    pub related: Option<String>,
}

impl Received {
    /// A frame that came with none of our requests.
    pub fn unrelated(frame: Frame) -> Received {
        Received {
            frame,
            related: None,
        }
    }
}

/// The receiving half of a transport.
pub trait FrameSource: Send {
    /// The next frame from the peer: `None` once the peer has closed the connection. A
    /// [`TransportError::BadFrame`] leaves the transport usable. Cancel-safe: a call dropped
    /// before it returns loses nothing.
    fn receive(&mut self) -> impl Future<Output = Option<Result<Frame, TransportError>>> + Send;

    /// [`FrameSource::receive`], with the request the frame came with where the transport can
    /// tell (see [`Received::related`]).
    fn receive_related(
        &mut self,
    ) -> impl Future<Output = Option<Result<Received, TransportError>>> + Send {
        async move {
            self.receive()
                .await
                .map(|received| received.map(Received::unrelated))
        }
    }
}

/// A bidirectional carrier of JSON-RPC frames, made of two halves that work independently, so
/// that a write waiting for the peer never stops the reads (a peer blocked on writing its
/// answer would otherwise never read the request it is sent: a deadlock). A connection drives
/// the halves in tasks of their own ([`Transport::split`]); a test may also use the whole
/// transport one step at a time.
pub trait Transport: Send + Sized {
    /// The sending half.
    type Sink: FrameSink;
    /// The receiving half.
    type Source: FrameSource;

    /// The two halves, to be driven independently.
    fn split(self) -> (Self::Sink, Self::Source);

    /// Both halves, borrowed (for the one-step-at-a-time methods below).
    fn halves(&mut self) -> (&mut Self::Sink, &mut Self::Source);

    /// Sends one frame.
    fn send(&mut self, frame: &Frame) -> impl Future<Output = Result<(), TransportError>> + Send {
        self.halves().0.send_all(std::slice::from_ref(frame))
    }

    /// The next frame from the peer (see [`FrameSource::receive`]).
    fn receive(&mut self) -> impl Future<Output = Option<Result<Frame, TransportError>>> + Send {
        self.halves().1.receive()
    }

    /// Closes the connection (see [`FrameSink::close`]).
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        self.halves().0.close()
    }

    /// Where a transport that sends a tool's `x-mcp-header` arguments as HTTP headers reads
    /// them (the client fills it when it lists tools, and drops tools whose declarations are
    /// invalid); `None` for a transport without headers.
    fn tool_headers(&self) -> Option<crate::headers::ToolHeaders> {
        None
    }
}
