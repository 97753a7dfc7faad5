//! Unix: signals, rlimits, rusage, inodes and pipes.

use std::path::Path;
use std::time::Duration;

use tokio::signal::unix::{signal, Signal, SignalKind};

use super::FileId;

/// SIGINT and SIGTERM, each named as it arrives.
pub(crate) struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
}

impl StopSignals {
    /// Starts listening.
    pub(crate) fn listen() -> std::io::Result<StopSignals> {
        Ok(StopSignals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// The next stop signal's name.
    pub(crate) async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
        }
    }
}

/// SIGHUP, the request to reload the config.
pub(crate) struct Hangups(Option<Signal>);

impl Hangups {
    /// Starts listening; a failure is logged and no SIGHUP ever arrives.
    pub(crate) fn listen() -> Hangups {
        Hangups(
            signal(SignalKind::hangup())
                .inspect_err(|error| tracing::warn!(%error, "cannot watch SIGHUP"))
                .ok(),
        )
    }

    /// The next SIGHUP's name.
    pub(crate) async fn next(&mut self) -> &'static str {
        if let Some(hangups) = &mut self.0 {
            if hangups.recv().await.is_some() {
                return "SIGHUP";
            }
        }
        std::future::pending().await
    }
}

/// The device and inode of the file at `path`.
pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// Raises the soft limit of open files to the hard one: each HTTP connection and each stdio
/// server's pipes take descriptors, and the common soft limit (1,024) is below the connection
/// cap.
pub(crate) fn raise_open_files() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => tracing::debug!(from = soft, to = hard, "open files limit raised"),
            Err(error) => tracing::warn!(%error, soft, "cannot raise the open files limit"),
        },
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot read the open files limit"),
    }
}

/// The CPU time this process has used in user mode.
pub(crate) fn cpu_time() -> Option<Duration> {
    use nix::sys::resource::{getrusage, UsageWho};
    let t = getrusage(UsageWho::RUSAGE_SELF).ok()?.user_time();
    let micros = u64::try_from(t.tv_usec()).ok()?;
    Some(Duration::from_secs(u64::try_from(t.tv_sec()).ok()?) + Duration::from_micros(micros))
}
