//! Nothing one client holds starves the others (issue 33): `mcpx serve --http` in front of the
//! demo server, with a hostile client holding what it can (unread streams, sessions, parked
//! calls, per-session servers, idle connections) from 127.0.0.1, and a bystander from another
//! loopback address (127.0.0.2) that must be served throughout. Memory is read from /proc;
//! every load is bounded in count and time. The bystander's latencies are printed (the figures
//! in RELIABILITY.md), never asserted.
//!
//! Linux only: memory is read from /proc, and the bystander binds a second loopback address
//! (127.0.0.2), which Linux has and macOS and Windows do not by default.
#![cfg(target_os = "linux")]

mod common;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use common::{config, processes_with, MCPX};
use mcpx_interop::HttpPeer;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const ATTACKER: [u8; 4] = [127, 0, 0, 1];
const BYSTANDER: [u8; 4] = [127, 0, 0, 2];
const MODERN: &str = "2026-07-28";
/// How long the bystander waits for one answer at most (a bound, not a figure).
const ANSWER_WITHIN: Duration = Duration::from_secs(30);
/// How long the gateway may take to close the connections past a bound it was just sent.
const SETTLE_WAIT: Duration = Duration::from_secs(10);

/// A client of the gateway from `address`, over HTTP, without keeping connections.
struct Client {
    http: reqwest::Client,
    url: String,
}

impl Client {
    fn from(address: [u8; 4], gateway: &HttpPeer) -> Client {
        Client {
            http: reqwest::Client::builder()
                .local_address(IpAddr::from(address))
                .pool_max_idle_per_host(0)
                .timeout(ANSWER_WITHIN)
                .build()
                .unwrap(),
            url: gateway.url.clone(),
        }
    }

    async fn post(
        &self,
        session: Option<&str>,
        body: &Value,
    ) -> reqwest::Result<reqwest::Response> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.body(body.to_string()).send().await
    }

    /// A new session's id.
    async fn open(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "holding-test", "version": "0"}}});
        let opened = self.post(None, &init).await.unwrap();
        assert_eq!(opened.status(), 200);
        opened.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned()
    }

    /// A call of `tool` on `session`: the answer.
    async fn call(&self, session: &str, id: u64, tool: &str, arguments: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let answer = self.post(Some(session), &body).await.unwrap();
        serde_json::from_str(&answer.text().await.unwrap()).unwrap()
    }

    /// The status of a ping on `session`.
    async fn ping(&self, session: &str) -> u16 {
        let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
        self.post(Some(session), &ping)
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// A 2026-07-28 `tools/call` of `tool` (no session): the answer.
    async fn modern_call(&self, id: u64, tool: &str, extra: Value) -> Value {
        let mut params = json!({"name": tool, "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let answer = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        serde_json::from_str(&answer.text().await.unwrap()).unwrap()
    }

    /// `mcpx_limited_total{limit="LIMIT"}`, 0 when not counted yet.
    async fn limited(&self, limit: &str) -> u64 {
        let series = format!(r#"mcpx_limited_total{{limit="{limit}"}}"#);
        common::metric(&self.http, &self.url, &series)
            .await
            .unwrap_or(0)
    }
}

/// The gateway's address.
fn address(gateway: &HttpPeer) -> SocketAddr {
    gateway
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap()
}

/// A TCP connection to the gateway from `from`.
async fn connect(from: [u8; 4], to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((from, 0)))?;
    socket.connect(to).await
}

/// A request written by hand on a connection that is then never read.
async fn unread(from: [u8; 4], to: SocketAddr, head: &str, body: &str) -> TcpStream {
    let mut tcp = connect(from, to).await.unwrap();
    let request = format!(
        "{head}\r\nHost: {to}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    tcp
}

/// A session's GET stream, opened and never read.
async fn unread_stream(from: [u8; 4], to: SocketAddr, session: &str) -> TcpStream {
    let head =
        format!("GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}");
    unread(from, to, &head, "").await
}

/// Whether the gateway has kept `tcp` open (nothing to read yet, not closed).
fn is_open(tcp: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(tcp.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// The gateway's resident memory now, and its peak so far, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Median and 99th percentile of `samples`, in milliseconds.
fn p50_p99(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

/// The bystander's ping round trips on its session, `n` of them a quarter second apart.
async fn pings(bystander: &Client, session: &str, n: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        assert_eq!(
            bystander.ping(session).await,
            200,
            "the bystander is served"
        );
        took.push(start.elapsed());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    took
}

/// The gateway in front of the demo server with its faulty tools, `section` its gateway
/// section.
async fn gateway(dir: &std::path::Path, section: &str) -> HttpPeer {
    common::serve_http(&config(dir, &["--faults"], "", section)).await
}

/// Prints one figure line for RELIABILITY.md.
#[allow(clippy::print_stderr)]
fn figure(what: &str, quiet: (f64, f64), loaded: (f64, f64), memory: (u64, u64)) {
    eprintln!(
        "figure: {what}: bystander ping p50/p99 quiet {:.2}/{:.2} ms, under attack {:.2}/{:.2} ms; gateway memory {} -> {} KiB peak",
        quiet.0, quiet.1, loaded.0, loaded.1, memory.0, memory.1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unread_get_stream_is_ended_and_memory_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path(), "").await;
    let pid = peer.pid().unwrap();
    let (attacker, bystander) = (
        Client::from(ATTACKER, &peer),
        Client::from(BYSTANDER, &peer),
    );
    let (mine, theirs) = (attacker.open().await, bystander.open().await);
    let quiet = pings(&bystander, &theirs, 8).await;
    let _held = unread_stream(ATTACKER, address(&peer), &mine).await;
    let (before, _) = memory_kib(pid);

    // 256 MiB of log messages from the server, every one bound for the attacker's GET stream
    // (the attacker's own calls cause them: a server's log line reaches only the principal
    // calling it), while the bystander pings.
    let flood = async {
        for id in 0..4 {
            let sent = attacker
                .call(
                    &mine,
                    100 + id,
                    "demo__chatter",
                    json!({"count": 1024, "bytes": 65536}),
                )
                .await;
            assert_eq!(sent["result"]["content"][0]["text"], "sent 1024", "{sent}");
        }
    };
    let (_, loaded) = tokio::join!(flood, pings(&bystander, &theirs, 8));
    let (_, peak) = memory_kib(pid);
    figure(
        "unread GET stream, 256 MiB of logs",
        p50_p99(quiet),
        p50_p99(loaded),
        (before, peak),
    );
    assert!(
        peak < before + 48 * 1024,
        "memory grew with what the unread stream was sent: {before} -> {peak} KiB"
    );
    assert!(bystander.limited("unread_get_stream").await >= 1);
    // The attacker may open its stream again.
    let again = attacker
        .http
        .get(&attacker.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &mine)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn unread_request_streams_end_and_their_calls_are_cancelled() {
    const STREAMS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path(), "").await;
    let pid = peer.pid().unwrap();
    let (attacker, bystander) = (
        Client::from(ATTACKER, &peer),
        Client::from(BYSTANDER, &peer),
    );
    let (mine, theirs) = (attacker.open().await, bystander.open().await);
    let quiet = pings(&bystander, &theirs, 8).await;
    let (before, _) = memory_kib(pid);
    // Each call streams 24 MiB of progress on its POST's stream, which is never read: past
    // what the sockets' buffers take (a few MiB on loopback).
    let mut held = Vec::new();
    for id in 0..STREAMS {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "demo__chatter", "arguments": {"count": 96, "bytes": 262_144},
            "_meta": {"progressToken": id}}})
        .to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {mine}\r\nMcp-Protocol-Version: 2025-11-25"
        );
        held.push(unread(ATTACKER, address(&peer), &head, &body).await);
    }
    let loaded = pings(&bystander, &theirs, 12).await;
    let (_, peak) = memory_kib(pid);
    figure(
        "8 unread POST streams, 24 MiB of progress each",
        p50_p99(quiet),
        p50_p99(loaded),
        (before, peak),
    );
    assert!(
        peak < before + 64 * 1024,
        "memory grew with what the unread streams were sent: {before} -> {peak} KiB"
    );
    // Each stream ended once, its call cancelled (the counter counts cancellations).
    let ended = tokio::time::timeout(2 * ANSWER_WITHIN, async {
        loop {
            let ended = bystander.limited("unread_post_stream").await;
            if ended >= STREAMS as u64 {
                return ended;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("every unread stream ended");
    assert_eq!(ended, STREAMS as u64);
    // The attacker's session is still usable (only the streams it did not read ended).
    let sum = attacker
        .call(&mine, 99, "demo__get-sum", json!({"a": 1, "b": 2}))
        .await;
    assert_eq!(sum["result"]["structuredContent"]["sum"], 3, "{sum}");
}

#[tokio::test(flavor = "multi_thread")]
async fn held_streams_do_not_keep_sessions_and_one_client_keeps_only_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(
        dir.path(),
        r#"{"maxSessions": 16, "maxSessionsPerClient": 8}"#,
    )
    .await;
    let to = address(&peer);
    let pid = peer.pid().unwrap();
    let bystander = Client::from(BYSTANDER, &peer);
    let early = bystander.open().await;
    let quiet = pings(&bystander, &early, 8).await;
    let (before, _) = memory_kib(pid);
    let attacker = Client::from(ATTACKER, &peer);
    let mut mine = Vec::new();
    let mut held = Vec::new();
    for _ in 0..12 {
        let session = attacker.open().await;
        held.push(unread_stream(ATTACKER, to, &session).await);
        mine.push(session);
    }
    // Its first four made room for its last four: it keeps eight, the most recent.
    let mut alive = Vec::new();
    for session in &mine {
        alive.push(attacker.ping(session).await == 200);
    }
    assert_eq!(
        alive,
        [[false; 4], [true; 4], [true; 4]].concat(),
        "{alive:?}"
    );

    // Another client fills the rest of the table with held streams.
    let other = [127, 0, 0, 3];
    let second = Client::from(other, &peer);
    for _ in 0..8 {
        let session = second.open().await;
        held.push(unread_stream(other, to, &session).await);
    }
    // The table is full of sessions holding streams and no request: a newcomer still gets in,
    // and is served.
    let theirs = bystander.open().await;
    let loaded = pings(&bystander, &theirs, 8).await;
    let (_, peak) = memory_kib(pid);
    figure(
        "sessions holding GET streams past both session bounds",
        p50_p99(quiet),
        p50_p99(loaded),
        (before, peak),
    );
    let sum = bystander
        .call(&theirs, 1, "demo__get-sum", json!({"a": 2, "b": 2}))
        .await;
    assert_eq!(sum["result"]["structuredContent"]["sum"], 4, "{sum}");
    assert!(bystander.limited("sessions_per_client").await >= 4);
    assert!(bystander.limited("sessions").await >= 1);
}

/// A 2026-07-28 server whose calls ask their client (its `input_required` results become the
/// gateway's questions to its clients, each attributed to its call): the Python SDK 2.x peer.
#[tokio::test(flavor = "multi_thread")]
async fn parked_calls_hold_no_upstream_place_and_one_client_parks_its_share() {
    let Some(python) = mcpx_interop::python26() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let py = json!({"command": python,
        "args": [mcpx_interop::peer_file("sdk26/python_server.py")]});
    let config = config(dir.path(), &[], &format!(r#""py": {py}"#), "");
    let peer = common::serve_http(&config).await;
    let (attacker, bystander) = (
        Client::from(ATTACKER, &peer),
        Client::from(BYSTANDER, &peer),
    );
    let theirs = bystander.open().await;
    let pid = peer.pid().unwrap();
    let quiet = pings(&bystander, &theirs, 8).await;
    let (before, _) = memory_kib(pid);
    // As many calls waiting on their client as a server takes in flight (and the per-client
    // share of parked calls).
    let parked = futures_util::future::join_all(
        (0..mcpgateway::MAX_UPSTREAM_IN_FLIGHT as u64)
            .map(|id| attacker.modern_call(id, "py__ask_name", json!({}))),
    )
    .await;
    for answer in &parked {
        assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    }
    let over = attacker.modern_call(100, "py__ask_name", json!({})).await;
    assert!(
        over["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the most one client may")),
        "{over}"
    );
    // The same server still answers the bystander, every parked call still waiting (before,
    // it waited for a place until they lapsed, 60 s).
    let echoed = bystander
        .call(&theirs, 1, "py__echo", json!({"text": "still here"}))
        .await;
    let text = echoed["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("still here"), "{echoed}");
    let loaded = pings(&bystander, &theirs, 8).await;
    let (_, peak) = memory_kib(pid);
    figure(
        "32 parked 2026-07-28 calls on one server",
        p50_p99(quiet),
        p50_p99(loaded),
        (before, peak),
    );
    // And a parked call is taken back by its retry.
    let first = &parked[0]["result"];
    let key = first["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap();
    let retry = json!({"requestState": first["requestState"],
        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}});
    let done = attacker.modern_call(0, "py__ask_name", retry).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn per_session_servers_are_bounded_per_client_and_in_all() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("iso-{}", std::process::id());
    let record = dir.path().join(format!("{marker}.jsonl"));
    let iso = json!({"command": MCPX, "args": ["demo-server", "--faults", "--record", record],
        "isolation": "per-session"});
    let section = r#"{"maxSessionServers": 6, "maxSessionServersPerClient": 4}"#;
    let config = config(dir.path(), &[], &format!(r#""iso": {iso}"#), section);
    let peer = common::serve_http(&config).await;
    let (attacker, bystander) = (
        Client::from(ATTACKER, &peer),
        Client::from(BYSTANDER, &peer),
    );
    // Ten calls that each park on a question of their own per-session server.
    let answers = futures_util::future::join_all(
        (0..10u64).map(|id| attacker.modern_call(id, "iso__ask", json!({}))),
    )
    .await;
    let parked = answers
        .iter()
        .filter(|a| a["result"]["resultType"] == "input_required")
        .count();
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a.get("error").is_some())
        .collect();
    assert_eq!(parked, 4, "{answers:?}");
    assert_eq!(refused.len(), 6, "{answers:?}");
    assert!(refused.iter().all(|a| a["error"]["message"]
        .as_str()
        .unwrap()
        .contains("this client's sessions run 4 per-session server connections, their most")));
    let running = processes_with(&marker)
        .into_iter()
        .filter(|(_, state)| *state != 'Z')
        .count();
    // The one the gateway lists the server's tools with, and one a parked call.
    assert_eq!(running, 1 + 4, "one process a parked call, and no more");
    // Another client still starts one of its own.
    let theirs = bystander.open().await;
    let sum = bystander
        .call(&theirs, 1, "iso__get-sum", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(sum["result"]["structuredContent"]["sum"], 2, "{sum}");
    assert!(bystander.limited("session_servers").await >= 6);
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_churn_never_locks_a_new_client_out() {
    // Idle connections held and reopened as they close, past both connection bounds.
    const HELD: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(
        dir.path(),
        r#"{"maxConnections": 24, "maxConnectionsPerAddress": 16}"#,
    )
    .await;
    let to = address(&peer);
    let pid = peer.pid().unwrap();
    let bystander = Client::from(BYSTANDER, &peer);
    let theirs = bystander.open().await;
    let quiet = pings(&bystander, &theirs, 8).await;
    let (before, _) = memory_kib(pid);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churning = stop.clone();
    let churn = tokio::spawn(async move {
        let mut held: Vec<TcpStream> = Vec::new();
        let mut opened = 0usize;
        // Bounded: at most 20,000 connections, and only while the bystander runs.
        while !churning.load(std::sync::atomic::Ordering::Relaxed) && opened < 20_000 {
            held.retain(is_open);
            while held.len() < HELD {
                if let Ok(tcp) = connect(ATTACKER, to).await {
                    held.push(tcp);
                    opened += 1;
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        held
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let loaded = pings(&bystander, &theirs, 8).await;
    let (_, peak) = memory_kib(pid);
    figure(
        "idle connections held and reopened past both connection bounds",
        p50_p99(quiet),
        p50_p99(loaded),
        (before, peak),
    );
    let mut served = 0;
    for id in 0..20u64 {
        // A new connection each time (the client keeps none).
        let sum = bystander
            .call(&theirs, id, "demo__get-sum", json!({"a": id, "b": 1}))
            .await;
        assert_eq!(sum["result"]["structuredContent"]["sum"], id + 1, "{sum}");
        served += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let held = churn.await.unwrap();
    assert_eq!(served, 20);
    // Of what the attacker believes it holds, the gateway keeps at most its per-address share,
    // once it has taken the last ones opened (each one past the share closes an older one).
    let deadline = tokio::time::Instant::now() + SETTLE_WAIT;
    loop {
        let open = held.iter().filter(|tcp| is_open(tcp)).count();
        if open <= 16 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{open} of the attacker's connections still open after {SETTLE_WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(bystander.limited("connections").await >= 1);
}
