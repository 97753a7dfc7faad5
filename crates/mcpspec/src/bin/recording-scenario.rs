//! Test-only: the child process of `tests/recording.rs`. A [`Recording`] around a child that
//! answers its first line sends one frame and reads one, in a spawned task, where a panic would
//! be lost: the protocol violation must end this process (SIGABRT, its lines on stderr).
//! `server`: the child's answer is invalid; `client`: the frame sent is. Exit 0 means the
//! violation went unnoticed; 2, that it could not run (no protocol schema, a bad argument).

#![allow(clippy::print_stderr)]

use std::process::ExitCode;

use mcpclient::{Frame, StdioCommand, StdioTransport, Transport};
use mcpspec::{spec_or_skip, Recording};

fn main() -> ExitCode {
    let which = std::env::args().nth(1).unwrap_or_default();
    let (answer, request) = match which.as_str() {
        "server" => (
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ),
        "client" => (
            "{}",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        ),
        _ => {
            eprintln!("usage: recording-scenario server|client");
            return ExitCode::from(2);
        }
    };
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return ExitCode::from(2);
    };
    let spec: &'static mcpspec::Spec = Box::leak(Box::new(spec));
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("recording-scenario: {error}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        let child = StdioTransport::spawn(&StdioCommand {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                format!("read line; echo '{answer}'; read rest"),
            ],
            ..StdioCommand::default()
        });
        let Ok(child) = child else { return };
        let mut recording = Recording::new(spec, child);
        let _ = tokio::spawn(async move {
            let _ = recording
                .send(&Frame::parse(request).expect("a frame"))
                .await;
            let _ = recording.receive().await;
        })
        .await;
    });
    // Reached only when the violation went unnoticed.
    ExitCode::SUCCESS
}
