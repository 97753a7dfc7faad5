//! `mcpx serve --http` as an OAuth resource server, against a real authorization server:
//! oidc-provider (npm, pinned in `crates/interop/peers/oidc`) issues client-credentials JWT
//! access tokens, and a client of the Python SDK (`peers/oauth_client.py`) logs in with the
//! SDK's own OAuth support, from mcpx's 401 and Protected Resource Metadata on.

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
