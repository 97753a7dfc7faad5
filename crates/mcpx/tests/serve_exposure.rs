//! `"exposure"` through `mcpx serve` over stdio, every frame checked against the protocol
//! schema: the search tools instead of a server's tools, `alwaysExpose`, search, describe and
//! the list change it brings, call (valid and rejected arguments, answered as a direct call),
//! and `auto` on a small gateway.

mod common;

use common::{config, result_text, spec, Downstream, MCPX};
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
