//! The stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child's stderr is captured (never mixed into stdout), keeping the last
//! [`MAX_STDERR_LINES`] lines. Lines longer than [`MAX_FRAME_BYTES`] are skipped without being
//! held in memory. The child is killed when the transport is dropped; `close` asks it to stop by
//! closing its stdin, waits [`STOP_GRACE`], then kills and reaps it.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::{Frame, FrameError, Transport, TransportError, MAX_FRAME_BYTES};

/// Most lines of the child's stderr kept (the latest ones).
pub const MAX_STDERR_LINES: usize = 200;

/// How long `close` waits for the child to exit after closing its stdin, before killing it.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// How to start a stdio server: the `command`, `args`, `env` and `cwd` of an `mcpServers` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the inherited environment.
    pub env: HashMap<String, String>,
    /// The working directory, if not the current one.
    pub cwd: Option<PathBuf>,
}

/// A running stdio server.
pub struct StdioTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The line being read, kept here so that a cancelled `receive` loses nothing.
    partial: Partial,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl StdioTransport {
    /// Starts the server.
    ///
    /// # Errors
    /// [`TransportError::Spawn`] when the program cannot be started.
    pub fn spawn(command: &StdioCommand) -> Result<StdioTransport, TransportError> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .envs(&command.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &command.cwd {
            cmd.current_dir(cwd);
        }
        let spawn_error = |source| TransportError::Spawn {
            program: command.program.clone(),
            source,
        };
        let mut child = cmd.spawn().map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("a standard stream was not piped"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        tokio::spawn(keep_tail(BufReader::new(stderr), tail.clone()));
        Ok(StdioTransport {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            partial: Partial::default(),
            stderr: tail,
        })
    }

    /// The last lines the child wrote to stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The child's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

async fn keep_tail<R: AsyncBufRead + Unpin>(reader: R, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == MAX_STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}

/// One line read under the size bound.
enum Line {
    Text(Vec<u8>),
    TooLarge,
    End,
}

/// A line read so far: its bytes, or the note that it is already over the limit.
#[derive(Default)]
struct Partial {
    line: Vec<u8>,
    over: bool,
}

impl Partial {
    fn finish(&mut self) -> Line {
        let over = std::mem::take(&mut self.over);
        let line = std::mem::take(&mut self.line);
        if over {
            Line::TooLarge
        } else {
            Line::Text(line)
        }
    }
}

/// Reads one newline-terminated line, never holding more than `limit` bytes of it: a longer
/// line is consumed to its end and reported as too large. Cancel-safe: what was read before a
/// cancelled call stays in `partial`.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    partial: &mut Partial,
    limit: usize,
) -> std::io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if !partial.over && partial.line.is_empty() {
                return Ok(Line::End);
            }
            return Ok(partial.finish());
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        if !partial.over {
            if partial.line.len() + chunk.len() > limit {
                partial.over = true;
                partial.line = Vec::new();
            } else {
                partial.line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(partial.finish());
        }
    }
}

impl Transport for StdioTransport {
    async fn send(&mut self, frame: &Frame) -> Result<(), TransportError> {
        let stdin = self.stdin.as_mut().ok_or(TransportError::Closed)?;
        let mut bytes = Vec::with_capacity(frame.text().len() + 1);
        bytes.extend_from_slice(frame.text().as_bytes());
        bytes.push(b'\n');
        stdin.write_all(&bytes).await?;
        stdin.flush().await?;
        Ok(())
    }

    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        loop {
            return match read_line(&mut self.stdout, &mut self.partial, MAX_FRAME_BYTES).await {
                Err(err) => Some(Err(err.into())),
                Ok(Line::End) => None,
                Ok(Line::TooLarge) => Some(Err(FrameError::TooLarge {
                    limit: MAX_FRAME_BYTES,
                }
                .into())),
                Ok(Line::Text(bytes)) => {
                    let text = String::from_utf8_lossy(&bytes);
                    if text.trim().is_empty() {
                        continue;
                    }
                    Some(Frame::parse(&text).map_err(TransportError::from))
                }
            };
        }
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // Closing stdin is the polite stop for a stdio server.
        drop(self.stdin.take());
        if tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.child.start_kill()?;
            self.child.wait().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_without_losing_the_next() {
        let input = format!("{}\n{{\"a\":1}}\nshort\n", "x".repeat(100));
        let mut reader = BufReader::with_capacity(16, input.as_bytes());
        let mut p = Partial::default();
        assert!(matches!(
            read_line(&mut reader, &mut p, 50).await.unwrap(),
            Line::TooLarge
        ));
        let Line::Text(next) = read_line(&mut reader, &mut p, 50).await.unwrap() else {
            panic!()
        };
        assert_eq!(next, b"{\"a\":1}");
        let Line::Text(last) = read_line(&mut reader, &mut p, 50).await.unwrap() else {
            panic!()
        };
        assert_eq!(last, b"short");
        assert!(matches!(
            read_line(&mut reader, &mut p, 50).await.unwrap(),
            Line::End
        ));
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_is_kept() {
        let input = format!("{}\n", "y".repeat(50));
        let mut reader = BufReader::with_capacity(7, input.as_bytes());
        let mut p = Partial::default();
        let Line::Text(line) = read_line(&mut reader, &mut p, 50).await.unwrap() else {
            panic!()
        };
        assert_eq!(line.len(), 50);
    }
}
