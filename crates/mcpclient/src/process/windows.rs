//! Windows: a Job Object per server (process-wrap's `JobObject`), killed when its last handle
//! closes.

use std::io;

use process_wrap::tokio::{ChildWrapper, CommandWrap, JobObject, KillOnDrop};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use crate::StdioCommand;

/// A started server: the child in its job. Dropping it closes the job, which kills every
/// process in it.
pub(crate) struct Process {
    child: Box<dyn ChildWrapper>,
}

impl Process {
    /// Starts `spec` in a job of its own, grouped or not: on Windows a console's Ctrl-C reaches
    /// the child whatever its job, so the job only decides what outlives it (nothing).
    pub(crate) fn spawn(spec: &StdioCommand, _grouped: bool) -> io::Result<Process> {
        let program = super::lookup::program(spec);
        let mut cmd = CommandWrap::from(super::command(&program, spec));
        cmd.wrap(KillOnDrop).wrap(JobObject);
        Ok(Process {
            child: cmd.spawn()?,
        })
    }

    /// The child's standard streams, each taken once.
    pub(crate) fn take_stdio(
        &mut self,
    ) -> (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>) {
        (
            self.child.stdin().take(),
            self.child.stdout().take(),
            self.child.stderr().take(),
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

    /// Stops the child and everything it started: terminates the job.
    pub(crate) fn terminate(&mut self) {
        if let Err(error) = self.child.start_kill() {
            tracing::debug!(%error, "the job was not terminated");
        }
    }

    /// Terminates the job.
    pub(crate) fn start_kill(&mut self) -> io::Result<()> {
        self.child.start_kill()
    }

    /// Terminates whatever is left in the job.
    pub(crate) fn kill_rest(&mut self) {
        // An empty job's answer is not an error worth reporting.
        let _ = self.child.start_kill();
    }
}
