//! `mcpx`: a gateway and command-line client for MCP servers it does not control.
//!
//! This binary is thin: it parses arguments, reads files, prints and picks the exit code.
//! Everything it does lives in the library crates.
//!
//! Exit codes (the same table is in `--help` and the README):
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success: every schema compiled, every instance valid |
//! | 1    | the work was done and the answer is no: an instance is invalid |
//! | 2    | mcpx could not do its job: a schema does not compile, a file can't be read or parsed, bad arguments |

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod cli;
mod commands;
mod input;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let raw = cli::Cli::parse();
    match run(raw) {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mcpx: {err:#}");
            ExitCode::from(cli::EXIT_TROUBLE)
        }
    }
}

fn run(raw: cli::Cli) -> anyhow::Result<ExitCode> {
    match raw.command {
        cli::Command::Schema(cmd) => commands::schema::run(cmd.checked()?),
    }
}
