//! `mcpx serve` speaking MCP 2026-07-28 to its clients, beside the legacy versions, on both
//! fronts: discovery, the header and `_meta` checks with the spec's codes, calls through to the
//! demo server, and a legacy server's elicitation turned into `input_required` and resumed by
//! the client's retry (MRTR). Every frame is checked against the 2026-07-28 schema.

mod common;

use common::{config, MCPX};
use mcpclient::{Frame, Transport};
use mcpspec::{spec_or_skip, Conversation, Side, Spec};
use reqwest::StatusCode;
use serde_json::{json, Value};

const MODERN: &str = "2026-07-28";

/// The 2026-07-28 schema, loaded once.
fn spec26() -> Option<&'static Spec> {
    static SPEC: std::sync::OnceLock<Option<Spec>> = std::sync::OnceLock::new();
    SPEC.get_or_init(|| spec_or_skip(MODERN)).as_ref()
}

/// The per-request `_meta` of a client declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "0"}})
}

/// `params` with the `_meta` of a client declaring `capabilities`.
fn with_meta(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    params
}

/// A 2026-07-28 client over HTTP: one POST per request, every frame checked.
struct Modern {
    http: reqwest::Client,
    url: String,
}

/// What came back for one POST: its status, its final message and what preceded it.
struct Answer {
    status: StatusCode,
    message: Value,
    before: Vec<Value>,
}

impl Modern {
    fn new(url: &str) -> Modern {
        Modern {
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    /// POSTs `request` with the standard headers (`Mcp-Name` from the body), replaced or
    /// removed (`None`) by `headers`.
    async fn post_with(&self, request: &Value, headers: &[(&str, Option<&str>)]) -> Answer {
        let mut all: Vec<(String, String)> = vec![
            ("mcp-protocol-version".into(), MODERN.into()),
            (
                "mcp-method".into(),
                request["method"].as_str().unwrap().into(),
            ),
        ];
        let name = request["params"]["name"]
            .as_str()
            .or(request["params"]["uri"].as_str());
        if let Some(name) = name {
            all.push(("mcp-name".into(), name.into()));
        }
        for (name, value) in headers {
            all.retain(|(n, _)| n != name);
            if let Some(value) = value {
                all.push(((*name).into(), (*value).into()));
            }
        }
        let mut post = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(request.to_string());
        for (name, value) in &all {
            post = post.header(name, value);
        }
        let response = post.send().await.unwrap();
        let status = response.status();
        let sse = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream");
        let text = response.text().await.unwrap();
        let mut messages: Vec<Value> = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim()).unwrap())
                .collect()
        } else {
            vec![serde_json::from_str(&text).unwrap()]
        };
        let message = messages.pop().unwrap();
        if let Some(spec) = spec26() {
            let mut conversation = Conversation::new(spec);
            // Some requests here are invalid on purpose: only the answers must be valid.
            let _ = conversation.check(Side::Client, request);
            for frame in messages.iter().chain([&message]) {
                conversation.assert_valid(Side::Server, frame);
            }
        }
        Answer {
            status,
            message,
            before: messages,
        }
    }

    async fn post(&self, request: &Value) -> Answer {
        self.post_with(request, &[]).await
    }

    /// A request `id` of `method` with `params` and the `_meta` of a client declaring
    /// `capabilities`.
    async fn request(&self, id: u64, method: &str, params: Value, capabilities: Value) -> Answer {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": with_meta(params, capabilities)});
        self.post(&request).await
    }
}

/// Asserts `answer` is refused with `status`, JSON-RPC `code`, for request `id`.
fn assert_refused(answer: &Answer, status: StatusCode, code: i64, id: u64) {
    assert_eq!(answer.status, status, "{}", answer.message);
    assert_eq!(answer.message["error"]["code"], code, "{}", answer.message);
    assert_eq!(answer.message["id"], id, "{}", answer.message);
}

const ELICITS: fn() -> Value = || json!({"elicitation": {"form": {}}});

#[tokio::test(flavor = "multi_thread")]
async fn discover_and_the_checks_of_a_modern_request_over_http() {
    let Some(_) = spec26() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &[], "", "")).await;
    let client = Modern::new(&peer.url);

    let discovered = client
        .request(1, "server/discover", json!({}), json!({}))
        .await;
    assert_eq!(discovered.status, StatusCode::OK);
    let result = &discovered.message["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!([
            MODERN,
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcpx"
    );
    assert_eq!(result["cacheScope"], "private");
    assert!(result["ttlMs"].is_u64());
    assert!(result["instructions"].is_string());

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": meta(json!({}))}});
    let no_method = client.post_with(&list, &[("mcp-method", None)]).await;
    assert_refused(&no_method, StatusCode::BAD_REQUEST, -32020, 2);
    let wrong_method = client
        .post_with(&list, &[("mcp-method", Some("prompts/list"))])
        .await;
    assert_refused(&wrong_method, StatusCode::BAD_REQUEST, -32020, 2);
    let other_version = client
        .post_with(&list, &[("mcp-protocol-version", Some("2025-11-25"))])
        .await;
    assert_refused(&other_version, StatusCode::BAD_REQUEST, -32020, 2);
    let no_version = client
        .post_with(&list, &[("mcp-protocol-version", None)])
        .await;
    assert_refused(&no_version, StatusCode::BAD_REQUEST, -32020, 2);
    // A stale session id on a modern request is ignored.
    let stale = client
        .post_with(
            &list,
            &[("mcp-session-id", Some("0123456789abcdef0123456789abcdef"))],
        )
        .await;
    assert_eq!(stale.status, StatusCode::OK);
    assert_eq!(stale.message["result"]["resultType"], "complete");
    assert_eq!(stale.message["result"]["cacheScope"], "private");

    let no_capabilities = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}});
    let refused = client.post(&no_capabilities).await;
    assert_refused(&refused, StatusCode::BAD_REQUEST, -32602, 3);

    let ancient = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let refused = client
        .post_with(&ancient, &[("mcp-protocol-version", Some("1900-01-01"))])
        .await;
    assert_refused(&refused, StatusCode::BAD_REQUEST, -32022, 4);
    assert_eq!(refused.message["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(refused.message["error"]["data"]["supported"][0], MODERN);

    for (id, method) in [(5, "ping"), (6, "logging/setLevel"), (7, "no/such")] {
        let refused = client.request(id, method, json!({}), json!({})).await;
        assert_refused(&refused, StatusCode::NOT_FOUND, -32601, id);
    }

    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": with_meta(json!({"name": "demo__get-sum", "arguments": {"a": 2, "b": 3}}), json!({}))});
    let no_name = client.post_with(&call, &[("mcp-name", None)]).await;
    assert_refused(&no_name, StatusCode::BAD_REQUEST, -32020, 8);
    let other_name = client
        .post_with(&call, &[("mcp-name", Some("demo__echo"))])
        .await;
    assert_refused(&other_name, StatusCode::BAD_REQUEST, -32020, 8);
    // The base64 sentinel form is decoded before the comparison: "demo__get-sum".
    let encoded = client
        .post_with(
            &call,
            &[("mcp-name", Some("=?base64?ZGVtb19fZ2V0LXN1bQ==?="))],
        )
        .await;
    assert_eq!(encoded.status, StatusCode::OK, "{}", encoded.message);
    let result = &encoded.message["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["structuredContent"]["sum"], 5);

    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let sessionless = client
            .http
            .request(method.clone(), &client.url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", MODERN)
            .send()
            .await
            .unwrap();
        assert_eq!(
            sessionless.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
    }
}

/// The `input_required` answer's one input request: its key and params.
fn the_question(answer: &Answer) -> (String, Value, String) {
    let result = &answer.message["result"];
    assert_eq!(result["resultType"], "input_required", "{}", answer.message);
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{result}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let state = result["requestState"].as_str().unwrap().to_owned();
    (key.clone(), request["params"].clone(), state)
}

/// A retry of `book-table` on `tool` answering `key` with `response` under `state`.
fn retry(id: u64, tool: &str, key: &str, response: Value, state: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": with_meta(json!({
        "name": tool, "arguments": {"restaurant": "Chez Test"},
        "inputResponses": {key: response}, "requestState": state}), ELICITS())})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_servers_elicitation_becomes_input_required_and_the_retry_resumes_it() {
    let Some(_) = spec26() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &[], "", "")).await;
    let client = Modern::new(&peer.url);
    let book = |id| {
        client.request(
            id,
            "tools/call",
            json!({"name": "demo__book-table", "arguments": {"restaurant": "Chez Test"}}),
            ELICITS(),
        )
    };

    let asked = book(1).await;
    assert_eq!(asked.status, StatusCode::OK);
    let (key, question, state) = the_question(&asked);
    assert_eq!(question["message"], "How many, and when?");
    assert_eq!(
        question["requestedSchema"]["properties"]["party"]["maximum"],
        12
    );
    assert!(state.len() >= 32, "{state}");

    // An answer that violates the requested schema never reaches the server; the call stays
    // parked under the same state.
    let invalid = json!({"action": "accept", "content": {"party": 99, "time": "19:00"}});
    let refused = client
        .post(&retry(2, "demo__book-table", &key, invalid, &state))
        .await;
    assert_eq!(
        refused.message["error"]["code"], -32602,
        "{}",
        refused.message
    );
    assert_eq!(refused.message["id"], 2);
    let lines = refused.message["error"]["data"]["violations"].to_string();
    assert!(lines.contains("party"), "{lines}");
    // Bound to its tool: the state presented on another tool is refused, and still parked.
    let elsewhere = client
        .post(&retry(
            3,
            "demo__echo",
            &key,
            json!({"action": "decline"}),
            &state,
        ))
        .await;
    assert_eq!(elsewhere.message["error"]["code"], -32602);
    assert!(elsewhere.message["error"]["message"]
        .as_str()
        .unwrap()
        .contains("belongs to tools/call of 'demo__book-table'"));

    let valid = json!({"action": "accept", "content": {"party": 4, "time": "20:00"}});
    let done = client
        .post(&retry(4, "demo__book-table", &key, valid.clone(), &state))
        .await;
    assert_eq!(done.status, StatusCode::OK);
    let result = &done.message["result"];
    assert_eq!(result["resultType"], "complete", "{}", done.message);
    assert_eq!(
        result["content"][0]["text"],
        "booked Chez Test for 4 at 20:00"
    );
    assert_eq!(done.message["id"], 4);

    // Used once: the same state again, or one never issued, is unknown.
    for (id, state) in [(5, state.as_str()), (6, "not-a-state")] {
        let unknown = client
            .post(&retry(id, "demo__book-table", &key, valid.clone(), state))
            .await;
        assert_eq!(unknown.message["error"]["code"], -32602);
        assert!(unknown.message["error"]["message"]
            .as_str()
            .unwrap()
            .contains("start the call again"));
    }

    // Without the elicitation capability the server's question is declined.
    let declined = client
        .request(
            7,
            "tools/call",
            json!({"name": "demo__book-table", "arguments": {"restaurant": "Chez Test"}}),
            json!({}),
        )
        .await;
    assert_eq!(
        declined.message["result"]["content"][0]["text"],
        "not booked (decline)"
    );

    let transcript = std::fs::read_to_string(dir.path().join("demo.jsonl")).unwrap();
    assert!(
        !transcript.contains("99"),
        "the invalid answer reached the server"
    );
    // (The gateway's own server/discover probe of the legacy server names the version.)
    assert!(
        transcript
            .lines()
            .filter(|l| !l.contains(r#""method":"server/discover""#))
            .all(|l| !l.contains("io.modelcontextprotocol/protocolVersion")),
        "the per-request _meta went upstream"
    );
}

/// `client` books a table for `who` (request `id`).
async fn book(client: &Modern, id: u64, who: &str) -> Answer {
    let params = json!({"name": "solo__book-table", "arguments": {"restaurant": who}});
    client.request(id, "tools/call", params, ELICITS()).await
}

/// `client` answers question `key` under `state`: a party of `party` for `who`.
async fn resume(client: &Modern, key: String, state: String, party: u64, who: &str) -> Answer {
    let answer = json!({"action": "accept", "content": {"party": party, "time": "18:00"}});
    let mut request = retry(2, "solo__book-table", &key, answer, &state);
    request["params"]["arguments"]["restaurant"] = json!(who);
    client.post(&request).await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_modern_clients_elicit_at_once_and_each_gets_its_own_question_and_result() {
    let Some(_) = spec26() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A process per conversation: two calls of the same tool ask at once.
    let extra = json!({"solo": {"command": MCPX, "args": ["demo-server"],
        "isolation": "per-session"}})
    .to_string();
    let peer = common::serve_http(&config(dir.path(), &[], &extra[1..extra.len() - 1], "")).await;
    // A legacy client beside them, in a session of its own.
    let transport = mcpclient::HttpTransport::new(&mcpclient::HttpConfig {
        url: peer.url.clone(),
        headers: Vec::new(),
        auth: None,
    })
    .unwrap();
    let legacy_spec = common::spec().unwrap();
    let (legacy, _events) = mcpclient::Client::connect_with(
        mcpspec::Recording::new(legacy_spec, transport),
        mcpclient::ClientOptions::default(),
    )
    .await
    .unwrap();
    legacy.list_tools().await.unwrap();
    let (alice, bob) = (Modern::new(&peer.url), Modern::new(&peer.url));
    let (a, b) = tokio::join!(book(&alice, 1, "Alice's"), book(&bob, 1, "Bob's"));
    let ((key_a, _, state_a), (key_b, _, state_b)) = (the_question(&a), the_question(&b));
    assert_ne!(state_a, state_b);
    let legacy_sum = legacy
        .call_tool("demo__get-sum", json!({"a": 20, "b": 22}))
        .await
        .unwrap();
    let legacy_sum = legacy_sum.response.result_text().to_owned();
    assert!(legacy_sum.contains(r#""sum":42"#), "{legacy_sum}");
    let (a, b) = tokio::join!(
        resume(&alice, key_a, state_a, 2, "Alice's"),
        resume(&bob, key_b, state_b, 3, "Bob's")
    );
    assert_eq!(
        a.message["result"]["content"][0]["text"],
        "booked Alice's for 2 at 18:00"
    );
    assert_eq!(
        b.message["result"]["content"][0]["text"],
        "booked Bob's for 3 at 18:00"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn log_messages_go_only_to_a_request_that_asked_for_them_on_its_stream() {
    let Some(_) = spec26() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = common::serve_http(&config(dir.path(), &["--notifying"], "", "")).await;
    let client = Modern::new(&peer.url);
    let notify = |level: Option<&str>| {
        let mut params = with_meta(
            json!({"name": "demo__notify", "arguments": {"uri": "demo://counter", "level": "error"}}),
            json!({}),
        );
        if let Some(level) = level {
            params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    };
    let quiet = client.post(&notify(None)).await;
    assert_eq!(quiet.message["result"]["resultType"], "complete");
    assert!(quiet.before.is_empty(), "{:?}", quiet.before);
    let above = client.post(&notify(Some("critical"))).await;
    assert!(above.before.is_empty(), "{:?}", above.before);
    let logged = client.post(&notify(Some("warning"))).await;
    assert_eq!(logged.message["result"]["resultType"], "complete");
    let methods: Vec<&str> = logged
        .before
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(methods, ["notifications/message"], "{:?}", logged.before);
}

/// A raw stdio client of `mcpx serve`, frames checked against 2026-07-28.
struct StdioModern {
    transport: mcpclient::StdioTransport,
    conversation: Conversation<'static>,
}

impl StdioModern {
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        // Some requests here are invalid on purpose: only the answers must be valid.
        let _ = self.conversation.check(Side::Client, &request);
        self.transport
            .send(&Frame::from_value(&request))
            .await
            .unwrap();
        loop {
            let frame = tokio::time::timeout(common::FRAME_WAIT, self.transport.receive())
                .await
                .expect("an answer in time")
                .expect("mcpx is there")
                .unwrap();
            let value = frame.value().unwrap();
            self.conversation.assert_valid(Side::Server, &value);
            if value.get("method").is_none() && value["id"] == id {
                return value;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_client_that_opens_with_discover_is_served_the_modern_way() {
    let Some(spec) = spec26() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut client = StdioModern {
        transport: common::serve_stdio(&config(dir.path(), &[], "", "")),
        conversation: Conversation::new(spec),
    };
    let discovered = client
        .request(1, "server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(discovered["result"]["supportedVersions"][0], MODERN);
    let refused = client
        .request(2, "ping", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(refused["error"]["code"], -32601);
    let refused = client
        .request(3, "tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}))
        .await;
    assert_eq!(refused["error"]["code"], -32022);
    let asked = client
        .request(
            4,
            "tools/call",
            with_meta(
                json!({"name": "demo__book-table", "arguments": {"restaurant": "Chez Test"}}),
                ELICITS(),
            ),
        )
        .await;
    let (key, _, state) = the_question(&Answer {
        status: StatusCode::OK,
        message: asked,
        before: Vec::new(),
    });
    let resumed = retry(
        5,
        "demo__book-table",
        &key,
        json!({"action": "accept", "content": {"party": 2, "time": "19:00", "vegetarian": true}}),
        &state,
    );
    let done = client
        .request(5, "tools/call", resumed["params"].clone())
        .await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "booked Chez Test for 2 at 19:00, vegetarian"
    );
    assert_eq!(done["result"]["resultType"], "complete");

    // A listener is acknowledged first, with what is honored, tagged with its id.
    let listen = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": with_meta(json!({"notifications": {"toolsListChanged": true, "promptsListChanged": false}}), json!({}))});
    client.conversation.assert_valid(Side::Client, &listen);
    client
        .transport
        .send(&Frame::from_value(&listen))
        .await
        .unwrap();
    let ack = tokio::time::timeout(common::FRAME_WAIT, client.transport.receive())
        .await
        .expect("an acknowledgement in time")
        .expect("mcpx is there")
        .unwrap()
        .value()
        .unwrap();
    client.conversation.assert_valid(Side::Server, &ack);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
}
