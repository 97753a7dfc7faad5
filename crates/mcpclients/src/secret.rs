//! Masking for what is shown: `--dry-run` prints entries with every value that may be a
//! secret replaced by [`MASK`]. The files themselves keep their values as the user wrote them.
//!
//! Masked: every `env` and `headers` value that is not only a `${VAR}` reference (the name is
//! not a secret, the value it expands to is never read here); an argument that looks like a
//! token (a known token prefix, a `Bearer`, a long run of letters and digits, or what follows
//! `--token`-like flags and `KEY=`-like words whose name says secret); a header given as an
//! argument (`--header`/`-H NAME: VALUE`, or `NAME: VALUE` whose name says secret or whose
//! value is a credential) keeps its name only; a URL's user information, query values,
//! fragment, and path segments that look like tokens (`/mcp/sk-…/sse`).

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

/// Flags whose next argument is a header, `NAME: VALUE` (mcp-remote's, curl's).
const HEADER_FLAGS: [&str; 3] = ["--header", "-H", "--headers"];

fn masked_args(args: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_flag = false;
    let mut after_header = false;
    for arg in args {
        let Some(text) = arg.as_str() else {
            out.push(arg.clone());
            continue;
        };
        let header = HEADER_FLAGS.iter().find_map(|flag| {
            text.strip_prefix(flag)
                .and_then(|rest| rest.strip_prefix('='))
                .map(|value| (format!("{flag}="), value))
        });
        let shown = if let Some((flag, value)) = header {
            format!("{flag}{}", masked_header(value, true))
        } else if after_header {
            masked_header(text, true)
        } else if after_flag {
            MASK.to_owned()
        } else if text.contains("://") {
            masked_url(text)
        } else if looks_like_token(text) {
            MASK.to_owned()
        } else if let Some(masked) = header_like(text) {
            masked
        } else if let Some((name, value)) = text.split_once('=') {
            if secret_name(name) && !only_references(value) {
                format!("{name}={MASK}")
            } else {
                masked_url(text)
            }
        } else {
            masked_url(text)
        };
        after_header = HEADER_FLAGS.contains(&text);
        after_flag = text.starts_with('-') && !text.contains('=') && secret_name(text);
        out.push(Value::String(shown));
    }
    out
}

/// A header `NAME: VALUE` with its value masked (unless it is only references); with `always`
/// false, only when its name says secret or its value is a credential.
fn masked_header(text: &str, always: bool) -> String {
    match text.split_once(':') {
        Some((name, value)) if !only_references(value) => {
            let secret = always || secret_name(name) || looks_like_token(value);
            if secret {
                format!("{name}: {MASK}")
            } else {
                text.to_owned()
            }
        }
        Some(_) => text.to_owned(),
        None if always && !only_references(text) => MASK.to_owned(),
        None => text.to_owned(),
    }
}

/// An argument shaped as a header (`Authorization: Basic …`, `X-API-Key: …`), masked where
/// secret; `None` for anything else (a URL, a path, words).
fn header_like(text: &str) -> Option<String> {
    let (name, value) = text.split_once(": ")?;
    let is_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    (is_name && !value.is_empty()).then(|| masked_header(text, false))
}

/// A URL cut where [`masked_url`] masks it.
struct UrlParts<'a> {
    /// `scheme://` and the host (and port), the user information cut out.
    scheme: &'a str,
    userinfo: Option<&'a str>,
    host: &'a str,
    /// The path, from its `/`.
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn url_parts(url: &str) -> Option<UrlParts<'_>> {
    let authority_start = url.find("://")? + 3;
    let (rest, fragment) = match url[authority_start..].find('#') {
        Some(i) => (
            &url[..authority_start + i],
            Some(&url[authority_start + i + 1..]),
        ),
        None => (url, None),
    };
    let (rest, query) = match rest[authority_start..].find('?') {
        Some(i) => (
            &rest[..authority_start + i],
            Some(&rest[authority_start + i + 1..]),
        ),
        None => (rest, None),
    };
    let (head, path) = match rest[authority_start..].find('/') {
        Some(i) => rest.split_at(authority_start + i),
        None => (rest, ""),
    };
    let (userinfo, host) = match head[authority_start..].rfind('@') {
        Some(at) => (
            Some(&head[authority_start..authority_start + at]),
            &head[authority_start + at + 1..],
        ),
        None => (None, &head[authority_start..]),
    };
    Some(UrlParts {
        scheme: &url[..authority_start],
        userinfo,
        host,
        path,
        query,
        fragment,
    })
}

/// A URL with its user information, token-like path segments, query values and fragment
/// masked.
fn masked_url(url: &str) -> String {
    let Some(parts) = url_parts(url) else {
        return url.to_owned();
    };
    let mut out = parts.scheme.to_owned();
    if parts.userinfo.is_some() {
        out.push_str(MASK);
        out.push('@');
    }
    out.push_str(parts.host);
    let segments: Vec<&str> = parts
        .path
        .split('/')
        .map(|segment| {
            if looks_like_token(segment) {
                MASK
            } else {
                segment
            }
        })
        .collect();
    out.push_str(&segments.join("/"));
    if let Some(query) = parts.query {
        let masked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) => format!("{k}={MASK}"),
                None => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&masked.join("&"));
    }
    if parts.fragment.is_some() {
        out.push('#');
        out.push_str(MASK);
    }
    out
}

/// What [`masked_url`] masks in `url`, as written.
fn url_secrets(url: &str) -> Vec<String> {
    let Some(parts) = url_parts(url) else {
        return Vec::new();
    };
    let mut out: Vec<String> = parts.userinfo.into_iter().map(str::to_owned).collect();
    out.extend(
        parts
            .path
            .split('/')
            .filter(|segment| looks_like_token(segment))
            .map(str::to_owned),
    );
    for pair in parts.query.unwrap_or_default().split('&') {
        if let Some((_, value)) = pair.split_once('=') {
            out.push(value.to_owned());
        }
    }
    out.extend(parts.fragment.map(str::to_owned));
    out
}

/// The literal values of `entry` that [`masked`] does not show, as written: each masked string
/// whole, a URL's masked parts, a header's value and a `Bearer`'s token alone. For the logs
/// and errors that show a server's words, which may quote them (`${VAR}` values are found
/// elsewhere: the references here are left out).
pub fn literal_secrets(entry: &Value) -> Vec<String> {
    let mut out = Vec::new();
    hidden(entry, &masked(entry), &mut out);
    out.retain(|s| !s.contains("${") && !s.trim().is_empty() && s != MASK);
    out
}

fn hidden(original: &Value, shown: &Value, out: &mut Vec<String>) {
    match (original, shown) {
        (Value::String(text), Value::String(masked)) if text != masked => {
            out.push(text.clone());
            if text.contains("://") {
                out.extend(url_secrets(text));
            } else {
                // `NAME: VALUE`, `--flag=VALUE`, `NAME=VALUE`: the value alone as well.
                for separator in [':', '='] {
                    if let Some((_, value)) = text.split_once(separator) {
                        out.push(value.trim().to_owned());
                    }
                }
            }
            if let Some((_, last)) = text.trim().rsplit_once(char::is_whitespace) {
                out.push(last.to_owned());
            }
        }
        (Value::Object(original), Value::Object(shown)) => {
            for (key, value) in original {
                let Some(masked) = shown.get(key) else {
                    continue;
                };
                if let ("env" | "headers" | "http_headers", Value::Object(map)) =
                    (key.as_str(), value)
                {
                    // Every value there is masked; only those named or shaped as secrets are
                    // kept out of logs (`NODE_ENV=production` blanked everywhere would hide
                    // nothing and garble much).
                    for (name, value) in map {
                        let secret = value
                            .as_str()
                            .is_some_and(|v| secret_name(name) || looks_like_token(v));
                        if let (true, Some(masked)) = (secret, masked.get(name)) {
                            hidden(value, masked, out);
                        }
                    }
                    continue;
                }
                hidden(value, masked, out);
            }
        }
        (Value::Array(original), Value::Array(shown)) => {
            for (value, masked) in original.iter().zip(shown) {
                hidden(value, masked, out);
            }
        }
        _ => {}
    }
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

    #[test]
    fn the_literal_secrets_are_what_masked_hides() {
        let entry = json!({
            "command": "npx",
            "args": ["-y", "srv", "--api-key", "plain-looking", "--token=abc", "ghp_abcdef", "/home/me/dir"],
            "env": {"A": "${A}", "B": "value", "API_TOKEN": "t0k3n-lit"},
            "url": "https://user:pw@x.example/mcp/sk-live-0123456789abcdefghijkl/sse?key=v1&b=${B}",
            "headers": {"Authorization": "Bearer tok123", "X-Key": "${K}"}
        });
        let mut secrets = literal_secrets(&entry);
        secrets.sort();
        secrets.dedup();
        let want = [
            "--token=abc",
            "Bearer tok123",
            "abc",
            "ghp_abcdef",
            "https://user:pw@x.example/mcp/sk-live-0123456789abcdefghijkl/sse?key=v1&b=${B}",
            "plain-looking",
            "sk-live-0123456789abcdefghijkl",
            "t0k3n-lit",
            "tok123",
            "user:pw",
            "v1",
        ];
        let want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
        // The whole URL holds a reference: left out; its parts are there.
        assert_eq!(
            secrets,
            want.into_iter()
                .filter(|s| !s.contains("${"))
                .collect::<Vec<_>>()
        );
    }

    /// The shapes secrets take in arguments and URLs of real configs.
    #[test]
    fn headers_in_arguments_and_tokens_in_urls_are_masked() {
        let cases = [
            ("X-API-Key: abc123", "X-API-Key: •••"),
            ("Authorization: Basic dXNlcjpwYXNz", "Authorization: •••"),
            (
                "Authorization: Bearer ${TOKEN}",
                "Authorization: Bearer ${TOKEN}",
            ),
            ("Accept: text/plain", "Accept: text/plain"),
            ("Note: see the docs", "Note: see the docs"),
            (
                "https://actions.zapier.com/mcp/sk-ak-0123456789abcdef/sse",
                "https://actions.zapier.com/mcp/•••/sse",
            ),
            (
                "https://x.example/mcp/0123456789abcdef0123456789abcdef/sse",
                "https://x.example/mcp/•••/sse",
            ),
            (
                "https://x.example/mcp#token=abc",
                "https://x.example/mcp#•••",
            ),
            (
                "https://x.example/a/b?k=v#f",
                "https://x.example/a/b?k=•••#•••",
            ),
            ("https://x.example", "https://x.example"),
        ];
        for (arg, want) in cases {
            let shown = masked(&json!({"args": [arg]}));
            assert_eq!(shown["args"][0], want, "{arg}");
        }
        let shown = masked(
            &json!({"args": ["mcp-remote", "https://x.example/mcp", "--header", "X-Org: acme", "-H", "Cookie: s=1", "--header=Authorization: abc"]}),
        );
        assert_eq!(
            shown["args"],
            json!([
                "mcp-remote",
                "https://x.example/mcp",
                "--header",
                "X-Org: •••",
                "-H",
                "Cookie: •••",
                "--header=Authorization: •••"
            ])
        );
    }
}
