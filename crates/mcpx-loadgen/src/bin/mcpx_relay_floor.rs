//! `mcpx-relay-floor PROGRAM [ARG]...`: the floor no stdio gateway can beat, for
//! `scripts/bench-one`. Starts PROGRAM (an MCP server over stdio) and copies bytes, as they
//! come, from its own stdin to the server's and from the server's stdout to its own: no framing,
//! no parsing, nothing checked. On the runtime `mcpx serve`'s stdio front uses (one thread), so
//! what it spends a call is what two pipes' worth of waits, reads and writes cost on this
//! machine. Ends when the server's stdout closes (its input closed, the server's is closed).

#![allow(clippy::print_stderr)]

use std::process::ExitCode;

async fn relay(program: String, args: Vec<String>) -> std::io::Result<()> {
    let (_server, mut to_server, mut from_server) = mcpx_loadgen::start_piped(&program, &args)?;
    // Its stdin and stdout taken as `mcpx serve` takes them.
    let (mut input, mut output) = mcpclient::own_stdio();
    let up = async {
        tokio::io::copy(&mut input, &mut to_server).await?;
        drop(to_server);
        Ok::<_, std::io::Error>(())
    };
    let down = tokio::io::copy(&mut from_server, &mut output);
    tokio::pin!(down);
    tokio::select! {
        // Its input closed: so is the server's, whose last answers are copied till its end.
        copied = up => {
            copied?;
            down.await?;
        }
        copied = &mut down => { copied?; }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: mcpx-relay-floor PROGRAM [ARG]...");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcpx-relay-floor: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(relay(program, args.collect())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcpx-relay-floor: {error}");
            ExitCode::from(1)
        }
    }
}
