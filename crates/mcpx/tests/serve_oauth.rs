//! `mcpx serve --http` as an OAuth resource server, against a real authorization server:
//! oidc-provider (npm, pinned in `crates/mcpx-interop/peers/oidc`) issues client-credentials JWT
//! access tokens, and a client of the Python SDK (`peers/oauth_client.py`) logs in with the
//! SDK's own OAuth support, from mcpx's 401 and Protected Resource Metadata on. Two clients
//! with different scopes use one gateway at once, each seeing and calling only what its scopes
//! allow.

mod common;

use common::{config, MCPX};
use mcpx_interop::{oidc_issuer, peer_file, python, run_client, HttpPeer};
use serde_json::{json, Value};

const CLIENT_ID: &str = "interop-client";
const CLIENT_SECRET: &str = "interop-secret-5521";

/// The authorization server, with `scopes` for its client; its issuer URL.
async fn issuer(scopes: &str) -> Option<HttpPeer> {
    let (node, script) = oidc_issuer()?;
    Some(HttpPeer::start(&node, &[&script, CLIENT_ID, CLIENT_SECRET, scopes], &[], "").await)
}

/// A client report, one JSON object per step, by step name.
fn report(out: &str) -> std::collections::HashMap<String, Value> {
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["step"].as_str().unwrap().to_owned(), v))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn an_sdk_client_logs_in_at_a_real_issuer_and_calls_through_the_gateway() {
    let (Some(python), Some(issuer)) = (python(), issuer("mcp:tools files:read files:write").await)
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let auth = json!({"auth": {"issuer": issuer.url, "scopes": ["mcp:tools"],
        "toolScopes": {"demo__book-*": "files:write"}}});
    let config = config(dir.path(), &[], "", &auth.to_string());
    let config = config.display().to_string();
    let gateway = HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        &[],
        "/mcp",
    )
    .await;
    // Without files:write the booking tool is neither listed nor callable.
    let args = [
        peer_file("oauth_client.py"),
        gateway.url.clone(),
        issuer.url.clone(),
        CLIENT_ID.into(),
        CLIENT_SECRET.into(),
        "mcp:tools files:read".into(),
    ];
    let report = report(&run_client(&python, &args).await);
    let metadata_url = gateway
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(report["no-token"]["status"], 401);
    assert_eq!(
        report["no-token"]["challenge"],
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="mcp:tools""#)
    );
    assert_eq!(report["bad-token"]["status"], 401);
    let bad = report["bad-token"]["challenge"].as_str().unwrap();
    assert!(bad.contains(r#"error="invalid_token""#), "{bad}");
    assert_eq!(report["metadata"]["url"], metadata_url.as_str());
    assert_eq!(
        report["metadata"]["document"],
        json!({"resource": gateway.url, "authorization_servers": [issuer.url],
               "scopes_supported": ["mcp:tools", "files:write"],
               "bearer_methods_supported": ["header"]})
    );
    assert_eq!(report["initialize"]["server"], "mcpx");
    let names = report["tools"]["names"].as_array().unwrap();
    assert!(names.contains(&json!("demo__get-sum")), "{names:?}");
    assert!(!names.contains(&json!("demo__book-table")), "{names:?}");
    assert_eq!(report["demo-sum"]["structured"], json!({"sum": 5}));
    let sdk_bad = &report["sdk-bad-token"];
    assert_eq!(sdk_bad["refused"], true, "{sdk_bad}");
    assert!(
        sdk_bad["error"].as_str().unwrap().contains("401"),
        "{sdk_bad}"
    );
    let log = gateway.log();
    assert!(!log.contains(CLIENT_SECRET), "{log}");
}

/// An access token from `issuer` for `resource` with `scope` (client credentials).
async fn token(issuer: &str, resource: &str, scope: &str) -> String {
    mcpx_interop::client_credentials_token(issuer, resource, (CLIENT_ID, CLIENT_SECRET), scope)
        .await
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

/// A POST of `body` with `token`: the status, `WWW-Authenticate`, session id and body.
async fn post(
    url: &str,
    token: &str,
    session: &str,
    body: String,
) -> (u16, String, String, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {token}"));
    if !session.is_empty() {
        request = request.header("mcp-session-id", session);
    }
    let answer = request.body(body).send().await.unwrap();
    let header = |name: &str| {
        answer
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let (challenge, id) = (header("www-authenticate"), header("mcp-session-id"));
    (
        answer.status().as_u16(),
        challenge,
        id,
        answer.text().await.unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn scopes_audiences_and_no_token_passthrough() {
    use mcpclient::{Client, ClientOptions, HttpConfig, HttpTransport};
    let Some(spec) = common::spec() else { return };
    let Some(issuer) = issuer("mcp:tools files:read files:write").await else {
        return;
    };
    let Some(upstream) = mcpx_interop::python_over_http().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let gateway = json!({"auth": {"issuer": issuer.url, "scopes": ["mcp:tools"],
        "toolScopes": {"demo__book-*": "files:write"}}});
    let py = format!(r#""py": {{"url": "{}"}}"#, upstream.url);
    let config = config(dir.path(), &[], &py, &gateway.to_string());
    let config = config.display().to_string();
    let peer = HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        &[("MCPX_LOG", "trace")],
        "/mcp",
    )
    .await;
    let url = &peer.url;
    let metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    // The metadata at the root is the same document as at the path-suffixed URL.
    let fetch = |at: String| async move {
        let answer = reqwest::get(at).await.unwrap();
        assert_eq!(answer.status().as_u16(), 200);
        serde_json::from_str::<Value>(&answer.text().await.unwrap()).unwrap()
    };
    let root = fetch(url.replace("/mcp", "/.well-known/oauth-protected-resource")).await;
    assert_eq!(root, fetch(metadata.clone()).await);
    assert_eq!(root["resource"], url.as_str());

    // A valid token without the scope every request needs: 403, naming the scope.
    let reader = token(&issuer.url, url, "files:read").await;
    let (status, challenge, _, _) = post(url, &reader, "", initialize()).await;
    assert_eq!(status, 403);
    assert_eq!(
        challenge,
        format!(
            r#"Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="{metadata}""#
        )
    );
    // A token for another resource: 401.
    let elsewhere = token(&issuer.url, "http://127.0.0.1:9/mcp", "mcp:tools").await;
    let (status, challenge, _, body) = post(url, &elsewhere, "", initialize()).await;
    assert_eq!(status, 401);
    assert!(
        challenge.contains(r#"error="invalid_token""#),
        "{challenge}"
    );
    assert!(
        body.contains("the access token is for another audience"),
        "{body}"
    );

    // Without files:write: the booking tool is refused with 403 (and hidden, below).
    let basic = token(&issuer.url, url, "mcp:tools").await;
    let (status, _, session, _) = post(url, &basic, "", initialize()).await;
    assert_eq!(status, 200);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "demo__book-table", "arguments": {"restaurant": "x"}}});
    let (status, challenge, _, body) = post(url, &basic, &session, call.to_string()).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        challenge,
        format!(
            r#"Bearer error="insufficient_scope", scope="files:write", resource_metadata="{metadata}""#
        )
    );
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["id"], 2);

    // A 2026-07-28 (sessionless) list is filtered the same way.
    let modern = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern", "version": "0"}}}});
    let listed = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {basic}"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(modern.to_string())
        .send()
        .await
        .unwrap();
    let listed: Value = serde_json::from_str(&listed.text().await.unwrap()).unwrap();
    let listed: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(listed.contains(&"demo__get-sum"), "{listed:?}");
    assert!(!listed.contains(&"demo__book-table"), "{listed:?}");

    let client = |token: &str| {
        let transport = HttpTransport::new(&HttpConfig {
            url: url.clone(),
            headers: vec![
                ("Authorization".into(), format!("Bearer {token}")),
                ("X-Client-Secret".into(), "the client's own".into()),
            ],
            auth: None,
        })
        .unwrap();
        Client::connect_with(
            mcpspec::Recording::new(spec, transport),
            ClientOptions::default(),
        )
    };
    let names = |tools: &[mcpclient::Tool]| -> Vec<String> {
        tools.iter().map(|t| t.name().to_owned()).collect()
    };
    let (limited, _events) = client(&basic).await.unwrap();
    let (tools, _) = limited.list_tools().await.unwrap();
    assert!(names(&tools).contains(&"demo__get-sum".to_owned()));
    assert!(!names(&tools).contains(&"demo__book-table".to_owned()));
    drop(limited);

    // With every scope: the tool is there, and the upstream never sees the client's token.
    let full = token(&issuer.url, url, "mcp:tools files:write").await;
    let (client, _events) = client(&full).await.unwrap();
    let (tools, _) = client.list_tools().await.unwrap();
    assert!(names(&tools).contains(&"demo__book-table".to_owned()));
    for header in ["authorization", "x-client-secret"] {
        let seen = client
            .call_tool("py__header", json!({"name": header}))
            .await
            .unwrap();
        assert_eq!(
            seen.response.result().unwrap()["content"][0]["text"],
            "",
            "{header} reached the upstream"
        );
    }
    drop(client);
    let log = peer.log();
    for secret in [&reader, &elsewhere, &basic, &full] {
        assert!(!log.contains(secret.as_str()), "a token is in the log");
    }
}

#[test]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
fn a_static_token_and_oauth_exclude_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = json!({"auth": {"issuer": "https://auth.example.com"}});
    let config = config(dir.path(), &[], "", &gateway.to_string());
    let out = std::process::Command::new(MCPX)
        .arg("--config")
        .arg(&config)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env("MCPX_TOKEN", "static-token-1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "a static bearer token (--token or MCPX_TOKEN) and gateway.auth exclude each other"
        ),
        "{err}"
    );
}

/// Rounds each of the two clients makes at once in [`two_clients_with_different_scopes_at_once`].
const ROUNDS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn two_clients_with_different_scopes_at_once() {
    use mcpclient::{Client, ClientOptions, HttpConfig, HttpTransport};
    let Some(issuer) = issuer("mcp:tools files:read files:write").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let gateway = json!({"auth": {"issuer": issuer.url, "scopes": ["mcp:tools"],
        "toolScopes": {"demo__echo": "files:write"}}});
    let config = config(dir.path(), &[], "", &gateway.to_string());
    let peer = common::serve_http(&config).await;
    let url = peer.url.clone();
    let reader = token(&issuer.url, &url, "mcp:tools files:read").await;
    let writer = token(&issuer.url, &url, "mcp:tools files:write").await;
    let client = |token: &str| {
        let transport = HttpTransport::new(&HttpConfig {
            url: url.clone(),
            headers: vec![("Authorization".into(), format!("Bearer {token}"))],
            auth: None,
        })
        .unwrap();
        Client::connect_with(transport, ClientOptions::default())
    };
    let ((reading, _reader_events), (writing, _writer_events)) = (
        client(&reader).await.unwrap(),
        client(&writer).await.unwrap(),
    );
    // One client's rounds: it lists, adds (both may), and echoes (the writer only).
    let rounds = |client: Client, may_echo: bool| async move {
        for round in 0..ROUNDS {
            let (tools, _) = client.list_tools().await.unwrap();
            let listed = tools.iter().any(|t| t.name() == "demo__echo");
            assert_eq!(listed, may_echo, "round {round}: echo listed");
            let sum = client
                .call_tool("demo__get-sum", json!({"a": round, "b": 1}))
                .await
                .unwrap();
            assert_eq!(
                sum.response.result().unwrap()["structuredContent"],
                json!({"sum": round + 1})
            );
            // Sent whether listed or not, so the gateway decides.
            let text = format!("round {round}");
            let params = json!({"name": "demo__echo", "arguments": {"text": text}}).to_string();
            let params = serde_json::value::RawValue::from_string(params).unwrap();
            let echoed = client
                .call_unlisted_tool(
                    &mcpclient::RawParams::parse(&params).unwrap(),
                    mcpclient::CallOptions::default(),
                )
                .await;
            if may_echo {
                let echoed = echoed.unwrap().response.result().unwrap();
                assert_eq!(echoed["content"][0]["text"], text.as_str());
            } else {
                let refused = echoed.err().map(|e| e.to_string()).unwrap_or_default();
                assert_eq!(
                    refused, "error -32600: the access token lacks the scope files:write",
                    "round {round}"
                );
            }
        }
    };
    tokio::join!(rounds(reading, false), rounds(writing, true));
    let log = peer.log();
    assert!(
        !log.contains(&reader) && !log.contains(&writer),
        "a token is in the log"
    );
}
