//! `mcpx-load`: loads an MCP server or gateway with checked `tools/call`s and prints a JSON
//! report.
//!
//! ```text
//! mcpx-load [--clients N] [--concurrency C] [--calls N] [--mix valid,invalid,drifting]
//!           [--prefix demo__] [--cpu-of PID|@PIDFILE]
//!           (--http URL [--modern [--new-connection]] [--header NAME:VALUE]... | -- PROGRAM ARG...)
//! ```
//!
//! `--modern` speaks MCP 2026-07-28: no session, each call one POST; with `--new-connection`
//! each on a connection of its own (a client that keeps none, as urllib or curl).
//!
//! `--cpu-of` adds `cpu_us_per_call` to the report: the CPU time that process (all its
//! threads) spent from the first call to the last, divided by the calls; `@PIDFILE` reads the
//! pid from a file once the handshakes are done (a gateway started by PROGRAM writes it).
//!
//! Exit codes: 0 every call got its expected answer; 1 some did not; 2 bad arguments or no
//! connection.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Duration;

use mcpclient::{HttpConfig, Reach, StdioCommand};
use mcpx_loadgen::{run, Call, CpuOf, Load};

const USAGE: &str = "usage: mcpx-load [--clients N] [--concurrency C] [--calls N] [--mix valid,invalid,drifting] [--prefix P] [--timeout SECONDS] [--cpu-of PID|@PIDFILE] (--http URL [--modern [--new-connection]] [--header NAME:VALUE]... | -- PROGRAM ARG...)";

fn parse(args: Vec<String>) -> Result<(Reach, Load), String> {
    let mut load = Load {
        clients: 1,
        concurrency: 1,
        calls: 1_000,
        mix: vec![Call::Valid],
        prefix: String::new(),
        timeout: Duration::from_secs(60),
        cpu_of: None,
        modern: false,
        new_connection: false,
    };
    let mut url = None;
    let mut headers = Vec::new();
    let mut args = args.into_iter();
    let number = |value: Option<String>| -> Result<usize, String> {
        value
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| USAGE.to_owned())
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--clients" => load.clients = number(args.next())?,
            "--concurrency" => load.concurrency = number(args.next())?,
            "--calls" => load.calls = number(args.next())?,
            "--timeout" => load.timeout = Duration::from_secs(number(args.next())? as u64),
            "--prefix" => load.prefix = args.next().ok_or(USAGE)?,
            "--cpu-of" => {
                let of = args.next().ok_or(USAGE)?;
                load.cpu_of = Some(match of.strip_prefix('@') {
                    Some(file) => CpuOf::PidFile(file.into()),
                    None => CpuOf::Pid(of.parse().map_err(|_| USAGE.to_owned())?),
                });
            }
            "--mix" => {
                load.mix = args
                    .next()
                    .ok_or(USAGE)?
                    .split(',')
                    .map(|k| Call::named(k).ok_or_else(|| format!("unknown call kind {k}")))
                    .collect::<Result<_, _>>()?;
            }
            "--http" => url = Some(args.next().ok_or(USAGE)?),
            "--modern" => load.modern = true,
            "--new-connection" => load.new_connection = true,
            "--header" => {
                let header = args.next().ok_or(USAGE)?;
                let (name, value) = header.split_once(':').ok_or(USAGE)?;
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            "--" => {
                let program = args.next().ok_or(USAGE)?;
                let command = StdioCommand {
                    program,
                    args: args.collect(),
                    ..StdioCommand::default()
                };
                return Ok((Reach::Stdio(command), load));
            }
            _ => return Err(USAGE.to_owned()),
        }
    }
    let url = url.ok_or(USAGE)?;
    Ok((
        Reach::Http(HttpConfig {
            url,
            headers,
            auth: None,
        }),
        load,
    ))
}

fn main() -> ExitCode {
    let (target, load) = match parse(std::env::args().skip(1).collect()) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("mcpx-load: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcpx-load: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(&target, &load)) {
        Ok(report) => {
            println!("{}", report.to_json());
            if report.right == report.calls && report.unmatched == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(error) => {
            eprintln!("mcpx-load: {error:#}");
            ExitCode::from(2)
        }
    }
}
