//! The files of the cache: read whole but bounded, written whole by a rename, and pruned to a
//! bounded count per folder.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

/// The most files one folder of the cache keeps (one per server entry): past it, the oldest
/// are removed when a new one is written.
pub const MAX_ENTRIES: usize = 1024;

/// Why a cache file could not be read or written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The file system refused.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than its kind may be.
    #[error("{}: over {limit} bytes", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The most its kind may hold.
        limit: u64,
    },
    /// The file is not what this crate writes.
    #[error("{}: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The text of `path`, `None` when there is none; refused past `limit` bytes.
pub(crate) fn read(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, CacheError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > limit {
        return Err(CacheError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(Some(bytes))
}

/// Numbers the temporary files of one process, so that two threads never share one.
static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// Replaces `path` with `bytes` whole: written under a temporary name in the same folder
/// (mode 0600), then renamed into place. Makes the folder when missing, and keeps it at
/// [`MAX_ENTRIES`] files.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), CacheError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(io(folder))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = folder.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(e) = written {
        // Nothing to undo if it never existed.
        let _ = std::fs::remove_file(&temporary);
        return Err(io(path)(e));
    }
    prune(folder, MAX_ENTRIES);
    Ok(())
}

/// Removes the oldest files of `folder` past `keep` (and temporary files left by a run that
/// died writing). Best effort: what cannot be read or removed stays.
fn prune(folder: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .take(keep * 2 + 16)
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, entry.path()))
        })
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    let excess = files.len() - keep;
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_read_back_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/entry.json");
        assert!(read(&path, 10).unwrap().is_none());
        write(&path, b"first").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(read(&path, 10).unwrap().unwrap(), b"second");
        assert!(matches!(
            read(&path, 3),
            Err(CacheError::TooLarge { limit: 3, .. })
        ));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["entry.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn the_oldest_files_go_past_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            let path = dir.path().join(format!("{i}"));
            std::fs::write(&path, "x").unwrap();
            let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(i);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        prune(dir.path(), 3);
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["2", "3", "4"]);
    }
}
