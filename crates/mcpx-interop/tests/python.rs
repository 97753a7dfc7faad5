//! mcpclient against a server written with the Python SDK (`mcp` from PyPI, pinned in
//! `peers/requirements.txt`; the server is `peers/python_peer.py`), over stdio and over
//! Streamable HTTP on loopback, every frame checked.

mod common;

use mcpclient::{CallOptions, Client, ClientError, ClientOptions, ElicitationAnswer, Handlers};
use serde_json::json;

use common::{connect, peer_file, python, spec, stdio, ScriptedUser};

/// Structured output matches its schema; an invalid call never leaves the client.
async fn structured_and_rejected(client: &Client) {
    let (tools, warnings) = client.list_tools().await.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<_> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        ["add", "count", "greet", "wait", "summarize", "header"]
    );
    let add = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(add.warnings.is_empty(), "{:?}", add.warnings);
    assert_eq!(
        add.response.result().unwrap()["structuredContent"],
        json!({"sum": 5})
    );
    let err = client
        .call_tool("add", json!({"a": "2", "b": 3}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidArguments { violations, .. } if violations == &["$.a: got string, want integer"]),
        "{err}"
    );
}

/// Progress reaches the call; an elicitation whose first answer breaks the requested schema is
/// asked again with the reason, and only the valid answer is sent.
async fn progress_and_elicitation(client: &Client, user: &ScriptedUser) {
    client.list_tools().await.unwrap();
    let (options, mut progress) = CallOptions::with_progress();
    let counted = client
        .call_tool_with("count", json!({"steps": 3}), options)
        .await
        .unwrap();
    assert!(counted.response.result_text().contains("counted to 3"));
    let mut messages = Vec::new();
    while let Ok(p) = progress.try_recv() {
        messages.push(p["message"].as_str().unwrap().to_owned());
    }
    assert_eq!(messages, ["step 1", "step 2", "step 3"]);

    let greeted = client.call_tool("greet", json!({})).await.unwrap();
    assert!(
        greeted.response.result_text().contains("hello Ada, 36"),
        "{}",
        greeted.response.result_text()
    );
    let asked = user.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], ("Who are you?".to_owned(), vec![]));
    assert_eq!(asked[1].1, ["$.age: minimum: got -1, want 0"]);
}

fn user() -> ScriptedUser {
    ScriptedUser::answering(vec![
        ElicitationAnswer::Accept(json!({"name": "Ada", "age": -1})),
        ElicitationAnswer::Accept(json!({"name": "Ada", "age": 36})),
    ])
}

fn options(user: &ScriptedUser) -> ClientOptions {
    ClientOptions {
        handlers: Handlers::default().elicitation(user.clone()),
        ..ClientOptions::default()
    }
}

#[tokio::test]
async fn over_stdio() {
    let (Some(python), Some(_)) = (python(), spec()) else {
        return;
    };
    let python = python.display().to_string();
    let user = user();
    let (client, _events) = connect(
        stdio(&python, &[&peer_file("python_peer.py"), "stdio"]),
        options(&user),
    )
    .await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    structured_and_rejected(&client).await;
    progress_and_elicitation(&client, &user).await;
}

#[tokio::test]
async fn over_streamable_http_on_loopback() {
    let Some(_) = spec() else { return };
    let Some(peer) = common::python_over_http().await else {
        return;
    };
    let user = user();
    let (transport, session) = peer.transport();
    let (client, _events) = connect(transport, options(&user)).await;
    assert!(session.id().is_some());
    structured_and_rejected(&client).await;
    progress_and_elicitation(&client, &user).await;
    // The configured headers go with every request.
    let header = client
        .call_tool("header", json!({"name": "x-mcpx-test"}))
        .await
        .unwrap();
    assert_eq!(
        header.response.result().unwrap()["content"][0]["text"],
        "interop"
    );
}

#[tokio::test]
async fn resources_and_prompts_pass_through() {
    let (Some(python), Some(_)) = (python(), spec()) else {
        return;
    };
    let python = python.display().to_string();
    let (client, _events) = connect(
        stdio(&python, &[&peer_file("python_peer.py"), "stdio"]),
        ClientOptions::default(),
    )
    .await;
    let resources = client
        .list_all("resources/list", "resources")
        .await
        .unwrap();
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0]["uri"], "note://greeting");
    let read = client
        .request(
            "resources/read",
            Some(json!({"uri": "note://greeting"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        read.result().unwrap()["contents"][0]["text"],
        "hi from python"
    );
    let prompts = client.list_all("prompts/list", "prompts").await.unwrap();
    assert_eq!(prompts[0]["name"], "review");
    let prompt = client
        .request(
            "prompts/get",
            Some(json!({"name": "review", "arguments": {"code": "x = 1"}})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt.result().unwrap()["messages"][0]["content"]["text"],
        "Please review: x = 1"
    );
    // The reserved methods are refused, so no call escapes argument enforcement.
    let err = client
        .request(
            "tools/call",
            Some(json!({"name": "add"})),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Reserved(_)), "{err}");
}

#[tokio::test]
async fn a_500_and_slow_headers_end_the_call_with_a_clear_error() {
    let Some(_) = spec() else { return };
    let Some(peer) = common::python_over_http().await else {
        return;
    };
    let proxy = common::FaultyProxy::to(&peer.url).await;
    let (transport, _session) = common::http_to(&proxy.url);
    let (client, _events) = connect(transport, ClientOptions::default()).await;
    client.list_tools().await.unwrap();
    let add = |a: i64| client.call_tool("add", json!({"a": a, "b": 1}));

    proxy.fail_next(1, 500);
    let err = add(1).await.unwrap_err();
    assert!(
        err.to_string().contains("HTTP 500") && err.to_string().contains("injected failure"),
        "{err}"
    );
    assert_eq!(
        add(2).await.unwrap().response.result().unwrap()["structuredContent"]["sum"],
        3
    );

    let within = std::time::Duration::from_secs(1);
    proxy.delay_next(within * 3);
    let options = CallOptions {
        timeout: Some(within),
        ..CallOptions::default()
    };
    let err = client
        .call_tool_with("add", json!({"a": 3, "b": 1}), options)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no answer within 1s"), "{err}");
    assert_eq!(
        add(4).await.unwrap().response.result().unwrap()["structuredContent"]["sum"],
        5
    );
}
