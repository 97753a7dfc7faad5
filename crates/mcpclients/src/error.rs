//! The errors of reading and changing client config files. Each names the file and what is
//! wrong with it, never what the file holds: a config file is full of tokens.

use std::path::PathBuf;

/// Where a file stops being JSON or TOML, and why (never the text there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Syntax {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong there, in general words.
    pub problem: String,
}

impl Syntax {
    /// The problem at byte `pos` of `text`.
    pub(crate) fn at(text: &str, pos: usize, problem: &str) -> Syntax {
        let pos = pos.min(text.len());
        let before = text.get(..pos).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Syntax {
            line,
            column,
            problem: problem.to_owned(),
        }
    }
}

impl std::fmt::Display for Syntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} column {}: {}",
            self.line, self.column, self.problem
        )
    }
}

/// A JSON path as the project prints it: `$.mcpServers.github`, `$["odd name"]`.
pub(crate) fn json_path(names: &[String]) -> String {
    let mut out = String::from("$");
    for name in names {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if plain {
            out.push('.');
            out.push_str(name);
        } else {
            out.push('[');
            out.push_str(&serde_json::Value::String(name.clone()).to_string());
            out.push(']');
        }
    }
    out
}

/// Why a client's servers could not be read or changed. Nothing was written when one of
/// these is returned, except where the variant says so.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The name is not one of the known clients (or formats).
    #[error("unknown client '{name}': want one of {known}")]
    UnknownClient {
        /// The name given.
        name: String,
        /// The names known, comma-separated.
        known: String,
    },
    /// The client has no config file of that scope.
    #[error("{client} has no {scope} scope: it has {has}")]
    NoSuchScope {
        /// The client.
        client: &'static str,
        /// The scope asked for.
        scope: &'static str,
        /// The scopes it has.
        has: String,
    },
    /// The client's file cannot be placed on this system (no home folder, no such file on
    /// this platform).
    #[error("cannot tell where {client}'s config file is: {why}")]
    NoLocation {
        /// The client.
        client: &'static str,
        /// What is missing.
        why: String,
    },
    /// The file is not there.
    #[error("{path}: no such file ({what})")]
    Missing {
        /// The file.
        path: PathBuf,
        /// What it would be.
        what: String,
    },
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is larger than [`crate::MAX_FILE_BYTES`].
    #[error("{path}: over {limit} bytes, not read")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The file is not valid JSON (or JSONC, or TOML): left as it is.
    #[error("{path} is not valid {format}, so it was left as it is ({syntax}); fix it or pass another file")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// JSON, JSON with comments, or TOML.
        format: &'static str,
        /// Where and why.
        syntax: Syntax,
    },
    /// A part of the file that must be an object (table) is something else.
    #[error("{path}: {at} is not an object, so its servers cannot be read")]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// The JSON path.
        at: String,
    },
    /// A server entry is not an object.
    #[error("{path}: server {at} is not an object")]
    BadEntry {
        /// The file.
        path: PathBuf,
        /// The JSON path of the entry.
        at: String,
    },
    /// Install was asked for an HTTP entry in a client whose file has none.
    #[error(
        "{client} cannot reach a server over HTTP from its config file: install it without --http"
    )]
    NoHttp {
        /// The client.
        client: &'static str,
    },
    /// mcpx's own config cannot take the change.
    #[error("mcpx config {path}: {problem}")]
    Config {
        /// mcpx's config file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// Install was asked for a token from the environment in a client that expands no
    /// variable in its file.
    #[error("{client} reads no variable in its config file, so the token cannot come from the environment there: serve mcpx on 127.0.0.1 and install without --token-env")]
    NoTokenReference {
        /// The client.
        client: &'static str,
    },
    /// The install record is unreadable.
    #[error("install record {path}: {problem}")]
    Record {
        /// The record file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The file changed between reading it and writing it back (the client wrote it), again
    /// on every try: nothing was written to it.
    #[error("{path} kept changing while mcpx changed it (the client writes it): nothing was written to it; quit the client, or try again")]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// Another install or uninstall holds the record's lock.
    #[error("{path}: another mcpx install or uninstall is running; try again when it is done (or remove this file if none is)")]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// The client's file already has mcpx installed with another config, whose record holds
    /// what that install replaced.
    #[error("{path}: mcpx is installed here with the config {config}: pass --config {config} (or uninstall it first)")]
    InstalledElsewhere {
        /// The client's file.
        path: PathBuf,
        /// The config of that install.
        config: PathBuf,
    },
    /// Uninstall found no record of an install into this file.
    #[error("{path}: mcpx has not been installed here (no record in {record}); nothing to undo")]
    NotInstalled {
        /// The client's file.
        path: PathBuf,
        /// The record file looked at.
        record: PathBuf,
    },
}

impl Error {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
