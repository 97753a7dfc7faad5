//! The gateway between eras, with servers built on the official 2026-07-28 SDK (Python `mcp`
//! 2.x, `peers/sdk26/python_server.py`): a legacy client reaches a server that speaks only
//! 2026-07-28 (its `input_required` questions become `elicitation/create` and
//! `sampling/createMessage` requests to the client), a modern client reaches it modern both
//! ways, and a modern client reaches a legacy-only build of it (its `elicitation/create`
//! becomes an `input_required` result). Every frame between client and gateway is checked
//! against the version it names.

mod common;

use common::spec;
use mcpclient::{Client, ClientOptions, ElicitationAnswer, Handlers, Protocol};
use mcpx_interop::{peer_file, python26, HttpPeer, Paris, ScriptedUser};
use serde_json::{json, Value};

/// The gateway over HTTP in front of the Python SDK 2.x server started with `args`, unprefixed.
async fn gateway(dir: &std::path::Path, args: &[&str]) -> Option<HttpPeer> {
    Some(common::serve_http(&python_behind(dir, args)?).await)
}

async fn client(gateway: &HttpPeer, protocol: Protocol, user: &ScriptedUser) -> Client {
    let options = ClientOptions {
        handlers: Handlers::default()
            .elicitation(user.clone())
            .sampling(Paris),
        protocol,
        ..ClientOptions::default()
    };
    common::http_client(gateway, options).await.0
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
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
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
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
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
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
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

/// POSTs one 2026-07-28 request to the gateway and returns its JSON answer, with the HTTP
/// status added as `httpStatus`.
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
    let status = answer.status().as_u16();
    let body = answer.text().await.unwrap();
    // JSON, or an event stream whose last message is the answer.
    let last = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .next_back()
        .map(str::trim)
        .unwrap_or(body.trim())
        .to_owned();
    let mut answer: Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {body}"));
    answer["httpStatus"] = json!(status);
    answer
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
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
    assert_eq!(refused["httpStatus"], 400, "2026-07-28 answers it with 400");
}

/// The gateway's config in `dir`: the Python SDK 2.x server started with `args`, unprefixed.
fn python_behind(dir: &std::path::Path, args: &[&str]) -> Option<std::path::PathBuf> {
    let python = python26()?;
    let mut argv = vec![peer_file("sdk26/python_server.py")];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let server = json!({"command": python, "args": argv, "prefix": ""});
    let path = dir.join("mcpx.json");
    std::fs::write(&path, json!({"mcpServers": {"py": server}}).to_string()).unwrap();
    Some(path)
}

/// Runs an SDK client peer to the end: its steps (one JSON object a line on stdout), by name.
fn steps(program: &str, args: &[&str]) -> std::collections::HashMap<String, Value> {
    let out = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some((v["step"].as_str()?.to_owned(), v["result"].clone())))
        .collect()
}

fn said(steps: &std::collections::HashMap<String, Value>, step: &str) -> String {
    steps[step]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{step}: {steps:?}"))
        .to_owned()
}

/// The official SDK clients, speaking 2026-07-28 to the gateway (stdio and HTTP), reach a server
/// that speaks only 2025-11-25: its questions come to them as input_required results.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn sdk_clients_of_2026_07_28_reach_a_legacy_only_server_through_the_gateway() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (Some(config), Some(python)) = (python_behind(dir.path(), &["--legacy-only"]), python26())
    else {
        return;
    };
    let Some((node, ts_client)) = mcpx_interop::ts26("ts_client.mjs") else {
        return;
    };
    let python = python.display().to_string();
    let py_client = peer_file("sdk26/python_client.py");
    let config = config.display().to_string();
    let tools = "echo,ask_color,sample_capital";
    let stdio = ["--", common::MCPX, "--config", &config, "serve"];
    let gateway = common::serve_http(std::path::Path::new(&config)).await;
    let with = |client: &'static str, program: &str, script: &str, reach: &[&str]| {
        let mut args = vec![script, "--mode", "auto", "--tools", tools];
        args.extend(reach);
        (client, steps(program, &args))
    };
    let url = ["--url", gateway.url.as_str()];
    let runs = [
        with("python over stdio", &python, &py_client, &stdio),
        with("python over http", &python, &py_client, &url),
        with("typescript over stdio", &node, &ts_client, &stdio),
        with("typescript over http", &node, &ts_client, &url),
    ];
    for (client, steps) in runs {
        assert_eq!(
            steps["connected"]["protocolVersion"], "2026-07-28",
            "{client}: {steps:?}"
        );
        assert_eq!(said(&steps, "tools/call echo"), "hi");
        assert_eq!(said(&steps, "tools/call ask_color"), "You like teal.");
        assert!(
            said(&steps, "tools/call sample_capital").contains("Paris"),
            "{steps:?}"
        );
    }
}

/// The Python SDK client in the 2025 era reaches a server that speaks only 2026-07-28.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn a_legacy_sdk_client_reaches_a_modern_only_server_through_the_gateway() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (Some(config), Some(python)) = (python_behind(dir.path(), &["--modern-only"]), python26())
    else {
        return;
    };
    let python = python.display().to_string();
    let config = config.display().to_string();
    let steps = steps(
        &python,
        &[
            &peer_file("sdk26/python_client.py"),
            "--mode",
            "legacy",
            "--tools",
            "ask_name,sample_capital",
            "--",
            common::MCPX,
            "--config",
            &config,
            "serve",
        ],
    );
    assert_eq!(
        steps["connected"]["protocolVersion"], "2025-11-25",
        "{steps:?}"
    );
    assert!(
        said(&steps, "tools/call ask_name").contains("Hello, Ada"),
        "{steps:?}"
    );
    assert!(
        said(&steps, "tools/call sample_capital").contains("Paris"),
        "{steps:?}"
    );
}
