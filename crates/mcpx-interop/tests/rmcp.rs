//! mcpclient against a server written with the Rust SDK (`rmcp`, the `rmcp-peer` binary of
//! this crate), over stdio and over Streamable HTTP on loopback, every frame checked. rmcp 3.11
//! speaks 2026-07-28 beside the 2025 versions: the client's probe finds it modern, and the
//! legacy era is tested by asking for it.

mod common;

use mcpclient::{Client, ClientError, ClientOptions, Protocol};
use serde_json::json;

use common::{connect, rmcp_peer, spec, stdio, HttpPeer};

async fn list_call_and_reject(client: &Client) {
    let (tools, warnings) = client.list_tools().await.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let sum = tools
        .iter()
        .find(|t| t.name() == "sum")
        .expect("the sum tool");
    assert!(sum.input_error().is_none(), "{:?}", sum.input_error());
    let answer = client
        .call_tool("sum", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    assert_eq!(
        answer.response.result().unwrap()["content"][0]["text"],
        "42"
    );
    let err = client
        .call_tool("sum", json!({"a": 1.5, "b": 2}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidArguments { violations, .. } if violations == &["$.a: got number, want integer"]),
        "{err}"
    );
    client.ping().await.unwrap();
}

fn legacy() -> ClientOptions {
    ClientOptions {
        protocol: Protocol::Legacy,
        ..ClientOptions::default()
    }
}

#[tokio::test]
async fn over_stdio() {
    let Some(_) = spec() else { return };
    let (client, _events) =
        connect(stdio(&rmcp_peer(), &["stdio"]), ClientOptions::default()).await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert!(client.is_modern());
    assert_eq!(client.server_info().unwrap()["name"], "rmcp");
    list_call_and_reject(&client).await;
}

#[tokio::test]
async fn over_stdio_in_the_legacy_era() {
    let Some(_) = spec() else { return };
    let (client, _events) = connect(stdio(&rmcp_peer(), &["stdio"]), legacy()).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().unwrap()["name"], "rmcp");
    list_call_and_reject(&client).await;
}

#[tokio::test]
async fn over_streamable_http_on_loopback() {
    let Some(_) = spec() else { return };
    let peer = HttpPeer::start(&rmcp_peer(), &["http"], &[], "/mcp").await;
    let (transport, session) = peer.transport();
    let (client, _events) = connect(transport, ClientOptions::default()).await;
    assert!(client.is_modern());
    assert!(session.id().is_none(), "2026-07-28 has no sessions");
    list_call_and_reject(&client).await;
}

#[tokio::test]
async fn over_streamable_http_in_the_legacy_era() {
    let Some(_) = spec() else { return };
    let peer = HttpPeer::start(&rmcp_peer(), &["http"], &[], "/mcp").await;
    let (transport, session) = peer.transport();
    let (client, _events) = connect(transport, legacy()).await;
    assert!(session.id().is_some());
    list_call_and_reject(&client).await;
}

#[tokio::test]
async fn a_forgotten_session_is_started_again() {
    let Some(_) = spec() else { return };
    let peer = HttpPeer::start(&rmcp_peer(), &["http"], &[], "/mcp").await;
    let (transport, session) = peer.transport();
    let (client, _events) = connect(transport, legacy()).await;
    client.list_tools().await.unwrap();
    let first = session.id().unwrap();
    // End the session behind the client's back: the server now answers 404 for it.
    let ended = reqwest::Client::new()
        .delete(&peer.url)
        .header("mcp-session-id", &first)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    let answer = client
        .call_tool("sum", json!({"a": 20, "b": 22}))
        .await
        .unwrap();
    assert_eq!(
        answer.response.result().unwrap()["content"][0]["text"],
        "42"
    );
    assert_eq!(session.reinitializations(), 1);
    assert_ne!(session.id().unwrap(), first);
    // The new session goes on working.
    client.ping().await.unwrap();
}

/// A `count` call of 6 steps through a proxy that cuts every connection after the first step,
/// in `protocol`'s era: the first step, and every step after it.
async fn cut_after_the_first_step(protocol: Protocol) -> (f64, Vec<f64>) {
    let peer = HttpPeer::start(&rmcp_peer(), &["http"], &[], "/mcp").await;
    let upstream = peer
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    let proxy = common::Proxy::to(upstream).await;
    let (transport, _session) = common::http_to(&format!("http://{}/mcp", proxy.address));
    let options = ClientOptions {
        protocol,
        ..ClientOptions::default()
    };
    let (client, _events) = connect(transport, options).await;
    assert_eq!(client.is_modern(), protocol != Protocol::Legacy);
    client.list_tools().await.unwrap();
    let (options, mut progress) = mcpclient::CallOptions::with_progress();
    let call = client.call_tool_with("count", json!({"steps": 6}), options);
    let cut = async {
        let first = progress.recv().await.unwrap();
        assert!(proxy.cut() > 0, "a stream was open");
        first
    };
    let (done, first) = tokio::join!(call, cut);
    let done = done.unwrap();
    assert!(
        done.response.result_text().contains("counted to 6"),
        "{}",
        done.response.result_text()
    );
    let mut later = Vec::new();
    while let Ok(p) = progress.try_recv() {
        later.push(p["progress"].as_f64().unwrap());
    }
    (first["progress"].as_f64().unwrap(), later)
}

#[tokio::test]
async fn a_stream_cut_mid_call_is_resumed_with_last_event_id() {
    let Some(_) = spec() else { return };
    let (first, later) = cut_after_the_first_step(Protocol::Legacy).await;
    assert_eq!(first, 1.0);
    assert_eq!(
        later,
        [2.0, 3.0, 4.0, 5.0, 6.0],
        "the steps after the cut arrive on the resumed stream"
    );
}

#[tokio::test]
async fn a_stream_cut_mid_call_is_sent_again_under_a_new_id_in_the_modern_era() {
    let Some(_) = spec() else { return };
    let (first, later) = cut_after_the_first_step(Protocol::Auto).await;
    assert_eq!(first, 1.0);
    // No resumption in 2026-07-28: the request lost with the stream is sent again, and counts
    // from the start. (Steps of the first try that were already on their way when the cut came,
    // on a slow machine, arrive before it, in order.)
    let again = later
        .iter()
        .position(|&p| p == 1.0)
        .unwrap_or_else(|| panic!("the request was not sent again: {later:?}"));
    assert_eq!(later[again..], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{later:?}");
    assert!(
        later[..again]
            .iter()
            .zip(2..)
            .all(|(&p, n)| p == f64::from(n)),
        "{later:?}"
    );
}
