//! The recording wrapper around a real stdio child.

use mcpclient::{Frame, StdioCommand, StdioTransport, Transport};
use mcpspec::{spec_or_skip, Recording, Side};

/// A child that answers the first line it reads with `answer`.
fn answering(answer: &str) -> StdioTransport {
    StdioTransport::spawn(&StdioCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            format!("read line; echo '{answer}'; read rest"),
        ],
        ..StdioCommand::default()
    })
    .unwrap()
}

#[tokio::test]
async fn valid_traffic_passes_and_is_kept_in_order() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    let mut t = Recording::new(&spec, answering(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    t.send(&Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap())
        .await
        .unwrap();
    let answer = t.receive().await.unwrap().unwrap();
    assert_eq!(answer.text(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let sides: Vec<Side> = t.frames().iter().map(|(s, _)| *s).collect();
    assert_eq!(sides, [Side::Client, Side::Server]);
    t.close().await.unwrap();
}

/// Whether `status` is the end of a process that called `std::process::abort`: killed by
/// SIGABRT on Unix.
#[cfg(unix)]
fn aborted(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    /// SIGABRT, the signal `std::process::abort` ends a process with.
    const SIGABRT: i32 = 6;
    status.signal() == Some(SIGABRT)
}

/// Whether `status` is the end of a process that called `std::process::abort`: on Windows it
/// fails fast, exit code `STATUS_STACK_BUFFER_OVERRUN`.
#[cfg(windows)]
fn aborted(status: std::process::ExitStatus) -> bool {
    /// `STATUS_STACK_BUFFER_OVERRUN` (0xC0000409) as an exit code.
    const FAIL_FAST: u32 = 0xC000_0409;
    status.code().map(i32::cast_unsigned) == Some(FAIL_FAST)
}

/// Runs the `recording-scenario` binary on `which` (`server` or `client`); returns whether it
/// ended aborted, and its stderr. (Before, the child was this test binary again, with a test
/// of its own that passed, asserting nothing, in every ordinary run.)
fn run_scenario(which: &str) -> (bool, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_recording-scenario"))
        .arg(which)
        .output()
        .unwrap();
    (
        aborted(output.status),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn an_invalid_server_frame_ends_the_test_process_with_its_lines() {
    if spec_or_skip("2025-11-25").is_none() {
        return;
    }
    let (aborted, stderr) = run_scenario("server");
    assert!(aborted, "{stderr}");
    assert!(
        stderr.contains("protocol violation: invalid server frame for 2025-11-25:\n$.result: missing property 'tools'"),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_invalid_client_frame_ends_the_test_process_before_it_is_sent() {
    if spec_or_skip("2025-11-25").is_none() {
        return;
    }
    let (aborted, stderr) = run_scenario("client");
    assert!(aborted, "{stderr}");
    assert!(
        stderr.contains("$.params: missing property 'name'"),
        "{stderr}"
    );
}
