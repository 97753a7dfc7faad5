//! The stdio transport against real child processes.
//!
//! Unix only: its children are `sh` scripts, `cat` and `sleep`, watched through /proc. The
//! transport's platform-specific part (starting, stopping and reaping a child and what it started)
//! is tested on every platform in `process_tree.rs`.

#![cfg(unix)]

use std::time::Duration;

use mcpclient::{
    Frame, FrameError, StdioCommand, StdioTransport, Transport, TransportError, MAX_FRAME_BYTES,
};

fn sh(script: &str) -> StdioCommand {
    StdioCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..StdioCommand::default()
    }
}

/// Bounds every receive, so a broken transport fails the test instead of hanging it.
async fn next(t: &mut StdioTransport) -> Option<Result<Frame, TransportError>> {
    tokio::time::timeout(Duration::from_secs(10), t.receive())
        .await
        .expect("receive timed out")
}

/// `R` running, `S` sleeping, `Z` zombie; `None` once the process is gone (reaped).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim().chars().next()
}

#[tokio::test]
async fn frames_round_trip_byte_for_byte_through_a_real_child() {
    let mut t = StdioTransport::spawn(&StdioCommand {
        program: "cat".into(),
        ..StdioCommand::default()
    })
    .unwrap();
    let text = r#"{"jsonrpc":"2.0","id":1,"result":{"z":18446744073709551617,"a":1.000000000000000000000000000001,"_meta":{"k":[]}}}"#;
    t.send(&Frame::parse(text).unwrap()).await.unwrap();
    assert_eq!(next(&mut t).await.unwrap().unwrap().text(), text);
    t.close().await.unwrap();
}

#[tokio::test]
async fn non_json_lines_and_oversized_frames_are_reported_and_skipped() {
    let script = format!(
        "echo 'this is a log line'; head -c {} /dev/zero | tr '\\0' x; echo; echo; echo '{{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}}'",
        MAX_FRAME_BYTES + 1
    );
    let mut t = StdioTransport::spawn(&sh(&script)).unwrap();
    assert!(matches!(
        next(&mut t).await,
        Some(Err(TransportError::BadFrame(FrameError::NotJson { excerpt, .. }))) if excerpt == "this is a log line"
    ));
    assert!(matches!(
        next(&mut t).await,
        Some(Err(TransportError::BadFrame(FrameError::TooLarge { limit }))) if limit == MAX_FRAME_BYTES
    ));
    // The blank line is skipped; the frame after the bad ones still arrives.
    assert_eq!(
        next(&mut t).await.unwrap().unwrap().text(),
        r#"{"jsonrpc":"2.0","method":"ok"}"#
    );
    assert!(
        next(&mut t).await.is_none(),
        "end of stream after the child exits"
    );
    t.close().await.unwrap();
}

#[tokio::test]
async fn stderr_is_captured_and_never_mixed_into_frames() {
    let mut t = StdioTransport::spawn(&sh(
        "echo 'warming up' >&2; echo '{\"a\":1}'; echo done >&2",
    ))
    .unwrap();
    assert_eq!(next(&mut t).await.unwrap().unwrap().text(), r#"{"a":1}"#);
    assert!(next(&mut t).await.is_none());
    t.close().await.unwrap();
    // The stderr reader runs beside the transport; give it a moment to drain.
    for _ in 0..100 {
        if t.stderr_tail().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(t.stderr_tail(), ["warming up", "done"]);
}

#[tokio::test]
async fn args_env_and_cwd_reach_the_child() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let mut cmd = sh("printf '{\"arg\":\"%s\",\"env\":\"%s\",\"cwd\":\"%s\"}\\n' \"$0\" \"$MCPX_TEST_VAR\" \"$(pwd)\"");
    cmd.args.push("first".into());
    cmd.env.insert("MCPX_TEST_VAR".into(), "secret-ish".into());
    cmd.cwd = Some(dir.clone());
    let mut t = StdioTransport::spawn(&cmd).unwrap();
    let frame = next(&mut t).await.unwrap().unwrap().value().unwrap();
    assert_eq!(frame["arg"], "first");
    assert_eq!(frame["env"], "secret-ish");
    assert_eq!(frame["cwd"], dir.canonicalize().unwrap().to_str().unwrap());
    t.close().await.unwrap();
}

#[tokio::test]
async fn a_missing_program_is_a_typed_spawn_error() {
    let err = StdioTransport::spawn(&StdioCommand {
        program: "/nonexistent/mcp-server".into(),
        ..StdioCommand::default()
    })
    .err()
    .unwrap();
    assert!(
        matches!(&err, TransportError::Spawn { program, .. } if program == "/nonexistent/mcp-server")
    );
    assert!(err
        .to_string()
        .starts_with("cannot start `/nonexistent/mcp-server`: "));
}

#[tokio::test]
async fn close_stops_and_reaps_a_child_that_ignores_its_stdin() {
    // `sleep` never reads stdin, so closing it does not stop it: close must kill and reap.
    let mut t = StdioTransport::spawn(&StdioCommand {
        program: "sleep".into(),
        args: vec!["300".into()],
        ..StdioCommand::default()
    })
    .unwrap();
    let pid = t.pid().unwrap();
    assert!(
        process_state(pid).is_some_and(|s| s != 'Z'),
        "running before close"
    );
    t.close().await.unwrap();
    assert_eq!(process_state(pid), None, "the child is gone, not a zombie");
    assert!(matches!(
        t.send(&Frame::parse("{}").unwrap()).await,
        Err(TransportError::Closed)
    ));
}

#[tokio::test]
async fn dropping_the_transport_kills_the_child() {
    let t = StdioTransport::spawn(&StdioCommand {
        program: "sleep".into(),
        args: vec!["300".into()],
        ..StdioCommand::default()
    })
    .unwrap();
    let pid = t.pid().unwrap();
    drop(t);
    // Killed: gone, or dead and waiting for the runtime's reaper.
    let stopped = |state: Option<char>| matches!(state, None | Some('Z' | 'X'));
    let mut state = process_state(pid);
    for _ in 0..100 {
        if stopped(state) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        state = process_state(pid);
    }
    assert!(stopped(state), "still running: {state:?}");
}
