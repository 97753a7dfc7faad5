//! mcpclient against the MCP reference server (`@modelcontextprotocol/server-everything` from
//! npm, pinned in `scripts/fetch-interop-peers`), over stdio and over Streamable HTTP on
//! loopback, every frame checked by mcpspec.

mod common;

use mcpclient::{CallOptions, Client, ClientError, ClientOptions};
use serde_json::json;

use common::{connect, everything, everything_over_http, spec, stdio};

/// Lists the tools, calls `get-sum` and `get-structured-content`, and has invalid calls
/// rejected before they leave the client.
async fn list_call_and_reject(client: &Client) {
    assert_eq!(client.protocol_version(), "2025-11-25");
    let (tools, warnings) = client.list_tools().await.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    for name in ["get-sum", "get-structured-content", "echo"] {
        assert!(tools.iter().any(|t| t.name() == name), "no {name}");
    }
    let broken: Vec<_> = tools
        .iter()
        .filter_map(|t| t.input_error().map(|e| (t.name(), e)))
        .collect();
    assert!(
        broken.is_empty(),
        "every reference schema compiles: {broken:?}"
    );

    let sum = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(
        sum.response.result_text().contains('5'),
        "{}",
        sum.response.result_text()
    );

    let weather = client
        .call_tool("get-structured-content", json!({"location": "Chicago"}))
        .await
        .unwrap();
    assert!(weather.warnings.is_empty(), "{:?}", weather.warnings);
    assert!(weather.response.result().unwrap()["structuredContent"]["temperature"].is_number());

    let err = client
        .call_tool("get-sum", json!({"a": "two", "b": 3}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidArguments { violations, .. } if violations == &["$.a: got string, want number"]),
        "{err}"
    );
    let err = client
        .call_tool("get-structured-content", json!({"location": "Paris"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidArguments { violations, .. }
            if violations == &[r#"$.location: enum: got "Paris", want one of "New York", "Chicago", "Los Angeles""#]),
        "{err}"
    );
    // The server still answers after the rejected calls.
    client.ping().await.unwrap();
}

#[tokio::test]
async fn over_stdio() {
    let (Some(bin), Some(_)) = (everything(), spec()) else {
        return;
    };
    let (client, _events) = connect(
        stdio("node", &[&bin.display().to_string(), "stdio"]),
        ClientOptions::default(),
    )
    .await;
    list_call_and_reject(&client).await;
}

#[tokio::test]
async fn over_streamable_http_on_loopback() {
    let Some(_) = spec() else { return };
    let Some(peer) = everything_over_http().await else {
        return;
    };
    let (transport, session) = peer.transport();
    let (client, _events) = connect(transport, ClientOptions::default()).await;
    assert!(
        session.id().is_some(),
        "the reference server gives sessions"
    );
    assert_eq!(session.protocol_version().as_deref(), Some("2025-11-25"));
    list_call_and_reject(&client).await;
}

#[tokio::test]
async fn progress_reaches_the_call_over_http() {
    let Some(_) = spec() else { return };
    let Some(peer) = everything_over_http().await else {
        return;
    };
    let (transport, _session) = peer.transport();
    let (client, _events) = connect(transport, ClientOptions::default()).await;
    client.list_tools().await.unwrap();
    let (options, mut progress) = CallOptions::with_progress();
    let done = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            options,
        )
        .await
        .unwrap();
    assert!(
        done.response.result_text().contains("completed"),
        "{}",
        done.response.result_text()
    );
    let mut steps = Vec::new();
    while let Ok(p) = progress.try_recv() {
        steps.push(p["progress"].as_f64().unwrap());
    }
    assert_eq!(steps, [1.0, 2.0, 3.0]);
}

struct Llm;

impl mcpclient::SamplingHandler for Llm {
    fn create_message<'a>(
        &'a self,
        params: &'a serde_json::Value,
        _during: Option<&'a str>,
    ) -> mcpclient::BoxFuture<'a, Result<serde_json::Value, mcpclient::ErrorObject>> {
        let asked = params["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Box::pin(async move {
            Ok(
                json!({"role": "assistant", "model": "scripted", "stopReason": "endTurn",
                "content": {"type": "text", "text": format!("scripted answer to: {asked}")}}),
            )
        })
    }
}

struct Folders;

impl mcpclient::RootsHandler for Folders {
    fn list_roots<'a>(
        &'a self,
        _params: &'a serde_json::Value,
        _during: Option<&'a str>,
    ) -> mcpclient::BoxFuture<'a, Result<serde_json::Value, mcpclient::ErrorObject>> {
        Box::pin(async {
            Ok(json!({"roots": [{"uri": "file:///work/project", "name": "project"}]}))
        })
    }
}

#[tokio::test]
async fn the_servers_questions_reach_the_handlers() {
    let (Some(bin), Some(_)) = (everything(), spec()) else {
        return;
    };
    let user = common::ScriptedUser::answering(vec![
        // Not sent: `integer` is over its maximum of 100.
        mcpclient::ElicitationAnswer::Accept(json!({"name": "Ada", "integer": 101})),
        mcpclient::ElicitationAnswer::Accept(json!({"name": "Ada", "check": true, "integer": 7})),
    ]);
    let options = ClientOptions {
        handlers: mcpclient::Handlers::default()
            .elicitation(user.clone())
            .sampling(Llm)
            .roots(Folders),
        ..ClientOptions::default()
    };
    let (client, _events) = connect(
        stdio("node", &[&bin.display().to_string(), "stdio"]),
        options,
    )
    .await;
    client.list_tools().await.unwrap();
    for tool in [
        "trigger-elicitation-request",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        common::wait_for_tool(&client, tool).await;
    }

    let elicited = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    let text = elicited.response.result_text();
    assert!(
        text.contains("- Name: Ada") && text.contains("- Favorite Integer: 7"),
        "{text}"
    );
    let asked = user.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[1].1, ["$.integer: maximum: got 101, want 100"]);

    let sampled = client
        .call_tool("trigger-sampling-request", json!({"prompt": "hello"}))
        .await
        .unwrap();
    assert!(
        sampled
            .response
            .result_text()
            .contains("scripted answer to:"),
        "{}",
        sampled.response.result_text()
    );

    let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(
        roots
            .response
            .result_text()
            .contains("file:///work/project"),
        "{}",
        roots.response.result_text()
    );
}
