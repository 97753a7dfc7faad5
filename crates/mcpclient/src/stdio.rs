//! The stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child's stderr is captured (never mixed into stdout), keeping the last
//! [`MAX_STDERR_LINES`] lines. Lines longer than [`crate::MAX_FRAME_BYTES`] are skipped without
//! being held in memory.
//!
//! `close` asks the child to stop by closing its stdin, waits [`STOP_GRACE`], asks again the
//! platform's way (SIGTERM on Unix; on Windows, terminating its job), waits again, then kills
//! and reaps it; dropping the transport kills it. Started with
//! [`StdioTransport::spawn_grouped`] (as the gateway starts its servers), the child runs in a
//! process group of its own on Unix, so that what it starts (a wrapper such as `npx` starts the
//! real server as its child) stops with it: `close` and drop kill whatever is left of the
//! group. [`StdioTransport::spawn`] leaves the child in mcpx's group, where a terminal's Ctrl-C
//! reaches it too (the command line's case). On Windows every child runs in a Job Object of its
//! own, killed with everything in it when the transport (or mcpx) goes.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use crate::lines::{write_frames, FrameReader};
use crate::process::Process;
use crate::{Frame, FrameSink, Transport, TransportError};

/// Most lines of the child's stderr kept (the latest ones).
pub const MAX_STDERR_LINES: usize = 200;

/// How long `close` waits for the child to exit after closing its stdin, and again after
/// SIGTERM (Unix), before killing it.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// How to start a stdio server: the `command`, `args`, `env` and `cwd` of an `mcpServers` entry.
/// Its `Debug` shows the variables' names, never their values (API keys).
#[derive(Clone, Default, PartialEq, Eq)]
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

impl std::fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.env.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_struct("StdioCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &names)
            .field("cwd", &self.cwd)
            .finish()
    }
}

/// A running stdio server.
pub struct StdioTransport {
    sink: StdioSink,
    source: StdioSource,
}

/// The writing half of a [`StdioTransport`]: the child's stdin, and the child itself (closing
/// stops it).
pub struct StdioSink {
    child: Process,
    stdin: Option<ChildStdin>,
    stderr: StderrTail,
}

/// The reading half of a [`StdioTransport`]: frames from the child's stdout.
pub type StdioSource = FrameReader<ChildStdout>;

/// The last lines a child wrote to its stderr; a handle that stays usable after the transport
/// has been handed to a connection.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

/// How long [`StderrTail::settled`] gives a failed child's stderr to arrive, checked every
/// [`STDERR_SETTLE_STEP`]: it is read on a task of its own, a moment behind the end of stdout.
const STDERR_SETTLE_STEPS: usize = 10;
const STDERR_SETTLE_STEP: Duration = Duration::from_millis(50);

impl StderrTail {
    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The last `most` lines, oldest first, once they stop changing (at most 0.5 s): for a
    /// child that just failed, whose last words may still be on their way.
    pub async fn settled(&self, most: usize) -> Vec<String> {
        let mut lines = self.lines();
        for _ in 0..STDERR_SETTLE_STEPS {
            tokio::time::sleep(STDERR_SETTLE_STEP).await;
            let now = self.lines();
            if !now.is_empty() && now == lines {
                break;
            }
            lines = now;
        }
        let skip = lines.len().saturating_sub(most);
        lines.split_off(skip)
    }
}

impl std::fmt::Debug for StderrTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StderrTail").finish_non_exhaustive()
    }
}

impl StdioTransport {
    /// Starts the server in the caller's process group.
    ///
    /// # Errors
    /// [`TransportError::Spawn`] when the program cannot be started.
    pub fn spawn(command: &StdioCommand) -> Result<StdioTransport, TransportError> {
        StdioTransport::start(command, false)
    }

    /// Starts the server in a process group of its own, killed as a whole when the transport
    /// closes or is dropped.
    ///
    /// # Errors
    /// [`TransportError::Spawn`] when the program cannot be started.
    pub fn spawn_grouped(command: &StdioCommand) -> Result<StdioTransport, TransportError> {
        StdioTransport::start(command, true)
    }

    fn start(command: &StdioCommand, grouped: bool) -> Result<StdioTransport, TransportError> {
        let spawn_error = |source| TransportError::Spawn {
            program: command.program.clone(),
            source,
        };
        let mut child = Process::spawn(command, grouped).map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("a standard stream was not piped"));
        let (stdin, stdout, stderr) = child.take_stdio();
        let stdin = stdin.ok_or_else(missing)?;
        let stdout = stdout.ok_or_else(missing)?;
        let stderr = stderr.ok_or_else(missing)?;
        let tail = StderrTail::default();
        tokio::spawn(keep_tail(BufReader::new(stderr), tail.0.clone()));
        Ok(StdioTransport {
            sink: StdioSink {
                child,
                stdin: Some(stdin),
                stderr: tail,
            },
            source: FrameReader::new(stdout),
        })
    }

    /// The last lines the child wrote to stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.sink.stderr.lines()
    }

    /// A handle on the last lines of the child's stderr, usable after the transport is gone.
    pub fn stderr(&self) -> StderrTail {
        self.sink.stderr.clone()
    }

    /// The child's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.sink.child.id()
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
    type Sink = StdioSink;
    type Source = StdioSource;

    fn split(self) -> (StdioSink, StdioSource) {
        (self.sink, self.source)
    }

    fn halves(&mut self) -> (&mut StdioSink, &mut StdioSource) {
        (&mut self.sink, &mut self.source)
    }
}

impl FrameSink for StdioSink {
    async fn send_all(&mut self, frames: &[Frame]) -> Result<(), TransportError> {
        let stdin = self.stdin.as_mut().ok_or(TransportError::Closed)?;
        Ok(write_frames(stdin, frames).await?)
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // As the MCP specification says: close its input, then SIGTERM, then SIGKILL, each
        // after a grace (on Windows the job is terminated after the first grace).
        drop(self.stdin.take());
        if tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.child.terminate();
            if tokio::time::timeout(STOP_GRACE, self.child.wait())
                .await
                .is_err()
            {
                self.child.start_kill()?;
                self.child.wait().await?;
            }
        }
        self.child.kill_rest();
        Ok(())
    }
}
