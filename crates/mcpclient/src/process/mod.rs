//! Starting a stdio server and stopping it together with everything it started, one module per
//! platform with the same functions.
//!
//! - Unix: a server started grouped runs in a process group of its own (its pid), so that what
//!   it starts (a wrapper such as `npx` starts the real server as its child) is signalled and
//!   killed with it; one started inline shares mcpx's group, where a terminal's Ctrl-C reaches
//!   it too. Asked to stop by SIGTERM, killed by SIGKILL.
//! - Windows: every server runs in a Job Object of its own whose last handle closing kills every
//!   process in it, so a server and what it started never outlive its transport, nor mcpx
//!   itself. Windows has no signal a server without a window reliably takes, so the request to
//!   stop after the stdin grace is terminating the job. The program is looked up through `PATH`
//!   and `PATHEXT` the way a shell does, so that `npx` starts `npx.cmd`.

mod lookup;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::ffi::OsStr;
use std::process::Stdio;

use tokio::process::Command;

use crate::StdioCommand;

pub use lookup::locate;

#[cfg(unix)]
pub(crate) use unix::Process;
#[cfg(windows)]
pub(crate) use windows::Process;

/// The command for `program` with the args, env and cwd of `spec`, its three standard streams
/// piped, killed when dropped.
fn command(program: &OsStr, spec: &StdioCommand) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(&spec.args)
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    cmd
}
