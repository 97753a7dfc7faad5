//! The client against scripted 2026-07-28 servers: the `server/discover` probe and the fall
//! back to `initialize`, the request fields in `_meta`, and questions asked in results
//! (`input_required`) answered by the handlers and retried.
//!
//! Unix only: its scripted servers are `sh` scripts. The transport's platform-specific part
//! (starting, stopping and reaping a child and what it started) is tested on every platform in
//! `process_tree.rs`.

#![cfg(unix)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpclient::{
    BoxFuture, Client, ClientError, ClientOptions, ElicitationAnswer, ElicitationHandler,
    ElicitationRequest, Handlers, Protocol, StdioCommand, StdioTransport,
};
use serde_json::{json, Value};

const DISCOVERED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"1"}}}}"#;

const LISTED: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"ask","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}],"ttlMs":60000,"cacheScope":"private"}}"#;

fn server(script: &str) -> StdioTransport {
    StdioTransport::spawn(&StdioCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..StdioCommand::default()
    })
    .unwrap()
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

/// Each question: its message, and the problems with the answer before.
type Asked = Arc<Mutex<Vec<(String, Vec<String>)>>>;

/// Answers with the scripted contents in turn, and keeps what it was asked and told.
#[derive(Clone, Default)]
struct Scripted {
    answers: Arc<Mutex<Vec<Value>>>,
    asked: Asked,
}

impl ElicitationHandler for Scripted {
    fn elicit<'a>(
        &'a self,
        request: &'a ElicitationRequest,
        problems: &'a [String],
    ) -> BoxFuture<'a, ElicitationAnswer> {
        self.asked
            .lock()
            .unwrap()
            .push((request.message.clone(), problems.to_vec()));
        let next = self.answers.lock().unwrap().remove(0);
        Box::pin(async move { ElicitationAnswer::Accept(next) })
    }
}

fn options(handler: &Scripted) -> ClientOptions {
    ClientOptions {
        client_info: json!({"name": "t", "version": "1"}),
        handlers: Handlers::default().elicitation(handler.clone()),
        ..ClientOptions::default()
    }
}

#[tokio::test]
async fn a_modern_server_is_found_by_the_probe_and_its_question_answered_on_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let question = r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}},"requestState":"opaque\u0041"}}"#;
    let done = r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"hello Ada"}]}}"#;
    let script = format!(
        "read discover; echo \"$discover\" >> {log}; echo '{DISCOVERED}'; \
         read list; echo '{LISTED}'; \
         read call; echo \"$call\" >> {log}; echo '{question}'; \
         read -r retry; echo \"$retry\" >> {log}; echo '{done}'; read rest",
        log = log.display()
    );
    let handler = Scripted::default();
    // The first answer does not match the requested schema: the user is asked again, and
    // only the valid answer goes back.
    *handler.answers.lock().unwrap() = vec![json!({"name": 5}), json!({"name": "Ada"})];
    let (client, _events) = Client::connect_with(server(&script), options(&handler))
        .await
        .unwrap();
    assert!(client.is_modern());
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().unwrap()["name"], "modern");
    client.list_tools().await.unwrap();
    let outcome = client.call_tool("ask", json!({"q": "name"})).await.unwrap();
    assert_eq!(
        outcome.response.result().unwrap()["content"][0]["text"],
        "hello Ada"
    );
    let sent = lines(&log, 3).await;
    let meta = &sent[0]["params"]["_meta"];
    assert_eq!(sent[0]["method"], "server/discover");
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "t");
    let (call, retry) = (&sent[1], &sent[2]);
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(call["params"].get("inputResponses").is_none());
    assert_ne!(retry["id"], call["id"], "a retry is a new request");
    assert_eq!(retry["params"]["name"], "ask");
    assert_eq!(retry["params"]["arguments"], json!({"q": "name"}));
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"who": {"action": "accept", "content": {"name": "Ada"}}})
    );
    assert_eq!(retry["params"]["requestState"], "opaqueA");
    let asked = handler.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], ("Name?".to_owned(), vec![]));
    assert_eq!(
        asked[1].1,
        vec!["$.name: got integer, want string".to_owned()]
    );
}

#[tokio::test]
async fn a_legacy_server_that_refuses_the_probe_gets_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let script = format!(
        "read discover; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{{\"code\":-32602,\"message\":\"Invalid request parameters\"}}}}'; \
         read init; echo \"$init\" >> {log}; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{}},\"serverInfo\":{{\"name\":\"old\",\"version\":\"1\"}}}}}}'; \
         read initialized; read ping; echo \"$ping\" >> {log}; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}'; read rest",
        log = log.display()
    );
    let (client, _events) = Client::connect(server(&script), json!({"name": "t", "version": "1"}))
        .await
        .unwrap();
    assert!(!client.is_modern());
    assert_eq!(client.protocol_version(), "2025-06-18");
    assert_eq!(client.server_info().unwrap()["name"], "old");
    client.ping().await.unwrap();
    let sent = lines(&log, 2).await;
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(sent[1]["method"], "ping");
    assert!(sent[1].get("params").is_none(), "{}", sent[1]);
}

#[tokio::test]
async fn modern_only_refuses_a_legacy_server_with_a_clear_error() {
    let script = "read discover; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}'; read rest";
    let options = ClientOptions {
        protocol: Protocol::Modern,
        ..ClientOptions::default()
    };
    let err = Client::connect_with(server(script), options)
        .await
        .err()
        .unwrap();
    assert!(matches!(err, ClientError::NotModern { .. }), "{err}");
    assert!(err.to_string().contains("2026-07-28"), "{err}");
}

#[tokio::test]
async fn a_modern_server_that_names_other_versions_is_reported() {
    let script = "read discover; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,\"message\":\"Unsupported protocol version\",\"data\":{\"supported\":[\"2027-01-01\"],\"requested\":\"2026-07-28\"}}}'; read rest";
    let options = ClientOptions {
        protocol: Protocol::Modern,
        ..ClientOptions::default()
    };
    let err = Client::connect_with(server(script), options)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&err, ClientError::UnsupportedVersion { got } if got == "2027-01-01"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_keeps_asking_is_stopped() {
    let question = r#"{"jsonrpc":"2.0","id":ID,"result":{"resultType":"input_required","requestState":"again"}}"#;
    // Every request after the listing gets the same question, whatever its id.
    let script = format!(
        "read discover; echo '{DISCOVERED}'; read list; echo '{LISTED}'; \
         n=3; while read call; do echo '{question}' | sed \"s/ID/$n/\"; n=$((n+1)); done"
    );
    let handler = Scripted::default();
    let (client, _events) = Client::connect_with(server(&script), options(&handler))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    let err = client.call_tool("ask", json!({})).await.err().unwrap();
    assert!(
        err.to_string().contains(&format!(
            "asked for input {} times",
            mcpclient::MAX_INPUT_ROUNDS
        )),
        "{err}"
    );
    assert!(handler.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_modern_server_too_slow_for_the_probe_is_probed_again_when_it_refuses_initialize() {
    // Silent to the first probe (still starting, say); it refuses initialize with the versions
    // it speaks, and answers the second probe. Each line is answered by its method (the
    // client also sends `notifications/cancelled` for the probe that timed out), so the
    // script never answers a request before it was sent.
    let discovered = DISCOVERED.replace(r#""id":1"#, r#""id":3"#);
    let script = format!(
        "probes=0; while read line; do case \"$line\" in \
         *'\"method\":\"server/discover\"'*) probes=$((probes+1)); \
           if [ $probes -ge 2 ]; then echo '{discovered}'; fi;; \
         *'\"method\":\"initialize\"'*) \
           echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{{\"code\":-32022,\"message\":\"Unsupported protocol version\",\"data\":{{\"supported\":[\"2026-07-28\"],\"requested\":\"2025-11-25\"}}}}}}';; \
         esac; done"
    );
    let options = ClientOptions {
        timeout: Duration::from_secs(2),
        ..ClientOptions::default()
    };
    let (client, _events) = Client::connect_with(server(&script), options)
        .await
        .unwrap();
    assert!(client.is_modern());
    assert_eq!(client.server_info().unwrap()["name"], "modern");
}

#[tokio::test]
async fn a_refusal_that_names_2026_07_28_is_answered_by_probing_again() {
    let discovered = DISCOVERED.replace(r#""id":1"#, r#""id":2"#);
    let script = format!(
        "read discover; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{{\"code\":-32022,\"message\":\"Unsupported protocol version\",\"data\":{{\"supported\":[\"2026-07-28\"],\"requested\":\"2026-07-28\"}}}}}}'; \
         read again; echo '{discovered}'; read rest"
    );
    let (client, _events) = Client::connect_with(server(&script), ClientOptions::default())
        .await
        .unwrap();
    assert!(client.is_modern());
}

/// A modern server without `list_changed` whose tool lists are fresh for `ttl_ms`; it writes
/// each method it is sent to `log`.
fn listing_server(ttl_ms: u64, log: &Path) -> StdioTransport {
    let script = format!(
        r#"while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{{"jsonrpc":"2.0","id":\([0-9]*\),"method":"\([^"]*\)".*/\1/p')
  method=$(printf '%s\n' "$line" | sed -n 's/^{{"jsonrpc":"2.0","id":[0-9]*,"method":"\([^"]*\)".*/\1/p')
  echo "$method" >> {log}
  case $method in
    server/discover) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{}}}}}}}}\n' "$id";;
    tools/list) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"resultType":"complete","tools":[{{"name":"t","inputSchema":{{"type":"object"}}}}],"ttlMs":{ttl_ms},"cacheScope":"public"}}}}\n' "$id";;
    tools/call) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"resultType":"complete","content":[]}}}}\n' "$id";;
  esac
done"#,
        log = log.display()
    );
    server(&script)
}

#[tokio::test]
async fn a_tool_list_past_its_ttl_is_listed_again_before_a_call_and_a_fresh_one_is_not() {
    // ttlMs 0 counts as MIN_TOOLS_TTL: the call at once uses the list, the one after it does not.
    for (ttl_ms, lists) in [(0, 2), (600_000, 1)] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("methods");
        let (client, _events) =
            Client::connect_with(listing_server(ttl_ms, &log), ClientOptions::default())
                .await
                .unwrap();
        client.list_tools().await.unwrap();
        client.call_tool("t", json!({})).await.unwrap();
        tokio::time::sleep(mcpclient::MIN_TOOLS_TTL + Duration::from_millis(100)).await;
        client.call_tool("t", json!({})).await.unwrap();
        let methods = std::fs::read_to_string(&log).unwrap();
        let listed = methods.lines().filter(|m| *m == "tools/list").count();
        assert_eq!(listed, lists, "ttlMs {ttl_ms}: {methods}");
    }
}
