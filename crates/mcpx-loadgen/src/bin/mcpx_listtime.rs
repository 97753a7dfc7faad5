//! `mcpx-listtime N -- PROGRAM ARG...`: how long mcpclient takes from spawning a server to a ready,
//! fully compiled tool cache, and how much resident memory the compiled tools take, for
//! `scripts/bench`. PROGRAM must list N tools (`mcpx demo-server --generated-tools N`). Prints
//! one JSON object.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Instant;

use mcpclient::{Client, StdioCommand, StdioTransport};
use serde_json::json;

/// This process's resident memory in KiB (0 where /proc cannot say).
fn rss_kib() -> u64 {
    mcpx_loadgen::resident_kib(std::process::id()).unwrap_or(0)
}

async fn measure(program: String, args: Vec<String>) -> anyhow::Result<serde_json::Value> {
    let before = rss_kib();
    let started = Instant::now();
    let transport = StdioTransport::spawn(&StdioCommand {
        program,
        args,
        ..StdioCommand::default()
    })?;
    let (client, _events) =
        Client::connect(transport, json!({"name": "mcpx-listtime", "version": "0"})).await?;
    let connected = started.elapsed();
    let (tools, _) = client.list_tools().await?;
    let ready = started.elapsed();
    let after = rss_kib();
    let failing = tools.iter().filter(|t| t.input_error().is_some()).count();
    let per_tool = (after.saturating_sub(before)) as f64 / tools.len().max(1) as f64;
    client.close().await;
    Ok(json!({
        "tools": tools.len(),
        "failing": failing,
        "handshake_ms": connected.as_secs_f64() * 1e3,
        "ready_ms": ready.as_secs_f64() * 1e3,
        "rss_growth_kib": after.saturating_sub(before),
        "kib_per_tool": per_tool,
    }))
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(_expected), Some(dashes), Some(program)) = (args.next(), args.next(), args.next())
    else {
        eprintln!("usage: mcpx-listtime N -- PROGRAM ARG...");
        return ExitCode::from(2);
    };
    if dashes != "--" {
        eprintln!("usage: mcpx-listtime N -- PROGRAM ARG...");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcpx-listtime: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(measure(program, args.collect())) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("mcpx-listtime: {error:#}");
            ExitCode::from(2)
        }
    }
}
