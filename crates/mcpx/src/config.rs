//! The config file: the `mcpServers` format MCP clients use (or `servers` with a `type`),
//! found at `--config FILE`, else `./mcpx.json`, else `config.json` in the user's config folder
//! ([`crate::places`]: `$XDG_CONFIG_HOME/mcpx`, `%APPDATA%\mcpx` on Windows).
//!
//! The file is validated with schemaval against `schemas/config.schema.json`, so a mistake is
//! reported with the file, the JSON path and the problem. `${VAR}` (or `${VAR:-default}`) in
//! `env`, `headers`, `url`, `command` and `args` expands from the environment, so secrets stay
//! out of the file; `${MCPX_EXE}` is the running mcpx binary unless the environment says
//! otherwise. A problem confined to one server's entry (the schema, a variable not set) makes
//! that server fail to start with the reason, and the file's other servers are served; only a
//! problem outside the servers refuses the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use mcpclient::{Protocol, Reach};
use mcpgateway::{
    DownstreamDialect, Exposure, ExposureOptions, InvalidArguments, Isolation, Pinning,
    ResourceAuth, ToolFilter, ToolScope, UpstreamConfig,
};
use serde_json::Value;

pub use crate::config_schema::entry_problems;

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The largest private key file (`auth.privateKeyFile`) read: an 8192-bit RSA key in PEM is
/// under 7 KiB.
const MAX_PRIVATE_KEY_BYTES: u64 = 64 * 1024;

/// One configured server.
#[derive(Debug, Clone)]
pub struct Server {
    /// Its key in the file.
    pub name: String,
    /// How it is reached.
    pub transport: Reach,
    /// `allowTools`/`denyTools`, for the gateway.
    pub tools: ToolFilter,
    /// How long the command line and the gateway wait for it to start, answer `initialize` and
    /// list its tools: `startupTimeout` (seconds), else [`mcpgateway::START_TIMEOUT`].
    pub startup_timeout: Duration,
    /// `isolation`: whether the gateway's sessions share it.
    pub isolation: Isolation,
    /// `prefix`: what its exposed names start with (`NAME__` unless given).
    pub prefix: String,
    /// `protocol`: `"auto"` (probe with `server/discover`, the default), `"legacy"` (the
    /// `initialize` handshake only) or `"2026-07-28"` (that version only).
    pub protocol: Protocol,
    /// `auth`: how mcpx logs in to an HTTP server that asks (OAuth); defaults when absent.
    pub auth: mcpauth::AuthConfig,
    /// `coerceArguments`: `"safe"` sends the one unambiguous fix of invalid arguments;
    /// `"off"` (the default) refuses them.
    pub coerce_arguments: bool,
    /// `exposure`: how the gateway offers its tools; the gateway section's when `None`.
    pub exposure: Option<Exposure>,
    /// `pinning`: whether the gateway compares its tools with the lock file; when `None`, warn
    /// if the lock file pins it, else off.
    pub pinning: Option<Pinning>,
    /// The entry as written in the file (`${VAR}`s unexpanded): what its cached tool list is
    /// keyed by.
    pub entry: Value,
}

impl Server {
    /// A server whose entry cannot be used: it fails to start with `problem` (which names the
    /// entry's place and what is wrong), the others of the config are served.
    fn unusable(name: &str, entry: &Value, problem: String) -> Server {
        Server {
            name: name.to_owned(),
            entry: entry.clone(),
            transport: Reach::unusable(entry, problem),
            tools: ToolFilter::default(),
            startup_timeout: mcpgateway::START_TIMEOUT,
            isolation: Isolation::Shared,
            prefix: mcpgateway::default_prefix(name),
            protocol: Protocol::Auto,
            auth: mcpauth::AuthConfig::default(),
            coerce_arguments: false,
            exposure: None,
            pinning: None,
        }
    }

    /// The server as the gateway takes it.
    pub fn upstream(&self) -> UpstreamConfig {
        UpstreamConfig {
            name: self.name.clone(),
            transport: self.transport.clone(),
            tools: self.tools.clone(),
            isolation: self.isolation,
            prefix: self.prefix.clone(),
            protocol: self.protocol,
            coerce_arguments: self.coerce_arguments,
            exposure: self.exposure,
            start_timeout: self.startup_timeout,
            pinning: self.pinning,
        }
    }
}

/// The `gateway` section: what `mcpx serve` does besides serving.
#[derive(Debug, Clone)]
pub struct GatewaySection {
    /// What the gateway answers to arguments its schema rejects.
    pub invalid_arguments: InvalidArguments,
    /// The dialect tool schemas are presented in to clients (`downstreamDialect`).
    pub downstream_dialect: DownstreamDialect,
    /// Which tools are listed and which behind search (`exposure`, `alwaysExpose`).
    pub exposure: ExposureOptions,
    /// Origins the HTTP front accepts besides its own.
    pub allowed_origins: Vec<String>,
    /// Sessions the HTTP front holds at once.
    pub max_sessions: usize,
    /// Connections the HTTP front holds open at once.
    pub max_connections: usize,
    /// Connections the HTTP front holds open from one address.
    pub max_connections_per_address: usize,
    /// Sessions the HTTP front holds for one client.
    pub max_sessions_per_client: usize,
    /// Bytes on the way one HTTP response stream may hold unread.
    pub max_unread_stream_bytes: usize,
    /// Per-session server connections (processes) the gateway runs at once.
    pub max_session_servers: usize,
    /// Per-session server connections one client's sessions run at once.
    pub max_session_servers_per_client: usize,
    /// How long an HTTP request's headers may take (and a kept-alive connection idle).
    pub header_read_timeout: Duration,
    /// How long an HTTP request's body may take.
    pub body_read_timeout: Duration,
    /// How long an HTTP session may be idle before it ends.
    pub session_idle_timeout: Duration,
    /// `auth`: OAuth access tokens the HTTP front requires.
    pub auth: Option<ResourceAuth>,
    /// `audit`: where the audit log goes, whether it holds arguments, and the secrets it
    /// must never show (the values of every `${VAR}` in the file).
    pub audit: Option<mcpgateway::AuditOptions>,
    /// `traces.endpoint`: where OTLP spans go.
    pub traces: Option<String>,
    /// The values of the `${VAR}`s of the file, and the credentials its server entries hold as
    /// written: never shown in a log, an error or `Debug`.
    pub secrets: Vec<mcpauth::Secret>,
}

impl GatewaySection {
    /// The keys whose values differ from `other`'s: a running gateway cannot take them, they
    /// take effect when it restarts.
    pub fn changed_keys(&self, other: &GatewaySection) -> Vec<&'static str> {
        [
            (
                "invalidArguments",
                self.invalid_arguments != other.invalid_arguments,
            ),
            (
                "downstreamDialect",
                self.downstream_dialect != other.downstream_dialect,
            ),
            ("exposure", self.exposure.mode != other.exposure.mode),
            (
                "alwaysExpose",
                self.exposure.always != other.exposure.always,
            ),
            (
                "allowedOrigins",
                self.allowed_origins != other.allowed_origins,
            ),
            ("maxSessions", self.max_sessions != other.max_sessions),
            (
                "maxConnections",
                self.max_connections != other.max_connections,
            ),
            (
                "maxConnectionsPerAddress",
                self.max_connections_per_address != other.max_connections_per_address,
            ),
            (
                "maxSessionsPerClient",
                self.max_sessions_per_client != other.max_sessions_per_client,
            ),
            (
                "maxUnreadStreamBytes",
                self.max_unread_stream_bytes != other.max_unread_stream_bytes,
            ),
            (
                "maxSessionServers",
                self.max_session_servers != other.max_session_servers,
            ),
            (
                "maxSessionServersPerClient",
                self.max_session_servers_per_client != other.max_session_servers_per_client,
            ),
            (
                "headerReadTimeout",
                self.header_read_timeout != other.header_read_timeout,
            ),
            (
                "bodyReadTimeout",
                self.body_read_timeout != other.body_read_timeout,
            ),
            (
                "sessionIdleTimeout",
                self.session_idle_timeout != other.session_idle_timeout,
            ),
            ("auth", self.auth != other.auth),
        ]
        .into_iter()
        .filter_map(|(key, changed)| changed.then_some(key))
        .collect()
    }
}

/// The servers of a config file, in the file's order.
#[derive(Debug)]
pub struct Config {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its servers, in the file's order.
    pub servers: Vec<Server>,
    /// Its `gateway` section.
    pub gateway: GatewaySection,
}

impl Config {
    /// Finds and reads the config file.
    pub fn load(explicit: Option<&Path>) -> anyhow::Result<Config> {
        let path = match explicit {
            Some(path) => path.to_path_buf(),
            None => find().ok_or_else(|| {
                anyhow!(
                    "no config file: pass --config FILE, or create ./mcpx.json or {}",
                    crate::places::CONFIG_FILE_HINT
                )
            })?,
        };
        let text = read(&path)?;
        let (servers, gateway) = parse(&text, &|name| std::env::var(name).ok())
            .with_context(|| format!("config {}", path.display()))?;
        Ok(Config {
            path,
            servers,
            gateway,
        })
    }

    /// What must never be shown (in a log, the audit log, an error): the values of the
    /// file's `${VAR}`s, what its server entries hold written as they are that reads as a
    /// credential ([`mcpclients::literal_secrets`]), and the client secrets, private keys and
    /// assertions written in it.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .gateway
            .secrets
            .iter()
            .map(|s| s.expose().to_owned())
            .collect();
        for server in &self.servers {
            let auth = &server.auth;
            secrets.extend(auth.client_secret.iter().map(|s| s.expose().to_owned()));
            secrets.extend(auth.private_key.iter().map(|k| k.pem.expose().to_owned()));
            if let Some(mcpauth::Assertion::Value(jwt)) = &auth.assertion {
                secrets.push(jwt.expose().to_owned());
            }
        }
        secrets
    }

    /// The server called `name`.
    pub fn server(&self, name: &str) -> anyhow::Result<&Server> {
        self.servers.iter().find(|s| s.name == name).ok_or_else(|| {
            let known: Vec<_> = self.servers.iter().map(|s| s.name.as_str()).collect();
            anyhow!(
                "no server '{name}' in {} (it has: {})",
                self.path.display(),
                known.join(", ")
            )
        })
    }
}

/// One server entry the schema accepted; `Err` for what only using it shows (a variable that is
/// not set, a key file that cannot be read), which stops this server alone.
fn server(
    name: &str,
    entry: &Value,
    at: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Server> {
    Ok(Server {
        name: name.to_owned(),
        entry: entry.clone(),
        transport: Reach::from_entry(entry, at, lookup)?,
        tools: ToolFilter {
            allow: strings(entry.get("allowTools")),
            deny: strings(entry.get("denyTools")),
        },
        prefix: match entry.get("prefix").and_then(Value::as_str) {
            Some(prefix) => prefix.to_owned(),
            None => mcpgateway::default_prefix(name),
        },
        isolation: match entry.get("isolation").and_then(Value::as_str) {
            Some("per-session") => Isolation::PerSession,
            _ => Isolation::Shared,
        },
        // The schema allows these three values only.
        protocol: match entry.get("protocol").and_then(Value::as_str) {
            Some("legacy") => Protocol::Legacy,
            Some(mcpclient::MODERN_VERSION) => Protocol::Modern,
            _ => Protocol::Auto,
        },
        auth: auth(entry.get("auth"), at, lookup)?,
        coerce_arguments: entry.get("coerceArguments").and_then(Value::as_str) == Some("safe"),
        exposure: exposure(entry),
        // The schema allows these three values only.
        pinning: match entry.get("pinning").and_then(Value::as_str) {
            Some("off") => Some(Pinning::Off),
            Some("warn") => Some(Pinning::Warn),
            Some("block") => Some(Pinning::Block),
            _ => None,
        },
        startup_timeout: match entry.get("startupTimeout").and_then(Value::as_f64) {
            // The schema bounds it, so the conversion cannot fail.
            Some(seconds) => Duration::try_from_secs_f64(seconds)
                .with_context(|| format!("{at}.startupTimeout"))?,
            None => mcpgateway::START_TIMEOUT,
        },
    })
}

fn find() -> Option<PathBuf> {
    let local = PathBuf::from("mcpx.json");
    if local.is_file() {
        return Some(local);
    }
    let global = global()?;
    global.is_file().then_some(global)
}

/// The user's own config file (see [`crate::places`]).
fn global() -> Option<PathBuf> {
    crate::places::Places::here().config_file()
}

/// The config file `import`, `install` and `add` write, absolute: `explicit`, else (with
/// `local_first`) the one [`Config::load`] would read, else the user's own config file
/// (created then). A client's user-scope file serves every folder, so its servers go to the
/// user's config whatever folder the command runs in (`local_first` false): from a folder
/// holding an `mcpx.json`, they would otherwise land in that project's config.
pub fn path_for_writing(explicit: Option<&Path>, local_first: bool) -> anyhow::Result<PathBuf> {
    let found = || if local_first { find() } else { None };
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => found().or_else(global).ok_or_else(|| {
            anyhow!(
                "no place for a config file: pass --config FILE, or set HOME or XDG_CONFIG_HOME"
            )
        })?,
    };
    std::path::absolute(&path).with_context(|| format!("config {}", path.display()))
}

fn read(path: &Path) -> anyhow::Result<String> {
    read_limited(path, MAX_CONFIG_BYTES).with_context(|| format!("config {}", path.display()))
}

/// The text of the file at `path`, refused past `limit` bytes; errors name the path, never
/// the content.
fn read_limited(path: &Path, limit: u64) -> anyhow::Result<String> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = String::new();
    file.take(limit + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if text.len() as u64 > limit {
        bail!("{} is over {limit} bytes", path.display());
    }
    Ok(text)
}

/// The servers and gateway section of a config text; `lookup` gives environment variables.
pub fn parse(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<(Vec<Server>, GatewaySection)> {
    let value: Value = serde_json::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    let problems = crate::config_schema::file_problems(&value);
    if !problems.is_empty() {
        bail!("{}", problems.join("\n  "));
    }
    let mut servers = Vec::new();
    for key in crate::config_schema::SERVER_KEYS {
        let Some(Value::Object(entries)) = value.get(key) else {
            continue;
        };
        for (name, entry) in entries {
            let at = format!("$.{key}.{name}");
            let problems = entry_problems(entry, &at);
            let server = if problems.is_empty() {
                server(name, entry, &at, lookup)
            } else {
                Err(anyhow!("{}", problems.join("; ")))
            };
            servers
                .push(server.unwrap_or_else(|e| Server::unusable(name, entry, format!("{e:#}"))));
        }
    }
    for (i, server) in servers.iter().enumerate() {
        let same = servers[..i]
            .iter()
            .find(|s| !server.prefix.is_empty() && s.prefix == server.prefix);
        if let Some(first) = same {
            bail!(
                "servers '{}' and '{}' have the same prefix '{}': their names would collide in the gateway",
                first.name,
                server.name,
                server.prefix
            );
        }
    }
    let section = value.get("gateway");
    // The values of its `${VAR}`s, and what its entries hold written as they are that reads as
    // a credential (a token in a URL's path, a key in its query, a secret header's value).
    let mut secrets = expanded_values(text, lookup);
    for key in crate::config_schema::SERVER_KEYS {
        if let Some(Value::Object(entries)) = value.get(key) {
            secrets.extend(entries.values().flat_map(mcpclients::literal_secrets));
        }
    }
    let gateway = GatewaySection {
        invalid_arguments: match section
            .and_then(|g| g.get("invalidArguments"))
            .and_then(Value::as_str)
        {
            Some("tool-result") => InvalidArguments::ToolResult,
            _ => InvalidArguments::Error,
        },
        downstream_dialect: match section
            .and_then(|g| g.get("downstreamDialect"))
            .and_then(Value::as_str)
        {
            Some("2020-12") => DownstreamDialect::Draft202012,
            _ => DownstreamDialect::Original,
        },
        exposure: ExposureOptions {
            mode: section.and_then(exposure).unwrap_or_default(),
            always: strings(section.and_then(|g| g.get("alwaysExpose"))),
        },
        allowed_origins: strings(section.and_then(|g| g.get("allowedOrigins"))),
        max_connections: count(section, "maxConnections", mcpgateway::MAX_CONNECTIONS),
        max_connections_per_address: count(
            section,
            "maxConnectionsPerAddress",
            mcpgateway::MAX_CONNECTIONS_PER_ADDRESS,
        ),
        max_sessions: count(section, "maxSessions", mcpgateway::MAX_SESSIONS),
        max_sessions_per_client: count(
            section,
            "maxSessionsPerClient",
            mcpgateway::MAX_SESSIONS_PER_CLIENT,
        ),
        max_unread_stream_bytes: count(
            section,
            "maxUnreadStreamBytes",
            mcpgateway::MAX_UNREAD_STREAM_BYTES,
        ),
        max_session_servers: count(
            section,
            "maxSessionServers",
            mcpgateway::MAX_SESSION_SERVERS,
        ),
        max_session_servers_per_client: count(
            section,
            "maxSessionServersPerClient",
            mcpgateway::MAX_SESSION_SERVERS_PER_CLIENT,
        ),
        session_idle_timeout: seconds(section, "sessionIdleTimeout")?
            .unwrap_or(mcpgateway::SESSION_IDLE_TIMEOUT),
        header_read_timeout: seconds(section, "headerReadTimeout")?
            .unwrap_or(mcpgateway::HEADER_READ_TIMEOUT),
        body_read_timeout: seconds(section, "bodyReadTimeout")?
            .unwrap_or(mcpgateway::BODY_READ_TIMEOUT),
        auth: section.and_then(|g| g.get("auth")).map(resource_auth),
        audit: section
            .and_then(|g| g.get("audit"))
            .map(|audit| mcpgateway::AuditOptions {
                file: audit["file"].as_str().unwrap_or_default().into(),
                arguments: audit.get("arguments").and_then(Value::as_bool) == Some(true),
                redactor: mcpgateway::Redactor::new(secrets.clone()),
            }),
        traces: section
            .and_then(|g| g.pointer("/traces/endpoint"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        secrets: secrets.into_iter().map(mcpauth::Secret::new).collect(),
    };
    Ok((servers, gateway))
}

/// The values of the `${VAR}`s of the config text that are set: secrets, never to be shown.
pub fn expanded_values(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut values = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        // `${VAR:-default}`: the default is in the file, not a secret.
        let name = after[..end].split(":-").next().unwrap_or_default();
        if let Some(value) = lookup(name).filter(|v| !v.is_empty() && !values.contains(v)) {
            values.push(value);
        }
        rest = &after[end + 1..];
    }
    values
}

/// A server's `auth` section (the schema checked its shape), `${VAR}` expanded in each string.
fn auth(
    section: Option<&Value>,
    at: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<mcpauth::AuthConfig> {
    let Some(section) = section else {
        return Ok(mcpauth::AuthConfig::default());
    };
    let at = format!("{at}.auth");
    let text = |field: &str| expanded(section, field, &at, lookup);
    let pem = match (text("privateKey")?, text("privateKeyFile")?) {
        (Some(pem), _) => Some(pem),
        (None, Some(path)) => Some(
            read_limited(Path::new(&path), MAX_PRIVATE_KEY_BYTES)
                .with_context(|| format!("{at}.privateKeyFile"))?,
        ),
        (None, None) => None,
    };
    Ok(mcpauth::AuthConfig {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?.map(mcpauth::Secret::new),
        private_key: pem.map(|pem| mcpauth::PrivateKey {
            pem: mcpauth::Secret::new(pem),
            algorithm: section
                .get("signingAlgorithm")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }),
        scopes: section.get("scopes").map(|s| strings(Some(s))),
        grant: match section.get("grant").and_then(Value::as_str) {
            Some("client_credentials") => mcpauth::Grant::ClientCredentials,
            Some("jwt_bearer") => mcpauth::Grant::JwtBearer,
            _ => mcpauth::Grant::AuthorizationCode,
        },
        client_metadata_url: text("clientMetadataUrl")?,
        assertion: match (
            text("assertion")?,
            text("assertionFile")?,
            section.get("idp"),
        ) {
            (Some(jwt), _, _) => Some(mcpauth::Assertion::Value(mcpauth::Secret::new(jwt))),
            (None, Some(path), _) => Some(mcpauth::Assertion::File(path.into())),
            (None, None, Some(idp)) => Some(identity_provider(idp, &format!("{at}.idp"), lookup)?),
            (None, None, None) => None,
        },
    })
}

/// The string at `field` of `section` (at `at` in the file), `${VAR}` expanded.
fn expanded(
    section: &Value,
    field: &str,
    at: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<String>> {
    section
        .get(field)
        .and_then(Value::as_str)
        .map(|v| mcpclient::expand(v, lookup).map_err(|problem| anyhow!("{at}.{field}: {problem}")))
        .transpose()
}

/// A server's `auth.idp` (the schema checked its shape), `${VAR}` expanded in each string.
fn identity_provider(
    idp: &Value,
    at: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<mcpauth::Assertion> {
    let text = |field: &str| expanded(idp, field, at, lookup);
    let id_token = match (text("idToken")?, text("idTokenFile")?) {
        (Some(jwt), _) => mcpauth::Assertion::Value(mcpauth::Secret::new(jwt)),
        (None, Some(path)) => mcpauth::Assertion::File(path.into()),
        (None, None) => bail!("{at}: give idToken or idTokenFile"),
    };
    Ok(mcpauth::Assertion::Exchanged(Box::new(
        mcpauth::IdentityProvider {
            token_endpoint: text("tokenEndpoint")?.unwrap_or_default(),
            client_id: text("clientId")?,
            client_secret: text("clientSecret")?.map(mcpauth::Secret::new),
            id_token,
        },
    )))
}

/// The count at `key` of the gateway section, `default` when not given (the schema bounds it,
/// so the conversion cannot fail).
fn count(section: Option<&Value>, key: &str, default: usize) -> usize {
    section
        .and_then(|g| g.get(key))
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(default)
}

/// The duration in seconds at `key` of the gateway section, if given (the schema bounds it).
fn seconds(section: Option<&Value>, key: &str) -> anyhow::Result<Option<Duration>> {
    match section.and_then(|g| g.get(key)).and_then(Value::as_f64) {
        Some(seconds) => Ok(Some(
            Duration::try_from_secs_f64(seconds).with_context(|| format!("gateway.{key}"))?,
        )),
        None => Ok(None),
    }
}

/// The `gateway.auth` object the schema checked.
fn resource_auth(auth: &Value) -> ResourceAuth {
    let text = |key: &str| auth.get(key).and_then(Value::as_str).map(str::to_owned);
    ResourceAuth {
        issuer: text("issuer").unwrap_or_default(),
        audience: text("audience"),
        scopes: strings(auth.get("scopes")),
        tool_scopes: auth
            .get("toolScopes")
            .and_then(Value::as_object)
            .map(|rules| {
                rules
                    .iter()
                    .filter_map(|(tools, scope)| {
                        Some(ToolScope {
                            tools: tools.clone(),
                            scope: scope.as_str()?.to_owned(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// An array of strings the schema checked, as a list.
/// The `exposure` member of a server entry or the gateway section (the schema allows these
/// three values only).
fn exposure(object: &Value) -> Option<Exposure> {
    match object.get("exposure").and_then(Value::as_str)? {
        "search" => Some(Exposure::Search),
        "auto" => Some(Exposure::Auto),
        _ => Some(Exposure::All),
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    /// Why the first server of `text` cannot start.
    fn unusable(text: &str) -> String {
        let (servers, _) = parse(text, &env).unwrap();
        match &servers[0].transport {
            Reach::Unusable { problem, .. } => problem.clone(),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn both_formats_and_expansion() {
        let text = r#"{"mcpServers": {"a": {"command": "srv", "args": ["--x"], "env": {"T": "${TOKEN}"}}},
            "servers": {"b": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#;
        let (servers, _) = parse(text, &env).unwrap();
        let Reach::Stdio(a) = &servers[0].transport else {
            panic!()
        };
        assert_eq!(a.env["T"], "s3cret");
        assert_eq!(servers[0].startup_timeout, mcpgateway::START_TIMEOUT);
        let Reach::Http(b) = &servers[1].transport else {
            panic!()
        };
        assert_eq!(
            b.headers,
            [("Authorization".to_owned(), "Bearer s3cret".to_owned())]
        );
    }

    #[test]
    fn protocol_eras() {
        let text = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "protocol": "legacy"},
            "c": {"url": "http://127.0.0.1:1/mcp", "protocol": "2026-07-28"}}}"#;
        let (servers, _) = parse(text, &env).unwrap();
        let eras: Vec<Protocol> = servers.iter().map(|s| s.protocol).collect();
        assert_eq!(eras, [Protocol::Auto, Protocol::Legacy, Protocol::Modern]);
        let wrong = r#"{"mcpServers": {"a": {"command": "x", "protocol": "2025-11-25"}}}"#;
        let error = unusable(wrong);
        assert!(error.contains("$.mcpServers.a.protocol"), "{error}");
    }

    #[test]
    fn downstream_dialect_is_original_unless_asked() {
        let plain = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
        assert_eq!(
            parse(plain, &env).unwrap().1.downstream_dialect,
            DownstreamDialect::Original
        );
        let asked = r#"{"mcpServers": {"a": {"command": "x"}}, "gateway": {"downstreamDialect": "2020-12"}}"#;
        assert_eq!(
            parse(asked, &env).unwrap().1.downstream_dialect,
            DownstreamDialect::Draft202012
        );
        let wrong = r#"{"mcpServers": {"a": {"command": "x"}}, "gateway": {"downstreamDialect": "draft-07"}}"#;
        let error = format!("{:#}", parse(wrong, &env).unwrap_err());
        assert!(error.contains("downstreamDialect"), "{error}");
    }

    #[test]
    fn exposure_globally_and_per_server() {
        let env = |_: &str| None;
        let plain = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
        let (servers, gateway) = parse(plain, &env).unwrap();
        assert_eq!(servers[0].exposure, None);
        assert_eq!(gateway.exposure, ExposureOptions::default());
        let text = r#"{"mcpServers": {"a": {"command": "x", "exposure": "all"}, "b": {"command": "y"}},
            "gateway": {"exposure": "auto", "alwaysExpose": ["b__get_*"]}}"#;
        let (servers, gateway) = parse(text, &env).unwrap();
        assert_eq!(servers[0].exposure, Some(Exposure::All));
        assert_eq!(servers[0].upstream().exposure, Some(Exposure::All));
        assert_eq!(servers[1].exposure, None);
        assert_eq!(gateway.exposure.mode, Exposure::Auto);
        assert_eq!(gateway.exposure.always, ["b__get_*"]);
        let wrong = r#"{"mcpServers": {"a": {"command": "x", "exposure": "some"}}}"#;
        let error = unusable(wrong);
        assert!(error.contains("$.mcpServers.a.exposure"), "{error}");
    }

    #[test]
    fn prefixes_and_isolation() {
        let text = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "prefix": "", "isolation": "per-session"}},
            "gateway": {"maxSessions": 8, "sessionIdleTimeout": 2.5}}"#;
        let (servers, gateway) = parse(text, &env).unwrap();
        assert_eq!(servers[0].prefix, "a__");
        assert_eq!(servers[0].isolation, Isolation::Shared);
        assert_eq!(servers[1].prefix, "");
        assert_eq!(servers[1].isolation, Isolation::PerSession);
        assert_eq!(gateway.max_sessions, 8);
        assert_eq!(gateway.session_idle_timeout, Duration::from_millis(2500));
        let same = r#"{"mcpServers": {"a": {"command": "x", "prefix": "p_"}, "b": {"command": "y", "prefix": "p_"}}}"#;
        assert_eq!(
            parse(same, &env).unwrap_err().to_string(),
            "servers 'a' and 'b' have the same prefix 'p_': their names would collide in the gateway"
        );
    }

    /// A problem in one server's entry stops that server alone, with its place and reason;
    /// a problem elsewhere refuses the file.
    #[test]
    fn mistakes_name_the_path() {
        let problem = |text: &str| {
            let (servers, _) = parse(text, &env).unwrap();
            let Reach::Unusable { problem, kind } = &servers[0].transport else {
                panic!("{text}: usable");
            };
            assert_eq!(servers[1].name, "ok", "{text}");
            assert!(matches!(servers[1].transport, Reach::Stdio(_)), "{text}");
            format!("{kind}: {problem}")
        };
        assert_eq!(
            problem(r#"{"mcpServers": {"a": {"command": 3}, "ok": {"command": "x"}}}"#),
            "stdio: $.mcpServers.a.command: got integer, want string"
        );
        assert_eq!(
            problem(
                r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}, "ok": {"command": "x"}}}"#
            ),
            "stdio: $.mcpServers.a.env.K: environment variable NOPE is not set"
        );
        assert_eq!(
            problem(
                r#"{"mcpServers": {"a": {"url": "https://x/${NOPE}"}, "ok": {"command": "x"}}}"#
            ),
            "http: $.mcpServers.a.url: environment variable NOPE is not set"
        );
        assert_eq!(
            problem(
                r#"{"mcpServers": {"a": {"url": "http://x", "auth": {"clientSecret": "${NOPE}"}}, "ok": {"command": "x"}}}"#
            ),
            "http: $.mcpServers.a.auth.clientSecret: environment variable NOPE is not set"
        );
        assert!(problem(r#"{"mcpServers": {"a": {"command": "x", "startupTimeout": 0}, "ok": {"command": "x"}}}"#)
            .contains("$.mcpServers.a.startupTimeout"));
        assert!(problem(
            r#"{"mcpServers": {"a": {"command": "x", "url": "http://x"}, "ok": {"command": "x"}}}"#
        )
        .starts_with("http: $.mcpServers.a: oneOf"));
        assert!(parse(r#"{"other": {}}"#, &env).is_err());
        let err = parse(r#"{"mcpServers": {}, "gateway": {"maxSessions": 0}}"#, &env).unwrap_err();
        assert!(err.to_string().contains("$.gateway.maxSessions"), "{err}");
        let (servers, gateway) = parse(
            r#"{"mcpServers": {"a": {"command": "x", "startupTimeout": 2.5, "env": {"T": "${TOKEN:-none}", "N": "${NOPE:-d}"}}}}"#,
            &env,
        )
        .unwrap();
        assert_eq!(servers[0].startup_timeout, Duration::from_millis(2500));
        let Reach::Stdio(command) = &servers[0].transport else {
            panic!("not stdio");
        };
        assert_eq!(
            (command.env["T"].as_str(), command.env["N"].as_str()),
            ("s3cret", "d")
        );
        assert_eq!(gateway.secrets, [mcpauth::Secret::new("s3cret")]);
        assert!(!format!("{gateway:?}").contains("s3cret"));
    }

    #[test]
    fn private_key_from_a_variable_or_a_file_never_in_errors() {
        const PEM: &str =
            "-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n";
        let env = |name: &str| (name == "KEY").then(|| PEM.to_owned());
        let server = |auth: &str| {
            let text = format!(
                r#"{{"mcpServers": {{"a": {{"url": "http://127.0.0.1:1/mcp", "auth": {auth}}}}}}}"#
            );
            let (servers, _) = parse(&text, &env).unwrap();
            match &servers[0].transport {
                Reach::Unusable { problem, .. } => Err(anyhow!("{problem}")),
                _ => Ok(servers[0].auth.clone()),
            }
        };
        let from_var =
            server(r#"{"clientId": "c", "privateKey": "${KEY}", "signingAlgorithm": "ES256"}"#)
                .unwrap();
        let key = from_var.private_key.unwrap();
        assert_eq!(key.pem.expose(), PEM);
        assert_eq!(key.algorithm.as_deref(), Some("ES256"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("key.pem");
        std::fs::write(&file, PEM).unwrap();
        // The path as a JSON string: a Windows path's backslashes escaped.
        let quoted = Value::from(file.display().to_string());
        let from_file = server(&format!(
            r#"{{"clientId": "c", "privateKeyFile": {quoted}}}"#
        ))
        .unwrap();
        assert_eq!(from_file.private_key.unwrap().pem.expose(), PEM);
        std::fs::write(&file, "x".repeat(MAX_PRIVATE_KEY_BYTES as usize + 1)).unwrap();
        let too_big = server(&format!(r#"{{"privateKeyFile": {quoted}}}"#)).unwrap_err();
        assert!(
            format!("{too_big:#}").contains(&format!("is over {MAX_PRIVATE_KEY_BYTES} bytes")),
            "{too_big:#}"
        );
        let missing = format!(
            "{:#}",
            server(r#"{"privateKeyFile": "/nonexistent/key.pem"}"#).unwrap_err()
        );
        assert!(
            missing
                .contains("$.mcpServers.a.auth.privateKeyFile: cannot read /nonexistent/key.pem"),
            "{missing}"
        );
        let both = server(r#"{"privateKey": "${KEY}", "privateKeyFile": "k.pem"}"#).unwrap_err();
        assert!(
            !format!("{both:#}").contains("secret-key-material"),
            "{both:#}"
        );
        let workload =
            server(r#"{"clientId": "w", "grant": "jwt_bearer", "assertionFile": "/run/token"}"#)
                .unwrap();
        assert_eq!(workload.grant, mcpauth::Grant::JwtBearer);
        assert_eq!(
            workload.assertion,
            Some(mcpauth::Assertion::File("/run/token".into()))
        );
        let enterprise = server(
            r#"{"clientId": "c", "grant": "jwt_bearer", "idp": {"tokenEndpoint": "https://idp.example/token", "idToken": "${KEY}"}}"#,
        )
        .unwrap();
        let Some(mcpauth::Assertion::Exchanged(idp)) = enterprise.assertion else {
            panic!("no identity provider");
        };
        assert_eq!(idp.token_endpoint, "https://idp.example/token");
        assert_eq!(
            idp.id_token,
            mcpauth::Assertion::Value(mcpauth::Secret::new(PEM))
        );
        assert!(server(r#"{"idp": {"tokenEndpoint": "https://idp.example/token"}}"#).is_err());
        assert!(server(r#"{"assertion": "${KEY}", "assertionFile": "/run/token"}"#).is_err());
    }

    #[test]
    fn gateway_auth() {
        let text = r#"{"mcpServers": {"a": {"command": "x"}}, "gateway": {"auth": {
            "issuer": "https://auth.example.com", "scopes": ["mcp:tools"],
            "toolScopes": {"a__write*": "files:write", "a__*": "files:read"}}}}"#;
        let (_, gateway) = parse(text, &env).unwrap();
        let auth = gateway.auth.unwrap();
        assert_eq!(auth.issuer, "https://auth.example.com");
        assert_eq!(auth.audience, None);
        assert_eq!(auth.scopes, ["mcp:tools"]);
        let rules: Vec<_> = auth
            .tool_scopes
            .iter()
            .map(|r| (r.tools.as_str(), r.scope.as_str()))
            .collect();
        assert_eq!(
            rules,
            [("a__write*", "files:write"), ("a__*", "files:read")]
        );
        let (_, none) = parse(r#"{"mcpServers": {}}"#, &env).unwrap();
        assert!(none.auth.is_none());
        for (bad, at) in [
            (r#"{"scopes": []}"#, "$.gateway.auth"),
            (r#"{"issuer": "auth.example.com"}"#, "$.gateway.auth.issuer"),
            (
                r#"{"issuer": "https://a", "scopes": ["two words"]}"#,
                "$.gateway.auth.scopes[0]",
            ),
            (
                r#"{"issuer": "https://a", "toolScopes": {"x": "a\"b"}}"#,
                "$.gateway.auth.toolScopes.x",
            ),
        ] {
            let text = format!(r#"{{"mcpServers": {{}}, "gateway": {{"auth": {bad}}}}}"#);
            let err = parse(&text, &env).unwrap_err().to_string();
            assert!(err.contains(at), "{bad}: {err}");
        }
    }
}
