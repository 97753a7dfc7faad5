//! Where mcpx keeps its files, per platform: the one place that says so.
//!
//! | | config folder | cache folder |
//! |---|---|---|
//! | Linux and other Unix | `$XDG_CONFIG_HOME/mcpx`, else `~/.config/mcpx` | `$XDG_CACHE_HOME/mcpx`, else `~/.cache/mcpx` |
//! | macOS | `$XDG_CONFIG_HOME/mcpx`, else `~/.config/mcpx` | `$XDG_CACHE_HOME/mcpx`, else `~/Library/Caches/mcpx` |
//! | Windows | `%APPDATA%\mcpx` | `%LOCALAPPDATA%\mcpx\cache` |
//!
//! The config folder holds `config.json` (read when neither `--config` nor `./mcpx.json`
//! names one) and `credentials.json` (tokens, when the OS credential store does not answer).
//! On macOS the config is where a command-line user looks for it and writes it in dotfiles,
//! the same as on Linux, rather than under `~/Library/Application Support`; caches go where
//! macOS expects them (excluded from backups, purged when the disk is short). On Windows the
//! config roams with the user's profile (`APPDATA`) and the cache stays on the machine
//! (`LOCALAPPDATA`).
//!
//! [`Places::of`] works out the folders from a platform and the environment given, so every
//! platform's rules are tested on any; [`Places::here`] is this platform with this process's
//! environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The platforms whose conventions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and the other Unix systems: the XDG base directories.
    Unix,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Platform {
    /// The platform mcpx was built for.
    pub const HERE: Platform = if cfg!(windows) {
        Platform::Windows
    } else if cfg!(target_os = "macos") {
        Platform::MacOs
    } else {
        Platform::Unix
    };
}

/// mcpx's per-user folders; each `None` when the environment does not say where (no home).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    config: Option<PathBuf>,
    cache: Option<PathBuf>,
}

/// The name of mcpx's folder within each per-user base folder.
const FOLDER: &str = "mcpx";

impl Places {
    /// The folders on `platform` with the environment `env` gives.
    pub fn of(platform: Platform, env: &dyn Fn(&str) -> Option<OsString>) -> Places {
        // An empty variable counts as unset, as the XDG specification says.
        let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = || var("HOME");
        let (config, cache) = match platform {
            Platform::Unix => (
                var("XDG_CONFIG_HOME").or_else(|| home().map(|h| h.join(".config"))),
                var("XDG_CACHE_HOME").or_else(|| home().map(|h| h.join(".cache"))),
            ),
            Platform::MacOs => (
                var("XDG_CONFIG_HOME").or_else(|| home().map(|h| h.join(".config"))),
                var("XDG_CACHE_HOME").or_else(|| home().map(|h| h.join("Library").join("Caches"))),
            ),
            Platform::Windows => (var("APPDATA"), var("LOCALAPPDATA").map(|l| l.join(FOLDER))),
        };
        let cache = match platform {
            Platform::Windows => cache.map(|c| c.join("cache")),
            Platform::Unix | Platform::MacOs => cache.map(|c| c.join(FOLDER)),
        };
        Places {
            config: config.map(|c| c.join(FOLDER)),
            cache,
        }
    }

    /// The folders on this platform, from this process's environment.
    pub fn here() -> Places {
        Places::of(Platform::HERE, &|name| std::env::var_os(name))
    }

    /// The folder of the user's config and credentials file.
    pub fn config_dir(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// The user's config file, read when neither `--config` nor `./mcpx.json` names one.
    pub fn config_file(&self) -> Option<PathBuf> {
        self.config.as_ref().map(|c| c.join("config.json"))
    }

    /// The file tokens are kept in when the OS credential store does not answer.
    pub fn credentials_file(&self) -> Option<PathBuf> {
        self.config.as_ref().map(|c| c.join("credentials.json"))
    }

    /// The folder for what mcpx may keep between runs and lose at any time.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache.as_deref()
    }
}

/// Where the user's config file is, as help texts and messages say it.
pub const CONFIG_FILE_HINT: &str = if cfg!(windows) {
    r"%APPDATA%\mcpx\config.json"
} else {
    "$XDG_CONFIG_HOME/mcpx/config.json (~/.config/mcpx/config.json)"
};

#[cfg(test)]
mod tests {
    use super::*;

    fn places(platform: Platform, vars: &[(&str, &str)]) -> Places {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        Places::of(platform, &|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    /// `parts` joined as this platform joins them (the tests run on every platform).
    fn path(parts: &[&str]) -> PathBuf {
        parts.iter().collect()
    }

    #[test]
    fn unix_follows_the_xdg_variables_then_home() {
        let p = places(Platform::Unix, &[("HOME", "/home/a")]);
        let config = path(&["/home/a", ".config", "mcpx"]);
        assert_eq!(p.config_file(), Some(config.join("config.json")));
        assert_eq!(p.credentials_file(), Some(config.join("credentials.json")));
        assert_eq!(
            p.cache_dir(),
            Some(path(&["/home/a", ".cache", "mcpx"]).as_path())
        );
        let p = places(
            Platform::Unix,
            &[
                ("HOME", "/home/a"),
                ("XDG_CONFIG_HOME", "/c"),
                ("XDG_CACHE_HOME", "/k"),
            ],
        );
        assert_eq!(p.config_dir(), Some(path(&["/c", "mcpx"]).as_path()));
        assert_eq!(p.cache_dir(), Some(path(&["/k", "mcpx"]).as_path()));
        let p = places(
            Platform::Unix,
            &[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "")],
        );
        assert_eq!(p.config_dir(), Some(config.as_path()));
    }

    #[test]
    fn macos_keeps_the_config_in_dotfiles_and_caches_in_the_library() {
        let p = places(Platform::MacOs, &[("HOME", "/Users/a")]);
        assert_eq!(
            p.config_dir(),
            Some(path(&["/Users/a", ".config", "mcpx"]).as_path())
        );
        let caches = path(&["/Users/a", "Library", "Caches", "mcpx"]);
        assert_eq!(p.cache_dir(), Some(caches.as_path()));
        let p = places(
            Platform::MacOs,
            &[("HOME", "/Users/a"), ("XDG_CACHE_HOME", "/k")],
        );
        assert_eq!(p.cache_dir(), Some(path(&["/k", "mcpx"]).as_path()));
    }

    #[test]
    fn windows_roams_the_config_and_keeps_the_cache_local() {
        let p = places(
            Platform::Windows,
            &[
                ("APPDATA", r"C:\Users\a\AppData\Roaming"),
                ("LOCALAPPDATA", r"C:\Users\a\AppData\Local"),
                ("HOME", "/ignored"),
                ("XDG_CONFIG_HOME", "/ignored"),
            ],
        );
        let roaming = path(&[r"C:\Users\a\AppData\Roaming", "mcpx"]);
        assert_eq!(p.config_file(), Some(roaming.join("config.json")));
        let local = path(&[r"C:\Users\a\AppData\Local", "mcpx", "cache"]);
        assert_eq!(p.cache_dir(), Some(local.as_path()));
    }

    #[test]
    fn without_a_home_there_is_no_place() {
        for platform in [Platform::Unix, Platform::MacOs, Platform::Windows] {
            let p = places(platform, &[]);
            assert_eq!(
                (p.config_file(), p.cache_dir()),
                (None, None),
                "{platform:?}"
            );
        }
    }
}
