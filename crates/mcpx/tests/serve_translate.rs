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

/// POSTs one 2026-07-28 request to the gateway and returns its JSON answer.
async fn post_modern(
    gateway: &HttpPeer,
    id: u64,
    method: &str,
    params: Value,
    capabilities: Value,
) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let answer = reqwest::Client::new()
        .post(&gateway.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
        .send()
        .await
        .unwrap();
    let body = answer.text().await.unwrap();
    // JSON, or an event stream whose last message is the answer.
    let last = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .next_back()
        .map(str::trim)
        .unwrap_or(body.trim())
        .to_owned();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_servers_question_keeps_its_key_and_a_missing_capability_is_the_servers_to_judge()
{
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(gateway) = gateway(dir.path(), &["--modern-only"]).await else {
        return;
    };
    let asked = post_modern(
        &gateway,
        1,
        "tools/call",
        json!({"name": "ask_name", "arguments": {}}),
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"], "elicitation/create",
        "the server's key is passed on: {asked}"
    );
    // A client that cannot sample: the server is told so, and answers -32021 itself.
    let refused = post_modern(
        &gateway,
        2,
        "tools/call",
        json!({"name": "sample_capital", "arguments": {}}),
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}
