//! Who asks, carried through the whole gateway (issue 32): `mcpx serve --http` as an OAuth
//! resource server in front of the demo server, with two principals, alice and bob, holding
//! client-credentials tokens from a real authorization server (oidc-provider, pinned in
//! `crates/mcpx-interop/peers/oidc`). Each runs at the same time as the other: bob, with his own
//! valid token, names what alice holds (her session, her parked call, a tool behind a scope he
//! lacks) on every path, and is answered as if it did not exist, while alice's work goes on.

mod common;

use common::{config, MCPX};
use mcpx_interop::{client_credentials_token as token, oidc_issuer, HttpPeer};
use reqwest::Method;
use serde_json::{json, Value};

const ALICE: (&str, &str) = ("alice", "alice-secret-7731");
const BOB: (&str, &str) = ("bob", "bob-secret-9034");
const MODERN: &str = "2026-07-28";
/// A session id of the right shape that no session has.
const NO_SUCH_SESSION: &str = "0123456789abcdef0123456789abcdef";

/// The authorization server, with alice (who may hold `secret`) and bob (who may not).
async fn issuer() -> Option<HttpPeer> {
    let (node, script) = oidc_issuer()?;
    let args = [
        script.as_str(),
        ALICE.0,
        ALICE.1,
        "mcp:tools secret",
        "300",
        BOB.0,
        BOB.1,
        "mcp:tools",
    ];
    Some(HttpPeer::start(&node, &args, &[], "").await)
}

/// What came back for one request.
#[derive(Debug)]
struct Reply {
    status: u16,
    challenge: String,
    session: String,
    body: Value,
}

/// A client holding one principal's token, speaking raw HTTP to the gateway.
struct Holder {
    http: reqwest::Client,
    url: String,
    token: String,
}

impl Holder {
    /// `method` with `body`, on `session` when given, with `headers` added.
    async fn send(
        &self,
        method: Method,
        session: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        let accept = if method == Method::GET {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut request = self
            .http
            .request(method, &self.url)
            .header("accept", accept)
            .header("authorization", format!("Bearer {}", self.token));
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let answer = request.send().await.unwrap();
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default()
        };
        let (challenge, session) = (header("www-authenticate"), header("mcp-session-id"));
        let status = answer.status().as_u16();
        let sse = header("content-type").starts_with("text/event-stream");
        // A stream (a GET that was let in) is not read: its status says enough.
        let body = if sse {
            Value::Null
        } else {
            let text = answer.text().await.unwrap();
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Reply {
            status,
            challenge,
            session,
            body,
        }
    }

    /// A legacy session of its own: `initialize`, then `notifications/initialized`.
    async fn open(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "trust-test", "version": "0"}}});
        let opened = self.send(Method::POST, None, &[], Some(&init)).await;
        assert_eq!(opened.status, 200, "{opened:?}");
        assert!(!opened.session.is_empty());
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let taken = self
            .send(Method::POST, Some(&opened.session), &[], Some(&initialized))
            .await;
        assert_eq!(taken.status, 202, "{taken:?}");
        opened.session
    }

    /// Request `id` calling `method` with `params` on `session`.
    async fn request(&self, session: &str, id: u64, method: &str, params: Value) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(Method::POST, Some(session), &[], Some(&body))
            .await
    }

    /// A `tools/call` of `tool` on `session`.
    async fn call(&self, session: &str, id: u64, tool: &str, arguments: Value) -> Reply {
        let params = json!({"name": tool, "arguments": arguments});
        self.request(session, id, "tools/call", params).await
    }

    /// The tool names `session`'s `tools/list` shows.
    async fn listed(&self, session: &str) -> Vec<String> {
        let listed = self.request(session, 90, "tools/list", json!({})).await;
        names(&listed.body["result"]["tools"])
    }

    /// A 2026-07-28 request (no session) `id` of `method` with `params`, declaring elicitation.
    async fn modern(&self, id: u64, method: &str, mut params: Value) -> Reply {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "trust-test", "version": "0"}});
        let name = params["name"].as_str().map(str::to_owned);
        let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
        if let Some(name) = &name {
            headers.push(("mcp-name", name));
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(Method::POST, None, &headers, Some(&body)).await
    }
}

/// The `name`s of a list of tools.
fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of a tool result's first content block.
fn text(reply: &Reply) -> String {
    reply.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// What a test runs against: the issuer and the gateway (kept running while it lives), and the
/// two principals.
struct Setup {
    _dir: tempfile::TempDir,
    _issuer: HttpPeer,
    _gateway: HttpPeer,
    alice: Holder,
    bob: Holder,
}

/// The issuer, the gateway (its `gateway` section `section`, OAuth from the issuer added, and
/// `demo__echo` needing the scope `secret`), and alice (holding `secret`) and bob (not).
async fn principals(mut section: Value) -> Option<Setup> {
    let issuer = issuer().await?;
    let dir = tempfile::tempdir().unwrap();
    section["auth"] = json!({"issuer": issuer.url, "scopes": ["mcp:tools"],
        "toolScopes": {"demo__echo": "secret"}});
    let config = config(dir.path(), &[], "", &section.to_string());
    let config = config.display().to_string();
    let gateway = HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        &[],
        "/mcp",
    )
    .await;
    let holder = |token: String| Holder {
        http: reqwest::Client::new(),
        url: gateway.url.clone(),
        token,
    };
    let alice = holder(token(&issuer.url, &gateway.url, ALICE, "mcp:tools secret").await);
    let bob = holder(token(&issuer.url, &gateway.url, BOB, "mcp:tools").await);
    Some(Setup {
        _dir: dir,
        _issuer: issuer,
        _gateway: gateway,
        alice,
        bob,
    })
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node authorization server, a Linux program here"
)]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let Some(setup) = principals(json!({})).await else {
        return;
    };
    let (alice, bob) = (&setup.alice, &setup.bob);
    let session = alice.open().await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "demo__get-sum", "arguments": {"a": 1, "b": 2}}});
    let unknown = bob
        .send(Method::POST, Some(NO_SUCH_SESSION), &[], Some(&call))
        .await;
    assert_eq!(unknown.status, 404, "{unknown:?}");

    // Alice keeps calling on her session while bob, with his own valid token, tries every
    // method on it.
    let alices = async {
        for i in 0..20u64 {
            let sum = alice
                .call(&session, 100 + i, "demo__get-sum", json!({"a": i, "b": 1}))
                .await;
            assert_eq!(sum.status, 200, "{sum:?}");
            assert_eq!(
                sum.body["result"]["structuredContent"]["sum"],
                i + 1,
                "{sum:?}"
            );
        }
    };
    let bobs = async {
        let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"});
        let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 100}});
        let mut refused = Vec::new();
        for body in [&call, &ping, &list, &cancel] {
            refused.push(
                bob.send(Method::POST, Some(&session), &[], Some(body))
                    .await,
            );
        }
        refused.push(bob.send(Method::GET, Some(&session), &[], None).await);
        refused.push(bob.send(Method::DELETE, Some(&session), &[], None).await);
        refused
    };
    let ((), refused) = tokio::join!(alices, bobs);
    for reply in refused {
        assert_eq!(
            (reply.status, &reply.body),
            (unknown.status, &unknown.body),
            "answered as an unknown session, whatever the method"
        );
    }

    // Her session is still hers: a call, her GET stream, then her own DELETE.
    let sum = alice
        .call(&session, 200, "demo__get-sum", json!({"a": 2, "b": 3}))
        .await;
    assert_eq!(sum.body["result"]["structuredContent"]["sum"], 5, "{sum:?}");
    let stream = alice.send(Method::GET, Some(&session), &[], None).await;
    assert_eq!(stream.status, 200, "{stream:?}");
    let ended = alice.send(Method::DELETE, Some(&session), &[], None).await;
    assert_eq!(ended.status, 200, "{ended:?}");
    let after = alice
        .call(&session, 201, "demo__get-sum", json!({"a": 2, "b": 3}))
        .await;
    assert_eq!(after.status, 404);
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node authorization server, a Linux program here"
)]
async fn a_parked_call_answers_only_the_principal_that_started_it() {
    let Some(setup) = principals(json!({})).await else {
        return;
    };
    let (alice, bob) = (&setup.alice, &setup.bob);
    let book = json!({"name": "demo__book-table", "arguments": {"restaurant": "Chez Alice"}});
    let asked = alice.modern(1, "tools/call", book.clone()).await;
    let result = &asked.body["result"];
    assert_eq!(result["resultType"], "input_required", "{asked:?}");
    let state = result["requestState"].as_str().unwrap().to_owned();
    let key = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answer = json!({key.clone(): {"action": "accept",
        "content": {"party": 4, "time": "20:00"}}});
    let retry = |state: &str| {
        let mut params = book.clone();
        params["requestState"] = json!(state);
        params["inputResponses"] = answer.clone();
        params
    };

    // Bob, with a valid token and alice's requestState, and with one that names nothing, at
    // once: the same answer.
    let (stolen, nothing) = tokio::join!(
        bob.modern(2, "tools/call", retry(&state)),
        bob.modern(3, "tools/call", retry(NO_SUCH_SESSION)),
    );
    assert_eq!(stolen.body["error"]["code"], -32602, "{stolen:?}");
    assert_eq!(stolen.body["error"], nothing.body["error"]);
    assert!(stolen.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown or expired requestState"));
    // Alice's call was not taken: her retry completes it.
    let done = alice.modern(5, "tools/call", retry(&state)).await;
    assert_eq!(done.body["result"]["resultType"], "complete", "{done:?}");
    assert!(
        text(&done) == "booked Chez Alice for 4 at 20:00",
        "{done:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node authorization server, a Linux program here"
)]
async fn a_tool_behind_a_scope_stays_hidden_on_every_path_that_names_it() {
    let section = json!({"exposure": "search", "alwaysExpose": ["demo__echo", "demo__get-sum"]});
    let Some(setup) = principals(section).await else {
        return;
    };
    let (alice, bob) = (&setup.alice, &setup.bob);
    let search = json!({"query": "returns its text", "limit": 50});
    let describe = json!({"name": "demo__echo"});
    let through = json!({"name": "demo__echo", "arguments": {"text": "hi"}});

    let alices = async {
        let session = alice.open().await;
        let listed = alice.listed(&session).await;
        assert!(listed.contains(&"demo__echo".to_owned()), "{listed:?}");
        let found = alice
            .call(&session, 1, "search_tools", search.clone())
            .await;
        let found = names(&found.body["result"]["structuredContent"]["tools"]);
        assert!(found.contains(&"demo__echo".to_owned()), "{found:?}");
        let described = alice
            .call(&session, 2, "describe_tool", describe.clone())
            .await;
        assert_eq!(
            described.body["result"]["isError"],
            Value::Null,
            "{described:?}"
        );
        assert!(
            text(&described).contains("Returns its text"),
            "{described:?}"
        );
        let called = alice.call(&session, 3, "call_tool", through.clone()).await;
        assert_eq!(text(&called), "hi", "{called:?}");
        let direct = alice
            .call(&session, 4, "demo__echo", json!({"text": "hey"}))
            .await;
        assert_eq!(text(&direct), "hey", "{direct:?}");
        let modern = alice.modern(5, "tools/list", json!({})).await;
        assert!(names(&modern.body["result"]["tools"]).contains(&"demo__echo".to_owned()));
    };
    let bobs = async {
        let session = bob.open().await;
        let listed = bob.listed(&session).await;
        assert!(listed.contains(&"demo__get-sum".to_owned()), "{listed:?}");
        assert!(listed.contains(&"search_tools".to_owned()), "{listed:?}");
        assert!(!listed.contains(&"demo__echo".to_owned()), "{listed:?}");
        // Search ranks only what he may use: the tool is not among the hits, however many.
        let found = bob.call(&session, 1, "search_tools", search.clone()).await;
        assert_eq!(found.status, 200, "{found:?}");
        let found = names(&found.body["result"]["structuredContent"]["tools"]);
        assert!(!found.is_empty(), "other tools still rank");
        assert!(!found.contains(&"demo__echo".to_owned()), "{found:?}");
        // Described as a tool that does not exist, and not disclosed into his list.
        let described = bob
            .call(&session, 2, "describe_tool", describe.clone())
            .await;
        assert_eq!(described.body["result"]["isError"], true, "{described:?}");
        assert!(
            text(&described).starts_with("unknown tool 'demo__echo'"),
            "{described:?}"
        );
        assert!(!bob
            .listed(&session)
            .await
            .contains(&"demo__echo".to_owned()));
        // Called through the call tool or directly: 403 naming the scope, nothing sent.
        for (id, tool, arguments) in [
            (3, "call_tool", through.clone()),
            (4, "demo__echo", json!({"text": "hey"})),
        ] {
            let refused = bob.call(&session, id, tool, arguments).await;
            assert_eq!(refused.status, 403, "{refused:?}");
            assert!(refused.challenge.contains(r#"error="insufficient_scope""#));
            assert!(
                refused.challenge.contains(r#"scope="secret""#),
                "{refused:?}"
            );
            assert_eq!(refused.body["id"], id);
        }
        // The same on the 2026-07-28 path.
        let modern = bob.modern(5, "tools/list", json!({})).await;
        let modern = names(&modern.body["result"]["tools"]);
        assert!(modern.contains(&"search_tools".to_owned()), "{modern:?}");
        assert!(!modern.contains(&"demo__echo".to_owned()), "{modern:?}");
        let found = bob
            .modern(
                6,
                "tools/call",
                json!({"name": "search_tools",
            "arguments": search.clone()}),
            )
            .await;
        let found = names(&found.body["result"]["structuredContent"]["tools"]);
        assert!(!found.contains(&"demo__echo".to_owned()), "{found:?}");
        let refused = bob
            .modern(
                7,
                "tools/call",
                json!({"name": "call_tool",
            "arguments": through.clone()}),
            )
            .await;
        assert_eq!(refused.status, 403, "{refused:?}");
    };
    tokio::join!(alices, bobs);
}
