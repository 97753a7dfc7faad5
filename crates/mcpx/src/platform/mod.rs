//! What the command does differently per platform, one module per platform with the same
//! functions: the stop signals (SIGINT and SIGTERM; Ctrl-C and Ctrl-Break on Windows), the
//! reload signal (SIGHUP; none on Windows, where `--watch` reloads), a file's identity for
//! `--watch` (its inode; its volume and file index on Windows), the open files limit and the CPU
//! time used, where the platform has them. (Standard input and output as non-blocking pipes:
//! `mcpclient::own_stdio`.)

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub(crate) use unix::*;
#[cfg(windows)]
pub(crate) use windows::*;

/// What tells one file from another at the same path: a new file renamed over the old one, a
/// symlink pointed elsewhere.
pub(crate) type FileId = (u64, u64);
