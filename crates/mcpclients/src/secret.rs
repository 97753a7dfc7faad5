//! Masking for what is shown: `--dry-run` prints entries with every value that may be a
//! secret replaced by [`MASK`]. The files themselves keep their values as the user wrote them.
//!
//! Masked: every `env` and `headers` value that is not only a `${VAR}` reference (the name is
//! not a secret, the value it expands to is never read here); an argument that looks like a
//! token (a known token prefix, a `Bearer`, a long run of letters and digits, or what follows
//! `--token`-like flags and `KEY=`-like words whose name says secret); a URL's user
//! information and query values.

use serde_json::{Map, Value};

/// What a masked value is shown as.
pub const MASK: &str = "•••";

/// Words in a name that say its value is a secret.
const SECRET_WORDS: [&str; 8] = [
    "token",
    "secret",
    "key",
    "password",
    "passwd",
    "auth",
    "credential",
    "pat",
];

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: [&str; 9] = [
    "sk-",
    "ghp_",
    "gho_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "glpat-",
    "AKIA",
    "eyJ",
];

/// A run of letters and digits at least this long reads as a token.
const TOKEN_RUN: usize = 24;

/// Whether `name` says its value is a secret.
pub(crate) fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// Whether `text` alone is only `${VAR}` references and plain words.
fn only_references(text: &str) -> bool {
    let mut rest = text;
    let mut any = false;
    while let Some(start) = rest.find("${") {
        if !rest[..start].trim().is_empty() && !rest[..start].trim().eq_ignore_ascii_case("bearer")
        {
            return false;
        }
        let Some(end) = rest[start..].find('}') else {
            return false;
        };
        rest = &rest[start + end + 1..];
        any = true;
    }
    any && rest.trim().is_empty()
}

/// Whether `text` looks like a token by itself.
pub(crate) fn looks_like_token(text: &str) -> bool {
    if only_references(text) {
        return false;
    }
    let trimmed = text.trim();
    if trimmed.to_ascii_lowercase().starts_with("bearer ")
        || trimmed.to_ascii_lowercase().starts_with("basic ")
    {
        return true;
    }
    if TOKEN_PREFIXES.iter().any(|p| trimmed.starts_with(p)) {
        return true;
    }
    let mut run = 0;
    for c in trimmed.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            run += 1;
            if run >= TOKEN_RUN && trimmed.chars().any(|c| c.is_ascii_digit()) {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// `entry` as it may be shown.
pub fn masked(entry: &Value) -> Value {
    let Value::Object(members) = entry else {
        return entry.clone();
    };
    let mut out = Map::new();
    for (key, value) in members {
        let shown = match (key.as_str(), value) {
            ("env" | "headers" | "http_headers", Value::Object(map)) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let keep = v.as_str().is_some_and(only_references);
                        (
                            k.clone(),
                            if keep {
                                v.clone()
                            } else {
                                Value::String(MASK.into())
                            },
                        )
                    })
                    .collect(),
            ),
            ("args", Value::Array(args)) => Value::Array(masked_args(args)),
            ("url" | "httpUrl" | "serverUrl", Value::String(url)) => Value::String(masked_url(url)),
            (_, Value::String(text)) if secret_name(key) || looks_like_token(text) => {
                Value::String(MASK.into())
            }
            (_, Value::Object(_)) => masked(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), shown);
    }
    Value::Object(out)
}

fn masked_args(args: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_flag = false;
    for arg in args {
        let Some(text) = arg.as_str() else {
            out.push(arg.clone());
            continue;
        };
        let shown = if after_flag || looks_like_token(text) {
            MASK.to_owned()
        } else if let Some((name, value)) = text.split_once('=') {
            if secret_name(name) && !only_references(value) {
                format!("{name}={MASK}")
            } else {
                masked_url(text)
            }
        } else {
            masked_url(text)
        };
        after_flag = text.starts_with('-') && !text.contains('=') && secret_name(text);
        out.push(Value::String(shown));
    }
    out
}

/// A URL with its user information and query values masked.
fn masked_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let mut out = url.to_owned();
    let authority_start = scheme_end + 3;
    let authority_end = out[authority_start..]
        .find(['/', '?', '#'])
        .map_or(out.len(), |i| authority_start + i);
    if let Some(at) = out[authority_start..authority_end].rfind('@') {
        out.replace_range(authority_start..authority_start + at, MASK);
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let masked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) => format!("{k}={MASK}"),
                None => pair.to_owned(),
            })
            .collect();
        out = format!("{head}{}", masked.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_masked_and_references_kept() {
        let entry = json!({
            "command": "npx",
            "args": ["-y", "srv", "--api-key", "plain-looking", "--token=abc", "TOKEN=x", "ghp_abcdef", "/home/me/dir"],
            "env": {"A": "${A}", "B": "value", "C": "Bearer ${C}"},
            "url": "https://user:pw@x.example/mcp?key=v&b=2",
            "headers": {"Authorization": "Bearer 123"}
        });
        let shown = masked(&entry);
        assert_eq!(
            shown,
            json!({
                "command": "npx",
                "args": ["-y", "srv", "--api-key", "•••", "--token=•••", "TOKEN=•••", "•••", "/home/me/dir"],
                "env": {"A": "${A}", "B": "•••", "C": "Bearer ${C}"},
                "url": "https://•••@x.example/mcp?key=•••&b=•••",
                "headers": {"Authorization": "•••"}
            })
        );
    }
}
