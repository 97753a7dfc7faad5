//! Starting servers through `mcpx serve`: a server's `startupTimeout` bounds its start in the
//! gateway too, and one that dies starting is logged with the last lines of its stderr.

mod common;

use std::time::Duration;

use common::{logged, spec, Downstream};
use serde_json::json;

/// The `startupTimeout` of the server that never answers.
const HANG_TIMEOUT: Duration = Duration::from_millis(500);

/// How long after mcpx starts both failed starts must be logged: the hanging server's
/// [`HANG_TIMEOUT`], and room for mcpx's own start and a loaded machine (about 1.1 s in all,
/// measured; CI runs the test binaries side by side on two cores). Before: 30 s, in which a
/// start timeout of 30 s (the default) would have passed too; 6 s is far inside it.
const LOG_WAIT: Duration = Duration::from_secs(6);

#[tokio::test]
#[cfg_attr(windows, ignore = "its dying server is an `sh` script")]
async fn a_server_that_dies_starting_is_logged_with_its_stderr_and_startup_timeout_applies() {
    if spec().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dies = json!({"command": "sh", "args": ["-c", "echo first words >&2; echo last words >&2; exit 3"]});
    let hangs = json!({"command": "sh", "args": ["-c", "exec sleep 60"],
        "startupTimeout": HANG_TIMEOUT.as_secs_f64()});
    let extra = format!(r#""dies": {dies}, "hangs": {hangs}"#);
    let config = common::config(dir.path(), &[], &extra, "");
    let deadline = tokio::time::Instant::now() + LOG_WAIT;
    let mut gateway = Downstream::start(&config, &[], json!({})).await;
    let wanted = [
        r#"server="dies""#,
        r#"stderr=["first words", "last words"]"#,
        r#"server="hangs""#,
        "did not start within 0.5 s (its startupTimeout)",
    ];
    assert!(
        logged(
            &gateway,
            &wanted,
            deadline.saturating_duration_since(tokio::time::Instant::now())
        )
        .await,
        "{}",
        gateway.log()
    );
    // The others are served all the same.
    let names = gateway.tool_names().await;
    assert!(names.iter().any(|n| n == "demo__echo"), "{names:?}");
    gateway.close().await;
}
