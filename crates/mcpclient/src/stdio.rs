//! The stdio transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child's stderr is captured (never mixed into stdout), keeping the last
//! [`MAX_STDERR_LINES`] lines. Lines longer than [`crate::MAX_FRAME_BYTES`] are skipped without
//! being held in memory.
//!
//! `close` asks the child to stop by closing its stdin, waits [`STOP_GRACE`], sends SIGTERM,
//! waits again, then kills (SIGKILL) and reaps it; dropping the transport kills it. Started
//! with [`StdioTransport::spawn_grouped`] (as the gateway starts its servers), the child runs
//! in a process group of its own, so that what it starts (a wrapper such as `npx` starts the
//! real server as its child) stops with it: `close` and drop kill whatever is left of the group.
//! [`StdioTransport::spawn`] leaves the child in mcpx's group, where a terminal's Ctrl-C reaches
//! it too (the command line's case).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::lines::{write_frames, FrameReader};
use crate::{Frame, FrameSink, Transport, TransportError};

/// Most lines of the child's stderr kept (the latest ones).
pub const MAX_STDERR_LINES: usize = 200;

/// How long `close` waits for the child to exit after closing its stdin, and again after
/// SIGTERM, before killing it.
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
    child: Child,
    /// The child's own process group (its pid), killed as a whole; none when it shares ours.
    group: Option<nix::unistd::Pid>,
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
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .envs(&command.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if grouped {
            cmd.process_group(0);
        }
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
        let tail = StderrTail::default();
        tokio::spawn(keep_tail(BufReader::new(stderr), tail.0.clone()));
        let group = child
            .id()
            .filter(|_| grouped)
            .and_then(|pid| i32::try_from(pid).ok())
            .map(nix::unistd::Pid::from_raw);
        Ok(StdioTransport {
            sink: StdioSink {
                child,
                group,
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
        // after a grace.
        drop(self.stdin.take());
        if tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.terminate();
            if tokio::time::timeout(STOP_GRACE, self.child.wait())
                .await
                .is_err()
            {
                self.child.start_kill()?;
                self.child.wait().await?;
            }
        }
        self.kill_group();
        Ok(())
    }
}

impl StdioSink {
    /// Sends SIGTERM to the child's group, or to the child when it shares ours.
    fn terminate(&self) {
        use nix::sys::signal::{kill, killpg, Signal};
        let sent = match (self.group, self.child.id()) {
            (Some(group), _) => killpg(group, Signal::SIGTERM),
            (None, Some(pid)) => match i32::try_from(pid) {
                Ok(pid) => kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM),
                Err(_) => return,
            },
            (None, None) => return,
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "SIGTERM not sent");
        }
    }

    /// Kills every process left in the child's group.
    fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            // ESRCH (nobody left) is the usual answer.
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

impl Drop for StdioSink {
    fn drop(&mut self) {
        self.kill_group();
    }
}
