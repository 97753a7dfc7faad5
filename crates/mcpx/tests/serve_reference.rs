//! `mcpx serve` in front of the MCP reference server (npm, over Streamable HTTP on loopback):
//! its prompts, resources and completions routed through the gateway, and its questions to the
//! client (sampling, roots, elicitation) passed on to the gateway's client and back. Every
//! frame between the test and the gateway is checked against the protocol schema.

mod common;

use std::time::Duration;

use common::{spec, Downstream};
use mcpx_interop::everything_over_http;
use serde_json::{json, Value};

/// What the test's client answers when the gateway asks it something.
fn answer(request: &Value) -> Value {
    match request["method"].as_str().unwrap() {
        "sampling/createMessage" => json!({"role": "assistant", "model": "scripted",
            "content": {"type": "text", "text": "the scripted answer"}}),
        "roots/list" => json!({"roots": [{"uri": "file:///work/project", "name": "project"}]}),
        "elicitation/create" => {
            json!({"action": "accept", "content": {"name": "Ada", "check": true, "integer": 7}})
        }
        other => panic!("unexpected request {other}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn the_reference_server_over_http_through_the_gateway() {
    let (Some(_), Some(reference)) = (spec(), everything_over_http().await) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let web = format!(r#""web": {{"url": "{}"}}"#, reference.url);
    let config = common::config(dir.path(), &[], &web, "");
    let capabilities = json!({"sampling": {}, "roots": {"listChanged": true}, "elicitation": {}});
    let mut client = Downstream::start(&config, &[], capabilities).await;

    let prompts = client
        .request_answering("prompts/list", json!({}), answer)
        .await;
    let names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"web__simple-prompt"), "{names:?}");
    let prompt = client
        .request_answering("prompts/get", json!({"name": "web__simple-prompt"}), answer)
        .await;
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "This is a simple prompt without arguments."
    );
    let completed = client
        .request_answering(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "web__completable-prompt"},
                "argument": {"name": "department", "value": "E"}}),
            answer,
        )
        .await;
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["Engineering"])
    );

    let listed = client
        .request_answering("resources/list", json!({}), answer)
        .await;
    let uri = "demo://resource/static/document/architecture.md";
    assert!(listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["uri"] == uri));
    let read = client
        .request_answering("resources/read", json!({"uri": uri}), answer)
        .await;
    assert_eq!(read["result"]["contents"][0]["uri"], uri);
    let templated = client
        .request_answering(
            "resources/read",
            json!({"uri": "demo://resource/dynamic/text/7"}),
            answer,
        )
        .await;
    assert_eq!(
        templated["result"]["contents"][0]["uri"],
        "demo://resource/dynamic/text/7"
    );
    let missing = client
        .request_answering("resources/read", json!({"uri": "nowhere://x"}), answer)
        .await;
    // The one server offering resources answers for a URI nobody lists: its own error.
    assert!(missing["error"]["code"].is_i64(), "{missing}");

    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let sampled = client
        .request_answering(
            "tools/call",
            call("web__trigger-sampling-request", json!({"prompt": "hi"})),
            answer,
        )
        .await;
    assert!(
        sampled.to_string().contains("the scripted answer"),
        "{sampled}"
    );
    let roots = client
        .request_answering("tools/call", call("web__get-roots-list", json!({})), answer)
        .await;
    assert!(
        roots.to_string().contains("file:///work/project"),
        "{roots}"
    );
    let elicited = client
        .request_answering(
            "tools/call",
            call("web__trigger-elicitation-request", json!({})),
            answer,
        )
        .await;
    assert!(elicited.to_string().contains("- Name: Ada"), "{elicited}");
    let asked: Vec<&str> = client
        .seen
        .iter()
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str())
        .collect();
    for method in ["sampling/createMessage", "roots/list", "elicitation/create"] {
        assert!(asked.contains(&method), "{method} in {asked:?}");
    }

    // Logs from the server reach the client.
    client
        .request_answering("logging/setLevel", json!({"level": "debug"}), answer)
        .await;
    client
        .request_answering(
            "tools/call",
            call("web__toggle-simulated-logging", json!({})),
            answer,
        )
        .await;
    let mut logged = false;
    for _ in 0..100 {
        if client
            .seen
            .iter()
            .any(|m| m["method"] == "notifications/message")
        {
            logged = true;
            break;
        }
        let ping = json!({});
        client.request_answering("ping", ping, answer).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(logged, "no log message arrived: {:?}", client.seen);
}
