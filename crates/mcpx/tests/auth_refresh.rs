//! Token refresh against a real authorization server: oidc-provider (npm, pinned in
//! `crates/mcpx-interop/peers/oidc`) issues access tokens that live [`ACCESS_TOKEN_TTL`] seconds,
//! under mcpx's refresh margin, with a refresh token; `mcpx serve --http` checks them as the
//! protected server. mcpx logs in once (`--login`, the "browser" is curl following the
//! redirects of the server's approving login page), then, for the CLI and for a gateway
//! upstream:
//! - before expiry: a stored token that the server still takes but that expires within the
//!   margin is refreshed before it is used (the stored token changes though no request was
//!   refused);
//! - on a 401: a stored token that the server refuses, though it says it is far from expiry,
//!   is refreshed and the request sent again;
//!
//! each without a login (no terminal, no `--login`: a needed login would be exit 2), and no
//! token in any output or log.

mod common;

use std::path::Path;

use mcpx_interop::{oidc_issuer, HttpPeer};
use serde_json::{json, Value};

const CLIENT_ID: &str = "refresh-client";
const CLIENT_SECRET: &str = "refresh-secret-8841";

/// How long the issuer's access tokens live: under [`mcpauth::REFRESH_MARGIN`], so every
/// stored token is due for a refresh when it is next used.
const ACCESS_TOKEN_TTL: u64 = 30;

/// A token the protected server refuses.
const REVOKED: &str = "revoked-access-t0ken";

/// The stored record of the tokens for `resource` in the credentials file.
fn stored(credentials: &Path, resource: &str) -> Value {
    let file: Value = serde_json::from_slice(&std::fs::read(credentials).unwrap()).unwrap();
    let record = file[format!("tokens {resource}")]
        .as_str()
        .unwrap_or_else(|| panic!("no tokens for {resource}: {file}"));
    serde_json::from_str(record).unwrap()
}

/// Replaces the access token stored for `resource` with one the server refuses, said to
/// expire in an hour.
fn revoke(credentials: &Path, resource: &str) {
    let mut file: Value = serde_json::from_slice(&std::fs::read(credentials).unwrap()).unwrap();
    let mut record = stored(credentials, resource);
    record["access_token"] = json!(REVOKED);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    record["expires_at"] = json!(now + 3600);
    file[format!("tokens {resource}")] = json!(record.to_string());
    std::fs::write(credentials, file.to_string()).unwrap();
}

/// `mcpx ARGS` with `credentials`, no terminal, expecting exit 0: stdout and stderr.
fn mcpx(config: &Path, credentials: &Path, args: &[&str]) -> (String, String) {
    common::run_with(config, args, &[("MCPX_CREDENTIALS", credentials)], 0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn tokens_are_refreshed_before_expiry_and_on_a_401_by_the_cli_and_the_gateway() {
    let Some((node, script)) = oidc_issuer() else {
        return;
    };
    let ttl = ACCESS_TOKEN_TTL.to_string();
    let issuer = HttpPeer::start(
        &node,
        &[&script, CLIENT_ID, CLIENT_SECRET, "mcp:tools", &ttl],
        &[],
        "",
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let protected_dir = dir.path().join("protected");
    std::fs::create_dir_all(&protected_dir).unwrap();
    let auth = json!({"auth": {"issuer": issuer.url, "scopes": ["mcp:tools"]}});
    let protected = common::config(&protected_dir, &[], "", &auth.to_string());
    let protected = common::serve_http(&protected).await;
    let resource = protected.url.clone();
    let remote =
        json!({"url": resource, "auth": {"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}});
    let config = common::config(dir.path(), &[], &format!(r#""remote": {remote}"#), "");
    let credentials = dir.path().join("credentials.json");
    let cookies = dir.path().join("browser-cookies");
    let browser = format!("curl -fsS -o /dev/null -L -b {}", cookies.display());
    let mut outputs = Vec::new();

    // The login: a refresh token is kept.
    let (stdout, stderr) = common::run_with(
        &config,
        &["--login", "call", "remote", "demo__get-sum", "a=2", "b=3"],
        &[
            ("MCPX_CREDENTIALS", &credentials),
            ("BROWSER", Path::new(&browser)),
        ],
        0,
    );
    assert!(stdout.contains("\"sum\": 5"), "{stdout}");
    outputs.extend([stdout, stderr]);
    let login = stored(&credentials, &resource);
    assert!(login["refresh_token"].is_string(), "{login}");
    let mut seen = vec![login["access_token"].clone()];

    // CLI, before expiry: the login's token is still good but due; it is refreshed first.
    let (stdout, stderr) = mcpx(
        &config,
        &credentials,
        &["call", "remote", "demo__get-sum", "a=1", "b=1"],
    );
    assert!(stdout.contains("\"sum\": 2"), "{stdout}");
    outputs.extend([stdout, stderr]);
    let refreshed = stored(&credentials, &resource);
    assert!(!seen.contains(&refreshed["access_token"]), "not refreshed");
    seen.push(refreshed["access_token"].clone());

    // CLI, on a 401: a refused token that is not due is refreshed after the refusal.
    revoke(&credentials, &resource);
    let (stdout, stderr) = mcpx(&config, &credentials, &["tools", "remote"]);
    assert!(stdout.contains("demo__get-sum"), "{stdout}");
    outputs.extend([stdout, stderr]);
    let after_401 = stored(&credentials, &resource);
    assert_ne!(after_401["access_token"], REVOKED);
    assert!(!seen.contains(&after_401["access_token"]), "not refreshed");
    seen.push(after_401["access_token"].clone());

    // The gateway, on a 401 (a refused token stored when it starts) and then before expiry
    // (the refreshed token is due at its next request).
    revoke(&credentials, &resource);
    let credentials_text = credentials.display().to_string();
    let gateway = common::serve_http_with(
        &config,
        &[
            ("MCPX_CREDENTIALS", &credentials_text),
            ("MCPX_LOG", "trace"),
        ],
    )
    .await;
    let connected = common::connect_http(&gateway.url).await;
    let (tools, _) = connected.client.list_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name() == "remote__demo__get-sum"),
        "the remote server's tools are withheld: {}",
        gateway.log()
    );
    let first = stored(&credentials, &resource);
    assert_ne!(first["access_token"], REVOKED);
    assert!(!seen.contains(&first["access_token"]), "not refreshed");
    seen.push(first["access_token"].clone());
    let call = connected
        .client
        .call_tool("remote__demo__get-sum", json!({"a": 20, "b": 22}))
        .await
        .unwrap();
    assert_eq!(
        call.response.result().unwrap()["structuredContent"],
        json!({"sum": 42})
    );
    let second = stored(&credentials, &resource);
    assert!(!seen.contains(&second["access_token"]), "not refreshed");
    drop(connected);
    outputs.push(gateway.log());
    outputs.push(protected.log());

    let secrets: Vec<String> = seen
        .iter()
        .chain([&second["access_token"], &second["refresh_token"]])
        .filter_map(|t| t.as_str().map(str::to_owned))
        .chain([CLIENT_SECRET.to_owned()])
        .collect();
    for output in &outputs {
        for secret in &secrets {
            assert!(
                !output.contains(secret.as_str()),
                "a secret is shown: {output}"
            );
        }
    }
}
