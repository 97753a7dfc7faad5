//! The gateway between eras, with servers built on the official 2026-07-28 SDK (Python `mcp`
//! 2.x, `peers/sdk26/python_server.py`): a legacy client reaches a server that speaks only
//! 2026-07-28 (its `input_required` questions become `elicitation/create` and
//! `sampling/createMessage` requests to the client), a modern client reaches it modern both
//! ways, and a modern client reaches a legacy-only build of it (its `elicitation/create`
//! becomes an `input_required` result). Every frame between client and gateway is checked
//! against the version it names.

mod common;

use common::spec;
use mcpclient::{
    BoxFuture, Client, ClientOptions, ElicitationAnswer, HandlerError, Handlers, HttpConfig,
    HttpTransport, Protocol, SamplingHandler,
};
use mcpspec::Recording;
use mcpx_interop::{peer_file, python26, HttpPeer, ScriptedUser};
use serde_json::{json, Value};

/// Answers every sampling request with "Paris".
struct Paris;

impl SamplingHandler for Paris {
    fn create_message<'a>(
        &'a self,
        _params: &'a Value,
        _during: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(async {
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                "model": "scripted", "stopReason": "endTurn"}),
            )
        })
    }
}

/// The gateway over HTTP in front of the Python SDK 2.x server started with `args`, unprefixed.
async fn gateway(dir: &std::path::Path, args: &[&str]) -> Option<HttpPeer> {
    let python = python26()?;
    let mut argv = vec![peer_file("sdk26/python_server.py")];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let server = json!({"command": python, "args": argv, "prefix": ""});
    let path = dir.join("mcpx.json");
    std::fs::write(&path, json!({"mcpServers": {"py": server}}).to_string()).unwrap();
    Some(common::serve_http(&path).await)
}

async fn client(gateway: &HttpPeer, protocol: Protocol, user: &ScriptedUser) -> Client {
    let transport = HttpTransport::new(&HttpConfig {
        url: gateway.url.clone(),
        headers: Vec::new(),
    })
    .unwrap();
    let options = ClientOptions {
        handlers: Handlers::default()
            .elicitation(user.clone())
            .sampling(Paris),
        protocol,
        ..ClientOptions::default()
    };
    let (client, _events) =
        Client::connect_with(Recording::new(spec().unwrap(), transport), options)
            .await
            .unwrap();
    client.list_tools().await.unwrap();
    client
}

fn text(outcome: &mcpclient::CallOutcome) -> String {
    let result = outcome.response.result().unwrap();
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn ada() -> ScriptedUser {
    ScriptedUser::answering(vec![ElicitationAnswer::Accept(json!({"name": "Ada"}))])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_client_answers_a_modern_only_servers_questions_as_requests() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(gateway) = gateway(dir.path(), &["--modern-only"]).await else {
        return;
    };
    let user = ada();
    let client = client(&gateway, Protocol::Legacy, &user).await;
    assert!(!client.is_modern());
    let greeted = client.call_tool("ask_name", json!({})).await.unwrap();
    assert!(text(&greeted).contains("Hello, Ada"), "{}", text(&greeted));
    assert_eq!(user.asked().len(), 1);
    assert_eq!(user.asked()[0].0, "What is your name?");
    let sampled = client.call_tool("sample_capital", json!({})).await.unwrap();
    assert!(text(&sampled).contains("Paris"), "{}", text(&sampled));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_client_reaches_a_modern_only_server_modern_both_ways() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(gateway) = gateway(dir.path(), &["--modern-only"]).await else {
        return;
    };
    let user = ada();
    let client = client(&gateway, Protocol::Auto, &user).await;
    assert!(client.is_modern(), "the gateway answers server/discover");
    let greeted = client.call_tool("ask_name", json!({})).await.unwrap();
    assert!(text(&greeted).contains("Hello, Ada"), "{}", text(&greeted));
    assert_eq!(user.asked().len(), 1);
    let sampled = client.call_tool("sample_capital", json!({})).await.unwrap();
    assert!(text(&sampled).contains("Paris"), "{}", text(&sampled));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_client_answers_a_legacy_only_servers_question_in_a_result() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(gateway) = gateway(dir.path(), &["--legacy-only"]).await else {
        return;
    };
    // The first answer does not match the requested schema: the client's own check asks the
    // user again before anything is sent.
    let user = ScriptedUser::answering(vec![
        ElicitationAnswer::Accept(json!({"color": 1})),
        ElicitationAnswer::Accept(json!({"color": "teal"})),
    ]);
    let client = client(&gateway, Protocol::Auto, &user).await;
    assert!(client.is_modern());
    let liked = client.call_tool("ask_color", json!({})).await.unwrap();
    assert_eq!(text(&liked), "You like teal.");
    assert_eq!(user.asked().len(), 2);
}
