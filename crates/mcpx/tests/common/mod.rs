//! Starting `mcpx serve` in front of the demo server (and the MCP reference server), and
//! talking to it frame by frame with every frame checked against the protocol schema.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcpclient::{Frame, StdioCommand, StdioTransport, Transport};
use mcpspec::{spec_or_skip, Recording, Spec};
use serde_json::{json, Value};

/// The drifting tool's result, exactly as the demo server sends it.
pub const DRIFTING: &str = r#"{"zeta":true,"content":[{"type":"text","text":"drifted"}],"structuredContent":{"sum":"eleven","big":18446744073709551617,"precise":0.100000000000000000000000000001,"negative":-18446744073709551617,"z":1,"a":2},"x-vendor":{"kept":[1,2,3]},"isError":false}"#;

/// How long mcpx may take to stop its servers once it stops: each server gets
/// [`mcpclient::STOP_GRACE`] to end after its input closes, as long after SIGTERM, then
/// SIGKILL; and three seconds for a loaded machine (CI runs the test binaries side by side on
/// two cores; one second left the documented 4 s a quarter of slack).
pub const SERVERS_STOP: Duration = Duration::from_secs(2 * mcpclient::STOP_GRACE.as_secs() + 3);

/// How soon "at once" is: what mcpx does without waiting on anything (a crashed server's call
/// answered, a request refused, the calls in flight answered when a drain ends) reaches the
/// test in well under a second, debug build; room for a loaded machine.
pub const AT_ONCE: Duration = Duration::from_secs(2);

/// The output of `what`, which must be done [`AT_ONCE`].
pub async fn at_once<T>(what: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(AT_ONCE, what)
        .await
        .unwrap_or_else(|_| panic!("not done within {AT_ONCE:?}"))
}

/// How long a test waits for any one frame.
pub const FRAME_WAIT: Duration = Duration::from_secs(30);

pub const MCPX: &str = env!("CARGO_BIN_EXE_mcpx");

/// The protocol schema of the version mcpx offers, loaded once.
pub fn spec() -> Option<&'static Spec> {
    static SPEC: std::sync::OnceLock<Option<Spec>> = std::sync::OnceLock::new();
    SPEC.get_or_init(|| spec_or_skip(mcpclient::OFFERED_VERSION))
        .as_ref()
}

/// A config in `dir`: the demo server as `demo` (recording its conversation to
/// `dir/demo.jsonl`), `extra` more servers (JSON members), and a `gateway` section.
pub fn config(dir: &Path, demo_args: &[&str], extra: &str, gateway: &str) -> PathBuf {
    let record = dir.join("demo.jsonl");
    let mut args = vec![
        "demo-server".to_owned(),
        "--record".into(),
        record.display().to_string(),
    ];
    args.extend(demo_args.iter().map(|a| (*a).to_owned()));
    let demo = json!({"command": MCPX, "args": args});
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {extra}")
    };
    let gateway = if gateway.is_empty() {
        String::new()
    } else {
        format!(r#", "gateway": {gateway}"#)
    };
    let text = format!(r#"{{"mcpServers": {{"demo": {demo}{extra}}}{gateway}}}"#);
    let path = dir.join("mcpx.json");
    std::fs::write(&path, text).unwrap();
    path
}

/// `mcpx --config CONFIG ARGS`, expecting exit `code`: its stdout and stderr.
pub fn run(config: &Path, args: &[&str], code: i32) -> (String, String) {
    run_with(config, args, &[], code)
}

/// [`run`] with `env` set.
pub fn run_with(
    config: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
    code: i32,
) -> (String, String) {
    let out = assert_cmd::Command::new(MCPX)
        .arg("--config")
        .arg(config)
        .args(args)
        .envs(env.iter().copied())
        .assert()
        .code(code)
        .get_output()
        .clone();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// What the demo server received and sent, checked frame by frame against the protocol
/// schema; returns the transcript's entries.
pub fn demo_transcript(dir: &Path, spec: &Spec) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("demo.jsonl")).unwrap();
    let problems = mcpspec::check_transcript(spec, &text).unwrap();
    assert!(
        problems.is_empty(),
        "upstream frames:\n{}",
        problems.join("\n")
    );
    text.lines()
        .map(|l| schemaval::parse_json(l.as_bytes()).unwrap())
        .collect()
}

/// A client of `mcpx serve` speaking raw frames, every one checked.
pub struct Downstream {
    pub transport: Recording<'static, StdioTransport>,
    /// The gateway's stderr (its log).
    stderr: mcpclient::StderrTail,
    next_id: u64,
    /// Notifications and requests that arrived while waiting for responses.
    pub seen: Vec<Value>,
    /// The gateway's answer to `initialize`.
    pub initialized: Value,
}

impl Downstream {
    /// Starts `mcpx --config CONFIG serve ARGS` and initializes with `capabilities`.
    pub async fn start(config: &Path, args: &[&str], capabilities: Value) -> Downstream {
        let spec = spec().expect("checked by the caller");
        Downstream::start_speaking(spec, config, args, capabilities).await
    }

    /// [`Downstream::start`] speaking the version of `spec`, every frame checked against it.
    pub async fn start_speaking(
        spec: &'static Spec,
        config: &Path,
        args: &[&str],
        capabilities: Value,
    ) -> Downstream {
        Downstream::start_with_env(spec, config, args, capabilities, &[]).await
    }

    /// [`Downstream::start_speaking`] with `env` set for mcpx.
    pub async fn start_with_env(
        spec: &'static Spec,
        config: &Path,
        args: &[&str],
        capabilities: Value,
        env: &[(&str, &str)],
    ) -> Downstream {
        let mut all = vec![
            "--config".to_owned(),
            config.display().to_string(),
            "serve".into(),
        ];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        let transport = StdioTransport::spawn(&StdioCommand {
            program: MCPX.into(),
            args: all,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..StdioCommand::default()
        })
        .unwrap();
        let mut downstream = Downstream {
            stderr: transport.stderr(),
            transport: Recording::new(spec, transport),
            next_id: 1,
            seen: Vec::new(),
            initialized: Value::Null,
        };
        let init = downstream
            .request(
                "initialize",
                json!({"protocolVersion": spec.version(), "capabilities": capabilities,
                    "clientInfo": {"name": "mcpx-test", "version": "0"}}),
            )
            .await;
        let init = init.value().unwrap();
        assert_eq!(init["result"]["protocolVersion"], spec.version());
        downstream.initialized = init["result"].clone();
        downstream.notify("notifications/initialized", None).await;
        downstream
    }

    pub async fn send(&mut self, message: Value) {
        self.transport
            .send(&Frame::from_value(&message))
            .await
            .unwrap();
    }

    /// Sends `text` as it is written (number text, spacing), checked like every frame.
    pub async fn send_raw(&mut self, text: &str) {
        use mcpclient::FrameSink;
        self.transport
            .halves()
            .0
            .send_all(&[Frame::parse(text).unwrap()])
            .await
            .unwrap();
    }

    pub async fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(message).await;
    }

    /// The next frame from the gateway.
    pub async fn receive(&mut self) -> Frame {
        tokio::time::timeout(FRAME_WAIT, self.transport.receive())
            .await
            .expect("a frame from the gateway in time")
            .expect("the gateway is still there")
            .unwrap()
    }

    /// Sends a request and returns the response frame; what arrives before it is kept in
    /// `seen`.
    pub async fn request(&mut self, method: &str, params: Value) -> Frame {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response_to(id).await
    }

    pub async fn response_to(&mut self, id: u64) -> Frame {
        loop {
            let frame = self.receive().await;
            let value = frame.value().unwrap();
            if value.get("method").is_none() && value["id"] == id {
                return frame;
            }
            self.seen.push(value);
        }
    }

    /// Sends a request and returns its response; requests from the gateway on the way are
    /// answered with `answer(request)` (a `result`), and recorded in `seen`.
    pub async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        answer: impl Fn(&Value) -> Value,
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let value = self.receive().await.value().unwrap();
            match (value.get("method").is_some(), value.get("id").is_some()) {
                (false, true) if value["id"] == id => return value,
                (true, true) => {
                    let result = answer(&value);
                    self.send(json!({"jsonrpc": "2.0", "id": value["id"], "result": result}))
                        .await;
                }
                _ => {}
            }
            self.seen.push(value);
        }
    }

    /// A `tools/call` answered by the gateway: the response frame.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Frame {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    /// Asserts that every answer came once, to the request it answers: nothing arrived besides
    /// them but notifications and requests.
    pub fn assert_no_strays(&self) {
        let strays: Vec<&Value> = self
            .seen
            .iter()
            .filter(|m| m.get("method").is_none())
            .collect();
        assert!(strays.is_empty(), "answers nobody asked for: {strays:?}");
    }

    /// Asserts that the client was told at least twice that the tools changed: when a server's
    /// tools were withdrawn, and when they came back.
    pub fn assert_withdrawn_and_restored(&self) {
        let changes = self
            .seen
            .iter()
            .filter(|m| m["method"] == "notifications/tools/list_changed")
            .count();
        assert!(changes >= 2, "withdrawn and restored: {:?}", self.seen);
    }

    /// The names of the listed tools.
    pub async fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({})).await.value().unwrap();
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Ends the session as a client would (closing mcpx's input) and returns mcpx's whole log,
    /// its last line included.
    pub async fn close(mut self) -> String {
        self.transport.close().await.unwrap();
        for _ in 0..100 {
            if self.log().contains("stopped") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.log()
    }

    /// The gateway's stderr so far (its log).
    pub fn log(&self) -> String {
        self.stderr.lines().join("\n")
    }
}

/// Whether the transcript at `record` (a demo server's `--record`) shows a `tools/call` of
/// `tool` from its client (the tool list names the tool too: that is not the call).
pub fn call_arrived(record: &Path, tool: &str) -> bool {
    let transcript = std::fs::read_to_string(record).unwrap_or_default();
    transcript.lines().any(|line| {
        let entry: Value = serde_json::from_str(line).unwrap_or_default();
        entry["from"] == "client"
            && entry["message"]["method"] == "tools/call"
            && entry["message"]["params"]["name"] == tool
    })
}

/// The most CPU time a [`CpuHog`] spins for, should the test never stop it.
const HOG_CPU_SECONDS: &str = "300";

/// Busy loops on every core while alive: `mcpx demo-server --start-cpu`, which spins until it
/// has used its CPU time (bounded by [`HOG_CPU_SECONDS`]); killed when dropped.
pub struct CpuHog(Vec<std::process::Child>);

impl CpuHog {
    pub fn start() -> CpuHog {
        use std::process::{Command, Stdio};
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let hogs = (0..cores)
            .map(|_| {
                Command::new(MCPX)
                    .args(["demo-server", "--start-cpu", HOG_CPU_SECONDS])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        CpuHog(hogs)
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}

/// The row of `mcpx servers` for the stdio server `name`, from `ok` (or `failed`) on.
pub fn servers_row<'o>(out: &'o str, name: &str) -> &'o str {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}\tstdio\t")))
        .unwrap_or_else(|| panic!("no row for {name}: {out}"))
}

/// The gateway's log line of `server` running, speaking `version` of `era` because `why`.
pub fn running(server: &str, version: &str, era: &str, why: &str) -> String {
    format!(r#"server running server="{server}" protocol="{version}" era="{era}" why="{why}""#)
}

/// Whether the gateway's log comes to hold every one of `wanted` within `wait`.
pub async fn logged(gateway: &Downstream, wanted: &[&str], wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        let log = gateway.log();
        if wanted.iter().all(|w| log.contains(w)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The exact text of a response's `result`.
pub fn result_text(frame: &Frame) -> String {
    let text = frame.text();
    let start = text.find(r#""result":"#).expect("a result") + r#""result":"#.len();
    text[start..text.len() - 1].to_owned()
}

/// The processes whose command line mentions `marker`, with their state letter (`R`, `S`).
/// Only processes that run are found: a zombie's command line is empty. To check that a
/// process is gone, not even a zombie, keep its id while it runs and ask [`still_there`].
pub fn processes_with(marker: &str) -> Vec<(u32, char)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            if let Some(stat) = stat(pid) {
                found.push((pid, stat.state));
            }
        }
    }
    found
}

/// What `/proc/PID/stat` says of a process: there until it is reaped, zombie or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `R` running, `S` sleeping, `Z` zombie (exited, not reaped by its parent), …
    pub state: char,
    /// Its parent's id.
    pub parent: u32,
}

/// The state and parent of process `pid`; `None` once it is gone (reaped).
pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `PID (COMMAND) STATE PPID …`, the command possibly holding spaces and parentheses.
    let mut rest = text[text.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let parent = rest.next()?.parse().ok()?;
    Some(Stat { state, parent })
}

/// The processes whose parent is `pid`.
pub fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|child| stat(*child).is_some_and(|s| s.parent == pid))
        .collect()
}

/// Those of `pids` that still exist, running or zombie, with their state.
pub fn still_there(pids: &[u32]) -> Vec<(u32, char)> {
    pids.iter()
        .filter_map(|pid| Some((*pid, stat(*pid)?.state)))
        .collect()
}

/// `mcpx --config CONFIG serve` on stdio, not yet initialized, its frames unchecked.
pub fn serve_stdio(config: &Path) -> StdioTransport {
    serve_stdio_with(config, &[])
}

/// [`serve_stdio`] with `env` set for mcpx.
pub fn serve_stdio_with(config: &Path, env: &[(&str, &str)]) -> StdioTransport {
    StdioTransport::spawn(&StdioCommand {
        program: MCPX.into(),
        args: vec![
            "--config".into(),
            config.display().to_string(),
            "serve".into(),
        ],
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..StdioCommand::default()
    })
    .unwrap()
}

/// `mcpx --config CONFIG serve ARGS` with its input and output piped and its log going to
/// `log`; killed when dropped.
pub fn serve_piped(
    config: &Path,
    args: &[&str],
    log: std::process::Stdio,
) -> tokio::process::Child {
    tokio::process::Command::new(MCPX)
        .args(["--config", &config.display().to_string(), "serve"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// `mcpx --config CONFIG serve --http` on an ephemeral loopback port, with `env`.
pub async fn serve_http_with(config: &Path, env: &[(&str, &str)]) -> mcpx_interop::HttpPeer {
    let config = config.display().to_string();
    mcpx_interop::HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        env,
        "/mcp",
    )
    .await
}

/// The value of the metrics series `series` (its name and labels, as the text has them) of the
/// gateway whose MCP endpoint is `url`, asked with `http`; `None` when the series is not there.
pub async fn metric(http: &reqwest::Client, url: &str, series: &str) -> Option<u64> {
    let url = url.replace("/mcp", mcpgateway::METRICS_PATH);
    let text = http.get(url).send().await.unwrap().text().await.unwrap();
    let prefix = format!("{series} ");
    text.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .map(|n| n.trim().parse().unwrap())
}

/// How long [`connect_http`] waits to connect.
const CONNECT_WITHIN: Duration = Duration::from_secs(30);

/// A client of the MCP endpoint `url` (a gateway's `/mcp`), connected with default options.
pub async fn connect_http(url: &str) -> mcpclient::Connected {
    let reach = mcpclient::Reach::Http(mcpclient::HttpConfig {
        url: url.to_owned(),
        ..mcpclient::HttpConfig::default()
    });
    mcpclient::connect(
        &reach,
        mcpclient::ClientOptions::default(),
        mcpclient::Spawn::Inline,
        CONNECT_WITHIN,
    )
    .await
    .unwrap()
}

/// [`serve_http_with`] and no environment.
pub async fn serve_http(config: &Path) -> mcpx_interop::HttpPeer {
    serve_http_with(config, &[]).await
}

/// A client of `gateway` with `options`, every frame checked, its tools listed; and its events.
pub async fn http_client(
    gateway: &mcpx_interop::HttpPeer,
    options: mcpclient::ClientOptions,
) -> (
    mcpclient::Client,
    tokio::sync::mpsc::Receiver<mcpclient::Event>,
) {
    let transport = mcpclient::HttpTransport::new(&mcpclient::HttpConfig {
        url: gateway.url.clone(),
        headers: Vec::new(),
        auth: None,
    })
    .unwrap();
    let (client, events) =
        mcpclient::Client::connect_with(Recording::new(spec().unwrap(), transport), options)
            .await
            .unwrap();
    client.list_tools().await.unwrap();
    (client, events)
}

/// A client of `gateway` that keeps its events (notifications), without handlers.
pub async fn plain_client(
    gateway: &mcpx_interop::HttpPeer,
) -> (
    mcpclient::Client,
    tokio::sync::mpsc::Receiver<mcpclient::Event>,
) {
    let options = mcpclient::ClientOptions {
        protocol: mcpclient::Protocol::Legacy,
        ..mcpclient::ClientOptions::default()
    };
    http_client(gateway, options).await
}

/// `mcpx --config CONFIG serve --http 127.0.0.1:0 ARGS`.
pub async fn serve_http_args(config: &Path, args: &[&str]) -> mcpx_interop::HttpPeer {
    let config = config.display().to_string();
    let mut all = vec!["--config", &config, "serve", "--http", "127.0.0.1:0"];
    all.extend_from_slice(args);
    mcpx_interop::HttpPeer::start(MCPX, &all, &[], "/mcp").await
}

/// Raw POSTs to `mcpx serve --http`, for clients that pile up requests or misbehave.
#[derive(Clone)]
pub struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    pub fn new(peer: &mcpx_interop::HttpPeer) -> Raw {
        Raw {
            http: reqwest::Client::new(),
            url: peer.url.clone(),
        }
    }

    /// POSTs `body`, in `session` when given.
    pub fn post(
        &self,
        session: Option<&str>,
        body: String,
    ) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.body(body).send()
    }

    /// The answer to `initialize`, named `client`.
    pub async fn initialize(&self, client: &str) -> reqwest::Response {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": client, "version": "0"}}});
        self.post(None, initialize.to_string()).await.unwrap()
    }

    /// A new session's id.
    pub async fn open(&self, client: &str) -> String {
        let opened = self.initialize(client).await;
        opened.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned()
    }
}

/// Sends signal `name` (`TERM`, `KILL`) to process `pid`.
pub fn signal(pid: u32, name: &str) {
    let sent = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{name} {pid}");
}

/// Waits (at most `bound`) until process `pid` has exited: gone, or a zombie (for a child of
/// the test, which reaps it later); how long that took.
pub async fn gone_within(pid: u32, bound: Duration) -> Duration {
    let started = std::time::Instant::now();
    while started.elapsed() < bound {
        if stat(pid).is_none_or(|s| s.state == 'Z') {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}
