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
mod log;
mod login;
mod output;
mod platform;
mod prompt;
mod remembered;
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
            let text = format!("{err:#}");
            eprintln!("{}: {}", output::style::error("mcpx"), log::shown(&text));
            ExitCode::from(cli::EXIT_TROUBLE)
        }
    }
}

fn run(raw: cli::Cli) -> anyhow::Result<ExitCode> {
    use cli::Command;
    let config = || -> anyhow::Result<config::Config> {
        let config = config::Config::load(raw.config.as_deref())?;
        log::keep_out(config.secrets());
        Ok(config)
    };
    login::allow_login_anywhere(raw.login);
    let verbosity = log::Verbosity {
        quiet: raw.quiet,
        verbose: raw.verbose,
    };
    // `serve` logs through a queue of its own, set up with its options.
    if !matches!(raw.command, Command::Serve { .. }) {
        log::commands_to_stderr(verbosity);
    }
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
            refresh,
        } => {
            if let Some(query) = search {
                let limit = limit.map_or(commands::search::SEARCH_LIMIT, usize::from);
                let asked = commands::search::Asked {
                    query,
                    limit,
                    json,
                    refresh,
                };
                return commands::mcp::search(&config()?, server.as_deref(), &asked);
            }
            let dialect = match dialect.as_str() {
                "2020-12" => mcpgateway::DownstreamDialect::Draft202012,
                _ => mcpgateway::DownstreamDialect::Original,
            };
            let listing = commands::mcp::Listing {
                json,
                dialect,
                refresh,
            };
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
            refresh,
        } => {
            // The parser allows the three names only.
            let targets: Vec<toolcompat::Target> = target
                .iter()
                .filter_map(|t| toolcompat::Target::from_name(t))
                .collect();
            commands::mcp::lint(&config()?, server.as_deref(), &targets, refresh)
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
                log: verbosity,
            };
            commands::serve::run(&config, serve)
        }
        Command::Import {
            ref target,
            dry_run,
        } => {
            let choice = target.checked()?;
            commands::clients::import(&config_for(&raw, &choice)?, &choice, dry_run)
        }
        Command::Install {
            ref target,
            dry_run,
            ref http,
            ref token_env,
        } => {
            let choice = target.checked()?;
            let gateway =
                commands::clients::Remote::checked(http.as_deref(), token_env.as_deref())?;
            commands::clients::install(&config_for(&raw, &choice)?, &choice, dry_run, gateway)
        }
        Command::Uninstall {
            ref target,
            dry_run,
        } => {
            let choice = target.checked()?;
            commands::clients::uninstall(&config_for(&raw, &choice)?, &choice, dry_run)
        }
        Command::Add {
            ref name,
            ref search,
            ref registry,
            ref as_name,
            remote,
            dry_run,
        } => match (search, name) {
            (Some(words), _) => commands::add::search(registry, words),
            (None, Some(name)) => {
                let asked = commands::add::Asked {
                    name,
                    as_name: as_name.as_deref(),
                    remote,
                    dry_run,
                };
                commands::add::add(&config_to_write(&raw)?, registry, &asked)
            }
            // clap requires one of the two.
            (None, None) => Ok(ExitCode::from(cli::EXIT_TROUBLE)),
        },
        Command::Doctor { http } => commands::doctor::run(config(), http),
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
            ref era,
            crash_on_unknown_method,
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
                era: match era.as_str() {
                    "modern" => mcpx_fixture::Era::Modern,
                    "dual" => mcpx_fixture::Era::Dual,
                    _ => mcpx_fixture::Era::Legacy,
                },
                crash_on_unknown_method,
            };
            let (input, output) = (std::io::stdin().lock(), std::io::stdout().lock());
            match mcpx_fixture::serve(input, output, options) {
                Some(why) => {
                    eprintln!("{why}");
                    Ok(ExitCode::FAILURE)
                }
                None => Ok(ExitCode::SUCCESS),
            }
        }
    }
}

/// The config file `add` writes: `--config`, else the one the other commands read.
fn config_to_write(raw: &cli::Cli) -> anyhow::Result<std::path::PathBuf> {
    config::path_for_writing(raw.config.as_deref(), true)
}

/// The config file a client command writes (and records installs beside): `--config`, else
/// for a project's file the one the other commands read in this folder, else the global one
/// (a user's file serves every folder).
fn config_for(raw: &cli::Cli, choice: &cli::ClientChoice) -> anyhow::Result<std::path::PathBuf> {
    let project = matches!(
        choice,
        cli::ClientChoice::Client(_, mcpclients::Scope::Project)
    );
    config::path_for_writing(raw.config.as_deref(), project)
}

/// Sleeps `delay` seconds and then spins until the process has used `cpu` seconds of CPU: a
/// slow-starting server (an interpreter loading, a package resolved) for the startup
/// benchmark and tests. Where the platform does not tell the CPU time used (Windows), the
/// spin's own duration stands for it.
fn slow_start(delay: f64, cpu: f64) {
    use std::time::{Duration, Instant};
    std::thread::sleep(Duration::from_secs_f64(delay));
    let cpu = Duration::from_secs_f64(cpu);
    let spinning = Instant::now();
    while platform::cpu_time().unwrap_or_else(|| spinning.elapsed()) < cpu {
        std::hint::spin_loop();
    }
}
