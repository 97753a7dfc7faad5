//! Server entries: a client's, turned into mcpx's (`import`), and the one entry `install`
//! writes into the client, in that client's shape.
//!
//! mcpx's entry is the `mcpServers` form: `command`, `args`, `env`, `cwd` for stdio; `url`,
//! `headers` for Streamable HTTP; plus `type`, `allowTools`, `denyTools`, `startupTimeout`.
//! What a client writes differently is translated: Gemini's `httpUrl` and Windsurf's
//! `serverUrl` become `url`, Codex's `bearer_token_env_var` an `Authorization` header, Zed's
//! old `{"command": {"path", "args", "env"}}` the flat form; variables are rewritten to mcpx's
//! `${VAR}` (`${env:VAR}`, Gemini's `$VAR`), `${workspaceFolder}` and `${userHome}` become the
//! folders they name. What mcpx cannot honour is reported as a note, by name only, never with
//! a value: a VS Code `${input:…}` (mcpx reads the variable from the environment instead), an
//! SSE server (mcpx speaks Streamable HTTP), a server disabled in the client, keys mcpx does
//! not read.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::client::Client;
use crate::error::Error;

/// The keys of an mcpx server entry that import carries over.
const MCPX_KEYS: [&str; 10] = [
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "allowTools",
    "denyTools",
    "startupTimeout",
];

/// The name `install` gives the gateway's entry in the client's file.
pub const GATEWAY_NAME: &str = "mcpx";

/// How the client reaches mcpx once installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gateway {
    /// The client starts `PROGRAM serve --config CONFIG` (both absolute).
    Stdio {
        /// The mcpx executable.
        program: PathBuf,
        /// mcpx's config file.
        config: PathBuf,
    },
    /// The client connects to a running `mcpx serve --http` at this URL.
    Http {
        /// The gateway's URL (`http://127.0.0.1:8787/mcp`).
        url: String,
    },
}

/// The entry that puts the gateway in `client`'s file.
pub fn gateway_entry(client: Client, gateway: &Gateway) -> Result<Value, Error> {
    Ok(match gateway {
        Gateway::Stdio { program, config } => {
            let args = json!(["serve", "--config", config.display().to_string()]);
            let command = program.display().to_string();
            match client {
                Client::ClaudeCode => {
                    json!({"type": "stdio", "command": command, "args": args, "env": {}})
                }
                Client::Vscode => json!({"type": "stdio", "command": command, "args": args}),
                _ => json!({"command": command, "args": args}),
            }
        }
        Gateway::Http { url } => match client {
            Client::ClaudeDesktop => {
                return Err(Error::NoHttp {
                    client: client.name(),
                })
            }
            Client::ClaudeCode | Client::Vscode => json!({"type": "http", "url": url}),
            Client::Windsurf => json!({"serverUrl": url}),
            Client::Gemini => json!({"httpUrl": url}),
            _ => json!({"url": url}),
        },
    })
}

/// Whether `entry` starts mcpx's gateway: importing it would put mcpx in front of itself.
pub(crate) fn is_gateway(entry: &Value) -> bool {
    let Some(command) = entry.get("command").and_then(Value::as_str) else {
        return false;
    };
    let stem = Path::new(command)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let args = entry.get("args").and_then(Value::as_array);
    stem == "mcpx" && args.is_some_and(|a| a.iter().any(|v| v.as_str() == Some("serve")))
}

/// What import needs to resolve a client's folder variables.
#[derive(Debug, Clone)]
pub(crate) struct Folders {
    pub(crate) home: PathBuf,
    pub(crate) project: PathBuf,
}

/// A client's entry as mcpx's, with notes on what changed (names only, never values).
pub(crate) fn to_mcpx(
    client: Client,
    entry: &Map<String, Value>,
    folders: &Folders,
) -> (Value, Vec<String>) {
    let mut notes = Vec::new();
    let mut entry = entry.clone();
    // Zed before 0.190: {"command": {"path", "args", "env"}, "settings": {...}}.
    if let Some(Value::Object(inner)) = entry.get("command").cloned() {
        entry.remove("command");
        for (key, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
            if let Some(value) = inner.get(key) {
                entry.insert(to.to_owned(), value.clone());
            }
        }
    }
    if client == Client::Codex {
        codex_fields(&mut entry);
    }
    let sse = match entry.get("type").and_then(Value::as_str) {
        Some("sse") => true,
        Some(_) => false,
        // Gemini's `url` (beside no `httpUrl`) is SSE.
        None => {
            client == Client::Gemini && entry.contains_key("url") && !entry.contains_key("httpUrl")
        }
    };
    for key in ["httpUrl", "serverUrl"] {
        if let Some(url) = entry.remove(key) {
            entry.insert("url".into(), url);
        }
    }
    match entry.get("type").and_then(Value::as_str) {
        Some("stdio" | "http" | "streamable-http") | None => {}
        Some("sse") => {
            entry.remove("type");
        }
        Some(_) => {
            notes.push("its \"type\" is not one mcpx knows; left out".into());
            entry.remove("type");
        }
    }
    if sse {
        notes.push("an SSE server: mcpx speaks Streamable HTTP to it, which SSE-only servers do not answer".into());
    }
    for (key, to) in [
        ("includeTools", "allowTools"),
        ("excludeTools", "denyTools"),
    ] {
        if let Some(value) = entry.remove(key) {
            entry.insert(to.to_owned(), value);
        }
    }
    let disabled = entry.get("disabled").and_then(Value::as_bool) == Some(true)
        || entry.get("enabled").and_then(Value::as_bool) == Some(false);
    if disabled {
        notes.push(format!("disabled in {}: mcpx starts it", client.name()));
    }
    let mut dropped: Vec<String> = entry
        .keys()
        .filter(|k| !MCPX_KEYS.contains(&k.as_str()))
        .filter(|k| !["disabled", "enabled"].contains(&k.as_str()))
        .cloned()
        .collect();
    dropped.sort();
    if !dropped.is_empty() {
        notes.push(format!(
            "not read by mcpx, left out: {}",
            dropped.join(", ")
        ));
    }
    let mut out = Map::new();
    for key in MCPX_KEYS {
        if let Some(value) = entry.get(key) {
            out.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(problem) = fit_types(&mut out) {
        notes.push(problem);
    }
    let mut inputs = Vec::new();
    let mut defaults = false;
    rewrite_strings(&mut out, client, folders, &mut inputs, &mut defaults);
    if !inputs.is_empty() {
        notes.push(format!(
            "{} asked for {} when the server started; mcpx reads the environment instead: set {} where mcpx runs",
            client.name(),
            inputs.iter().map(|(id, _)| format!("input '{id}'")).collect::<Vec<_>>().join(", "),
            inputs.iter().map(|(_, var)| var.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    if defaults {
        notes.push("a ${VAR:-default} lost its default: mcpx needs VAR set".into());
    }
    (Value::Object(out), notes)
}

/// The longest `startupTimeout` mcpx's config takes, in seconds.
const MAX_STARTUP_SECONDS: f64 = 3600.0;

/// The entry's values in the types mcpx's config takes: arguments, `env` and `headers` values
/// as strings (a TOML number written as its text), `startupTimeout` within its range, tool
/// lists of strings; what cannot be made so is left out, with a note naming it.
fn fit_types(entry: &mut Map<String, Value>) -> Option<String> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let mut dropped = Vec::new();
    for key in ["command", "cwd", "url", "type"] {
        if entry.get(key).is_some_and(|v| !v.is_string()) {
            entry.remove(key);
            dropped.push(key);
        }
    }
    for key in ["args", "allowTools", "denyTools"] {
        match entry.get(key) {
            Some(Value::Array(items)) => {
                let fitted: Option<Vec<Value>> =
                    items.iter().map(|v| text(v).map(Value::String)).collect();
                match fitted {
                    Some(items) => {
                        entry.insert(key.to_owned(), Value::Array(items));
                    }
                    None => {
                        entry.remove(key);
                        dropped.push(key);
                    }
                }
            }
            Some(_) => {
                entry.remove(key);
                dropped.push(key);
            }
            None => {}
        }
    }
    for key in ["env", "headers"] {
        match entry.get(key) {
            Some(Value::Object(map)) => {
                let fitted: Map<String, Value> = map
                    .iter()
                    .filter_map(|(k, v)| text(v).map(|t| (k.clone(), Value::String(t))))
                    .collect();
                if fitted.len() < map.len() {
                    dropped.push(key);
                }
                entry.insert(key.to_owned(), Value::Object(fitted));
            }
            Some(_) => {
                entry.remove(key);
                dropped.push(key);
            }
            None => {}
        }
    }
    if let Some(timeout) = entry.get("startupTimeout") {
        let fits = timeout
            .as_f64()
            .is_some_and(|t| t > 0.0 && t <= MAX_STARTUP_SECONDS);
        if !fits {
            entry.remove("startupTimeout");
            dropped.push("startupTimeout");
        }
    }
    (!dropped.is_empty()).then(|| {
        format!(
            "not of a type mcpx's config takes, left out (in part): {}",
            dropped.join(", ")
        )
    })
}

/// Codex's TOML keys as mcpx's.
fn codex_fields(entry: &mut Map<String, Value>) {
    if let Some(Value::Array(names)) = entry.remove("env_vars") {
        let env = entry
            .entry("env")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(env) = env {
            for name in names.iter().filter_map(Value::as_str) {
                env.entry(name.to_owned())
                    .or_insert_with(|| Value::String(format!("${{{name}}}")));
            }
        }
    }
    let mut headers = Map::new();
    if let Some(Value::String(var)) = entry.remove("bearer_token_env_var") {
        headers.insert(
            "Authorization".into(),
            Value::String(format!("Bearer ${{{var}}}")),
        );
    }
    if let Some(Value::Object(fixed)) = entry.remove("http_headers") {
        headers.extend(fixed);
    }
    if let Some(Value::Object(from_env)) = entry.remove("env_http_headers") {
        for (name, var) in from_env {
            if let Some(var) = var.as_str() {
                headers.insert(name, Value::String(format!("${{{var}}}")));
            }
        }
    }
    if !headers.is_empty() {
        entry.insert("headers".into(), Value::Object(headers));
    }
    for (key, to) in [
        ("startup_timeout_sec", "startupTimeout"),
        ("enabled_tools", "allowTools"),
        ("disabled_tools", "denyTools"),
    ] {
        if let Some(value) = entry.remove(key) {
            entry.insert(to.to_owned(), value);
        }
    }
}

/// Rewrites the variables of every string an mcpx entry expands: `command`, `args`, `env`,
/// `url`, `headers`, and the folders of `cwd`.
fn rewrite_strings(
    entry: &mut Map<String, Value>,
    client: Client,
    folders: &Folders,
    inputs: &mut Vec<(String, String)>,
    defaults: &mut bool,
) {
    for (key, value) in entry.iter_mut() {
        if !["command", "args", "env", "url", "headers", "cwd"].contains(&key.as_str()) {
            continue;
        }
        let gemini_env = client == Client::Gemini && key == "env";
        visit_strings(value, &mut |text| {
            rewrite(text, folders, inputs, defaults, gemini_env)
        });
    }
}

fn visit_strings(value: &mut Value, f: &mut dyn FnMut(&str) -> String) {
    match value {
        Value::String(text) => *text = f(text),
        Value::Array(items) => items.iter_mut().for_each(|v| visit_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| visit_strings(v, f)),
        _ => {}
    }
}

/// One string with its variables in mcpx's form.
fn rewrite(
    text: &str,
    folders: &Folders,
    inputs: &mut Vec<(String, String)>,
    defaults: &mut bool,
    dollar_names: bool,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                out.push_str(&rest[start..]);
                return out;
            };
            let inner = &body[..end];
            rest = &body[end + 1..];
            if let Some(var) = inner.strip_prefix("env:") {
                out.push_str(&format!("${{{var}}}"));
            } else if let Some(id) = inner.strip_prefix("input:") {
                let var = env_name(id);
                if !inputs.iter().any(|(i, _)| i == id) {
                    inputs.push((id.to_owned(), var.clone()));
                }
                out.push_str(&format!("${{{var}}}"));
            } else if inner == "workspaceFolder" {
                out.push_str(&folders.project.display().to_string());
            } else if inner == "userHome" {
                out.push_str(&folders.home.display().to_string());
            } else if let Some((var, _)) = inner.split_once(":-") {
                *defaults = true;
                out.push_str(&format!("${{{var}}}"));
            } else {
                out.push_str(&format!("${{{inner}}}"));
            }
        } else if dollar_names && after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            out.push_str(&format!("${{{}}}", &after[..len]));
            rest = &after[len..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A VS Code input id as an environment variable name: `api-key` → `API_KEY`.
fn env_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folders() -> Folders {
        Folders {
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
        }
    }

    fn import(client: Client, entry: Value) -> (Value, Vec<String>) {
        to_mcpx(client, entry.as_object().unwrap(), &folders())
    }

    #[test]
    fn variables_become_mcpx_ones() {
        let (entry, notes) = import(
            Client::Vscode,
            json!({"type": "stdio", "command": "${workspaceFolder}/run", "args": ["${userHome}/x"],
                "env": {"KEY": "${input:api-key}", "B": "${env:B}"}, "envFile": "${workspaceFolder}/.env"}),
        );
        assert_eq!(
            entry,
            json!({"type": "stdio", "command": "/p/run", "args": ["/h/x"], "env": {"KEY": "${API_KEY}", "B": "${B}"}})
        );
        assert_eq!(notes, [
            "not read by mcpx, left out: envFile",
            "vscode asked for input 'api-key' when the server started; mcpx reads the environment instead: set API_KEY where mcpx runs"
        ]);
        let (entry, _) = import(
            Client::Gemini,
            json!({"command": "x", "env": {"T": "$TOKEN", "P": "a$1"}}),
        );
        assert_eq!(entry["env"], json!({"T": "${TOKEN}", "P": "a$1"}));
    }

    #[test]
    fn remote_forms_become_url_and_headers() {
        let (entry, notes) = import(
            Client::Gemini,
            json!({"httpUrl": "https://x/mcp", "headers": {"A": "b"}, "trust": true}),
        );
        assert_eq!(
            entry,
            json!({"url": "https://x/mcp", "headers": {"A": "b"}})
        );
        assert_eq!(notes, ["not read by mcpx, left out: trust"]);
        let (entry, _) = import(Client::Windsurf, json!({"serverUrl": "https://x/mcp"}));
        assert_eq!(entry, json!({"url": "https://x/mcp"}));
        let (entry, notes) = import(
            Client::ClaudeCode,
            json!({"type": "sse", "url": "https://x/sse"}),
        );
        assert_eq!(entry, json!({"url": "https://x/sse"}));
        assert!(notes[0].starts_with("an SSE server"));
        let (entry, _) = import(
            Client::Codex,
            json!({"url": "https://x/mcp", "bearer_token_env_var": "TOK", "env_http_headers": {"X-Org": "ORG"}}),
        );
        assert_eq!(
            entry,
            json!({"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${TOK}", "X-Org": "${ORG}"}})
        );
        let (entry, _) = import(
            Client::Zed,
            json!({"command": {"path": "srv", "args": ["a"], "env": {}}, "settings": {}}),
        );
        assert_eq!(entry, json!({"command": "srv", "args": ["a"], "env": {}}));
    }

    #[test]
    fn values_take_the_types_of_mcpx_config() {
        let (entry, notes) = import(
            Client::Codex,
            json!({"command": "srv", "args": ["--port", 8080], "env": {"N": 1, "T": true, "O": {"x": 1}},
                "startup_timeout_sec": 7200}),
        );
        assert_eq!(
            entry,
            json!({"command": "srv", "args": ["--port", "8080"], "env": {"N": "1", "T": "true"}})
        );
        assert_eq!(
            notes,
            ["not of a type mcpx's config takes, left out (in part): env, startupTimeout"]
        );
    }

    #[test]
    fn the_gateway_entry_is_recognised() {
        let entry = gateway_entry(
            Client::Cursor,
            &Gateway::Stdio {
                program: "/bin/mcpx".into(),
                config: "/c/mcpx.json".into(),
            },
        )
        .unwrap();
        assert!(is_gateway(&entry));
        assert!(!is_gateway(&json!({"command": "npx", "args": ["serve"]})));
        assert!(gateway_entry(
            Client::ClaudeDesktop,
            &Gateway::Http {
                url: "http://x".into()
            }
        )
        .is_err());
    }
}
