//! What the command keeps about servers between runs, under the user's cache folder: the
//! protocol era each one speaks (so that its next start needs no probe, for the command line
//! and `mcpx serve` alike) and its tool list (so that `tools`, `tools --search` and `lint` need
//! not start every server). Both are caches ([`servercache`]): without a cache folder, or when
//! one cannot be read or written, every run asks the servers.

use std::path::PathBuf;
use std::time::Duration;

use servercache::{EraMemory, ToolCache};

/// The cache folder ([`mcpx::places`]: `$XDG_CACHE_HOME/mcpx` on Linux, `~/Library/Caches/mcpx`
/// on macOS, `%LOCALAPPDATA%\mcpx\cache` on Windows); none when the platform names none or
/// when `MCPX_NO_CACHE` is set (not empty).
pub(crate) fn cache_dir() -> Option<PathBuf> {
    if std::env::var_os("MCPX_NO_CACHE").is_some_and(|v| !v.is_empty()) {
        return None;
    }
    mcpx::places::Places::here().cache_dir().map(PathBuf::from)
}

/// The eras learnt by earlier runs.
pub(crate) fn eras() -> Option<EraMemory> {
    cache_dir().map(|dir| EraMemory::new(&dir))
}

/// The tool lists kept by earlier runs.
pub(crate) fn tool_cache() -> Option<ToolCache> {
    cache_dir().map(|dir| ToolCache::new(&dir))
}

/// `3 s`, `4 min`, `2 h`: how long ago, for a person.
pub(crate) fn ago(age: Duration) -> String {
    let seconds = age.as_secs();
    match seconds {
        0..=59 => format!("{seconds} s"),
        60..=5_999 => format!("{} min", seconds / 60),
        _ => format!("{} h", seconds / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(ago(Duration::from_secs(3)), "3 s");
        assert_eq!(ago(Duration::from_secs(150)), "2 min");
        assert_eq!(ago(Duration::from_secs(7300)), "2 h");
    }
}
