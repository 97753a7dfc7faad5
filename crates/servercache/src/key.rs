//! What identifies a server in the cache: SHA-256 digests of how it is reached, and of the
//! files it runs from, so that an upgrade in place (a package reinstalled over the old one)
//! is a new server.

use std::path::{Path, PathBuf};

use mcpclient::Reach;
use sha2::{Digest, Sha256};

/// The SHA-256 of `parts`, each length-prefixed so that no two lists of parts collide by
/// concatenation, as 64 lowercase hex digits.
pub fn digest(parts: &[&[u8]]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The size and modification time of the files a stdio server runs from: its program and its
/// first argument (the script an interpreter runs: `node dist/index.js`), each when it names a
/// regular file (a relative one from the server's `cwd`). A package reinstalled at another
/// version rewrites them. Later arguments are left out: they often name files the server
/// itself writes (a database, a log). Empty for an HTTP server (its URL is what identifies
/// it) and for a program found on `PATH`, which is not looked up (its version, when it
/// matters, is in its arguments: `npx -y pkg@1.2.3`, `uvx pkg==1.2.3`).
pub fn fingerprint(reach: &Reach) -> Vec<u8> {
    let Reach::Stdio(command) = reach else {
        return Vec::new();
    };
    let base = command.cwd.clone().unwrap_or_default();
    let mut out = Vec::new();
    for text in std::iter::once(&command.program).chain(command.args.first()) {
        let Ok(meta) = std::fs::metadata(resolve(&base, text)) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let modified = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(&meta.len().to_le_bytes());
        out.extend_from_slice(&modified.to_le_bytes());
    }
    out
}

fn resolve(base: &Path, text: &str) -> PathBuf {
    let path = Path::new(text);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// The transport fields that identify a server for its era: the command, its arguments and
/// working directory (never its environment), or the URL (never its headers).
pub(crate) fn reach_parts(reach: &Reach) -> Option<Vec<Vec<u8>>> {
    match reach {
        Reach::Stdio(command) => {
            let mut parts = vec![b"stdio".to_vec(), command.program.as_bytes().to_vec()];
            parts.extend(command.args.iter().map(|a| a.as_bytes().to_vec()));
            let cwd = command
                .cwd
                .as_ref()
                .map(|c| c.to_string_lossy().into_owned());
            parts.push(cwd.unwrap_or_default().into_bytes());
            parts.push(fingerprint(reach));
            Some(parts)
        }
        Reach::Http(config) => Some(vec![b"http".to_vec(), config.url.as_bytes().to_vec()]),
        // A server in this process is never started twice from a config; one whose entry
        // cannot be used never starts.
        Reach::InProcess(_) | Reach::Unusable { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpclient::StdioCommand;

    fn stdio(program: &str, args: &[&str]) -> Reach {
        Reach::Stdio(StdioCommand {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..StdioCommand::default()
        })
    }

    #[test]
    fn parts_are_kept_apart() {
        assert_ne!(digest(&[b"ab", b"c"]), digest(&[b"a", b"bc"]));
        assert_eq!(digest(&[b"x"]).len(), 64);
    }

    #[test]
    fn the_files_a_command_runs_from_are_part_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("index.js");
        std::fs::write(&script, "v1").unwrap();
        let script_text = script.display().to_string();
        let data = dir.path().join("data.db");
        std::fs::write(&data, "rows").unwrap();
        let data_text = data.display().to_string();
        let reach = stdio("node", &[&script_text, &data_text]);
        let before = fingerprint(&reach);
        assert!(!before.is_empty());
        // A file the server writes is not part of it; the script it runs is.
        std::fs::write(&data, "more rows").unwrap();
        assert_eq!(fingerprint(&reach), before);
        std::fs::write(&script, "version 2").unwrap();
        assert_ne!(fingerprint(&reach), before);
        // A program on PATH and words that name no file add nothing.
        assert!(fingerprint(&stdio("uvx", &["pkg==1.2.3"])).is_empty());
    }

    #[test]
    fn the_environment_and_headers_are_not_part_of_it() {
        let mut with_env = StdioCommand {
            program: "srv".to_owned(),
            ..StdioCommand::default()
        };
        let plain = reach_parts(&Reach::Stdio(with_env.clone()));
        with_env.env.insert("TOKEN".to_owned(), "s3cret".to_owned());
        assert_eq!(reach_parts(&Reach::Stdio(with_env)), plain);
        let http = |headers: Vec<(String, String)>| {
            Reach::Http(mcpclient::HttpConfig {
                url: "http://127.0.0.1:1/mcp".to_owned(),
                headers,
                auth: None,
            })
        };
        assert_eq!(
            reach_parts(&http(vec![(
                "Authorization".into(),
                "Bearer s3cret".into()
            )])),
            reach_parts(&http(Vec::new()))
        );
    }
}
