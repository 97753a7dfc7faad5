//! What the gateway does with each message, through the real binary: every request with an id
//! answered (batches, malformed messages, odd ids), what it does not own forwarded as written
//! (params, `_meta`, number text), a frame that is one line on stdio whatever an HTTP server
//! sent, and a call right after a crash waiting for the restart.

mod common;

use std::time::Duration;

use common::{config, demo_transcript, spec, Downstream};
use mcpclient::{Frame, StdioTransport, Transport};
use mcpx_interop::{peer_file, python, HttpPeer};
use serde_json::{json, Value};

/// `mcpx serve` on stdio spoken to with raw lines, none of them checked (some are meant to be
/// malformed), after a handshake at `version`.
async fn raw_client(config: &std::path::Path, version: &str) -> StdioTransport {
    let mut transport = common::serve_stdio(config);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    transport.send(&Frame::from_value(&init)).await.unwrap();
    let answer = loop {
        let frame = next(&mut transport).await;
        if frame["id"] == 0 {
            break frame;
        }
    };
    assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    transport
        .send(&Frame::parse(initialized).unwrap())
        .await
        .unwrap();
    transport
}

/// The next frame from the gateway that is not a notification.
async fn next(transport: &mut StdioTransport) -> Value {
    loop {
        let frame = tokio::time::timeout(common::FRAME_WAIT, transport.receive())
            .await
            .expect("a frame in time")
            .expect("mcpx is still there")
            .unwrap()
            .value()
            .unwrap();
        if frame.get("id").is_some() {
            return frame;
        }
    }
}

/// Sends the raw `text`; the next frame from the gateway.
async fn answer_to(transport: &mut StdioTransport, text: &str) -> Value {
    transport.send(&Frame::parse(text).unwrap()).await.unwrap();
    next(transport).await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_message_with_an_id_is_answered_on_the_stdio_front() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = raw_client(&config, "2025-11-25").await;
    let cases = [
        (r#"{"jsonrpc":"2.0","id":4}"#, json!(4)),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":5,"method":9}"#, json!(5)),
    ];
    for (text, id) in cases {
        let answer = answer_to(&mut client, text).await;
        assert_eq!(answer["id"], id, "{text}: {answer}");
        assert_eq!(answer["error"]["code"], -32600, "{text}: {answer}");
    }
    // A batch in a 2025-11-25 session: each request in it refused with its own id.
    let batch = r#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]"#;
    let first = answer_to(&mut client, batch).await;
    let second = next(&mut client).await;
    for (answer, id) in [(first, "b1"), (second, "b2")] {
        assert_eq!(answer["id"], id, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("batches are not part of MCP 2025-11-25"),
            "{answer}"
        );
    }
    // Nested 200 levels deep: refused whole for its id (past `MAX_FRAME_DEPTH`), not "needs
    // the tool's name". (Built as a value: the test's own frames are checked like mcpx's.)
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let deep = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "demo__echo", "arguments": {"text": "x", "deep": deep}}});
    client.send(&Frame::from_value(&deep)).await.unwrap();
    let answer = next(&mut client).await;
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("deeper than 128 levels"), "{answer}");
    let echo = r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"still here"}}}"#;
    let echoed = answer_to(&mut client, echo).await;
    assert_eq!(echoed["result"]["content"][0]["text"], "still here");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_answered_in_a_2025_03_26_session() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = raw_client(&config, "2025-03-26").await;
    let batch = r#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"in a batch"}}}]"#;
    let mut answers = vec![answer_to(&mut client, batch).await];
    answers.push(next(&mut client).await);
    answers.sort_by_key(|a| a["id"].as_str().unwrap().to_owned());
    assert_eq!(
        answers[0],
        json!({"jsonrpc": "2.0", "id": "b1", "result": {}})
    );
    assert_eq!(answers[1]["result"]["content"][0]["text"], "in a batch");
}

/// Only the name and the progress token are the gateway's: every other member of `params` and
/// `_meta` reaches the server as the client sent it, and progress comes back under the
/// client's own token.
#[tokio::test(flavor = "multi_thread")]
async fn params_and_meta_pass_through_unchanged() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let call = r#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"demo__count","arguments":{"steps":2},"_meta":{"progressToken":"p1","com.example/trace":"abc"},"x-extra":{"kept":[1, 2.50]}}}"#;
    client.send_raw(call).await;
    let answer = client.response_to(77).await.value().unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "counted to 2");
    let steps: Vec<_> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            (
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].clone(),
            )
        })
        .collect();
    assert_eq!(steps, [(json!("p1"), json!(1)), (json!("p1"), json!(2))]);
    let received = demo_transcript(dir.path(), spec)
        .into_iter()
        .find(|e| e["from"] == "client" && e["message"]["params"]["name"] == "count")
        .unwrap();
    let params = &received["message"]["params"];
    assert_eq!(params["_meta"]["com.example/trace"], "abc");
    assert_ne!(
        params["_meta"]["progressToken"], "p1",
        "the gateway's own token upstream"
    );
    assert_eq!(params["x-extra"].to_string(), r#"{"kept":[1,2.50]}"#);
}

/// The indenting stdlib HTTP server (`peers/pretty_http.py`, with `env`) as server `p` beside
/// the demo server, behind `mcpx serve ARGS` on stdio with a client declaring `capabilities`;
/// `None` without the Python peers.
async fn behind_pretty(
    env: &[(&str, &str)],
    args: &[&str],
    capabilities: Value,
) -> Option<(HttpPeer, Downstream, tempfile::TempDir)> {
    let (Some(_), Some(python)) = (spec(), python()) else {
        return None;
    };
    let python = python.display().to_string();
    let pretty = HttpPeer::start(&python, &[&peer_file("pretty_http.py")], env, "/mcp").await;
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(r#""p": {{"url": "{}"}}"#, pretty.url);
    let config = config(dir.path(), &[], &extra, "");
    let mut client = Downstream::start(&config, args, capabilities).await;
    assert!(client.tool_names().await.contains(&"p__p".to_owned()));
    Some((pretty, client, dir))
}

/// An HTTP server that indents its answers: on the stdio front each answer is still one line,
/// its content unchanged; and arguments reach a server with their number text as written.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn an_indenting_http_server_and_number_text_through_the_stdio_front() {
    let Some((_pretty, mut client, _dir)) = behind_pretty(&[], &[], json!({})).await else {
        return;
    };
    let answer = client.call("p__p", json!({})).await;
    assert!(!answer.text().contains('\n'));
    let answer = answer.value().unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "line one\nline two");
    assert!(
        common::result_text(&client.call("p__p", json!({})).await).contains("18446744073709551617")
    );
    let call = r#"{"jsonrpc":"2.0","id":88,"method":"tools/call","params":{"name":"p__numbers","arguments":{"n": 1E2, "big": 1.0e400, "long": 0.100000000000000000000000000001}}}"#;
    client.send_raw(call).await;
    let answer = client.response_to(88).await.value().unwrap();
    let received = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        received.starts_with(
            r#""arguments":{"n": 1E2, "big": 1.0e400, "long": 0.100000000000000000000000000001}"#
        ),
        "{received}"
    );
}

/// Servers of [`a_call_right_after_a_crash_waits_for_the_restart`], each crashed
/// [`CRASHES_EACH`] times: quick crashes double a server's backoff, and a call waits for a
/// restart at most `SETTLE_TIMEOUT` (5 s), so each server crashes only while its backoff is
/// short (0.25 s, 0.5 s, then 1 s).
const CRASHING_SERVERS: usize = 10;

/// Crashes of each of the [`CRASHING_SERVERS`].
const CRASHES_EACH: usize = 3;

/// A call right after a crash waits for the restart instead of being told the tool is gone
/// (before: -32602 `unknown tool`), or that the connection closed: the crashed call's error
/// reaches the client before the server's supervisor has marked it down, and the next call
/// found the closed connection (before: -32603 `the connection closed before the answer` for
/// 15 of 150 such calls, in each of 5 runs of 30). Each of the 30 calls right after a crash
/// must succeed.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_right_after_a_crash_waits_for_the_restart() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let others: Vec<String> = (1..CRASHING_SERVERS)
        .map(|n| {
            format!(
                r#""crashing{n}": {{"command": "{}", "args": ["demo-server", "--faults"]}}"#,
                common::MCPX
            )
        })
        .collect();
    let config = config(dir.path(), &["--faults"], &others.join(", "), "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let servers: Vec<String> = std::iter::once("demo".to_owned())
        .chain((1..CRASHING_SERVERS).map(|n| format!("crashing{n}")))
        .collect();
    let names = client.tool_names().await;
    for server in &servers {
        assert!(names.contains(&format!("{server}__crash")), "{names:?}");
    }
    let mut failures = Vec::new();
    for round in 0..CRASHES_EACH {
        for (n, server) in servers.iter().enumerate() {
            let crashed = client.call(&format!("{server}__crash"), json!({})).await;
            let crashed = crashed.value().unwrap();
            assert_eq!(crashed["error"]["code"], -32603, "{crashed}");
            // At once: the crash's error is the cue.
            let (a, b) = (round, n);
            let summed = client
                .call(&format!("{server}__get-sum"), json!({"a": a, "b": b}))
                .await;
            let summed = summed.value().unwrap();
            if summed["result"]["structuredContent"]["sum"] != a + b {
                failures.push(format!("{server}, crash {}: {summed}", round + 1));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} calls right after a crash failed:\n{}",
        failures.len(),
        CRASHING_SERVERS * CRASHES_EACH,
        failures.join("\n")
    );
}

/// The HTTP front answers what carries an id, with its id: a message that is no request and
/// no response, a refused protocol version header; more than one Origin, or a Host that is not
/// this machine's, is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_http_front_answers_with_the_id_and_checks_every_origin_and_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &[], "", "")).await;
    let http = reqwest::Client::new();
    let post = |body: String, headers: &[(&str, &str)]| {
        let mut request = http
            .post(&peer.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let opened = post(init, &[]).await.unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let in_session = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];

    let odd = post(r#"{"jsonrpc":"2.0","id":4}"#.to_owned(), &in_session)
        .await
        .unwrap();
    assert_eq!(odd.status(), 200);
    let odd: Value = serde_json::from_str(&odd.text().await.unwrap()).unwrap();
    assert_eq!(
        (odd["id"].clone(), odd["error"]["code"].clone()),
        (json!(4), json!(-32600))
    );

    let bad = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "1999-01-01"),
    ];
    let refused = post(
        json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string(),
        &bad,
    )
    .await
    .unwrap();
    assert_eq!(refused.status(), 400);
    let refused: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(refused["id"], 7);

    // A batch, in a session that negotiated 2025-03-26: every answer, as JSON-only client.
    let batch = r#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]"#;
    let answered = http
        .post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", &session)
        .body(batch)
        .send()
        .await
        .unwrap();
    let answers: Vec<Value> = serde_json::from_str(&answered.text().await.unwrap()).unwrap();
    let mut ids: Vec<_> = answers
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    assert_eq!(ids, ["b1", "b2"]);

    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string();
    let two_origins = http
        .post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", &session)
        .header("origin", "http://localhost:3000")
        .header("origin", "http://evil.example")
        .body(ping.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(two_origins.status(), 403);
    let rebound = http
        .post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", &session)
        .header("host", "attacker.example:8787")
        .body(ping)
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
}

/// `prefix` per server: `""` exposes names as they are; two servers whose names then collide
/// keep the first listed, and the log names both.
#[tokio::test(flavor = "multi_thread")]
async fn prefixes_expose_names_as_configured_and_collisions_name_both_servers() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        r#""a": {{"command": "{mcpx}", "args": ["demo-server"], "prefix": ""}},
            "b": {{"command": "{mcpx}", "args": ["demo-server"], "prefix": ""}},
            "c": {{"command": "{mcpx}", "args": ["demo-server"], "prefix": "c-"}}"#,
        mcpx = common::MCPX
    );
    let config = config(dir.path(), &[], &extra, "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let names = client.tool_names().await;
    for name in ["demo__get-sum", "get-sum", "c-get-sum"] {
        assert_eq!(
            names.iter().filter(|n| *n == name).count(),
            1,
            "{name}: {names:?}"
        );
    }
    let summed = client.call("get-sum", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        summed.value().unwrap()["result"]["structuredContent"]["sum"],
        3
    );
    let log = client.log();
    assert!(
        log.contains("two servers' names map to one exposed name")
            && (log.contains("a: get-sum") && log.contains("b: get-sum")),
        "{log}"
    );
}

/// With one unprefixed server, a name it did not list goes to it as it is (it answers for
/// itself), but a tool it listed and `denyTools` hides is never reached.
#[tokio::test(flavor = "multi_thread")]
async fn an_unlisted_name_reaches_the_one_unprefixed_server_but_a_hidden_tool_never_does() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        r#""plain": {{"command": "{}", "args": ["demo-server"], "prefix": "", "denyTools": ["get-sum"]}}"#,
        common::MCPX
    );
    let config = config(dir.path(), &[], &extra, "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let names = client.tool_names().await;
    assert!(names.contains(&"echo".to_owned()) && !names.contains(&"get-sum".to_owned()));
    let hidden = client
        .call("get-sum", json!({"a": 1, "b": 2}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        hidden["error"]["message"], "unknown tool 'get-sum'",
        "{hidden}"
    );
    let unlisted = client
        .call("no-such-tool", json!({}))
        .await
        .value()
        .unwrap();
    // The demo server's own answer.
    assert_eq!(
        unlisted["error"]["message"], "unknown tool: no-such-tool",
        "{unlisted}"
    );
}

/// An HTTP server that dies is noticed (a failed call, or the periodic ping), its tools are
/// withdrawn and the client told; when it is back on its address, the gateway reconnects and
/// lists its tools again (before: its tools stayed listed, and nothing was logged).
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn a_dead_http_server_is_noticed_withdrawn_and_reconnected() {
    let (Some(_), Some(python)) = (spec(), python()) else {
        return;
    };
    let python = python.display().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let script = peer_file("pretty_http.py");
    let pretty = HttpPeer::start(&python, &[&script, &port], &[], "/mcp").await;
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(r#""p": {{"url": "{}"}}"#, pretty.url);
    let config = config(dir.path(), &[], &extra, "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    assert!(client.tool_names().await.contains(&"p__p".to_owned()));
    drop(pretty);
    let failed = client.call("p__p", json!({})).await.value().unwrap();
    assert!(failed.get("error").is_some(), "{failed}");
    let listed = |names: Vec<String>| names.contains(&"p__p".to_owned());
    let mut withdrawn = false;
    for _ in 0..100 {
        if !listed(client.tool_names().await) {
            withdrawn = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(withdrawn, "the dead server's tools are still listed");
    assert!(client.log().contains("server down"), "{}", client.log());
    let _back = HttpPeer::start(&python, &[&script, &port], &[], "/mcp").await;
    let mut relisted = false;
    for _ in 0..300 {
        if listed(client.tool_names().await) {
            relisted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(relisted, "the server's tools did not come back");
    let answer = client.call("p__p", json!({})).await.value().unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "line one\nline two");
    client.assert_withdrawn_and_restored();
}

/// The restarts of `server` in `log`: each backoff (`250ms`, `500ms`, …) as logged, after
/// checking that the wait taken (`retry_in`, the backoff less its random jitter) is between half
/// the backoff and the whole of it.
fn backoffs(log: &str, server: &str) -> Vec<String> {
    let field = |line: &str, name: &str| -> Option<String> {
        let rest = line.split(&format!(" {name}=")).nth(1)?;
        Some(rest.split_whitespace().next()?.to_owned())
    };
    let seconds = |text: &str| -> f64 {
        let (number, unit) =
            text.split_at(text.find(|c: char| c.is_alphabetic() || c == 'µ').unwrap());
        let number: f64 = number.parse().unwrap();
        match unit {
            "s" => number,
            "ms" => number / 1e3,
            "µs" => number / 1e6,
            "ns" => number / 1e9,
            _ => panic!("a duration: {text}"),
        }
    };
    log.lines()
        .filter(|l| l.contains("server down") && l.contains(&format!(r#"server="{server}""#)))
        .filter_map(|l| Some((field(l, "retry_in")?, field(l, "backoff")?)))
        .map(|(wait, backoff)| {
            let (taken, nominal) = (seconds(&wait), seconds(&backoff));
            assert!(
                taken >= nominal / 2.0 && taken <= nominal,
                "waited {wait} for a backoff of {backoff}"
            );
            backoff
        })
        .collect()
}

/// A server that keeps failing to start is retried with a backoff that doubles from 0.25 s,
/// each wait shortened by a random part of up to half.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_server_is_retried_with_a_doubling_backoff() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let extra = r#""failing": {"command": "sh", "args": ["-c", "exit 3"]}"#;
    let config = config(dir.path(), &[], extra, "");
    let client = Downstream::start(&config, &[], json!({})).await;
    let mut log = String::new();
    for _ in 0..100 {
        log = client.log();
        if log.contains("backoff=1s") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let waits = backoffs(&log, "failing");
    assert!(
        waits.starts_with(&["250ms".to_owned(), "500ms".into(), "1s".into()]),
        "{waits:?}\n{log}"
    );
}

/// What is not JSON is a parse error on both fronts: a POST body gets 400 with -32700; a line on
/// stdio gets -32700 and the next line is read.
#[tokio::test(flavor = "multi_thread")]
async fn non_json_is_a_parse_error_on_both_fronts() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let peer = common::serve_http(&config).await;
    let http = reqwest::Client::new();
    let refused = http
        .post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body("this is not JSON")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");

    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = common::serve_piped(&config, &[], std::process::Stdio::null());
    let mut input = child.stdin.take().unwrap();
    let mut output = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    input
        .write_all(b"not JSON either\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let line = tokio::time::timeout(common::FRAME_WAIT, output.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    let (parse_error, ping) = (&answers[0], &answers[1]);
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    assert_eq!(ping, &json!({"jsonrpc": "2.0", "id": 5, "result": {}}));
}

/// After a server has run for `STABLE_AFTER` (30 s), its backoff starts again from 0.25 s: two
/// quick crashes make it 0.25 s then 0.5 s; a crash after a stable run waits 0.25 s again.
#[tokio::test(flavor = "multi_thread")]
async fn the_restart_backoff_resets_after_a_stable_run() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let retries = |log: String| backoffs(&log, "demo");
    for _ in 0..2 {
        // A call waits for the restart, so the second crash comes right after it.
        let crashed = client.call("demo__crash", json!({})).await.value().unwrap();
        assert_eq!(crashed["error"]["code"], -32603, "{crashed}");
    }
    for _ in 0..100 {
        if retries(client.log()).len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        retries(client.log()),
        ["250ms", "500ms"],
        "{}",
        client.log()
    );
    let summed = client.call("demo__get-sum", json!({"a": 1, "b": 1})).await;
    assert_eq!(
        summed.value().unwrap()["result"]["structuredContent"]["sum"],
        2
    );
    tokio::time::sleep(mcpgateway::STABLE_AFTER + Duration::from_secs(1)).await;
    let crashed = client.call("demo__crash", json!({})).await.value().unwrap();
    assert_eq!(crashed["error"]["code"], -32603, "{crashed}");
    for _ in 0..100 {
        if retries(client.log()).len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(retries(client.log()), ["250ms", "500ms", "250ms"]);
}

/// A notification an HTTP server is slow to acknowledge holds up nothing: a call sent after it
/// reaches the server before the acknowledgement is given (before, each notification was sent
/// inline, and the call was sent only once it was acknowledged).
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn a_slow_acknowledgement_holds_up_no_call() {
    let slow = [("PRETTY_SLOW_ACK", "20")];
    let roots = json!({"roots": {"listChanged": true}});
    let Some((pretty, mut client, _dir)) = behind_pretty(&slow, &[], roots).await else {
        return;
    };
    // Passed on to every server; the indenting one takes 20 s (less than mcpclient::ACK_TIMEOUT)
    // to acknowledge it.
    client
        .notify("notifications/roots/list_changed", None)
        .await;
    let answer = client.call("p__p", json!({})).await.value().unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "line one\nline two");
    // The server's log is read by a thread of the test's: its line may come after the answer.
    let log = common::at_once(async {
        loop {
            let log = pretty.log();
            if log.contains("call p") {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let called = log.find("call p").expect("the call reached the server");
    let acked = log.find("acked notifications/roots/list_changed");
    assert!(acked.is_none_or(|acked| called < acked), "{log}");
}

/// A call to an HTTP server that times out is cancelled, and its exchange stopped: the answer
/// that comes later is never read (before, the exchange went on, read it, and it was dropped as
/// an answer nobody waited for).
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn a_timed_out_http_call_stops_its_exchange() {
    let timeout = ["--timeout", "1"];
    let Some((_pretty, mut client, _dir)) = behind_pretty(&[], &timeout, json!({})).await else {
        return;
    };
    let timed_out = client.call("p__slow", json!({})).await.value().unwrap();
    let message = timed_out["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no answer within"), "{timed_out}");
    // The server answers 3 s after the call; by then nobody reads its stream.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let summed = client.call("demo__get-sum", json!({"a": 1, "b": 1})).await;
    assert_eq!(
        summed.value().unwrap()["result"]["structuredContent"]["sum"],
        2
    );
    let log = client.log();
    assert!(!log.contains("answer to no pending request"), "{log}");
}
