//! `mcpx`: a gateway and command-line client for MCP servers it does not control.
//!
//! This binary is thin: it parses arguments, reads files, prints and picks the exit code.
//! Everything it does lives in the library crates.
//!
//! Exit codes (the same table is in `--help` and the README):
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success |
//! | 1    | the work was done and the answer is no: arguments rejected, an `isError` result or a JSON-RPC error, an invalid instance, a lint problem |
//! | 2    | mcpx could not do its job: config, spawn, transport, timeout, a schema that does not compile, a file that can't be read, bad arguments |

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

// Standard error goes through anstream, which strips colour when it is not a terminal or
// NO_COLOR is set.
use anstream::eprintln;

mod commands;
mod connect;
mod fleet;
mod input;
mod login;
mod output;
mod prompt;
mod stderr_log;

use std::process::ExitCode;

use anyhow::Context;
use clap::FromArgMatches;
use mcpx::{cli, config};

fn main() -> ExitCode {
    let matches = cli::command().get_matches();
    let raw = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match run(raw) {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}: {err:#}", output::style::error("mcpx"));
            ExitCode::from(cli::EXIT_TROUBLE)
        }
    }
}

fn run(raw: cli::Cli) -> anyhow::Result<ExitCode> {
    use cli::Command;
    let config = || config::Config::load(raw.config.as_deref());
    login::allow_login_anywhere(raw.login);
    match raw.command {
        Command::Auth(cmd) => commands::auth::run(&config()?, cmd),
        Command::Schema(cmd) => commands::schema::run(cmd.checked()?),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli::command(), "mcpx", &mut script);
            std::io::Write::write_all(&mut std::io::stdout().lock(), &script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Servers { json } => commands::mcp::servers(&config()?, json),
        Command::Tools {
            ref server,
            ref tool,
            ref search,
            limit,
            json,
            ref dialect,
        } => {
            if let Some(query) = search {
                let limit = limit.map_or(commands::search::SEARCH_LIMIT, usize::from);
                let asked = commands::search::Asked { query, limit, json };
                return commands::mcp::search(&config()?, server.as_deref(), &asked);
            }
            let dialect = match dialect.as_str() {
                "2020-12" => mcpgateway::DownstreamDialect::Draft202012,
                _ => mcpgateway::DownstreamDialect::Original,
            };
            let listing = commands::mcp::Listing { json, dialect };
            commands::mcp::tools(&config()?, server.as_deref(), tool.as_deref(), listing)
        }
        Command::Call {
            ref server,
            ref tool,
            ref args,
            json,
            ref elicit,
            ref save_dir,
        } => {
            let elicit = connect::Elicit::choose(elicit.as_deref())?;
            commands::mcp::call(&config()?, server, tool, args, json, elicit, save_dir)
        }
        Command::Lint {
            ref server,
            ref target,
        } => {
            // The parser allows the three names only.
            let targets: Vec<toolcompat::Target> = target
                .iter()
                .filter_map(|t| toolcompat::Target::from_name(t))
                .collect();
            commands::mcp::lint(&config()?, server.as_deref(), &targets)
        }
        Command::Pin {
            ref server,
            check,
            ref approve,
        } => {
            let asked = commands::pin::Pin::from_args(server.as_deref(), check, approve.as_deref());
            commands::pin::run(&config()?, asked)
        }
        Command::Serve {
            stdio: _,
            http,
            ref token,
            lazy,
            timeout,
            watch,
            metrics,
            ref audit,
            drain_timeout,
            threads,
            health,
        } => {
            let config = config()?;
            let serve = commands::serve::Serve {
                http,
                token: token.clone(),
                lazy,
                timeout: std::time::Duration::from_secs(timeout),
                watch,
                metrics,
                audit: audit.clone(),
                drain_timeout: std::time::Duration::from_secs(drain_timeout),
                threads: threads.map(usize::from),
                health,
            };
            commands::serve::run(&config, serve)
        }
        Command::DemoServer {
            broken,
            faults,
            stubborn,
            notifying,
            generated_tools,
            drifted,
            ref record,
            start_delay,
            start_cpu,
        } => {
            slow_start(start_delay, start_cpu);
            let record = match record {
                Some(path) => Some(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .with_context(|| format!("cannot open {}", path.display()))?,
                ),
                None => None,
            };
            let options = mcpx_fixture::Options {
                record,
                broken,
                faults,
                stubborn,
                generated_tools,
                notifying,
                drifted,
            };
            mcpx_fixture::serve(std::io::stdin().lock(), std::io::stdout().lock(), options);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Sleeps `delay` seconds and then spins until the process has used `cpu` seconds of CPU: a
/// slow-starting server (an interpreter loading, a package resolved) for the startup
/// benchmark and tests.
fn slow_start(delay: f64, cpu: f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    std::thread::sleep(std::time::Duration::from_secs_f64(delay));
    let used = || {
        getrusage(UsageWho::RUSAGE_SELF).map_or(f64::MAX, |u| {
            let t = u.user_time();
            t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6
        })
    };
    while used() < cpu {
        std::hint::spin_loop();
    }
}
