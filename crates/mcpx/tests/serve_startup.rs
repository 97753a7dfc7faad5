//! Starting servers through `mcpx serve`: a server's `startupTimeout` bounds its start in the
//! gateway too, and one that dies starting is logged with the last lines of its stderr.

mod common;

use std::time::Duration;

use common::{logged, spec, Downstream};
use serde_json::json;

/// How long the test waits for the gateway to log a failed start.
const LOG_WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_server_that_dies_starting_is_logged_with_its_stderr_and_startup_timeout_applies() {
    if spec().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dies = json!({"command": "sh", "args": ["-c", "echo first words >&2; echo last words >&2; exit 3"]});
    let hangs = json!({"command": "sh", "args": ["-c", "exec sleep 60"], "startupTimeout": 0.5});
    let extra = format!(r#""dies": {dies}, "hangs": {hangs}"#);
    let config = common::config(dir.path(), &[], &extra, "");
    let mut gateway = Downstream::start(&config, &[], json!({})).await;
    let wanted = [
        r#"server="dies""#,
        r#"stderr=["first words", "last words"]"#,
        r#"server="hangs""#,
        "did not start within 0.5 s (its startupTimeout)",
    ];
    assert!(
        logged(&gateway, &wanted, LOG_WAIT).await,
        "{}",
        gateway.log()
    );
    // The others are served all the same.
    let names = gateway.tool_names().await;
    assert!(names.iter().any(|n| n == "demo__echo"), "{names:?}");
    gateway.close().await;
}
