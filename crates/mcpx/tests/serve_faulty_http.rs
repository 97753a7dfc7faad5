//! A real HTTP MCP server (the Python SDK's, from PyPI) behind a faulty network, fronted by
//! `mcpx serve`: it answers 500, is slow to send headers, has an SSE response cut mid-way, and
//! forgets the session. Every call ends with one clear answer within the configured timeout,
//! and the other server (the demo server, over stdio) works throughout.

mod common;

use std::time::Duration;

use common::{config, spec, Downstream};
use mcpx_interop::{python_over_http, FaultyProxy};
use serde_json::{json, Value};

/// The gateway's `--timeout`, in seconds.
const TIMEOUT_SECONDS: u64 = 3;

async fn add(client: &mut Downstream, a: i64) -> Value {
    client
        .call("py__add", json!({"a": a, "b": 1}))
        .await
        .value()
        .unwrap()
}

async fn assert_healthy(client: &mut Downstream, a: i64) {
    let answer = add(client, a).await;
    assert_eq!(
        answer["result"]["structuredContent"]["sum"],
        a + 1,
        "{answer}"
    );
    let summed = client
        .call("demo__get-sum", json!({"a": a, "b": 2}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        summed["result"]["structuredContent"]["sum"],
        a + 2,
        "{summed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn a_faulty_http_server_gets_each_call_one_clear_answer() {
    let Some(_) = spec() else { return };
    let Some(server) = python_over_http().await else {
        return;
    };
    let proxy = FaultyProxy::to(&server.url).await;
    let dir = tempfile::tempdir().unwrap();
    let py = format!(r#""py": {{"url": "{}"}}"#, proxy.url);
    let config = config(dir.path(), &[], &py, "");
    let timeout = TIMEOUT_SECONDS.to_string();
    let mut client = Downstream::start(&config, &["--timeout", &timeout], json!({})).await;
    for _ in 0..100 {
        if client.tool_names().await.contains(&"py__add".to_owned()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_healthy(&mut client, 1).await;

    // 500: the call fails at once, saying so.
    proxy.fail_next(1, 500);
    let failed = add(&mut client, 2).await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("500"), "{failed}");
    assert_healthy(&mut client, 3).await;

    // Headers held back past the timeout: the call ends with the timeout.
    proxy.delay_next(Duration::from_secs(TIMEOUT_SECONDS + 2));
    let slow = add(&mut client, 4).await;
    let message = slow["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("no answer within {TIMEOUT_SECONDS}s")),
        "{slow}"
    );
    assert_healthy(&mut client, 5).await;

    // The SSE response cut after its first event (a progress step).
    proxy.cut_next_stream();
    let cut = client
        .request(
            "tools/call",
            json!({"name": "py__count", "arguments": {"steps": 3}, "_meta": {"progressToken": "p"}}),
        )
        .await
        .value()
        .unwrap();
    // The step before the cut arrived; the answer never came, and the server (the Python SDK
    // keeps no events to resume from) cannot resume: the call fails at once, saying why.
    assert!(
        client
            .seen
            .iter()
            .any(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "p"),
        "the first event got through: {:?}",
        client.seen
    );
    let message = cut["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the event stream ended before the answer"),
        "{cut}"
    );
    assert_healthy(&mut client, 6).await;

    // The server forgets the session: the gateway starts a new one, and the call goes through.
    assert!(proxy.forget_sessions() >= 1);
    let before = proxy.initializations();
    assert_healthy(&mut client, 7).await;
    assert_eq!(proxy.initializations(), before + 1, "one new session");

    // Every answer came once, to its own request.
    client.assert_no_strays();
    let log = client.close().await;
    assert!(log.contains("the server forgot the session"), "{log}");
}
