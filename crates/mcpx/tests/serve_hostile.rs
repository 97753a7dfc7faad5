//! `mcpx serve` under heavy and hostile input: the real binary, on loopback, every load bounded
//! in count and time.

mod common;

use std::time::Duration;

use common::{config, spec};
use mcpclient::{CallOptions, Client, ClientOptions, HttpConfig, HttpTransport, Transport};
use mcpspec::Recording;
use mcpx_interop::HttpPeer;
use serde_json::{json, Value};

/// The size of each echoed text: far over a pipe's buffer (64 KiB), so that the server blocks
/// writing its answer while the gateway may still be writing it the next request.
const ECHO_BYTES: usize = 1024 * 1024;

/// How long one echo call may take: generous, since a deadlock never ends.
const CALL_WAIT: Duration = Duration::from_secs(60);

async fn connect(transport: impl Transport + 'static) -> Client {
    let options = ClientOptions {
        timeout: CALL_WAIT,
        ..ClientOptions::default()
    };
    let (client, _events) = Client::connect_with(transport, options).await.unwrap();
    client.list_tools().await.unwrap();
    client
}

/// `mcpx serve` over stdio in front of the demo server.
async fn stdio_gateway(dir: &std::path::Path) -> Client {
    let config = config(dir, &[], "", "");
    let transport = common::serve_stdio(&config);
    connect(Recording::new(spec().unwrap(), transport)).await
}

/// `mcpx serve --http` in front of the demo server, and a client of it.
async fn http_gateway(dir: &std::path::Path) -> (HttpPeer, Client) {
    let peer = common::serve_http(&config(dir, &[], "", "")).await;
    let transport = HttpTransport::new(&HttpConfig {
        url: peer.url.clone(),
        headers: Vec::new(),
    })
    .unwrap();
    let client = connect(Recording::new(spec().unwrap(), transport)).await;
    (peer, client)
}

/// `n` echo calls of [`ECHO_BYTES`] each at once: every one comes back with its own text.
async fn echo_at_once(client: &Client, n: usize) {
    let calls = (0..n).map(|i| async move {
        let text = format!("{i}:{}", "x".repeat(ECHO_BYTES));
        let options = CallOptions {
            timeout: Some(CALL_WAIT),
            ..CallOptions::default()
        };
        let outcome = client
            .call_tool_with("demo__echo", json!({"text": text}), options)
            .await
            .unwrap_or_else(|e| panic!("echo {i} of {n}: {e}"));
        let result = outcome.response.result().unwrap();
        assert_eq!(result["content"][0]["text"], json!(text), "echo {i} of {n}");
    });
    futures_util::future::join_all(calls).await;
}

/// A server that blocks writing a long answer while the gateway writes it a long request never
/// wedges the connection: the pipe to the server is read and written independently.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_long_calls_to_a_single_threaded_server_through_the_stdio_front() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let client = stdio_gateway(dir.path()).await;
    echo_at_once(&client, 2).await;
    echo_at_once(&client, 8).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_long_calls_to_a_single_threaded_server_through_the_http_front() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_peer, client) = http_gateway(dir.path()).await;
    echo_at_once(&client, 2).await;
    echo_at_once(&client, 8).await;
    client.close().await;
}

/// More pipelined calls than may be in flight, each asking the client a question: the client's
/// answers are read while its further requests are held, so every call ends (before, the front
/// stopped reading at the limit, and the 256 calls in flight waited for answers it never read).
#[tokio::test(flavor = "multi_thread")]
async fn pipelined_eliciting_calls_past_the_pacing_bound_all_end() {
    let (Some(_), Some(python)) = (spec(), mcpx_interop::python()) else {
        return;
    };
    const PIPELINED: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let extra = json!({"pys": {"command": python,
        "args": [mcpx_interop::peer_file("python_peer.py"), "stdio"]}})
    .to_string();
    let config = config(dir.path(), &[], &extra[1..extra.len() - 1], "");
    let mut client =
        common::Downstream::start(&config, &[], json!({"elicitation": {"form": {}}})).await;
    assert!(client.tool_names().await.contains(&"pys__greet".to_owned()));
    for id in 1000..1000 + PIPELINED {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "pys__greet", "arguments": {}}}))
            .await;
    }
    let mut answered = std::collections::HashSet::new();
    while answered.len() < PIPELINED as usize {
        let message = client.receive().await.value().unwrap();
        match (message.get("method"), message.get("id")) {
            (Some(_), Some(id)) => {
                let answer = json!({"action": "accept", "content": {"name": "pip", "age": 3}});
                client
                    .send(json!({"jsonrpc": "2.0", "id": id, "result": answer}))
                    .await;
            }
            (None, Some(id)) => {
                assert_eq!(
                    message["result"]["content"][0]["text"], "hello pip, 3",
                    "{message}"
                );
                assert!(
                    answered.insert(id.as_u64().unwrap()),
                    "answered twice: {id}"
                );
            }
            _ => {}
        }
    }
    client.close().await;
}

/// How long `mcpx serve` may take to stop after SIGTERM, whatever is queued: the documented
/// bound (answers at once, [`mcpgateway::DRAIN_GRACE`] for connections, then each server's
/// stop: [`mcpclient::STOP_GRACE`] twice), with room for a loaded machine.
const STOP_BOUND: Duration = Duration::from_secs(15);

/// Sends SIGTERM to `pid` and waits (at most twice [`STOP_BOUND`]) until it is gone; how long
/// that took.
async fn terminate(pid: u32) -> Duration {
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = std::time::Instant::now();
    while started.elapsed() < 2 * STOP_BOUND {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let gone = status.is_empty() || status.contains("State:\tZ");
        if gone {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

/// SIGTERM with calls queued in several sessions: each queued call gets an error answer, mcpx
/// stops within its bound, and no server is left running (before: still running 60 s later).
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_with_a_backlog_answers_every_call_and_stops_in_time() {
    let Some(_) = spec() else { return };
    const SESSIONS: usize = 4;
    const QUEUED: usize = 48;
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &["--faults"], "", "")).await;
    let http = reqwest::Client::new();
    let post = |session: Option<String>, body: Value| {
        let mut request = http
            .post(&peer.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let mut calls = Vec::new();
    for _ in 0..SESSIONS {
        let opened = post(
            None,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "backlog", "version": "0"}}}),
        )
        .await
        .unwrap();
        let session = opened.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        for id in 1..=QUEUED {
            let call = post(
                Some(session.clone()),
                json!({"jsonrpc": "2.0", "id": id,
                "method": "tools/call", "params": {"name": "demo__slow", "arguments": {"ms": 60000}}}),
            );
            calls.push(tokio::spawn(async move {
                match call.await {
                    Ok(response) => response.text().await.unwrap_or_default(),
                    Err(e) => format!("no response: {e}"),
                }
            }));
        }
    }
    // Let the calls reach the gateway (they queue behind the first slow one).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let took = terminate(peer.pid().unwrap()).await;
    assert!(
        took < STOP_BOUND,
        "mcpx took {took:?} to stop after SIGTERM"
    );
    for call in calls {
        let body = call.await.unwrap();
        assert!(body.contains("shutting down"), "{body}");
    }
    let left = common::processes_with(&dir.path().display().to_string());
    assert!(
        left.iter().all(|(_, state)| state.starts_with('Z')),
        "servers left running: {left:?}"
    );
}

/// A full session table refuses new sessions (503 with `Retry-After`) instead of ending one in
/// use; sessions idle past their timeout make room. Before, each new session past 1,024 ended
/// the one idle longest, a session with a call in flight included.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_session_table_refuses_new_sessions_and_never_ends_one_in_use() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gateway = r#"{"maxSessions": 3, "sessionIdleTimeout": 1}"#;
    let peer = common::serve_http(&config(dir.path(), &["--faults"], "", gateway)).await;
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut request = http
            .post(&peer.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "table", "version": "0"}}});
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let opened = post(None, initialize.clone()).await.unwrap();
        assert_eq!(opened.status(), 200);
        sessions.push(
            opened.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }
    // The first session has a call in flight for longer than the idle timeout.
    let busy = sessions[0].clone();
    let call = post(
        Some(&busy),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "demo__slow", "arguments": {"ms": 3000}}}),
    );
    let call = tokio::spawn(async move { call.await.unwrap().text().await.unwrap() });
    tokio::time::sleep(Duration::from_millis(200)).await;

    let refused = post(None, initialize.clone()).await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");

    // Once the two others are idle past the timeout, new sessions take their places; a flood of
    // new sessions never ends the busy one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut opened = 0;
    for _ in 0..50 {
        if post(None, initialize.clone()).await.unwrap().status() == 200 {
            opened += 1;
        }
    }
    assert_eq!(opened, 2, "the two idle sessions' places, and no more");
    let answer = call.await.unwrap();
    assert!(
        answer.contains(r#""id":1"#) && answer.contains("slept"),
        "{answer}"
    );
    let still = post(
        Some(&busy),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await
    .unwrap();
    assert_eq!(still.status(), 200);
}
