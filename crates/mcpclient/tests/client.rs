//! The client against scripted servers: version negotiation, what the server asks of the
//! client, and re-listing when tools change.
//!
//! Unix only: its scripted servers are `sh` scripts. The transport's platform-specific part
//! (starting, stopping and reaping a child and what it started) is tested on every platform in
//! `process_tree.rs`.

#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use mcpclient::{Client, ClientError, ClientOptions, Protocol, StdioCommand, StdioTransport};
use serde_json::{json, Value};

const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}"#;

/// These servers speak the `initialize` handshake only (and would take the 2026-07-28 probe for
/// it): the client is told not to probe.
fn legacy() -> ClientOptions {
    ClientOptions {
        client_info: json!({"name": "t", "version": "1"}),
        protocol: Protocol::Legacy,
        ..ClientOptions::default()
    }
}

fn server(script: &str) -> StdioTransport {
    StdioTransport::spawn(&StdioCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..StdioCommand::default()
    })
    .unwrap()
}

/// The next event, waited for (bounded).
async fn next_event(
    events: &mut tokio::sync::mpsc::Receiver<mcpclient::Event>,
) -> mcpclient::Event {
    tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("an event in time")
        .expect("the queue is open")
}

/// Waits (bounded) until `path` has `n` lines, and returns them parsed.
async fn lines(path: &Path, n: usize) -> Vec<Value> {
    for _ in 0..250 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= n {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} never had {n} lines", path.display());
}

#[tokio::test]
async fn an_older_version_is_accepted_and_server_requests_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let script = format!(
        "read init; echo '{INIT_ANSWER}'; read initialized; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}}'; read pong; echo \"$pong\" >> {log}; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":\"s2\",\"method\":\"sampling/createMessage\",\"params\":{{}}}}'; read no; echo \"$no\" >> {log}; \
         read ping; echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}'; read rest",
        log = log.display()
    );
    let (client, _events) = Client::connect_with(server(&script), legacy())
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-06-18");
    let answers = lines(&log, 2).await;
    assert_eq!(
        answers[0],
        json!({"jsonrpc": "2.0", "id": "p1", "result": {}})
    );
    assert_eq!(answers[1]["id"], "s2");
    assert_eq!(answers[1]["error"]["code"], -32601);
    client.ping().await.unwrap();
}

#[tokio::test]
async fn an_unknown_protocol_version_is_refused() {
    let script = "read init; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}'; read rest";
    let err = Client::connect_with(server(script), legacy())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&err, ClientError::UnsupportedVersion { got } if got == "1999-01-01"),
        "{err}"
    );
}

#[tokio::test]
async fn tools_are_re_listed_and_recompiled_when_the_server_says_they_changed() {
    let tool = |name: &str| {
        format!(r#"{{"name":"{name}","inputSchema":{{"type":"object","required":["x"]}}}}"#)
    };
    let script = format!(
        "read init; echo '{INIT_ANSWER}'; read initialized; \
         read list; echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"tools\":[{a}],\"nextCursor\":\"p2\"}}}}'; \
         read page2; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"tools\":[{b}]}}}}'; \
         echo '{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}}'; \
         read relist; echo '{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"tools\":[{c}]}}}}'; read rest",
        a = tool("a"),
        b = tool("b"),
        c = tool("c"),
    );
    let (client, _events) = Client::connect_with(server(&script), legacy())
        .await
        .unwrap();
    let (first, _) = client.list_tools().await.unwrap();
    let names = |tools: &[mcpclient::Tool]| {
        tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&first), ["a", "b"], "both pages");
    for _ in 0..250 {
        if names(&client.tools()) == ["c"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(names(&client.tools()), ["c"]);
    // The new list's schema is the one enforced.
    let err = client.call_tool("c", json!({})).await.unwrap_err();
    assert!(
        matches!(err, ClientError::InvalidArguments { ref violations, .. } if violations == &["$: missing property 'x'"]),
        "{err}"
    );
}

/// An elicitation handler that must never be asked.
struct NeverAsked(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl mcpclient::ElicitationHandler for NeverAsked {
    fn elicit<'a>(
        &'a self,
        _request: &'a mcpclient::ElicitationRequest,
        _problems: &'a [String],
    ) -> mcpclient::BoxFuture<'a, mcpclient::ElicitationAnswer> {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { mcpclient::ElicitationAnswer::Decline })
    }
}

#[tokio::test]
async fn a_malformed_requested_schema_is_refused_without_asking_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let nested = r#"{"type":"object","properties":{"address":{"type":"object","properties":{"street":{"type":"string"}}}}}"#;
    let remote = r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json","type":"string"}}}"#;
    let script = format!(
        "read init; echo '{INIT_ANSWER}'; read initialized; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{{\"message\":\"m\",\"requestedSchema\":{nested}}}}}'; read -r a; printf '%s\\n' \"$a\" >> {log}; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":\"e2\",\"method\":\"elicitation/create\",\"params\":{{\"message\":\"m\",\"requestedSchema\":{remote}}}}}'; read -r b; printf '%s\\n' \"$b\" >> {log}; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":\"e3\",\"method\":\"elicitation/create\",\"params\":{{\"mode\":\"url\",\"message\":\"m\",\"url\":\"https://example.com\",\"elicitationId\":\"x\"}}}}'; read -r c; printf '%s\\n' \"$c\" >> {log}; \
         read rest",
        log = log.display()
    );
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let options = mcpclient::ClientOptions {
        handlers: mcpclient::Handlers::default().elicitation(NeverAsked(asked.clone())),
        ..legacy()
    };
    let (_client, _events) = Client::connect_with(server(&script), options)
        .await
        .unwrap();
    let answers = lines(&log, 3).await;
    assert_eq!(answers[0]["id"], "e1");
    assert_eq!(answers[0]["error"]["code"], -32602);
    assert_eq!(
        answers[0]["error"]["data"]["violations"],
        json!([
            r#"requestedSchema.properties.address.type: enum: got "object", want one of "string", "number", "integer", "boolean", "array""#
        ])
    );
    assert_eq!(answers[1]["error"]["code"], -32602);
    assert!(
        answers[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unresolved reference"),
        "{}",
        answers[1]
    );
    assert_eq!(answers[2]["error"]["code"], -32602);
    assert!(
        !asked.load(std::sync::atomic::Ordering::SeqCst),
        "the user was never asked"
    );
}

#[tokio::test]
async fn caught_up_waits_for_the_notifications_a_response_overtook() {
    // A notification, then the response: the response reaches its call at once, the
    // notification goes through the event queue behind it.
    let script = format!(
        "read init; echo '{INIT_ANSWER}'; read initialized; read call; \
         echo '{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"error\",\"data\":\"before\"}}}}'; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}'; read rest"
    );
    let (client, mut events) = Client::connect_with(server(&script), legacy())
        .await
        .unwrap();
    client
        .request("ping", None, mcpclient::CallOptions::default())
        .await
        .unwrap();
    let client = std::sync::Arc::new(client);
    let caught_up = tokio::spawn({
        let client = client.clone();
        async move { client.caught_up().await }
    });
    let first = next_event(&mut events).await;
    assert!(
        matches!(&first, mcpclient::Event::Notification(f) if f.text().contains("before")),
        "{first:?}"
    );
    assert!(!caught_up.is_finished(), "done before the mark was reached");
    let second = next_event(&mut events).await;
    assert!(matches!(second, mcpclient::Event::Mark(_)), "{second:?}");
    assert!(!caught_up.is_finished(), "done while the mark is held");
    drop(second);
    tokio::time::timeout(Duration::from_secs(10), caught_up)
        .await
        .expect("done once the mark is dropped")
        .unwrap();
}
