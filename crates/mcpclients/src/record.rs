//! The record of what `install` replaced, so that `uninstall` can put it back exactly.
//!
//! It lives beside mcpx's config, as `mcpx.installs.json`, not in the client's file: Codex
//! refuses unknown keys in `config.toml` under `--strict-config`, VS Code's `mcp.json` schema
//! allows only `servers` and `inputs`, and clients rewrite their own files (Claude Code its
//! `~/.claude.json` on every start) and may drop keys they do not know. Beside the config it is
//! found again from the client's file too: the entry install wrote names the config with
//! `--config`. It holds, per client file and servers object, the servers as they were (in
//! their order), whether the servers object existed, the entry written, the backup made, and
//! whether install created the file. It holds the servers' values as the client's file did, so
//! it is written readable by its owner only.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::file::{self, Servers};

/// The record's file name, beside mcpx's config.
pub const RECORD_FILE: &str = "mcpx.installs.json";

/// The largest record read.
const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// How long an install or uninstall waits for another to release the record's lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A lock file older than this was left by a run that died: it is taken over.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(120);

/// How often a held lock is tried again.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(25);

/// The lock beside the record (`mcpx.installs.json.lock`), held from reading the record to
/// writing it, so that two installs at once cannot lose each other's entry. A file created
/// with `create_new` rather than an OS lock: it works the same on every platform and file
/// system, and one left by a crash is taken over once stale.
#[derive(Debug)]
pub(crate) struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock of the record beside `config`, waiting up to [`LOCK_WAIT`].
    pub(crate) fn take(config: &Path) -> Result<Lock, Error> {
        let path = record_path(config).with_extension("json.lock");
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let start = std::time::Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(Lock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > STALE_LOCK);
                    if stale {
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if start.elapsed() > LOCK_WAIT {
                        return Err(Error::Locked { path });
                    }
                    std::thread::sleep(LOCK_RETRY);
                }
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The record's path beside the config at `config`.
fn record_path(config: &Path) -> PathBuf {
    config
        .parent()
        .map_or_else(|| PathBuf::from(RECORD_FILE), |d| d.join(RECORD_FILE))
}

/// One install.
#[derive(Debug, Clone)]
pub(crate) struct Install {
    pub(crate) client: String,
    pub(crate) scope: String,
    pub(crate) file: PathBuf,
    pub(crate) at: Vec<String>,
    pub(crate) installed_at: String,
    pub(crate) backup: Option<PathBuf>,
    /// Install created the client's file.
    pub(crate) created: bool,
    /// The servers before install; `None` when the servers object was not there.
    pub(crate) before: Option<Servers>,
    /// The servers member's text before install, for the JSON formats: put back as it was
    /// (comments and all) when nothing changed since.
    pub(crate) before_text: Option<String>,
    /// What install wrote in their place.
    pub(crate) added: Servers,
    /// The servers install left in the client's file (what mcpx cannot run): one the client
    /// deletes meanwhile is not put back.
    pub(crate) left: Vec<String>,
}

/// Every install recorded beside one config.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) path: PathBuf,
    pub(crate) installs: Vec<Install>,
}

fn servers_json(servers: &Servers) -> Value {
    Value::Object(servers.iter().cloned().collect::<Map<_, _>>())
}

fn servers_from(value: &Value) -> Option<Servers> {
    value
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

impl Record {
    /// The record beside the config at `config` (empty when there is none).
    pub(crate) fn load(config: &Path) -> Result<Record, Error> {
        let path = record_path(config);
        let bad = |problem: String| Error::Record {
            path: path.clone(),
            problem,
        };
        let Some(text) = file::read_text(&path, MAX_RECORD_BYTES)? else {
            return Ok(Record {
                path,
                installs: Vec::new(),
            });
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "not JSON at line {} column {}",
                e.line(),
                e.column()
            ))
        })?;
        let mut installs = Vec::new();
        for item in value["installs"].as_array().into_iter().flatten() {
            let text_of = |k: &str| item[k].as_str().map(str::to_owned);
            let (Some(client), Some(file), Some(at)) =
                (text_of("client"), text_of("file"), item["at"].as_array())
            else {
                return Err(bad("an install without client, file or at".into()));
            };
            installs.push(Install {
                client,
                scope: text_of("scope").unwrap_or_default(),
                file: file.into(),
                at: at
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                installed_at: text_of("installedAt").unwrap_or_default(),
                backup: text_of("backup").map(PathBuf::from),
                created: item["created"].as_bool() == Some(true),
                before: servers_from(&item["before"]),
                before_text: text_of("beforeText"),
                added: servers_from(&item["added"]).unwrap_or_default(),
                // Absent from a record written before it was kept: none.
                left: item["left"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            });
        }
        Ok(Record { path, installs })
    }

    /// The install into `file` at `at`.
    pub(crate) fn find(&self, file: &Path, at: &[String]) -> Option<usize> {
        self.installs
            .iter()
            .position(|i| i.file == file && i.at == at)
    }

    /// Writes the record (removes its file when no install is left).
    pub(crate) fn save(&self) -> Result<(), Error> {
        if self.installs.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&self.path, e)),
                _ => Ok(()),
            };
        }
        let installs: Vec<Value> = self
            .installs
            .iter()
            .map(|i| {
                json!({
                    "client": i.client,
                    "scope": i.scope,
                    "file": i.file.display().to_string(),
                    "at": i.at,
                    "installedAt": i.installed_at,
                    "backup": i.backup.as_ref().map(|b| b.display().to_string()),
                    "created": i.created,
                    "before": i.before.as_ref().map(servers_json),
                    "beforeText": i.before_text,
                    "added": servers_json(&i.added),
                    "left": i.left,
                })
            })
            .collect();
        let value = json!({"version": 1, "installs": installs});
        let text = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
        file::write_atomic(&self.path, &text, Some(0o600))
    }
}

/// `now` as `YYYYMMDDTHHMMSSZ` (for file names) and RFC 3339 (for the record), in UTC.
pub(crate) fn stamps(now: std::time::SystemTime) -> (String, String) {
    let iso = humantime::format_rfc3339_seconds(now).to_string();
    (iso.replace(['-', ':'], ""), iso)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_held_once_and_released() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.json");
        let lock = Lock::take(&config).unwrap();
        let path = dir.path().join("mcpx.installs.json.lock");
        assert!(path.exists());
        // Held: a second taker waits until it is released.
        let second = std::thread::spawn({
            let config = config.clone();
            move || Lock::take(&config).map(drop)
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(lock);
        assert!(second.join().unwrap().is_ok(), "taken once released");
        assert!(!path.exists());
    }

    #[test]
    fn stamps_are_utc() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_529_312);
        assert_eq!(
            stamps(at),
            ("20261206T035512Z".into(), "2026-12-06T03:55:12Z".into())
        );
        assert_eq!(stamps(std::time::UNIX_EPOCH).1, "1970-01-01T00:00:00Z");
    }
}
