//! A server in this process, reached over an in-memory byte stream that carries newline-delimited
//! frames as stdio does.
//!
//! [`InProcess`] opens a fresh stream for each connection (a server that ends its stream has
//! exited, and the next connection is a restart), so whatever drives a server through a
//! [`crate::Reach`] (the gateway's supervision, the command line) can drive one that lives in
//! the same process: an embedded server, or the gateway's in-memory tests, which need no binary
//! and no child process.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};

use crate::lines::{write_frames, FrameReader};
use crate::{Frame, FrameSink, TransportError};

/// A byte stream both ways: what an in-process server is reached over.
pub trait Pipe: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Pipe for T {}

/// Opens a new connection to the server: the client's end of a fresh stream.
type Open = dyn Fn() -> std::io::Result<Box<dyn Pipe>> + Send + Sync;

/// How to reach a server that runs in this process. Two are equal when they are the same
/// handle (clones of one another).
#[derive(Clone)]
pub struct InProcess {
    name: String,
    open: Arc<Open>,
}

impl InProcess {
    /// A server named `name` (for logs) that `open` starts anew for each connection, returning
    /// the client's end of its stream.
    pub fn new(
        name: impl Into<String>,
        open: impl Fn() -> std::io::Result<Box<dyn Pipe>> + Send + Sync + 'static,
    ) -> InProcess {
        InProcess {
            name: name.into(),
            open: Arc::new(open),
        }
    }

    /// The name it was given.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn connect(&self) -> Result<(PipeSink, PipeSource), TransportError> {
        let stream = (self.open)().map_err(|source| TransportError::Spawn {
            program: self.name.clone(),
            source,
        })?;
        let (read, write) = tokio::io::split(stream);
        Ok((PipeSink { write: Some(write) }, FrameReader::new(read)))
    }
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PartialEq for InProcess {
    fn eq(&self, other: &InProcess) -> bool {
        Arc::ptr_eq(&self.open, &other.open)
    }
}

impl Eq for InProcess {}

/// The writing half of an in-process connection.
pub struct PipeSink {
    write: Option<WriteHalf<Box<dyn Pipe>>>,
}

/// The reading half of an in-process connection.
pub type PipeSource = FrameReader<ReadHalf<Box<dyn Pipe>>>;

impl FrameSink for PipeSink {
    async fn send_all(&mut self, frames: &[Frame]) -> Result<(), TransportError> {
        let write = self.write.as_mut().ok_or(TransportError::Closed)?;
        Ok(write_frames(write, frames).await?)
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // The server sees its input end, as a stdio server sees stdin close.
        if let Some(mut write) = self.write.take() {
            write.shutdown().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FrameSource;
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// An echo server: each line comes back.
    fn echo() -> InProcess {
        InProcess::new("echo", || {
            let (client, server) = tokio::io::duplex(4096);
            tokio::spawn(async move {
                let (read, mut write) = tokio::io::split(server);
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if write
                        .write_all(format!("{line}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            });
            Ok(Box::new(client))
        })
    }

    #[tokio::test]
    async fn frames_go_through_and_close_ends_the_server() {
        let server = echo();
        assert_eq!(server, server.clone());
        assert_ne!(server, echo());
        let (mut sink, mut source) = server.connect().unwrap();
        let frame = Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        sink.send_all(std::slice::from_ref(&frame)).await.unwrap();
        let back = source.receive().await.unwrap().unwrap();
        assert_eq!(back.text(), frame.text());
        sink.close().await.unwrap();
        assert!(source.receive().await.is_none(), "the server's end closed");
        assert!(matches!(
            sink.send_all(&[frame]).await,
            Err(TransportError::Closed)
        ));
    }

    #[test]
    fn a_server_that_cannot_start_is_a_spawn_error() {
        let broken = InProcess::new("broken", || Err(std::io::Error::other("no")));
        assert!(matches!(
            broken.connect(),
            Err(TransportError::Spawn { program, .. }) if program == "broken"
        ));
    }
}
