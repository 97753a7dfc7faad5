//! Server entries: a client's, turned into mcpx's (`import`), and the one entry `install`
//! writes into the client, in that client's shape.
//!
//! mcpx's entry is the `mcpServers` form: `command`, `args`, `env`, `cwd` for stdio; `url`,
//! `headers` for Streamable HTTP; plus `type`, `allowTools`, `denyTools`, `startupTimeout`.
//! What a client writes differently is translated: Gemini's `httpUrl` and Windsurf's
//! `serverUrl` become `url`, Codex's `bearer_token_env_var` an `Authorization` header and its
//! `env_vars` `${VAR}` references, Zed's old `{"command": {"path", "args", "env"}}` the flat
//! form; variables become mcpx's `${VAR}` where the client expands them (the `variables`
//! module). An entry mcpx cannot read as the client does stays in the client's file, with the
//! reason. What mcpx cannot honour otherwise is reported as a note, by name only, never with
//! a value: an SSE server (mcpx speaks Streamable HTTP), a server disabled in the client, keys
//! mcpx does not read.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::client::Client;
use crate::error::Error;
use crate::variables;

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
        /// The environment variable, where the client runs, holding the bearer token the
        /// gateway requires (`mcpx serve --http ADDR --token`): the entry sends
        /// `Authorization: Bearer` with a reference to it, in the client's own syntax.
        token_env: Option<String>,
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
        Gateway::Http { url, token_env } => {
            let mut entry = match client {
                Client::ClaudeDesktop => {
                    return Err(Error::NoHttp {
                        client: client.name(),
                    })
                }
                Client::ClaudeCode | Client::Vscode => json!({"type": "http", "url": url}),
                Client::Windsurf => json!({"serverUrl": url}),
                Client::Gemini => json!({"httpUrl": url}),
                _ => json!({"url": url}),
            };
            if let Some(var) = token_env {
                let reference = match client {
                    Client::Codex => {
                        entry["bearer_token_env_var"] = json!(var);
                        return Ok(entry);
                    }
                    Client::Vscode | Client::Cursor | Client::Windsurf => {
                        format!("${{env:{var}}}")
                    }
                    Client::ClaudeCode | Client::Gemini | Client::Generic => format!("${{{var}}}"),
                    _ => {
                        return Err(Error::NoTokenReference {
                            client: client.name(),
                        })
                    }
                };
                entry["headers"] = json!({"Authorization": format!("Bearer {reference}")});
            }
            entry
        }
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

/// A client's entry as mcpx's.
#[derive(Debug, Clone)]
pub(crate) struct Translated {
    /// The mcpx entry.
    pub(crate) entry: Value,
    /// What changed on the way (names only, never values).
    pub(crate) notes: Vec<String>,
    /// Why mcpx cannot run it as the client does, so that it stays in the client's file.
    pub(crate) leave: Option<String>,
}

/// The members of a client's entry whose strings the client expands variables in.
const EXPANDED_KEYS: [&str; 9] = [
    "command",
    "args",
    "env",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "http_headers",
    "cwd",
];

/// A client's entry as mcpx's.
pub(crate) fn to_mcpx(
    client: Client,
    entry: &Map<String, Value>,
    context: &variables::Context,
) -> Translated {
    let mut notes = Vec::new();
    let mut entry = entry.clone();
    let mut leave = None;
    for (key, value) in entry.iter_mut() {
        if EXPANDED_KEYS.contains(&key.as_str()) {
            visit_strings(
                value,
                &mut |text| match variables::translate(text, context) {
                    Ok(text) => text,
                    Err(why) => {
                        leave.get_or_insert(why);
                        text.to_owned()
                    }
                },
            );
        }
    }
    // mcpx takes `cwd` as written: a folder the client finds through an environment variable
    // (what is left as `${VAR}` once the client's own folders are resolved) cannot be found the
    // same way.
    let cwd_variable = entry
        .get("cwd")
        .and_then(Value::as_str)
        .is_some_and(|cwd| cwd.contains("${"));
    if cwd_variable {
        leave.get_or_insert("its cwd names a variable, and mcpx takes cwd as written".to_owned());
    }
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
    Translated {
        entry: Value::Object(out),
        notes,
        leave,
    }
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

fn visit_strings(value: &mut Value, f: &mut dyn FnMut(&str) -> String) {
    match value {
        Value::String(text) => *text = f(text),
        Value::Array(items) => items.iter_mut().for_each(|v| visit_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| visit_strings(v, f)),
        _ => {}
    }
}

/// Codex passes a stdio server only a few variables of its own environment (`HOME`, `PATH`,
/// `USER`, …) and those its entry lists in `env_vars`: the gateway's entry there lists every
/// variable mcpx's servers refer to.
pub(crate) fn pass_variables(client: Client, entry: &mut Value, names: &[String]) {
    if client == Client::Codex && entry.get("command").is_some() && !names.is_empty() {
        entry["env_vars"] = json!(names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(client: Client, entry: Value) -> Translated {
        let context = variables::Context {
            client,
            project: Some(PathBuf::from("/p")),
            home: PathBuf::from("/h"),
            os: crate::Os::Linux,
        };
        to_mcpx(client, entry.as_object().unwrap(), &context)
    }

    #[test]
    fn variables_become_mcpx_ones() {
        let Translated {
            entry,
            notes,
            leave,
        } = import(
            Client::Vscode,
            json!({"type": "stdio", "command": "${workspaceFolder}/run", "args": ["${userHome}/x"],
                "env": {"B": "${env:B}"}, "envFile": "${workspaceFolder}/.env"}),
        );
        assert_eq!(
            entry,
            json!({"type": "stdio", "command": "/p/run", "args": ["/h/x"], "env": {"B": "${B}"}})
        );
        assert_eq!(notes, ["not read by mcpx, left out: envFile"]);
        assert_eq!(leave, None);
        let asks = import(
            Client::Vscode,
            json!({"command": "x", "env": {"KEY": "${input:api-key}"}}),
        );
        assert_eq!(
            asks.leave.as_deref(),
            Some("vscode asks for input 'api-key' when it starts the server; mcpx cannot ask: left in vscode")
        );
        let Translated { entry, .. } = import(
            Client::Gemini,
            json!({"command": "x", "env": {"T": "$TOKEN", "P": "a$1"}}),
        );
        assert_eq!(entry["env"], json!({"T": "${TOKEN}", "P": "a$1"}));
        let Translated { entry, .. } = import(
            Client::ClaudeCode,
            json!({"url": "https://x", "headers": {"A": "Bearer ${T:-none}"}}),
        );
        assert_eq!(entry["headers"]["A"], "Bearer ${T:-none}");
        let literal = import(
            Client::ClaudeDesktop,
            json!({"command": "sh", "args": ["-c", "curl -H \"X: ${TOKEN}\""]}),
        );
        assert!(literal.leave.unwrap().contains("passes as written"));
        let folder = import(
            Client::Vscode,
            json!({"command": "x", "cwd": "${workspaceFolder}/sub"}),
        );
        assert_eq!(
            (folder.entry["cwd"].as_str(), folder.leave),
            (Some("/p/sub"), None)
        );
        let variable = import(
            Client::Cursor,
            json!({"command": "x", "cwd": "${env:HOME}/w"}),
        );
        assert_eq!(
            variable.leave.as_deref(),
            Some("its cwd names a variable, and mcpx takes cwd as written")
        );
        let mut gateway = json!({"command": "/m", "args": ["serve"]});
        pass_variables(Client::Codex, &mut gateway, &["A".into()]);
        assert_eq!(gateway["env_vars"], json!(["A"]));
    }

    #[test]
    fn remote_forms_become_url_and_headers() {
        let Translated { entry, notes, .. } = import(
            Client::Gemini,
            json!({"httpUrl": "https://x/mcp", "headers": {"A": "b"}, "trust": true}),
        );
        assert_eq!(
            entry,
            json!({"url": "https://x/mcp", "headers": {"A": "b"}})
        );
        assert_eq!(notes, ["not read by mcpx, left out: trust"]);
        let Translated { entry, .. } =
            import(Client::Windsurf, json!({"serverUrl": "https://x/mcp"}));
        assert_eq!(entry, json!({"url": "https://x/mcp"}));
        let Translated { entry, notes, .. } = import(
            Client::ClaudeCode,
            json!({"type": "sse", "url": "https://x/sse"}),
        );
        assert_eq!(entry, json!({"url": "https://x/sse"}));
        assert!(notes[0].starts_with("an SSE server"));
        let Translated { entry, .. } = import(
            Client::Codex,
            json!({"url": "https://x/mcp", "bearer_token_env_var": "TOK", "env_http_headers": {"X-Org": "ORG"}}),
        );
        assert_eq!(
            entry,
            json!({"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${TOK}", "X-Org": "${ORG}"}})
        );
        let Translated { entry, .. } = import(
            Client::Zed,
            json!({"command": {"path": "srv", "args": ["a"], "env": {}}, "settings": {}}),
        );
        assert_eq!(entry, json!({"command": "srv", "args": ["a"], "env": {}}));
    }

    #[test]
    fn values_take_the_types_of_mcpx_config() {
        let Translated { entry, notes, .. } = import(
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
        let http = |token_env: Option<&str>| Gateway::Http {
            url: "http://x".into(),
            token_env: token_env.map(str::to_owned),
        };
        assert!(gateway_entry(Client::ClaudeDesktop, &http(None)).is_err());
        let with_token = |client| gateway_entry(client, &http(Some("TOK"))).unwrap();
        assert_eq!(
            with_token(Client::ClaudeCode),
            json!({"type": "http", "url": "http://x", "headers": {"Authorization": "Bearer ${TOK}"}})
        );
        assert_eq!(
            with_token(Client::Cursor)["headers"]["Authorization"],
            "Bearer ${env:TOK}"
        );
        assert_eq!(
            with_token(Client::Codex),
            json!({"url": "http://x", "bearer_token_env_var": "TOK"})
        );
        assert!(gateway_entry(Client::Zed, &http(Some("TOK"))).is_err());
    }
}
