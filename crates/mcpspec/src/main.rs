//! `mcpspec check --protocol-version V TRANSCRIPT.jsonl`: checks a recorded MCP conversation.
//!
//! Each line of the transcript is `{"from":"client"|"server","message":{...}}`, in wire order.
//! Prints `line N: <flat line>` for every problem. Exit codes: 0 every frame is valid, 1 some
//! frame is not, 2 the input or the protocol schema cannot be read.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use mcpspec::{check_transcript, spec_dir, Spec};

const USAGE: &str = "usage: mcpspec check --protocol-version VERSION TRANSCRIPT.jsonl";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(msg) => {
            eprintln!("mcpspec: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<bool, String> {
    let [command, flag, version, path] = args.as_slice() else {
        return Err(USAGE.to_owned());
    };
    if command != "check" || flag != "--protocol-version" {
        return Err(USAGE.to_owned());
    }
    let schema = spec_dir().join(version).join("schema.json");
    let spec = Spec::from_file(version, &schema).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
    let problems = check_transcript(&spec, &text).map_err(|e| format!("{path}: {e}"))?;
    for problem in &problems {
        println!("{problem}");
    }
    Ok(problems.is_empty())
}
