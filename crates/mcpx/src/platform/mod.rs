//! What the command does differently per platform, one module per platform with the same
//! functions: the stop signals (SIGINT and SIGTERM; Ctrl-C and Ctrl-Break on Windows), the
//! reload signal (SIGHUP; none on Windows, where `--watch` reloads), a file's identity for
//! `--watch` (its inode; its volume and file index on Windows), standard input and output as
//! non-blocking pipes where the platform has them, the open files limit and the CPU time used,
//! where the platform has them.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub(crate) use unix::*;
#[cfg(windows)]
pub(crate) use windows::*;

/// Standard input and output of the stdio front.
pub(crate) type Stdio = (
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
);

/// What tells one file from another at the same path: a new file renamed over the old one, a
/// symlink pointed elsewhere.
pub(crate) type FileId = (u64, u64);
