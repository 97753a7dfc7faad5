//! The command line on a terminal (a pseudo-terminal): elicitation, `mcpx call` answering the
//! demo server's `book-table` question field by field, with an invalid answer asked again; and
//! the live status lines of servers starting.
//!
//! Unix only: rexpect drives a Unix pseudo-terminal. On Windows the same prompts run in a
//! console, which a test cannot type into from outside (the piped `--elicit` path is tested
//! in `mcp_cli.rs` on every platform).

#![cfg(unix)]

use std::process::Command;

const TIMEOUT_MS: u64 = 30_000;

/// Sends keys once the prompt has had time to put the terminal in raw mode: keys typed before
/// that would be read by the line discipline, not the prompt.
fn keys(session: &mut rexpect::session::PtySession, keys: &str) {
    std::thread::sleep(std::time::Duration::from_millis(300));
    session.send(keys).unwrap();
    session.flush().unwrap();
}

#[test]
fn the_questions_are_asked_one_by_one_and_an_invalid_answer_is_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcpx.json");
    let exe = env!("CARGO_BIN_EXE_mcpx");
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"demo": {{"command": "{exe}", "args": ["demo-server"]}}}}}}"#),
    )
    .unwrap();
    let mut command = Command::new(exe);
    command
        .arg("--config")
        .arg(&config)
        .args(["call", "demo", "book-table", "restaurant=Luigi"])
        .env("NO_COLOR", "1");
    let mut session = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
    session
        .exp_string("The server asks: How many, and when?")
        .unwrap();
    session.exp_string("cancel").unwrap();
    keys(&mut session, "\r");
    session.exp_string("Party size (integer)").unwrap();
    keys(&mut session, "0\r");
    session.exp_string("party: minimum: got 0, want 1").unwrap();
    keys(&mut session, "4\r");
    session.exp_string("20:00").unwrap();
    keys(&mut session, "\r");
    session.exp_string("Vegetarian menu (yes/no").unwrap();
    keys(&mut session, "y");
    session
        .exp_string("booked Luigi for 4 at 19:00, vegetarian")
        .unwrap();
    session.exp_eof().unwrap();
}

#[test]
fn servers_starting_show_a_status_line_each_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcpx.json");
    let exe = env!("CARGO_BIN_EXE_mcpx");
    // The slow one sleeps a second first, so that its line is drawn while it starts.
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{"quick": {{"command": "{exe}", "args": ["demo-server"]}},
                "slow": {{"command": "sh", "args": ["-c", "sleep 1; exec {exe} demo-server"]}}}}}}"#
        ),
    )
    .unwrap();
    let mut command = Command::new(exe);
    command
        .arg("--config")
        .arg(&config)
        .arg("servers")
        .env("NO_COLOR", "1");
    let mut session = rexpect::session::spawn_command(command, Some(TIMEOUT_MS)).unwrap();
    session.exp_regex("slow +starting").unwrap();
    session
        .exp_regex(r"slow +ok, 2025-11-25 \(probed\), 6 tools \(")
        .unwrap();
    session.exp_string("quick\tstdio\tok").unwrap();
    session.exp_string("slow\tstdio\tok").unwrap();
    session.exp_eof().unwrap();
}
