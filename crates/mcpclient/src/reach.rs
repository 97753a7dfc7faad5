//! Where and how to reach a server, in one place for the CLI, the gateway and the load
//! generator: the transport fields of an `mcpServers` entry ([`Reach::from_entry`]), the
//! transport they open ([`Reach::open`]), and the client connected over it ([`connect`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use thiserror::Error;
use tokio::sync::mpsc;

use crate::headers::ToolHeaders;
use crate::pipe::{InProcess, PipeSink, PipeSource};
use crate::{
    Client, ClientError, ClientOptions, Era, Event, Frame, FrameSink, FrameSource, HttpConfig,
    HttpSink, HttpSource, HttpTransport, Protocol, Received, StderrTail, StdioCommand, StdioSink,
    StdioSource, StdioTransport, Transport, TransportError,
};

/// How a server is reached: a child process on stdio, or a Streamable HTTP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// A child process speaking over stdin/stdout.
    Stdio(StdioCommand),
    /// A Streamable HTTP endpoint.
    Http(HttpConfig),
    /// A server in this process, over an in-memory stream (never from a config file).
    InProcess(InProcess),
    /// A config entry that cannot be used (a variable that is not set, a field of the wrong
    /// type): opening it fails with `problem`, so that this one server fails to start, with
    /// its reason, while the others of the config go on.
    Unusable {
        /// `stdio` or `http`, as the entry reads.
        kind: &'static str,
        /// What is wrong, with where (`$.mcpServers.NAME.env.KEY: …`; never a value).
        problem: String,
    },
}

/// Whether a stdio server gets a process group of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spawn {
    /// In the caller's process group (a command-line run: Ctrl-C reaches it too).
    Inline,
    /// In a group of its own, killed as a whole when the transport closes (a long-running
    /// gateway: nothing the server started outlives it).
    Grouped,
}

/// A transport field of an `mcpServers` entry that cannot be used.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{at}: {problem}")]
pub struct EntryError {
    /// Where: `mcpServers.NAME.FIELD`.
    pub at: String,
    /// What is wrong (never a variable's value).
    pub problem: String,
}

impl Reach {
    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self {
            Reach::Stdio(_) => "stdio",
            Reach::Http(_) => "http",
            Reach::InProcess(_) => "in-process",
            Reach::Unusable { kind, .. } => kind,
        }
    }

    /// The transport of an `mcpServers` entry at `at` (`mcpServers.NAME`): `url` and `headers`
    /// for HTTP, else `command`, `args`, `env` and `cwd`. `${VAR}` in any of them is replaced
    /// by `lookup(VAR)` (`${MCPX_EXE}` by this program's path when not set otherwise).
    ///
    /// # Errors
    /// [`EntryError`] for a `type` that contradicts the fields, or a variable that is not set.
    pub fn from_entry(
        entry: &Value,
        at: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Reach, EntryError> {
        let text = |field: &str| entry.get(field).and_then(Value::as_str);
        let problem = |field: &str, problem: String| EntryError {
            at: if field.is_empty() {
                at.to_owned()
            } else {
                format!("{at}.{field}")
            },
            problem,
        };
        let expand_at =
            |value: &str, field: &str| expand(value, lookup).map_err(|p| problem(field, p));
        let map = |field: &str| -> Result<Vec<(String, String)>, EntryError> {
            let Some(Value::Object(pairs)) = entry.get(field) else {
                return Ok(Vec::new());
            };
            pairs
                .iter()
                .map(|(k, v)| {
                    let value = expand_at(v.as_str().unwrap_or_default(), &format!("{field}.{k}"))?;
                    Ok((k.clone(), value))
                })
                .collect()
        };
        if let Some(url) = text("url") {
            if text("type") == Some("stdio") {
                return Err(problem("", "type is stdio but it has a url".to_owned()));
            }
            return Ok(Reach::Http(HttpConfig {
                url: expand_at(url, "url")?,
                headers: map("headers")?,
                auth: None,
            }));
        }
        if matches!(text("type"), Some("http" | "streamable-http")) {
            return Err(problem("", "type is http but it has no url".to_owned()));
        }
        let args = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .enumerate()
                    .map(|(i, a)| expand_at(a.as_str().unwrap_or_default(), &format!("args[{i}]")))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        Ok(Reach::Stdio(StdioCommand {
            program: expand_at(text("command").unwrap_or_default(), "command")?,
            args,
            env: map("env")?.into_iter().collect::<HashMap<_, _>>(),
            cwd: text("cwd").map(PathBuf::from),
        }))
    }

    /// Starts the server (stdio) or readies its endpoint (HTTP).
    ///
    /// # Errors
    /// [`TransportError`] when the program cannot be started or the URL is not usable.
    pub fn open(&self, spawn: Spawn) -> Result<ReachTransport, TransportError> {
        Ok(match self {
            Reach::Stdio(command) => ReachTransport::stdio(match spawn {
                Spawn::Inline => StdioTransport::spawn(command)?,
                Spawn::Grouped => StdioTransport::spawn_grouped(command)?,
            }),
            Reach::Http(config) => ReachTransport::http(HttpTransport::new(config)?),
            Reach::InProcess(server) => {
                let (sink, source) = server.connect()?;
                ReachTransport {
                    sink: ReachSink::InProcess(sink),
                    source: ReachSource::InProcess(source),
                    stderr: None,
                    tool_headers: None,
                }
            }
            Reach::Unusable { problem, .. } => return Err(TransportError::Config(problem.clone())),
        })
    }

    /// The reach of an entry that cannot be used: `stdio` or `http` as its fields say, failing
    /// with `problem` when opened.
    pub fn unusable(entry: &Value, problem: String) -> Reach {
        let http = entry.get("url").is_some()
            || matches!(
                entry.get("type").and_then(Value::as_str),
                Some("http" | "streamable-http")
            );
        Reach::Unusable {
            kind: if http { "http" } else { "stdio" },
            problem,
        }
    }
}

/// `${VAR}` replaced by `lookup(VAR)` (`${MCPX_EXE}` by this program's path when not set
/// otherwise), as in [`Reach::from_entry`], for the other fields of an entry that take them.
/// `${VAR:-default}` is `default` when `VAR` is not set or empty (as in a shell, and in Claude
/// Code's `.mcp.json`); the default is taken as written, with no variable in it.
///
/// # Errors
/// What is wrong (never a variable's value): an unclosed `${`, or a variable that is not set
/// and has no default.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        // Not the text itself: what surrounds the `${` may be a credential written as it is.
        let end = after.find('}').ok_or_else(|| {
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            format!("unclosed ${{ (no `}}` after `${{{name}`)")
        })?;
        let (name, default) = match after[..end].split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (&after[..end], None),
        };
        let value = lookup(name).or_else(|| (name == "MCPX_EXE").then(own_exe).flatten());
        let value = match (value, default) {
            (Some(value), Some(default)) if value.is_empty() => default.to_owned(),
            (Some(value), _) => value,
            (None, Some(default)) => default.to_owned(),
            (None, None) => return Err(format!("environment variable {name} is not set")),
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn own_exe() -> Option<String> {
    std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
}

/// The transport a [`Reach`] opens: either kind, behind one type.
pub struct ReachTransport {
    sink: ReachSink,
    source: ReachSource,
    stderr: Option<StderrTail>,
    tool_headers: Option<ToolHeaders>,
}

impl ReachTransport {
    fn stdio(transport: StdioTransport) -> ReachTransport {
        let stderr = Some(transport.stderr());
        let (sink, source) = transport.split();
        ReachTransport {
            sink: ReachSink::Stdio(Box::new(sink)),
            source: ReachSource::Stdio(source),
            stderr,
            tool_headers: None,
        }
    }

    fn http(transport: HttpTransport) -> ReachTransport {
        let tool_headers = transport.tool_headers();
        let (sink, source) = transport.split();
        ReachTransport {
            sink: ReachSink::Http(sink),
            source: ReachSource::Http(source),
            stderr: None,
            tool_headers,
        }
    }

    /// The child's stderr, for a stdio server.
    pub fn stderr(&self) -> Option<StderrTail> {
        self.stderr.clone()
    }
}

/// The sending half of a [`ReachTransport`].
pub enum ReachSink {
    /// To a child's stdin (boxed: it carries the child's handle).
    Stdio(Box<StdioSink>),
    /// POSTs to an endpoint.
    Http(HttpSink),
    /// To a server in this process.
    InProcess(PipeSink),
}

/// The receiving half of a [`ReachTransport`].
pub enum ReachSource {
    /// From a child's stdout.
    Stdio(StdioSource),
    /// From the exchanges and the GET stream.
    Http(HttpSource),
    /// From a server in this process.
    InProcess(PipeSource),
}

impl Transport for ReachTransport {
    type Sink = ReachSink;
    type Source = ReachSource;

    fn split(self) -> (ReachSink, ReachSource) {
        (self.sink, self.source)
    }

    fn halves(&mut self) -> (&mut ReachSink, &mut ReachSource) {
        (&mut self.sink, &mut self.source)
    }

    fn tool_headers(&self) -> Option<ToolHeaders> {
        self.tool_headers.clone()
    }
}

impl FrameSink for ReachSink {
    async fn send_all(&mut self, frames: &[Frame]) -> Result<(), TransportError> {
        match self {
            ReachSink::Stdio(s) => s.send_all(frames).await,
            ReachSink::Http(s) => s.send_all(frames).await,
            ReachSink::InProcess(s) => s.send_all(frames).await,
        }
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        match self {
            ReachSink::Stdio(s) => s.close().await,
            ReachSink::Http(s) => s.close().await,
            ReachSink::InProcess(s) => s.close().await,
        }
    }
}

impl FrameSource for ReachSource {
    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        match self {
            ReachSource::Stdio(s) => s.receive().await,
            ReachSource::Http(s) => s.receive().await,
            ReachSource::InProcess(s) => s.receive().await,
        }
    }

    async fn receive_related(&mut self) -> Option<Result<Received, TransportError>> {
        match self {
            ReachSource::Stdio(s) => s.receive_related().await,
            ReachSource::Http(s) => s.receive_related().await,
            ReachSource::InProcess(s) => s.receive_related().await,
        }
    }
}

/// A client connected to a server: its events, and the stderr of a stdio server.
pub struct Connected {
    /// The client, past the handshake.
    pub client: Client,
    /// What the server sends that is no answer, and what happens to the connection.
    pub events: mpsc::Receiver<Event>,
    /// The last lines a stdio server wrote to stderr.
    pub stderr: Option<StderrTail>,
}

/// Why a server could not be connected.
#[derive(Debug, Error)]
pub enum ConnectError {
    /// The transport could not be opened.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The handshake failed.
    #[error("{error}")]
    Client {
        /// Why.
        error: ClientError,
        /// The last lines a stdio server wrote to stderr.
        stderr: Option<StderrTail>,
    },
    /// The handshake did not end in time.
    #[error("did not complete the handshake within {} s", within.as_secs_f64())]
    Timeout {
        /// The time it had.
        within: Duration,
        /// The last lines a stdio server wrote to stderr.
        stderr: Option<StderrTail>,
    },
}

impl ConnectError {
    /// The last lines the stdio server wrote to stderr, if it got that far.
    pub fn stderr(&self) -> Option<&StderrTail> {
        match self {
            ConnectError::Client { stderr, .. } | ConnectError::Timeout { stderr, .. } => {
                stderr.as_ref()
            }
            ConnectError::Transport(_) => None,
        }
    }
}

/// What [`connect_listing`] does once the handshake is over, within the same start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Listing {
    /// Nothing: the handshake is the start.
    #[default]
    Nothing,
    /// Lists the tools (compiling their schemas) when the server declares the capability.
    ToolsIfOffered,
    /// Lists the tools whatever the server declares.
    Tools,
}

/// Opens `reach` and connects a client with `options`, the handshake bounded by `within` (see
/// [`connect_listing`]).
///
/// # Errors
/// [`ConnectError`] when the transport cannot be opened or the handshake fails or times out.
pub async fn connect(
    reach: &Reach,
    options: ClientOptions,
    spawn: Spawn,
    within: Duration,
) -> Result<Connected, ConnectError> {
    connect_listing(reach, options, spawn, within, Listing::Nothing).await
}

/// Opens `reach`, connects a client with `options` and lists as `listing` says, all within
/// `within`. A stdio server's start that probed it with `server/discover` and then failed
/// anywhere (the server closed, crashed or answered with an error, during the handshake or the
/// listing; not the time running out) is tried once more without the probe, as legacy, with
/// `within`
/// of its own (a process started again is as slow to start as the first: a server that dies on
/// the probe must not fail for having started twice): the client's
/// [`Discovery`](crate::Discovery) then says [`Why::FellBack`](crate::Why::FellBack).
///
/// # Errors
/// [`ConnectError`] when the transport cannot be opened or the handshake or the listing fails
/// or times out (the second start's failure, when there was one).
pub async fn connect_listing(
    reach: &Reach,
    options: ClientOptions,
    spawn: Spawn,
    within: Duration,
    listing: Listing,
) -> Result<Connected, ConnectError> {
    // An HTTP server's failures (refused, unauthorized, an error status) are not the probe's:
    // its answer to the probe is read like any other (see `modern::probed`).
    let probed = matches!(reach, Reach::Stdio(_))
        && matches!(
            options.protocol,
            Protocol::Auto | Protocol::Remembered(Era::Modern)
        );
    let unprobed = ClientOptions {
        protocol: Protocol::Remembered(Era::Legacy),
        ..options.clone()
    };
    match attempt(
        reach,
        options,
        spawn,
        Instant::now() + within,
        within,
        listing,
    )
    .await
    {
        Err(ConnectError::Client { error, .. }) if probed => {
            let first = error.to_string();
            tracing::info!(%first, "the start with the server/discover probe failed: starting it again without");
            let again = Instant::now() + within;
            let connected = attempt(reach, unprobed, spawn, again, within, listing).await?;
            // The user learns why the start took two (and how to skip the probe); the era is
            // remembered by the callers that keep a memory.
            tracing::warn!(
                %first,
                "the server failed after the server/discover probe; started again without it, as a legacy server (\"protocol\": \"legacy\" in its entry skips the probe)"
            );
            connected.client.fell_back(&first);
            Ok(connected)
        }
        other => other,
    }
}

async fn attempt(
    reach: &Reach,
    options: ClientOptions,
    spawn: Spawn,
    deadline: Instant,
    within: Duration,
    listing: Listing,
) -> Result<Connected, ConnectError> {
    let transport = reach.open(spawn)?;
    let stderr = transport.stderr();
    let start = async {
        let (client, events) = Client::connect_with(transport, options).await?;
        let wanted = match listing {
            Listing::Nothing => false,
            Listing::ToolsIfOffered => client.server_capabilities().get("tools").is_some(),
            Listing::Tools => true,
        };
        if wanted {
            client.list_tools().await?;
        }
        Ok::<_, ClientError>((client, events))
    };
    match tokio::time::timeout_at(deadline.into(), start).await {
        Ok(Ok((client, events))) => Ok(Connected {
            client,
            events,
            stderr,
        }),
        Ok(Err(error)) => Err(ConnectError::Client { error, stderr }),
        Err(_) => Err(ConnectError::Timeout { within, stderr }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn an_http_entry_with_expanded_headers() {
        let entry = json!({"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}});
        let reach = Reach::from_entry(&entry, "mcpServers.a", &env).unwrap();
        assert_eq!(
            reach,
            Reach::Http(HttpConfig {
                url: "http://127.0.0.1:1/mcp".to_owned(),
                headers: vec![("Authorization".to_owned(), "Bearer s3cret".to_owned())],
                auth: None,
            })
        );
        assert_eq!(reach.kind(), "http");
    }

    #[test]
    fn a_stdio_entry_with_args_env_and_cwd() {
        let entry = json!({"command": "srv", "args": ["--token", "${TOKEN}"], "env": {"K": "v"}, "cwd": "/tmp"});
        let Reach::Stdio(command) = Reach::from_entry(&entry, "mcpServers.a", &env).unwrap() else {
            panic!("not stdio");
        };
        assert_eq!(command.program, "srv");
        assert_eq!(command.args, ["--token", "s3cret"]);
        assert_eq!(command.env.get("K").map(String::as_str), Some("v"));
        assert_eq!(command.cwd, Some(PathBuf::from("/tmp")));
    }

    #[test]
    fn contradictions_and_unset_variables_say_where() {
        let stdio_with_url = json!({"type": "stdio", "url": "http://x"});
        assert_eq!(
            Reach::from_entry(&stdio_with_url, "mcpServers.a", &env)
                .unwrap_err()
                .to_string(),
            "mcpServers.a: type is stdio but it has a url"
        );
        let http_without_url = json!({"type": "streamable-http", "command": "x"});
        assert!(Reach::from_entry(&http_without_url, "mcpServers.a", &env).is_err());
        let unset = json!({"command": "srv", "env": {"K": "${NOPE}"}});
        let error = Reach::from_entry(&unset, "mcpServers.a", &env).unwrap_err();
        assert_eq!(
            error.to_string(),
            "mcpServers.a.env.K: environment variable NOPE is not set"
        );
        let defaulted = json!({"command": "srv", "env": {"K": "${NOPE:-none}", "T": "${TOKEN:-x}", "E": "${EMPTY:-d}"}});
        let lookup = |name: &str| match name {
            "EMPTY" => Some(String::new()),
            other => env(other),
        };
        let Reach::Stdio(command) = Reach::from_entry(&defaulted, "mcpServers.a", &lookup).unwrap()
        else {
            panic!("not stdio");
        };
        assert_eq!(command.env["K"], "none");
        assert_eq!(command.env["T"], "s3cret");
        assert_eq!(command.env["E"], "d");
        let unusable = Reach::unusable(&unset, "it cannot".into());
        assert_eq!(unusable.kind(), "stdio");
        assert!(matches!(
            unusable.open(Spawn::Inline),
            Err(TransportError::Config(p)) if p == "it cannot"
        ));
        let unclosed = json!({"url": "http://sk_literal_key@${TOKEN"});
        assert_eq!(
            Reach::from_entry(&unclosed, "mcpServers.a", &env)
                .unwrap_err()
                .problem,
            "unclosed ${ (no `}` after `${TOKEN`)"
        );
    }

    #[test]
    fn a_program_that_cannot_start_is_a_transport_error() {
        let reach = Reach::Stdio(StdioCommand {
            program: "/nonexistent/mcpx-no-such-program".to_owned(),
            ..StdioCommand::default()
        });
        assert!(matches!(
            reach.open(Spawn::Inline),
            Err(TransportError::Spawn { .. })
        ));
    }
}
