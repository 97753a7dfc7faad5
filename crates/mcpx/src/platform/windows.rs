//! Windows: console control events, file indexes, and no rlimits, rusage or SIGHUP.

use std::path::Path;
use std::time::Duration;

use tokio::signal::windows::{ctrl_break, ctrl_c, CtrlBreak, CtrlC};

use super::FileId;

/// Ctrl-C and Ctrl-Break from the console, each named as it arrives.
pub(crate) struct StopSignals {
    interrupt: CtrlC,
    brk: CtrlBreak,
}

impl StopSignals {
    /// Starts listening.
    pub(crate) fn listen() -> std::io::Result<StopSignals> {
        Ok(StopSignals {
            interrupt: ctrl_c()?,
            brk: ctrl_break()?,
        })
    }

    /// The next stop event's name.
    pub(crate) async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "Ctrl-C",
            _ = self.brk.recv() => "Ctrl-Break",
        }
    }
}

/// Windows has no SIGHUP: `--watch` is the reload there.
pub(crate) struct Hangups;

impl Hangups {
    /// Nothing to listen to.
    pub(crate) fn listen() -> Hangups {
        Hangups
    }

    /// Never.
    pub(crate) async fn next(&mut self) -> &'static str {
        std::future::pending().await
    }
}

/// The volume serial number and file index of the file at `path` (its inode, as far as a
/// Windows file system has one). The file is opened for the moment it takes, sharing reads,
/// writes and deletes, so an editor saving over it is never held up.
pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    let file = std::fs::File::open(path).ok()?;
    let info = winapi_util::file::information(&file).ok()?;
    Some((info.volume_serial_number(), info.file_index()))
}

/// Windows has no limit of open handles to raise.
pub(crate) fn raise_open_files() {}

/// Not read on Windows (its figure needs a system call without a safe binding here).
pub(crate) fn cpu_time() -> Option<Duration> {
    None
}
