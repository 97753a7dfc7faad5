//! A load generator for MCP servers and gateways: `tools/call`s against the demo server's tools,
//! from several client connections at a given concurrency, every answer checked.
//!
//! It speaks plain JSON-RPC ([`mcpclient::Connection`]), never checking arguments itself, so
//! that invalid calls reach whatever is under test. Each call's verdict is known in advance and
//! checked on its answer: a valid `get-sum` must come back with the sum of *its* arguments (an
//! answer delivered to the wrong request fails), an invalid one with error -32602, a drifting
//! one with the demo server's exact result text. Answers nobody waits for (late, duplicated or
//! invented) are counted. Used by the reliability tests and by `scripts/bench`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpclient::{Connection, Event, Reach, RpcError, Spawn, OFFERED_VERSION};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Failures kept word for word in a report; more are only counted.
pub const MAX_FAILURES_KEPT: usize = 20;

/// The resident memory of process `pid` in KiB, from `/proc` (`None` where it cannot say).
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The CPU time process `pid` has spent so far, all its threads, from `/proc/PID/task/*/schedstat`
/// (nanoseconds, not the 10 ms ticks of `/proc/PID/stat`); `None` where it cannot say.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    over_threads(pid, "schedstat", |stat| {
        stat.split_whitespace().next()?.parse::<u64>().ok()
    })
    .map(Duration::from_nanos)
}

/// The context switches of process `pid` so far, all its threads, voluntary (it waited: a
/// thread parked and woken) and not, from `/proc/PID/task/*/status`; `None` where it cannot say.
pub fn context_switches(pid: u32) -> Option<u64> {
    over_threads(pid, "status", |status| {
        status
            .lines()
            .filter_map(|line| {
                line.strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            })
            .map(|count| count.trim().parse::<u64>().ok())
            .sum()
    })
}

/// The sum over the threads of process `pid` of what `read` finds in each one's `file` under
/// `/proc/PID/task/TID/`; `None` when a file cannot be read or `read` finds nothing.
fn over_threads(pid: u32, file: &str, read: impl Fn(&str) -> Option<u64>) -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join(file)).ok()?;
        total += read(&text)?;
    }
    Some(total)
}

/// Whose CPU time a run measures (the gateway under load, for its CPU per call).
#[derive(Debug, Clone)]
pub enum CpuOf {
    /// The process with this id.
    Pid(u32),
    /// The process whose id is written in this file (a gateway the load generator starts
    /// through a script that writes its pid), read once the handshakes are done.
    PidFile(std::path::PathBuf),
}

impl CpuOf {
    fn pid(&self) -> Option<u32> {
        match self {
            CpuOf::Pid(pid) => Some(*pid),
            CpuOf::PidFile(path) => std::fs::read_to_string(path).ok()?.trim().parse().ok(),
        }
    }
}

/// Bytes of an unexpected result quoted in a failure.
const MAX_QUOTED_RESULT: usize = 300;

/// One kind of call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `get-sum` with valid arguments: the answer must be their sum.
    Valid,
    /// `get-sum` with a string where an integer belongs: the answer must be error -32602.
    Invalid,
    /// `drifting-output`: the answer must be the demo server's result, byte for byte.
    Drifting,
    /// `blob` (the demo server's, with `--faults`) for a text of this many bytes: the answer
    /// must be that text.
    Blob(usize),
}

impl Call {
    /// The kind named `name` (`valid`, `invalid`, `drifting`, `blob:BYTES`).
    pub fn named(name: &str) -> Option<Call> {
        match name {
            "valid" => Some(Call::Valid),
            "invalid" => Some(Call::Invalid),
            "drifting" => Some(Call::Drifting),
            _ => name
                .strip_prefix("blob:")
                .and_then(|bytes| bytes.parse().ok())
                .filter(|bytes| *bytes <= mcpx_fixture::MAX_BLOB_BYTES)
                .map(Call::Blob),
        }
    }
}

/// How to load.
#[derive(Debug, Clone)]
pub struct Load {
    /// Client connections (sessions), each with its own handshake.
    pub clients: usize,
    /// Calls in flight at once on each connection.
    pub concurrency: usize,
    /// Calls in all.
    pub calls: usize,
    /// The kinds of call, taken in turn.
    pub mix: Vec<Call>,
    /// Before each tool's name: `demo__` through the gateway, nothing for the server itself.
    pub prefix: String,
    /// How long one call may take.
    pub timeout: Duration,
    /// A process whose CPU time over the calls is reported (the gateway's).
    pub cpu_of: Option<CpuOf>,
    /// Speak MCP 2026-07-28 (HTTP only): no session, no handshake; each call one POST that
    /// carries its protocol version, client info and capabilities in `_meta`.
    pub modern: bool,
    /// Each 2026-07-28 call on a connection of its own, closed after its answer (a client that
    /// keeps no connection: urllib, curl, a serverless function); calls on a session keep theirs.
    pub new_connection: bool,
}

/// How one client sends its calls: on a session, or one sessionless POST each (2026-07-28).
enum Caller {
    Session(Connection),
    Modern { http: reqwest::Client, url: String },
}

impl Caller {
    async fn call_tool(
        &self,
        i: usize,
        params: Value,
        timeout: Duration,
    ) -> Result<mcpclient::Response, RpcError> {
        match self {
            Caller::Session(connection) => {
                connection
                    .request("tools/call", Some(params), timeout)
                    .await
            }
            Caller::Modern { http, url } => {
                let name = params["name"].as_str().unwrap_or_default().to_owned();
                let mut params = params;
                params["_meta"] = json!({
                    (mcpclient::META_PROTOCOL_VERSION): mcpclient::MODERN_VERSION,
                    (mcpclient::META_CLIENT_CAPABILITIES): {},
                    (mcpclient::META_CLIENT_INFO): {"name": "mcpx-load", "version": env!("CARGO_PKG_VERSION")},
                });
                let body =
                    json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params});
                let failed = |e: String| RpcError::InvalidResponse(e);
                let answer = http
                    .post(url)
                    .timeout(timeout)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", mcpclient::MODERN_VERSION)
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", name)
                    .body(body.to_string())
                    .send()
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                let status = answer.status();
                let text = answer.text().await.map_err(|e| failed(e.to_string()))?;
                if !status.is_success() {
                    return Err(failed(format!("HTTP {status}: {text}")));
                }
                let frame =
                    mcpclient::Frame::parse_owned(text).map_err(|e| failed(e.to_string()))?;
                if frame.head().and_then(|h| h.id_text().map(str::to_owned)) != Some(i.to_string())
                {
                    return Err(failed(format!("an answer to another call: {frame}")));
                }
                mcpclient::Response::from_frame(frame)
            }
        }
    }

    async fn close(&self) {
        if let Caller::Session(connection) = self {
            connection.close().await;
        }
    }
}

/// What happened.
#[derive(Debug, Clone)]
pub struct Report {
    /// Calls made.
    pub calls: usize,
    /// Calls answered with the expected verdict.
    pub right: usize,
    /// The first [`MAX_FAILURES_KEPT`] calls that were not, and why.
    pub failures: Vec<String>,
    /// Answers that matched no call in flight.
    pub unmatched: u64,
    /// How long the calls took, from the first to the last (handshakes excluded).
    pub elapsed: Duration,
    /// Each call's latency, sorted.
    pub latencies: Vec<Duration>,
    /// The CPU time [`Load::cpu_of`] spent from the first call to the last.
    pub cpu: Option<Duration>,
    /// The context switches of [`Load::cpu_of`] over the same calls.
    pub switches: Option<u64>,
}

impl Report {
    /// The latency at quantile `q` (0.5 for the median).
    pub fn quantile(&self, q: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let at = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        self.latencies[at.min(self.latencies.len() - 1)]
    }

    /// Calls per second.
    pub fn throughput(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(f64::EPSILON)
    }

    /// The report as one JSON object.
    pub fn to_json(&self) -> Value {
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        json!({
            "calls": self.calls,
            "right": self.right,
            "wrong": self.calls - self.right,
            "failures": self.failures,
            "unmatched": self.unmatched,
            "seconds": self.elapsed.as_secs_f64(),
            "calls_per_second": self.throughput(),
            "p50_us": micros(self.quantile(0.5)),
            "p99_us": micros(self.quantile(0.99)),
            "cpu_us_per_call": self.cpu.map(|cpu| micros(cpu) / self.calls.max(1) as f64),
            "switches_per_call": self.switches.map(|n| n as f64 / self.calls.max(1) as f64),
        })
    }
}

struct Tally {
    right: AtomicUsize,
    failures: Mutex<Vec<String>>,
    latencies: Mutex<Vec<Duration>>,
    unmatched: Arc<AtomicU64>,
}

impl Tally {
    fn fail(&self, why: String) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.len() < MAX_FAILURES_KEPT {
            failures.push(why);
        }
    }
}

/// Connects one client: the handshake, and a task counting unmatched answers.
async fn connect(
    target: &Reach,
    timeout: Duration,
    unmatched: Arc<AtomicU64>,
) -> anyhow::Result<Connection> {
    let (connection, events) = Connection::start(target.open(Spawn::Inline)?);
    tokio::spawn(count_unmatched(events, unmatched));
    let params = json!({"protocolVersion": OFFERED_VERSION, "capabilities": {},
        "clientInfo": {"name": "mcpx-load", "version": env!("CARGO_PKG_VERSION")}});
    connection
        .request("initialize", Some(params), timeout)
        .await?;
    connection.notify("notifications/initialized", None).await?;
    Ok(connection)
}

async fn count_unmatched(mut events: mpsc::Receiver<Event>, unmatched: Arc<AtomicU64>) {
    while let Some(event) = events.recv().await {
        if matches!(event, Event::Unmatched(_)) {
            unmatched.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs `load` against `target`.
///
/// # Errors
/// A client could not connect or complete its handshake.
pub async fn run(target: &Reach, load: &Load) -> anyhow::Result<Report> {
    anyhow::ensure!(!load.mix.is_empty(), "the mix of calls is empty");
    anyhow::ensure!(
        load.modern || !load.new_connection,
        "a new connection per call is for 2026-07-28 calls (--modern): a session keeps its own"
    );
    anyhow::ensure!(
        !(load.modern && load.mix.contains(&Call::Drifting)),
        "drifting calls are checked byte for byte, and a 2026-07-28 answer carries what the \
         gateway adds (resultType, serverInfo)"
    );
    let unmatched = Arc::new(AtomicU64::new(0));
    let mut connections = Vec::new();
    for _ in 0..load.clients.max(1) {
        let caller = match (load.modern, target) {
            (true, Reach::Http(config)) => Caller::Modern {
                http: if load.new_connection {
                    reqwest::Client::builder()
                        .pool_max_idle_per_host(0)
                        .build()?
                } else {
                    reqwest::Client::new()
                },
                url: config.url.clone(),
            },
            (true, _) => anyhow::bail!("2026-07-28 calls go over HTTP only"),
            (false, _) => Caller::Session(connect(target, load.timeout, unmatched.clone()).await?),
        };
        connections.push(Arc::new(caller));
    }
    let tally = Arc::new(Tally {
        right: AtomicUsize::new(0),
        failures: Mutex::default(),
        latencies: Mutex::new(Vec::with_capacity(load.calls)),
        unmatched: unmatched.clone(),
    });
    let next = Arc::new(AtomicUsize::new(0));
    let measured = load.cpu_of.as_ref().and_then(CpuOf::pid);
    let cpu_before = measured.and_then(cpu_time);
    let switches_before = measured.and_then(context_switches);
    let started = Instant::now();
    let mut workers = Vec::new();
    for connection in &connections {
        for _ in 0..load.concurrency.max(1) {
            let (connection, tally, next, load) = (
                connection.clone(),
                tally.clone(),
                next.clone(),
                load.clone(),
            );
            workers.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= load.calls {
                        break;
                    }
                    call(&connection, &load, i, &tally).await;
                }
            }));
        }
    }
    for worker in workers {
        worker.await?;
    }
    let elapsed = started.elapsed();
    let cpu = cpu_before
        .zip(measured.and_then(cpu_time))
        .map(|(before, after)| after.saturating_sub(before));
    let switches = switches_before
        .zip(measured.and_then(context_switches))
        .map(|(before, after)| after.saturating_sub(before));
    for connection in &connections {
        connection.close().await;
    }
    let mut latencies =
        std::mem::take(&mut *tally.latencies.lock().unwrap_or_else(|p| p.into_inner()));
    latencies.sort_unstable();
    let failures = tally
        .failures
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(Report {
        calls: load.calls,
        right: tally.right.load(Ordering::Relaxed),
        failures,
        unmatched: tally.unmatched.load(Ordering::Relaxed),
        elapsed,
        latencies,
        cpu,
        switches,
    })
}

/// Makes call number `i` and checks its verdict.
async fn call(connection: &Caller, load: &Load, i: usize, tally: &Tally) {
    let kind = load.mix[i % load.mix.len()];
    let (tool, arguments) = match kind {
        Call::Valid => ("get-sum", json!({"a": i, "b": 1})),
        Call::Invalid => ("get-sum", json!({"a": i, "b": "one"})),
        Call::Drifting => ("drifting-output", json!({})),
        Call::Blob(bytes) => ("blob", json!({"bytes": bytes})),
    };
    let params = json!({"name": format!("{}{tool}", load.prefix), "arguments": arguments});
    let sent = Instant::now();
    let answer = connection.call_tool(i, params, load.timeout).await;
    let took = sent.elapsed();
    tally
        .latencies
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(took);
    let verdict = match (kind, answer) {
        (Call::Valid, Ok(response)) => {
            let sum = response
                .result()
                .ok()
                .and_then(|r| r["structuredContent"]["sum"].as_u64());
            if sum == Some(i as u64 + 1) {
                Ok(())
            } else {
                Err(format!(
                    "call {i}: want sum {}, got {}",
                    i + 1,
                    response.result_text()
                ))
            }
        }
        (Call::Invalid, Err(RpcError::Remote(mcpclient::ErrorObject { code: -32602, .. }))) => {
            Ok(())
        }
        (Call::Drifting, Ok(response))
            if response.result_text() == mcpx_fixture::DRIFTING_RESULT =>
        {
            Ok(())
        }
        (Call::Blob(bytes), Ok(response))
            if response.result().ok().and_then(|r| {
                r["content"][0]["text"]
                    .as_str()
                    .map(|t| t == mcpx_fixture::blob(bytes))
            }) == Some(true) =>
        {
            Ok(())
        }
        (kind, Ok(response)) => {
            let text = response.result_text();
            let mut end = MAX_QUOTED_RESULT.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            Err(format!(
                "call {i} ({kind:?}): unexpected result {}",
                &text[..end]
            ))
        }
        (kind, Err(error)) => Err(format!("call {i} ({kind:?}): {error}")),
    };
    match verdict {
        Ok(()) => {
            tally.right.fetch_add(1, Ordering::Relaxed);
        }
        Err(why) => tally.fail(why),
    }
}

/// Starts `program` (a server over stdio, for the floors) with its stdin and stdout piped to
/// this process, killed when dropped: the child, and its stdin and stdout.
pub fn start_piped<S: AsRef<std::ffi::OsStr>>(
    program: &str,
    args: &[S],
) -> std::io::Result<(
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::process::ChildStdout,
)> {
    let mut server = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    match (server.stdin.take(), server.stdout.take()) {
        (Some(to), Some(from)) => Ok((server, to, from)),
        _ => Err(std::io::Error::other("the server's pipes")),
    }
}
