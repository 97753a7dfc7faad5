//! The stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child's stderr is captured (never mixed into stdout), keeping the last
//! [`MAX_STDERR_LINES`] lines. Lines longer than [`crate::MAX_FRAME_BYTES`] are skipped without
//! being held in memory. The child is killed when the transport is dropped; `close` asks it to stop by
//! closing its stdin, waits [`STOP_GRACE`], then kills and reaps it.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::lines::{write_frame, FrameReader};
use crate::{Frame, Transport, TransportError};

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
    stdout: FrameReader<ChildStdout>,
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
            stdout: FrameReader::new(stdout),
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

impl Transport for StdioTransport {
    async fn send(&mut self, frame: &Frame) -> Result<(), TransportError> {
        let stdin = self.stdin.as_mut().ok_or(TransportError::Closed)?;
        Ok(write_frame(stdin, frame).await?)
    }

    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        self.stdout.next().await
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
