//! Unix: process groups and signals.

use std::io;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::StdioCommand;

/// A started server: the child, and its own process group when it has one.
pub(crate) struct Process {
    child: Child,
    /// The child's own process group (its pid), killed as a whole; none when it shares ours.
    group: Option<Pid>,
}

impl Process {
    /// Starts `spec`, in a process group of its own when `grouped`.
    pub(crate) fn spawn(spec: &StdioCommand, grouped: bool) -> io::Result<Process> {
        let mut cmd = super::command(spec.program.as_ref(), spec);
        if grouped {
            cmd.process_group(0);
        }
        let child = cmd.spawn()?;
        let group = child
            .id()
            .filter(|_| grouped)
            .and_then(|pid| i32::try_from(pid).ok())
            .map(Pid::from_raw);
        Ok(Process { child, group })
    }

    /// The child's standard streams, each taken once.
    pub(crate) fn take_stdio(
        &mut self,
    ) -> (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>) {
        (
            self.child.stdin.take(),
            self.child.stdout.take(),
            self.child.stderr.take(),
        )
    }

    /// The child's process id, while it runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits for the child to exit.
    pub(crate) async fn wait(&mut self) -> io::Result<()> {
        self.child.wait().await.map(drop)
    }

    /// Asks the child to stop: SIGTERM to its group, or to the child when it shares ours.
    pub(crate) fn terminate(&mut self) {
        let sent = match (self.group, self.child.id()) {
            (Some(group), _) => killpg(group, Signal::SIGTERM),
            (None, Some(pid)) => match i32::try_from(pid) {
                Ok(pid) => kill(Pid::from_raw(pid), Signal::SIGTERM),
                Err(_) => return,
            },
            (None, None) => return,
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "SIGTERM not sent");
        }
    }

    /// Kills the child (SIGKILL).
    pub(crate) fn start_kill(&mut self) -> io::Result<()> {
        self.child.start_kill()
    }

    /// Kills every process left in the child's group.
    pub(crate) fn kill_rest(&mut self) {
        if let Some(group) = self.group.take() {
            // ESRCH (nobody left) is the usual answer.
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill_rest();
    }
}
