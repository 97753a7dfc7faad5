//! mcpclient against servers written with the 2026-07-28 SDKs (Python `mcp` 2.x and the
//! TypeScript v2 packages, `peers/sdk26/`), over stdio and Streamable HTTP, every frame checked
//! against the version it names: the probe finds them modern, their questions arrive in
//! `input_required` results and are answered by the same handlers (and the same validation) as
//! `elicitation/create`, and a legacy-only build of the same server gets the handshake.

mod common;

use mcpclient::{Client, ClientOptions, ElicitationAnswer, Handlers, Protocol};
use serde_json::json;

use common::{connect, python26, spec, stdio, ts26, HttpPeer, Paris, ScriptedUser};

fn options(user: &ScriptedUser) -> ClientOptions {
    ClientOptions {
        handlers: Handlers::default()
            .elicitation(user.clone())
            .sampling(Paris),
        ..ClientOptions::default()
    }
}

fn text(outcome: &mcpclient::CallOutcome) -> String {
    let result = outcome.response.result().unwrap();
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The echo, elicitation and sampling tools of a peer, in the era the client found.
async fn ask_and_sample(client: &Client, user: &ScriptedUser) {
    client.list_tools().await.unwrap();
    let echoed = client
        .call_tool("echo", json!({"text": "a\u{e9}b"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "a\u{e9}b");
    let greeted = client.call_tool("ask_name", json!({})).await.unwrap();
    assert!(text(&greeted).contains("Hello, Ada"), "{}", text(&greeted));
    // The first answer did not match the requested schema: the user was asked again, and only
    // the valid answer reached the server.
    let asked = user.asked();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[1].1, ["$.name: got integer, want string"]);
    let sampled = client.call_tool("sample_capital", json!({})).await.unwrap();
    assert!(text(&sampled).contains("Paris"), "{}", text(&sampled));
}

fn ada() -> ScriptedUser {
    ScriptedUser::answering(vec![
        ElicitationAnswer::Accept(json!({"name": 7})),
        ElicitationAnswer::Accept(json!({"name": "Ada"})),
    ])
}

#[tokio::test]
async fn python_sdk_over_stdio_is_spoken_to_in_2026_07_28() {
    let (Some(_), Some(python)) = (spec(), python26()) else {
        return;
    };
    let script = common::peer_file("sdk26/python_server.py");
    let user = ada();
    let (client, _events) = connect(
        stdio(&python.display().to_string(), &[&script]),
        options(&user),
    )
    .await;
    assert!(client.is_modern());
    assert_eq!(client.protocol_version(), "2026-07-28");
    ask_and_sample(&client, &user).await;
}

#[tokio::test]
async fn python_sdk_modern_only_over_http() {
    let (Some(_), Some(python)) = (spec(), python26()) else {
        return;
    };
    let script = common::peer_file("sdk26/python_server.py");
    let peer = HttpPeer::start(
        &python.display().to_string(),
        &[&script, "--http", "0", "--modern-only"],
        &[],
        "/mcp",
    )
    .await;
    let (transport, session) = peer.transport();
    let user = ada();
    let (client, _events) = connect(transport, options(&user)).await;
    assert!(client.is_modern());
    assert!(session.id().is_none());
    ask_and_sample(&client, &user).await;
}

#[tokio::test]
async fn python_sdk_legacy_only_gets_the_handshake_and_asks_with_requests() {
    let (Some(_), Some(python)) = (spec(), python26()) else {
        return;
    };
    let script = common::peer_file("sdk26/python_server.py");
    let user = ScriptedUser::answering(vec![ElicitationAnswer::Accept(json!({"color": "teal"}))]);
    let (client, _events) = connect(
        stdio(&python.display().to_string(), &[&script, "--legacy-only"]),
        options(&user),
    )
    .await;
    assert!(!client.is_modern());
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.list_tools().await.unwrap();
    // The SDK's own dependency asks with elicitation/create in the legacy era.
    let liked = client.call_tool("ask_color", json!({})).await.unwrap();
    assert_eq!(text(&liked), "You like teal.");
}

#[tokio::test]
async fn typescript_sdk_over_stdio_and_http() {
    let (Some(_), Some((node, script))) = (spec(), ts26("ts_server.mjs")) else {
        return;
    };
    let user = ada();
    let (client, _events) = connect(stdio(&node, &[&script]), options(&user)).await;
    assert!(client.is_modern());
    ask_and_sample(&client, &user).await;

    let peer = HttpPeer::start(
        &node,
        &[&script, "--http", "0", "--modern-only"],
        &[],
        "/mcp",
    )
    .await;
    let (transport, _session) = peer.transport();
    let user = ada();
    let (client, _events) = connect(transport, options(&user)).await;
    assert!(client.is_modern());
    ask_and_sample(&client, &user).await;
}

#[tokio::test]
async fn typescript_sdk_modern_only_refuses_a_legacy_client_with_its_versions() {
    let (Some(_), Some((node, script))) = (spec(), ts26("ts_server.mjs")) else {
        return;
    };
    let legacy = ClientOptions {
        protocol: Protocol::Legacy,
        ..ClientOptions::default()
    };
    let err = Client::connect_with(stdio(&node, &[&script, "--modern-only"]), legacy)
        .await
        .err()
        .expect("a modern-only server refuses initialize");
    assert!(
        err.to_string().contains("2026-07-28") || err.to_string().contains("-32022"),
        "{err}"
    );
}
