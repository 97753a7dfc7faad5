//! One client config file: read whole (bounded), parsed in its format, its servers read, and
//! written back with only the servers changed.
//!
//! A write goes to a new temporary file beside the target, created readable by its owner only
//! (the text holds tokens) under a random name, written, flushed to disk, given the target's
//! permissions, then renamed over the target, and the folder flushed: a crash leaves the old
//! file or the new one, never half of one, and no copy readable by others. A symlinked file is
//! written through its link (the link stays). Just before the rename the target is read again:
//! when it is no longer the text the change was computed from (the client wrote it meanwhile),
//! nothing is written and [`Error::Changed`] says so, for the caller to start over.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::client::{Format, Target};
use crate::error::Error;
use crate::{jsonc, toml_file};

/// The largest client config file read: Claude Code's `~/.claude.json` grows with its history
/// to a few MiB.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A server list in its file's order.
pub(crate) type Servers = Vec<(String, Value)>;

enum Parsed {
    Json(jsonc::Doc),
    Toml(Box<toml_edit::DocumentMut>),
}

/// A client file as read.
pub(crate) struct ClientFile {
    pub(crate) target: Target,
    /// The file's text; `None` when there is no file.
    pub(crate) text: Option<String>,
    parsed: Parsed,
}

/// The text of `path`, `None` when it does not exist; refused past `limit`.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<Option<String>, Error> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut text = String::new();
    file.take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::io(path, e))?;
    if text.len() as u64 > limit {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(Some(text))
}

impl ClientFile {
    /// Reads and parses the target's file; a file that is not there reads as empty.
    pub(crate) fn read(target: &Target) -> Result<ClientFile, Error> {
        let text = read_text(&target.file, MAX_FILE_BYTES)?;
        let format = target.client.format();
        let source = match text.as_deref() {
            Some(t) if !t.trim().is_empty() => t,
            _ if format == Format::Toml => "",
            _ => "{}",
        };
        let malformed = |syntax| Error::Malformed {
            path: target.file.clone(),
            format: format.name(),
            syntax,
        };
        let parsed = match format {
            Format::Toml => Parsed::Toml(Box::new(toml_file::parse(source).map_err(malformed)?)),
            Format::Json | Format::Jsonc => {
                let doc = jsonc::parse(source, format == Format::Jsonc).map_err(malformed)?;
                if !doc.value.is_object() {
                    return Err(Error::NotAnObject {
                        path: target.file.clone(),
                        at: "$".into(),
                    });
                }
                Parsed::Json(doc)
            }
        };
        Ok(ClientFile {
            target: target.clone(),
            text,
            parsed,
        })
    }

    /// The whole file as JSON (a TOML file's tables as objects).
    pub(crate) fn value(&self) -> Value {
        match &self.parsed {
            Parsed::Json(doc) => doc.value.clone(),
            Parsed::Toml(doc) => toml_file::document_json(doc),
        }
    }

    /// The text the file has, or would have when empty.
    fn source(&self) -> &str {
        match (&self.text, &self.parsed) {
            (Some(t), _) if !t.trim().is_empty() => t,
            (_, Parsed::Toml(_)) => "",
            _ => "{}",
        }
    }

    /// The servers, in the file's order; `None` when the servers member is not there.
    pub(crate) fn servers(&self) -> Result<Option<Servers>, Error> {
        let path = &self.target.file;
        match &self.parsed {
            Parsed::Toml(doc) => {
                toml_file::servers(doc, &self.target.at[0]).map_err(|at| Error::NotAnObject {
                    path: path.clone(),
                    at,
                })
            }
            Parsed::Json(doc) => {
                let Some(value) = jsonc::get(&doc.value, &self.target.at) else {
                    return Ok(None);
                };
                let Value::Object(members) = value else {
                    return Err(Error::NotAnObject {
                        path: path.clone(),
                        at: self.target.servers_path(),
                    });
                };
                let mut out = Vec::new();
                for (name, entry) in members {
                    if !entry.is_object() {
                        let mut at = self.target.at.clone();
                        at.push(name.clone());
                        return Err(Error::BadEntry {
                            path: path.clone(),
                            at: crate::error::json_path(&at),
                        });
                    }
                    out.push((name.clone(), entry.clone()));
                }
                Ok(Some(out))
            }
        }
    }

    /// The servers member's value as written in the file; for TOML, a document of the servers
    /// tables alone, their comments and layout kept.
    pub(crate) fn servers_text(&self) -> Option<String> {
        match &self.parsed {
            Parsed::Json(doc) => {
                jsonc::value_text(self.source(), doc, &self.target.at).map(str::to_owned)
            }
            Parsed::Toml(doc) => toml_file::tables_text(doc, &self.target.at[0]),
        }
    }

    /// The file's text with its servers member's value set to `raw`, the text it had before
    /// (JSON formats; `servers` is what it spells).
    pub(crate) fn with_servers_text(
        &self,
        raw: &str,
        servers: &[(String, Value)],
    ) -> Result<String, Error> {
        let doc = match &self.parsed {
            Parsed::Json(doc) => doc,
            Parsed::Toml(doc) => {
                let mut doc = doc.as_ref().clone();
                if !toml_file::with_tables_text(&mut doc, &self.target.at[0], raw) {
                    return self.with_servers(Some(servers));
                }
                return Ok(doc.to_string());
            }
        };
        let object: Map<String, Value> = servers.iter().cloned().collect();
        jsonc::set_text(
            self.source(),
            doc,
            &self.target.at,
            raw,
            &Value::Object(object),
        )
        .map_err(|at| Error::NotAnObject {
            path: self.target.file.clone(),
            at,
        })
    }

    /// The file's text with its servers replaced by `servers` (`None`: the member removed);
    /// every other byte as it was.
    pub(crate) fn with_servers(
        &self,
        servers: Option<&[(String, Value)]>,
    ) -> Result<String, Error> {
        let not_object = |at: String| Error::NotAnObject {
            path: self.target.file.clone(),
            at,
        };
        match &self.parsed {
            Parsed::Toml(doc) => {
                let mut doc = doc.as_ref().clone();
                toml_file::with_servers(&mut doc, &self.target.at[0], servers);
                Ok(doc.to_string())
            }
            Parsed::Json(doc) => {
                let text = self.source();
                let mut out = match servers {
                    Some(list) => {
                        let object: Map<String, Value> = list.iter().cloned().collect();
                        jsonc::set(text, doc, &self.target.at, &Value::Object(object))
                            .map_err(not_object)?
                    }
                    None => jsonc::remove(text, doc, &self.target.at).map_err(not_object)?,
                };
                if self.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
                    out.push('\n');
                }
                Ok(out)
            }
        }
    }
}

/// Symbolic links followed at most, as the kernel does: past that a loop.
const MAX_LINKS: usize = 40;

/// The file `path` names, its links followed: the file itself where it exists; where it does
/// not but a link names it (a dotfiles link made before the file), the path the last link
/// points to, so that writing creates the file there and the link stays.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let is_link = std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return at;
        }
        let Ok(next) = std::fs::read_link(&at) else {
            return at;
        };
        at = match at.parent() {
            Some(parent) if next.is_relative() => parent.join(next),
            _ => next,
        };
    }
    path.to_path_buf()
}

/// Writes `text` to `path` through a temporary file renamed over it, keeping the permissions
/// of the file it replaces (`mode` for a new one, on Unix).
pub(crate) fn write_atomic(path: &Path, text: &str, mode: Option<u32>) -> Result<(), Error> {
    replace(path, None, text, mode)
}

/// As [`write_atomic`], when the file still holds `expected` (`Some(None)`: is still absent)
/// just before the rename; else [`Error::Changed`] and nothing written.
pub(crate) fn replace(
    path: &Path,
    expected: Option<Option<&str>>,
    text: &str,
    mode: Option<u32>,
) -> Result<(), Error> {
    use std::io::Write;
    let real = real_path(path);
    let dir = real
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // tempfile creates it with O_EXCL, mode 0600, under a random name; it is removed when
    // dropped unless persisted.
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}.mcpx-"))
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| Error::io(path, e))?;
    let written = (|| {
        temp.write_all(text.as_bytes())?;
        temp.as_file().sync_all()?;
        match std::fs::metadata(&real) {
            Ok(meta) => temp.as_file().set_permissions(meta.permissions()),
            Err(_) => set_mode(temp.path(), mode),
        }
    })();
    written.map_err(|e| Error::io(path, e))?;
    if let Some(expected) = expected {
        let now = read_text(&real, MAX_FILE_BYTES)?;
        if now.as_deref() != expected {
            return Err(Error::Changed {
                path: path.to_path_buf(),
            });
        }
    }
    temp.persist(&real).map_err(|e| Error::io(path, e.error))?;
    sync_dir(&dir);
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: Option<u32>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match mode {
        Some(mode) => std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)),
        None => Ok(()),
    }
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: Option<u32>) -> std::io::Result<()> {
    Ok(())
}

/// Flushes a folder's entries (the rename) to disk, where the platform can.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// The permission bits of `path` that let others than its owner read it (Unix; `None`
/// elsewhere or when there is no file).
pub(crate) fn readable_by_others(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o777)
            .filter(|mode| mode & 0o044 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Copies `path` to `PATH.mcpx-backup-STAMP` beside it (with its permissions): the backup's
/// path.
pub(crate) fn backup(path: &Path, stamp: &str) -> Result<PathBuf, Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut to = path.with_file_name(format!("{name}.mcpx-backup-{stamp}"));
    let mut n = 1;
    while to.exists() {
        n += 1;
        to = path.with_file_name(format!("{name}.mcpx-backup-{stamp}-{n}"));
    }
    std::fs::copy(path, &to).map_err(|e| Error::io(&to, e))?;
    Ok(to)
}
