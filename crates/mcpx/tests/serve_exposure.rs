//! `"exposure"` through `mcpx serve` over stdio, every frame checked against the protocol
//! schema: the search tools instead of a server's tools, `alwaysExpose`, search, describe and
//! the list change it brings, call (valid and rejected arguments, answered as a direct call),
//! and `auto` on a small gateway; then the Python SDK's client through both fronts, two sessions
//! at once over HTTP, each told only of its own list's changes.

mod common;

use std::collections::HashMap;

use common::{config, result_text, spec, Downstream, MCPX};
use mcpx_interop::{peer_file, python, run_client, HttpPeer};
use serde_json::{json, Value};

/// The demo server as `demo` (all), a second one as `hidden` behind search, `gateway` the
/// gateway section.
fn with_hidden(dir: &std::path::Path, gateway: &str) -> std::path::PathBuf {
    let hidden = json!({"command": MCPX, "args": ["demo-server"], "exposure": "search"});
    config(dir, &[], &format!(r#""hidden": {hidden}"#), gateway)
}

/// A tool result's first text.
fn text(frame: &mcpclient::Frame) -> String {
    let value = frame.value().unwrap();
    value["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn search_describe_and_call_reach_the_hidden_tools() {
    if spec().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = with_hidden(dir.path(), r#"{"alwaysExpose": ["hidden__echo"]}"#);
    let mut client = Downstream::start(&config, &[], json!({})).await;
    // The gateway's three tools, the demo server's six, and the one always exposed.
    let names = client.tool_names().await;
    assert_eq!(names[..3], ["search_tools", "describe_tool", "call_tool"]);
    assert!(
        names[3..9].iter().all(|n| n.starts_with("demo__")),
        "{names:?}"
    );
    assert_eq!(names[9..], ["hidden__echo"]);

    let found = client
        .call(
            "search_tools",
            json!({"query": "add two numbers", "server": "hidden"}),
        )
        .await
        .value()
        .unwrap();
    assert_eq!(
        found["result"]["structuredContent"]["tools"][0],
        json!({"name": "hidden__get-sum", "server": "hidden", "description": "Adds two integers.", "arguments": ["a", "b"]})
    );
    let all = client
        .call(
            "search_tools",
            json!({"query": "add two numbers", "limit": 1}),
        )
        .await
        .value()
        .unwrap();
    assert_eq!(
        all["result"]["structuredContent"]["tools"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let unknown = client
        .call("search_tools", json!({"query": "sum", "server": "nowhere"}))
        .await;
    assert!(
        text(&unknown).starts_with("unknown server 'nowhere'"),
        "{unknown}"
    );
    let bad = client.call("search_tools", json!({"limit": 0})).await;
    let bad = bad.value().unwrap();
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid arguments for tool 'search_tools': "),
        "{bad}"
    );

    client.seen.clear();
    let described = client
        .call("describe_tool", json!({"name": "hidden__get-sum"}))
        .await;
    let definition: Value = serde_json::from_str(&text(&described)).unwrap();
    assert_eq!(definition["name"], "hidden__get-sum");
    assert_eq!(definition["inputSchema"]["required"], json!(["a", "b"]));
    let changes: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect();
    assert_eq!(changes.len(), 1, "{:?}", client.seen);
    // In the servers' order, after the directly listed tools of the server before it.
    let names = client.tool_names().await;
    assert_eq!(names[9..], ["hidden__get-sum", "hidden__echo"]);
    // Described again: the list stays as it is, and nobody is told.
    client.seen.clear();
    client
        .call("describe_tool", json!({"name": "hidden__get-sum"}))
        .await;
    client
        .call("describe_tool", json!({"name": "demo__get-sum"}))
        .await;
    assert!(client.seen.is_empty(), "{:?}", client.seen);
    let missing = client
        .call("describe_tool", json!({"name": "hidden__nothing"}))
        .await;
    assert!(text(&missing).starts_with("unknown tool 'hidden__nothing'"));

    let summed = client
        .call(
            "call_tool",
            json!({"name": "hidden__get-sum", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert_eq!(
        result_text(&summed),
        r#"{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5}}"#
    );
    // Rejected as the direct call is, with the real tool's name.
    let through = json!({"name": "hidden__get-sum", "arguments": {"a": 2, "b": "three"}});
    let rejected = client.call("call_tool", through).await.value().unwrap();
    let direct = client
        .call("hidden__get-sum", json!({"a": 2, "b": "three"}))
        .await;
    assert_eq!(rejected["error"], direct.value().unwrap()["error"]);
    assert_eq!(
        rejected["error"]["data"]["violations"],
        json!(["$.b: got string, want integer"])
    );
    let nowhere = client
        .call("call_tool", json!({"name": "hidden__nothing"}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        nowhere["error"]["message"],
        "unknown tool 'hidden__nothing'"
    );
    client.assert_no_strays();
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_lists_a_small_gateway_and_all_lists_no_search_tools() {
    if spec().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", r#"{"exposure": "auto"}"#);
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let names = client.tool_names().await;
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("demo__")), "{names:?}");
    let not_listed = client
        .call("search_tools", json!({"query": "sum"}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        not_listed["error"]["message"],
        "unknown tool 'search_tools'"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_hides_a_large_gateway_but_a_server_set_to_all() {
    if spec().is_none() {
        return;
    }
    // Seven demo servers of six tools each: 42, past AUTO_MAX_TOOLS.
    const { assert!(7 * 6 > mcpgateway::AUTO_MAX_TOOLS) };
    let dir = tempfile::tempdir().unwrap();
    let mut extra: Vec<String> = (1..6)
        .map(|i| {
            let server = json!({"command": MCPX, "args": ["demo-server"]});
            format!(r#""d{i}": {server}"#)
        })
        .collect();
    let kept = json!({"command": MCPX, "args": ["demo-server"], "exposure": "all"});
    extra.push(format!(r#""kept": {kept}"#));
    let config = config(
        dir.path(),
        &[],
        &extra.join(", "),
        r#"{"exposure": "auto"}"#,
    );
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let names = client.tool_names().await;
    assert_eq!(names[..3], ["search_tools", "describe_tool", "call_tool"]);
    assert_eq!(names.len(), 3 + 6, "{names:?}");
    assert!(
        names[3..].iter().all(|n| n.starts_with("kept__")),
        "{names:?}"
    );
    let found = client
        .call(
            "search_tools",
            json!({"query": "a tiny png image", "limit": 50}),
        )
        .await
        .value()
        .unwrap();
    let hits = found["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(hits, 7, "one tiny-image a server: {found}");
    client.close().await;
}

/// The Python client's report: each step's object, by session and step.
type Report = HashMap<(String, String), Value>;

/// Runs `peers/sdk_client_exposure.py` through the gateway's `front` (`stdio` or `http`).
async fn python_client(front: &str) -> Option<Report> {
    let python = python()?;
    let dir = tempfile::tempdir().unwrap();
    let config = with_hidden(dir.path(), "{}").display().to_string();
    let mut args = vec![peer_file("sdk_client_exposure.py"), front.to_owned()];
    let _gateway = match front {
        "stdio" => {
            args.extend([MCPX, "--config", &config, "serve"].map(str::to_owned));
            None
        }
        _ => {
            let listen = ["--config", &config, "serve", "--http", "127.0.0.1:0"];
            let gateway = HttpPeer::start(MCPX, &listen, &[], "/mcp").await;
            args.push(gateway.url.clone());
            Some(gateway)
        }
    };
    let out = run_client(&python, &args).await;
    let report = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            let key = (
                v["session"].as_str().unwrap().to_owned(),
                v["step"].as_str().unwrap().to_owned(),
            );
            (key, v)
        })
        .collect();
    Some(report)
}

fn step<'r>(report: &'r Report, session: &str, step: &str) -> &'r Value {
    &report[&(session.to_owned(), step.to_owned())]
}

fn listed(value: &Value) -> Vec<&str> {
    value["names"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// What session `a` of the Python client must have seen, whatever the front.
fn assert_searcher(report: &Report) {
    let before = listed(step(report, "a", "listed"));
    assert_eq!(before[..3], ["search_tools", "describe_tool", "call_tool"]);
    assert!(
        !before.iter().any(|n| n.starts_with("hidden__")),
        "{before:?}"
    );
    let found = step(report, "a", "searched");
    assert_eq!(found["structured"]["tools"][0]["name"], "hidden__get-sum");
    assert_eq!(
        found["structured"]["tools"][0]["arguments"],
        json!(["a", "b"])
    );
    let described: Value =
        serde_json::from_str(step(report, "a", "described")["text"].as_str().unwrap()).unwrap();
    assert_eq!(described["inputSchema"]["required"], json!(["a", "b"]));
    let after = step(report, "a", "relisted");
    assert_eq!(after["changes"], 1);
    assert_eq!(listed(after).last().copied(), Some("hidden__get-sum"));
    assert_eq!(step(report, "a", "called")["structured"], json!({"sum": 5}));
    let rejected = step(report, "a", "rejected");
    assert_eq!(rejected["code"], -32602);
    assert_eq!(
        rejected["message"],
        "invalid arguments for tool 'hidden__get-sum': $.b: got string, want integer"
    );
    assert_eq!(step(report, "a", "direct")["structured"], json!({"sum": 9}));
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_sdk_client_searches_describes_and_calls_over_stdio() {
    let Some(report) = python_client("stdio").await else {
        return;
    };
    assert_searcher(&report);
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_sdk_clients_over_http_are_each_told_only_of_their_own_list() {
    let Some(report) = python_client("http").await else {
        return;
    };
    assert_searcher(&report);
    // `b` was connected all along and was told nothing of `a`'s describing; its list kept none
    // of `a`'s tools.
    let untouched = step(&report, "b", "after-a");
    assert_eq!(untouched["changes"], 0);
    assert_eq!(listed(untouched), listed(step(&report, "b", "listed")));
    assert!(!listed(untouched).contains(&"hidden__get-sum"));
    // Its own describing changed its own list, and not `a`'s.
    let own = step(&report, "b", "relisted");
    assert_eq!(own["changes"], 1);
    assert_eq!(listed(own).last().copied(), Some("hidden__echo"));
    assert!(!listed(own).contains(&"hidden__get-sum"));
    let end = step(&report, "a", "end");
    assert_eq!(end["changes"], 1);
    assert!(!listed(end).contains(&"hidden__echo"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_request_gets_the_search_tools_and_no_list_of_its_own() {
    use mcpclient::{Frame, Transport};
    use mcpspec::{spec_or_skip, Conversation, Side};
    let Some(spec) = spec_or_skip("2026-07-28") else {
        return;
    };
    let mut conversation = Conversation::new(&spec);
    let dir = tempfile::tempdir().unwrap();
    let mut transport = common::serve_stdio(&with_hidden(dir.path(), "{}"));
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "0"}});
    // Each request's answer, and whatever came before it.
    let mut request = async |id: u64, method: &str, mut params: Value| -> (Value, Vec<Value>) {
        params["_meta"] = meta.clone();
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        conversation.assert_valid(Side::Client, &message);
        transport.send(&Frame::from_value(&message)).await.unwrap();
        let mut before = Vec::new();
        loop {
            let frame = tokio::time::timeout(common::FRAME_WAIT, transport.receive())
                .await
                .expect("an answer in time")
                .expect("mcpx is there")
                .unwrap();
            let value = frame.value().unwrap();
            conversation.assert_valid(Side::Server, &value);
            if value.get("method").is_none() && value["id"] == id {
                return (value, before);
            }
            before.push(value);
        }
    };
    let (listed, _) = request(1, "tools/list", json!({})).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names[..3], ["search_tools", "describe_tool", "call_tool"]);
    assert!(
        !names.iter().any(|n| n.starts_with("hidden__")),
        "{names:?}"
    );
    let described = json!({"name": "describe_tool", "arguments": {"name": "hidden__get-sum"}});
    let (answer, before) = request(2, "tools/call", described).await;
    assert!(before.is_empty(), "{before:?}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"hidden__get-sum\""), "{text}");
    let called = json!({"name": "call_tool", "arguments": {"name": "hidden__get-sum", "arguments": {"a": 1, "b": 2}}});
    let (answer, _) = request(3, "tools/call", called).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"sum": 3}));
    let (listed, _) = request(4, "tools/list", json!({})).await;
    assert_eq!(
        listed["result"]["tools"].as_array().map(Vec::len),
        Some(names.len())
    );
}
