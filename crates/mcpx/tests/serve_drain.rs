//! `mcpx serve` telling a supervisor or a balancer where it is (`/healthz`, `/readyz`) and
//! stopping gracefully (SIGTERM drains: no new session, the calls in flight finish, a second
//! signal stops at once). The real binary, on loopback; every wait bounded.

mod common;

use std::time::Duration;

use common::{config, Raw};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long any one wait here may take before the test fails instead of hanging.
const BOUND: Duration = Duration::from_secs(30);

/// How long mcpx may take to exit once nothing is left in flight: the HTTP connections'
/// [`mcpgateway::DRAIN_GRACE`], then the servers' stop ([`common::SERVERS_STOP`]),
/// documented as "gone within about 5 s of the drain's end".
const STOPPED_WITHIN: Duration =
    Duration::from_secs(mcpgateway::DRAIN_GRACE.as_secs() + common::SERVERS_STOP.as_secs());

/// A token for the front, which must not show in a health answer.
const TOKEN: &str = "health-test-token-8d1f";

/// `GET base + path`: its status and JSON body.
async fn get(base: &str, path: &str) -> (StatusCode, Value) {
    let response = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .timeout(BOUND)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap())
}

/// Polls `base`'s `/readyz` (at most [`BOUND`]) until its `status` is `want`; the last answer.
async fn readiness(base: &str, want: &str) -> (StatusCode, Value) {
    let started = std::time::Instant::now();
    loop {
        let (status, body) = get(base, mcpgateway::READY_PATH).await;
        if body["status"] == want || started.elapsed() > BOUND {
            return (status, body);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The front's address, from its MCP endpoint's URL.
fn base(url: &str) -> String {
    url.trim_end_matches(mcpgateway::MCP_PATH).to_owned()
}

/// Waits (at most [`BOUND`]) until the demo server of `dir` has received a call of `tool`.
async fn arrived(dir: &std::path::Path, tool: &str) {
    let started = std::time::Instant::now();
    while started.elapsed() < BOUND {
        if common::call_arrived(&dir.join("demo.jsonl"), tool) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no call of {tool} reached the server");
}

/// A 2026-07-28 `tools/call` of `demo__get-sum`, sessionless.
async fn modern_call(url: &str) -> reqwest::Response {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "drain-test", "version": "0"}});
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "demo__get-sum", "arguments": {"a": 1, "b": 2}, "_meta": meta}});
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "demo__get-sum")
        .body(body.to_string())
        .timeout(BOUND)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(windows, ignore = "its hanging server is `sleep`")]
async fn health_answers_without_the_token_and_names_no_server() {
    let dir = tempfile::tempdir().unwrap();
    // A server that never answers `initialize`: startup is not over while it starts.
    let hang = r#""hanging": {"command": "sleep", "args": ["600"]}"#;
    let config = config(dir.path(), &[], hang, "");
    let peer = common::serve_http_args(&config, &["--token", TOKEN]).await;
    let base = base(&peer.url);
    let (status, alive) = get(&base, mcpgateway::HEALTH_PATH).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(alive, json!({"status": "alive"}));
    // The demo server comes up; the other is still starting, so the gateway is not ready.
    let started = std::time::Instant::now();
    let (status, body) = loop {
        let (status, body) = get(&base, mcpgateway::READY_PATH).await;
        if body["servers"]["up"] == 1 || started.elapsed() > BOUND {
            break (status, body);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        body,
        json!({"status": "starting", "servers": {"up": 1, "starting": 1, "down": 0, "idle": 0}})
    );
    let text = body.to_string();
    for secret in [TOKEN, "hanging", "demo", "sleep"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    // The MCP endpoint still wants the token.
    let refused = Raw::new(&peer).initialize("no-token").await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_fails_to_start_does_not_keep_the_gateway_unready() {
    let dir = tempfile::tempdir().unwrap();
    let broken = r#""broken": {"command": "sh", "args": ["-c", "exit 3"]}"#;
    let peer = common::serve_http(&config(dir.path(), &[], broken, "")).await;
    let (status, body) = readiness(&base(&peer.url), "ready").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["servers"]["up"], 1, "{body}");
    let broken =
        body["servers"]["down"].as_u64().unwrap() + body["servers"]["starting"].as_u64().unwrap();
    assert_eq!(broken, 1, "the broken server restarts with backoff: {body}");
}

/// `mcpx serve --http --drain-timeout 600` with a session whose `slow` call of `ms` has reached
/// the demo server, then SIGTERM, and `/readyz` seen `draining`: the gateway, its session, the
/// call's answer to come, and the gateway's process id.
struct Draining {
    _dir: tempfile::TempDir,
    peer: mcpx_interop::HttpPeer,
    raw: Raw,
    session: String,
    slow: tokio::task::JoinHandle<String>,
    pid: u32,
}

impl Draining {
    async fn start(ms: u64) -> Draining {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), &["--faults"], "", "");
        let peer = common::serve_http_args(&config, &["--drain-timeout", "600"]).await;
        let raw = Raw::new(&peer);
        let session = raw.open("drain").await;
        assert_eq!(readiness(&base(&peer.url), "ready").await.0, StatusCode::OK);
        let slow = raw.post(
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "demo__slow", "arguments": {"ms": ms}}})
            .to_string(),
        );
        let slow = tokio::spawn(async move { slow.await.unwrap().text().await.unwrap() });
        arrived(dir.path(), "slow").await;
        let pid = peer.pid().unwrap();
        common::signal(pid, "TERM");
        let (status, body) = readiness(&base(&peer.url), "draining").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        Draining {
            _dir: dir,
            peer,
            raw,
            session,
            slow,
            pid,
        }
    }

    /// The slow call's answer (failing past `within`), then waits until mcpx is gone (failing
    /// past [`STOPPED_WITHIN`]).
    async fn answer_then_gone(self, within: Duration) -> String {
        let answer = tokio::time::timeout(within, self.slow)
            .await
            .unwrap_or_else(|_| panic!("the call in flight not answered within {within:?}"))
            .unwrap();
        let took = common::gone_within(self.pid, STOPPED_WITHIN).await;
        assert!(
            took < STOPPED_WITHIN,
            "mcpx still running {took:?} after its last call was answered"
        );
        answer
    }
}

/// SIGTERM: `/readyz` says `draining` at once (`/healthz` still alive), `initialize` and a
/// sessionless request get 503 with `Retry-After`, a session already open is still served, and
/// the call in flight gets its real answer; then mcpx exits, long before the drain's bound.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "drains on SIGTERM (Ctrl-C under wine: scripts/cross-smoke)"
)]
async fn sigterm_lets_the_calls_in_flight_finish_and_takes_no_new_session() {
    let draining = Draining::start(3000).await;
    let base = base(&draining.peer.url);
    assert_eq!(get(&base, mcpgateway::HEALTH_PATH).await.0, StatusCode::OK);
    let refused = draining.raw.initialize("too-late").await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "1");
    let refused: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(refused["id"], 0, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no new sessions"),
        "{refused}"
    );
    let modern = modern_call(&draining.peer.url).await;
    assert_eq!(modern.status(), StatusCode::SERVICE_UNAVAILABLE);
    let modern: Value = serde_json::from_str(&modern.text().await.unwrap()).unwrap();
    assert_eq!(modern["id"], 7, "{modern}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let listed = draining
        .raw
        .post(Some(&draining.session), list)
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    let listed: Value = serde_json::from_str(&listed.text().await.unwrap()).unwrap();
    assert!(listed["result"]["tools"].as_array().is_some(), "{listed}");
    let answer = draining.answer_then_gone(BOUND).await;
    assert!(answer.contains("slept 3000 ms"), "{answer}");
}

/// A second SIGTERM ends the drain at once: the call still in flight is answered
/// "shutting down" within [`common::AT_ONCE`] (before: within 30 s) and mcpx exits within
/// [`STOPPED_WITHIN`], far within the drain's bound of 600 s and the call's 60 s.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "stops on SIGTERM (Ctrl-C under wine: scripts/cross-smoke)"
)]
async fn a_second_sigterm_stops_at_once() {
    let draining = Draining::start(60_000).await;
    common::signal(draining.pid, "TERM");
    let answer = draining.answer_then_gone(common::AT_ONCE).await;
    assert!(answer.contains("shutting down"), "{answer}");
}

/// The stdio front with `--health ADDR`: the endpoints on their own address, and SIGTERM's
/// drain: the call in flight gets its real answer, then mcpx exits.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "drains on SIGTERM (Ctrl-C under wine: scripts/cross-smoke)"
)]
async fn the_stdio_front_serves_health_on_its_own_address_and_drains() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let health = ["--health", "127.0.0.1:0"];
    let mut child = common::serve_piped(&config, &health, std::process::Stdio::piped());
    let mut log = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = tokio::time::timeout(BOUND, async {
        while let Some(line) = log.next_line().await.unwrap() {
            if let Some((_, rest)) = line.split_once("health on ") {
                return rest.split_whitespace().next().unwrap().to_owned();
            }
        }
        panic!("mcpx exited before serving its health endpoints");
    })
    .await
    .unwrap();
    let base = base.trim_end_matches(mcpgateway::HEALTH_PATH).to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    tokio::spawn(async move { while let Ok(Some(_)) = log.next_line().await {} });
    assert_eq!(get(&base, mcpgateway::HEALTH_PATH).await.0, StatusCode::OK);
    assert_eq!(readiness(&base, "ready").await.0, StatusCode::OK);
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "drain-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "demo__slow", "arguments": {"ms": 2000}}}),
    ];
    for message in messages {
        input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    input.flush().await.unwrap();
    arrived(dir.path(), "slow").await;
    common::signal(child.id().unwrap(), "TERM");
    assert_eq!(
        readiness(&base, "draining").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    let answer = tokio::time::timeout(BOUND, async {
        while let Some(line) = output.next_line().await.unwrap() {
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                return message;
            }
        }
        panic!("mcpx exited without answering the call");
    })
    .await
    .unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "slept 2000 ms",
        "{answer}"
    );
    let status = tokio::time::timeout(STOPPED_WITHIN, child.wait())
        .await
        .unwrap_or_else(|_| panic!("mcpx still running {STOPPED_WITHIN:?} after its answer"))
        .unwrap();
    assert!(status.success(), "{status}");
    drop(input);
}

/// `mcpx serve ARGS` on stdio, given `messages` and then the end of its input, as
/// `printf … | mcpx serve` does: every line it wrote, in order, and whether it exited 0
/// within `bound` of the end of its input.
async fn piped(
    dir: &std::path::Path,
    args: &[&str],
    messages: &[Value],
    bound: Duration,
) -> (Vec<Value>, bool) {
    let config = config(dir, &["--faults"], "", "");
    let mut child = common::serve_piped(&config, args, std::process::Stdio::null());
    let mut input = child.stdin.take().unwrap();
    for message in messages {
        input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    drop(input);
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let written = tokio::time::timeout(bound, async {
        let mut lines = Vec::new();
        while let Some(line) = output.next_line().await.unwrap() {
            lines.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        let status = child.wait().await.unwrap();
        (lines, status.success())
    })
    .await;
    written.unwrap_or_else(|_| panic!("mcpx still running {bound:?} after its input ended"))
}

/// The answer with `id` among `lines`.
fn answer(lines: &[Value], id: u64) -> Option<&Value> {
    lines
        .iter()
        .find(|l| l["id"] == id && l.get("method").is_none())
}

/// The first messages of a client: `initialize`, then `notifications/initialized`.
fn handshake() -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "eof-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

/// A client that writes its requests and closes its input at once (`printf … | mcpx serve`)
/// gets every answer, then mcpx exits: once the last call in flight (1 s) is answered and
/// the servers are stopped. Before, the end of the input stopped the requests in flight
/// unanswered: nothing was written (3 runs of 3).
#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_the_input_leaves_no_request_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = handshake().to_vec();
    messages.push(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    messages.push(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "demo__slow", "arguments": {"ms": 1000}}}));
    let bound = Duration::from_secs(1) + common::SERVERS_STOP;
    let (lines, success) = piped(dir.path(), &[], &messages, bound).await;
    assert!(success, "{lines:?}");
    let initialized = answer(&lines, 1).expect("initialize answered");
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        answer(&lines, 3),
        Some(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}))
    );
    let slow = answer(&lines, 4).expect("the call answered");
    assert_eq!(
        slow["result"]["content"][0]["text"], "slept 1000 ms",
        "{slow}"
    );
}

/// What is still in flight when the drain timeout has passed after the end of the input is
/// answered with an error, and mcpx exits within that timeout and its servers' stop.
#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_the_input_waits_at_most_the_drain_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = handshake().to_vec();
    messages.push(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "demo__slow", "arguments": {"ms": 60_000}}}));
    messages.push(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    let bound = Duration::from_secs(1) + common::SERVERS_STOP;
    let (lines, success) = piped(dir.path(), &["--drain-timeout", "1"], &messages, bound).await;
    assert!(success, "{lines:?}");
    assert_eq!(
        answer(&lines, 4),
        Some(&json!({"jsonrpc": "2.0", "id": 4, "result": {}}))
    );
    let slow = answer(&lines, 3).expect("the call answered");
    assert_eq!(slow["error"]["code"], -32603, "{slow}");
    assert!(
        slow["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shutting down"),
        "{slow}"
    );
}
