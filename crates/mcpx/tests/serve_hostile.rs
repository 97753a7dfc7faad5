//! `mcpx serve` under heavy and hostile input: the real binary, on loopback, every load bounded
//! in count and time.

mod common;

use std::time::Duration;

use common::{config, spec, Raw};
use mcpclient::{CallOptions, Client, ClientOptions, HttpConfig, HttpTransport, Transport};
use mcpspec::Recording;
use mcpx_interop::HttpPeer;
use serde_json::json;

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
        auth: None,
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
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
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

/// How long a test waits for the gateway to count the calls it sent as in flight.
const IN_FLIGHT_WAIT: Duration = Duration::from_secs(10);

/// Waits until the gateway's metrics count `calls` tool calls in flight (sent calls have
/// reached it, not merely been written), for at most [`IN_FLIGHT_WAIT`].
async fn wait_for_calls_in_flight(peer: &HttpPeer, calls: u64) {
    let http = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + IN_FLIGHT_WAIT;
    loop {
        let now = common::metric(&http, &peer.url, "mcpx_calls_in_flight").await;
        if now == Some(calls) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the gateway never had {calls} calls in flight (last: {now:?})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How long `mcpx serve --drain-timeout 1` may take to stop after SIGTERM, whatever is queued:
/// the documented bound (the drain's 1 s, then answers at once, [`mcpgateway::DRAIN_GRACE`]
/// for connections, then each server's stop: [`mcpclient::STOP_GRACE`] twice), with room for a
/// loaded machine.
const STOP_BOUND: Duration = Duration::from_secs(15);

/// Sends SIGTERM to `pid` and waits (at most twice [`STOP_BOUND`]) until it is gone; how long
/// that took.
async fn terminate(pid: u32) -> Duration {
    common::signal(pid, "TERM");
    common::gone_within(pid, 2 * STOP_BOUND).await
}

/// SIGTERM with calls queued in several sessions that outlast the drain: once the drain's
/// bound has passed each queued call gets an error answer, mcpx stops within its bound, and no
/// server is left running (before: still running 60 s later). Calls that finish within the
/// drain are `serve_drain.rs`'s.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "stops the gateway with SIGTERM (Ctrl-C under wine: scripts/cross-smoke)"
)]
async fn sigterm_with_a_backlog_answers_every_call_and_stops_in_time() {
    const SESSIONS: usize = 4;
    const QUEUED: usize = 48;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let peer = common::serve_http_args(&config, &["--drain-timeout", "1"]).await;
    let raw = Raw::new(&peer);
    let mut calls = Vec::new();
    for _ in 0..SESSIONS {
        let session = raw.open("backlog").await;
        for id in 1..=QUEUED {
            let call = raw.post(Some(&session), json!({"jsonrpc": "2.0", "id": id,
                "method": "tools/call", "params": {"name": "demo__slow", "arguments": {"ms": 60000}}}).to_string());
            calls.push(tokio::spawn(async move {
                match call.await {
                    Ok(response) => response.text().await.unwrap_or_default(),
                    Err(e) => format!("no response: {e}"),
                }
            }));
        }
    }
    // Every call reached the gateway (they queue behind the first slow one).
    wait_for_calls_in_flight(&peer, (SESSIONS * QUEUED) as u64).await;
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
    assert!(left.is_empty(), "servers left running: {left:?}");
}

/// A full session table ends the least recently active session with no request in flight to
/// take a new one, and never one in use: when every session has a request in flight, a new one
/// is refused (503 with `Retry-After`). (Before issue 32, each new session past the limit ended
/// the one idle longest, a session with a call in flight included; then, until issue 33, the
/// table refused new sessions while idle ones held it.)
#[tokio::test(flavor = "multi_thread")]
async fn a_full_session_table_ends_the_least_recent_idle_session_never_one_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = r#"{"maxSessions": 3}"#;
    let peer = common::serve_http(&config(dir.path(), &["--faults"], "", gateway)).await;
    let raw = Raw::new(&peer);
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(raw.open("table").await);
    }
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let slow = |session: &str| {
        let slow = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "demo__slow", "arguments": {"ms": 5000}}});
        let call = raw.post(Some(session), slow.to_string());
        tokio::spawn(async move { call.await.unwrap().text().await.unwrap() })
    };
    // The first session has a call in flight; the second is the least recently used.
    let mut calls = vec![slow(&sessions[0])];
    wait_for_calls_in_flight(&peer, 1).await;
    assert_eq!(
        raw.post(Some(&sessions[2]), ping.clone())
            .await
            .unwrap()
            .status(),
        200
    );
    let newcomer = raw.initialize("table").await;
    assert_eq!(newcomer.status(), 200);
    let newcomer = newcomer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let ended = raw.post(Some(&sessions[1]), ping.clone()).await.unwrap();
    assert_eq!(
        ended.status(),
        404,
        "the least recently used idle session made room"
    );
    assert_eq!(
        raw.post(Some(&sessions[2]), ping.clone())
            .await
            .unwrap()
            .status(),
        200
    );

    // Every session busy: a new one is refused, however many come.
    calls.push(slow(&sessions[2]));
    calls.push(slow(&newcomer));
    wait_for_calls_in_flight(&peer, 3).await;
    for _ in 0..48 {
        let refused = raw.initialize("table").await;
        assert_eq!(refused.status(), 503);
        assert_eq!(refused.headers()["retry-after"], "1");
    }
    for call in calls {
        let answer = call.await.unwrap();
        assert!(
            answer.contains(r#""id":1"#) && answer.contains("slept"),
            "{answer}"
        );
    }
    for session in [&sessions[0], &sessions[2], &newcomer] {
        let still = raw.post(Some(session), ping.clone()).await.unwrap();
        assert_eq!(still.status(), 200);
    }
}

/// Bytes of each hostile body below: past what the gateway reads per request before the fix
/// (its 16 MiB limit now), half of it.
const HOSTILE_BYTES: usize = 8 * 1024 * 1024;

/// The most a hostile request may add to mcpx's peak memory, as a multiple of its body: the
/// body read, decoded and copied a few times, never parsed into values past
/// `MAX_ARGUMENT_VALUES` (before: 50 times for an array of zeros).
const PEAK_MULTIPLE: usize = 10;

/// `mcpx serve`'s peak resident memory so far, in KiB (VmHWM).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Hostile arguments of about `HOSTILE_BYTES` each: their name and the arguments' JSON text.
fn hostile_arguments() -> Vec<(&'static str, String)> {
    let n = HOSTILE_BYTES;
    let zeros = format!("[{}0]", "0,".repeat(n / 2 - 1));
    let wide: String = (0..n / 16)
        .map(|i| format!(r#""k{i:09}":0"#))
        .collect::<Vec<_>>()
        .join(",");
    vec![
        (
            "a long array of small values",
            format!(r#"{{"a":{zeros},"b":1}}"#),
        ),
        (
            "a long number",
            format!(r#"{{"a":1{},"b":1}}"#, "0".repeat(n)),
        ),
        (
            "a long string",
            format!(r#"{{"a":"{}","b":1}}"#, "x".repeat(n)),
        ),
        ("a wide object", format!(r#"{{"a":{{{wide}}},"b":1}}"#)),
        (
            "deep arrays",
            format!(
                r#"{{"a":{}{},"b":1}}"#,
                "[".repeat(n / 2),
                "]".repeat(n / 2)
            ),
        ),
    ]
}

/// One huge request never stalls the others and costs a bounded multiple of its body: for each
/// hostile shape, the call gets its answer, mcpx's peak memory grows by at most
/// [`PEAK_MULTIPLE`] times the body, and a bystander session's pings are all answered; the
/// figures (peak growth, the bystander's slowest ping) are printed for RELIABILITY.md.
#[tokio::test(flavor = "multi_thread")]
#[allow(clippy::print_stderr)] // the figures, for RELIABILITY.md
#[cfg_attr(windows, ignore = "reads the gateway's memory from /proc")]
async fn a_huge_request_costs_a_bounded_multiple_of_its_body_and_stalls_no_one() {
    for (shape, arguments) in hostile_arguments() {
        // A gateway of its own for each shape, so that each peak is its own.
        let dir = tempfile::tempdir().unwrap();
        let peer = common::serve_http(&config(dir.path(), &[], "", "")).await;
        let pid = peer.pid().unwrap();
        let raw = Raw::new(&peer);
        let (attacker, bystander) = (raw.open("hostile").await, raw.open("hostile").await);
        // Warm up: the demo server's tools are listed, a call has been made.
        let warm = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "demo__get-sum", "arguments": {"a": 1, "b": 2}}});
        raw.post(Some(&attacker), warm.to_string())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let before = peak_kib(pid);
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"demo__get-sum","arguments":{arguments}}}}}"#
        );
        let size = body.len();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pinging = {
            let stop = stop.clone();
            let bystander = bystander.clone();
            let raw = raw.clone();
            async move {
                let mut slowest = Duration::ZERO;
                let mut pings = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) && pings < 10_000 {
                    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string();
                    let started = std::time::Instant::now();
                    let answer = raw.post(Some(&bystander), ping).await.unwrap();
                    assert_eq!(answer.status(), 200);
                    answer.text().await.unwrap();
                    slowest = slowest.max(started.elapsed());
                    pings += 1;
                }
                (pings, slowest)
            }
        };
        let attack = async {
            let answer = raw.post(Some(&attacker), body).await.unwrap();
            let text = answer.text().await.unwrap();
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            text
        };
        let (answer, (pings, slowest)) = tokio::join!(attack, pinging);
        assert!(
            answer.contains(r#""error""#) || answer.contains(r#""isError":true"#),
            "{shape}: {}",
            &answer[..answer.len().min(300)]
        );
        let grown = peak_kib(pid).saturating_sub(before);
        eprintln!(
            "{shape}: body {} KiB, peak +{grown} KiB ({:.1}x), bystander: {pings} pings, slowest {slowest:?}",
            size / 1024,
            grown as f64 * 1024.0 / size as f64
        );
        assert!(pings > 0, "{shape}: the bystander got no answer");
        assert!(
            (grown as usize) * 1024 <= PEAK_MULTIPLE * size,
            "{shape}: peak grew by {grown} KiB for a body of {size} bytes"
        );
    }
}

/// 1,100 connections that never send a byte, against a gateway started with the common soft
/// limit of 1,024 open files: another client is still served (mcpx raises the limit, and caps
/// connections below it), and the idle connections are closed after the header timeout.
/// Before, they took every descriptor and locked every client out.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(windows, ignore = "its scripted server is an `sh` script")]
async fn idle_connections_neither_lock_clients_out_nor_stay_open() {
    use tokio::io::AsyncReadExt;
    const IDLE: usize = 1_100;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "").display().to_string();
    let command = format!(
        "ulimit -Sn 1024 && exec '{}' --config '{config}' serve --http 127.0.0.1:0",
        common::MCPX
    );
    let peer = HttpPeer::start("sh", &["-c", &command], &[], "/mcp").await;
    let address = peer
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut idle = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        idle.push(tokio::net::TcpStream::connect(&address).await.unwrap());
    }
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bystander", "version": "0"}}});
    let answered = tokio::time::timeout(
        Duration::from_secs(20),
        reqwest::Client::new()
            .post(&peer.url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(initialize.to_string())
            .send(),
    )
    .await
    .expect("the bystander is answered")
    .expect("the bystander is let in");
    assert_eq!(answered.status(), 200);
    // Closed by mcpx once the header timeout has passed: the read ends (0 bytes).
    let wait = mcpgateway::HEADER_READ_TIMEOUT + Duration::from_secs(10);
    let mut first = idle.swap_remove(0);
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(wait, first.read(&mut byte))
        .await
        .expect("the idle connection is closed by mcpx");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

/// Sessions take turns at a server that answers one request at a time: a new session's call is
/// answered while most of other sessions' backlog still waits (before, it waited behind all of
/// it: 20 sessions x 256 slow calls made a new session's call time out).
#[tokio::test(flavor = "multi_thread")]
async fn one_sessions_backlog_never_starves_another_sessions_call() {
    const SESSIONS: usize = 4;
    const BACKLOG: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &["--faults"], "", "")).await;
    let raw = Raw::new(&peer);
    let mut sessions = Vec::new();
    for _ in 0..=SESSIONS {
        sessions.push(raw.open("fair").await);
    }
    let newcomer = sessions.pop().unwrap();
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut backlog = Vec::new();
    for session in &sessions {
        for id in 1..=BACKLOG {
            let slow = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "demo__slow", "arguments": {"ms": 50}}});
            let call = raw.post(Some(session), slow.to_string());
            let answered = answered.clone();
            backlog.push(tokio::spawn(async move {
                let _ = call.await;
                answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }));
        }
    }
    // Let the backlog reach the gateway first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "demo__slow", "arguments": {"ms": 1}}});
    let mine = raw
        .post(Some(&newcomer), call.to_string())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(mine.contains("slept 1 ms"), "{mine}");
    let done = answered.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        done < SESSIONS * BACKLOG / 2,
        "the newcomer waited behind {done} of the {} calls before it",
        SESSIONS * BACKLOG
    );
    for call in backlog {
        call.abort();
    }
}

/// Connections that each send most of a large body and stall: mcpx holds at most its budget for
/// bodies being read (the ones past it get 503), and a bystander's small request is answered
/// at once (before: 30 stalled 60 MiB bodies held 1.82 GiB for as long as they liked).
#[tokio::test(flavor = "multi_thread")]
#[allow(clippy::print_stderr)] // the figures, for RELIABILITY.md
#[cfg_attr(windows, ignore = "reads the gateway's memory from /proc")]
async fn stalled_bodies_hold_a_bounded_budget_and_lock_no_one_out() {
    use tokio::io::AsyncWriteExt;
    const STALLED: usize = 40;
    const SENT: usize = 12 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &[], "", "")).await;
    let pid = peer.pid().unwrap();
    let raw = Raw::new(&peer);
    let session = raw.open("staller").await;
    let address = peer
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let before = peak_kib(pid);
    let chunk = std::sync::Arc::new(vec![b' '; SENT]);
    let writers = (0..STALLED).map(|_| {
        let (address, session, chunk) = (address.clone(), session.clone(), chunk.clone());
        tokio::spawn(async move {
            let mut tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
                 Accept: application/json\r\nMcp-Session-Id: {session}\r\n\
                 Content-Length: {}\r\n\r\n",
                mcpgateway::MAX_BODY_BYTES
            );
            tcp.write_all(head.as_bytes()).await.unwrap();
            // Past the budget mcpx stops reading and answers 503: the write may not finish.
            let _ = tokio::time::timeout(Duration::from_secs(5), tcp.write_all(&chunk)).await;
            tcp
        })
    });
    let stalled = futures_util::future::join_all(writers).await;
    let answered = tokio::time::timeout(Duration::from_secs(10), raw.initialize("bystander"))
        .await
        .expect("the bystander is answered while the bodies stall");
    assert_eq!(answered.status(), 200);
    let grown = (peak_kib(pid).saturating_sub(before) * 1024) as usize;
    eprintln!(
        "{STALLED} stalled bodies of {} MiB sent: peak +{} MiB",
        SENT >> 20,
        grown >> 20
    );
    // The budget, the small first bytes of each body, and the read buffers.
    let bound = mcpgateway::BODY_BUDGET_BYTES + STALLED * 2 * 1024 * 1024 + 64 * 1024 * 1024;
    assert!(
        grown <= bound,
        "peak grew by {} MiB, bound {} MiB",
        grown >> 20,
        bound >> 20
    );
    drop(stalled);
}

/// A body that stops arriving is answered 408 once `bodyReadTimeout` has passed, and the
/// connection closed (before: held open for as long as the client liked).
#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_body_is_answered_408_after_its_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let gateway = r#"{"bodyReadTimeout": 1}"#;
    let peer = common::serve_http(&config(dir.path(), &[], "", gateway)).await;
    let session = Raw::new(&peer).open("slow-body").await;
    let address = peer
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMcp-Session-Id: {session}\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(20), tcp.read(&mut answer))
        .await
        .expect("answered once the body timed out")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}
