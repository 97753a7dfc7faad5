//! OAuth on the command line and in the gateway, against `mcpx serve --http` with a static
//! token as the protected server (it answers 401 with `WWW-Authenticate: Bearer` and publishes
//! no metadata, so mcpx finds the 2025-03-26 endpoints and, with no person to ask, needs a
//! login): without a terminal a needed login is exit 2 and a line naming `mcpx auth login`;
//! `mcpx servers` shows "needs login"; the gateway withholds that server's tools and serves the
//! others; a stored token is used; the token is never in any output.

mod common;

use std::path::Path;

use serde_json::{json, Value};

/// The protected server's access token.
const TOKEN: &str = "oauth-access-t0ken-never-shown";

/// `mcpx --config CONFIG ARGS` with its credentials in `credentials`, no terminal, expecting
/// exit `code`: its stdout and stderr.
fn mcpx(config: &Path, credentials: &Path, args: &[&str], code: i32) -> (String, String) {
    common::run_with(config, args, &[("MCPX_CREDENTIALS", credentials)], code)
}

/// The protected server: the demo server behind `mcpx serve --http` with [`TOKEN`].
async fn protected(dir: &Path) -> mcpx_interop::HttpPeer {
    let upstream = dir.join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    let config = common::config(&upstream, &[], "", "");
    common::serve_http_with(&config, &[("MCPX_TOKEN", TOKEN)]).await
}

/// A config with the demo server and the protected one as `remote`.
fn client_config(dir: &Path, url: &str) -> std::path::PathBuf {
    common::config(dir, &[], &format!(r#""remote": {{"url": "{url}"}}"#), "")
}

/// The tool names a client sees through `mcpx serve --http` on `config`, and its log.
async fn gateway_tools(config: &Path, credentials: &Path) -> (Vec<String>, String) {
    let credentials = credentials.display().to_string();
    let gateway = common::serve_http_with(
        config,
        &[("MCPX_CREDENTIALS", &credentials), ("MCPX_LOG", "trace")],
    )
    .await;
    let connected = common::connect_http(&gateway.url).await;
    let (tools, _) = connected.client.list_tools().await.unwrap();
    let names = tools.iter().map(|t| t.name().to_owned()).collect();
    (names, gateway.log())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_needed_login_is_named_and_a_stored_token_is_used_and_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let peer = protected(dir.path()).await;
    let config = client_config(dir.path(), &peer.url);
    let credentials = dir.path().join("credentials.json");

    // No terminal, nothing stored: exit 2 and the command to run.
    let (_, stderr) = mcpx(&config, &credentials, &["tools", "remote"], 2);
    assert!(
        stderr.contains("run `mcpx auth login remote`"),
        "stderr: {stderr}"
    );
    let (_, stderr) = mcpx(&config, &credentials, &["call", "remote", "demo__echo"], 2);
    assert!(
        stderr.contains("run `mcpx auth login remote`"),
        "stderr: {stderr}"
    );
    let (stdout, _) = mcpx(&config, &credentials, &["servers"], 2);
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("remote").starts_with("remote\thttp\tneeds login\t"),
        "{stdout}"
    );
    assert!(line("demo").starts_with("demo\tstdio\tok\t"), "{stdout}");
    let (stdout, _) = mcpx(&config, &credentials, &["servers", "--json"], 2);
    let rows: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(rows[1]["name"], "remote");
    assert_eq!(rows[1]["needsLogin"], true);
    assert_eq!(rows[0]["needsLogin"], Value::Null);
    assert!(
        !credentials.exists()
            || !std::fs::read_to_string(&credentials)
                .unwrap()
                .contains("tokens"),
        "nothing is stored without a login"
    );

    // The gateway serves the demo server's tools and withholds the remote one's, saying why.
    let (tools, log) = gateway_tools(&config, &credentials).await;
    assert!(tools.iter().any(|t| t.starts_with("demo__")), "{tools:?}");
    assert!(
        !tools.iter().any(|t| t.starts_with("remote__")),
        "{tools:?}"
    );
    assert!(log.contains("mcpx auth login remote"), "log: {log}");

    // A stored token (as `mcpx auth login` leaves it) is used, by the CLI and the gateway.
    let record = json!({"issuer": "http://127.0.0.1", "client_id": "mcpx",
        "access_token": TOKEN, "scopes": ["tools"]});
    let stored = json!({ format!("tokens {}", peer.url): record.to_string() });
    std::fs::write(&credentials, stored.to_string()).unwrap();
    let mut outputs = Vec::new();
    let (stdout, stderr) = mcpx(&config, &credentials, &["tools", "remote", "--json"], 0);
    assert!(stdout.contains("\"demo__echo\""), "{stdout}");
    outputs.extend([stdout, stderr]);
    let (stdout, stderr) = mcpx(&config, &credentials, &["servers", "--json"], 0);
    assert!(stdout.contains("\"remote\""), "{stdout}");
    outputs.extend([stdout, stderr]);
    for args in [
        &["auth", "status", "--json"][..],
        &["auth", "status"],
        &["call", "remote", "demo__echo", "text=hi"],
    ] {
        let (stdout, stderr) = mcpx(&config, &credentials, args, 0);
        outputs.extend([stdout, stderr]);
    }
    assert!(outputs[4].contains("\"loggedIn\": true"), "{}", outputs[4]);
    let (tools, log) = gateway_tools(&config, &credentials).await;
    assert!(tools.iter().any(|t| t.starts_with("remote__")), "{tools:?}");
    outputs.push(log);
    // A token the server refuses: the error is printed, the token is not.
    let mut refused = record.clone();
    refused["access_token"] = json!("a-wrong-t0ken-never-shown");
    let stored = json!({ format!("tokens {}", peer.url): refused.to_string() });
    std::fs::write(&credentials, stored.to_string()).unwrap();
    let (stdout, stderr) = mcpx(&config, &credentials, &["tools", "remote"], 2);
    assert!(stderr.contains("mcpx auth login remote"), "{stderr}");
    outputs.extend([stdout, stderr]);
    for output in &outputs {
        assert!(!output.contains(TOKEN), "the token is shown: {output}");
        assert!(
            !output.contains("a-wrong-t0ken"),
            "the token is shown: {output}"
        );
    }
    // Logging out forgets it.
    let (stdout, _) = mcpx(&config, &credentials, &["auth", "logout", "remote"], 0);
    assert!(stdout.contains("logged out of remote"), "{stdout}");
    assert!(!std::fs::read_to_string(&credentials)
        .unwrap()
        .contains("tokens"));
}
