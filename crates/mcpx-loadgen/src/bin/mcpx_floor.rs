//! `mcpx-floor ADDR [--one-thread] [--relay PROGRAM [ARG]...]`: the floor no HTTP gateway can beat, for
//! `scripts/bench`. A bare HTTP server (axum on hyper) that answers each POSTed JSON-RPC message
//! at once, as a Streamable HTTP server would without any MCP server behind it: `initialize`
//! with a fixed result, `tools/call` with `get-sum`'s result for its arguments (or the demo
//! server's `blob` text), notifications with 202.
//!
//! With `--relay`, the floor no gateway from HTTP to a stdio server can beat: it starts PROGRAM
//! (an MCP server over stdio), initializes it once, and hands each POSTed request other than
//! `initialize` to it as one line, answering with the line that comes back: the HTTP floor plus
//! one pipe each way, nothing checked, nothing rewritten, one request at a time.
//!
//! On a multi-thread runtime with a worker per core, as `mcpx serve --http` by default; with
//! `--one-thread`, on one thread, as `mcpx serve --http --threads 1`.
//!
//! Prints `listening ADDR` on stderr. Loopback only.

#![allow(clippy::print_stderr)]

use std::process::ExitCode;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Mutex;

/// A stdio server requests are relayed to, one at a time.
struct Relay {
    _server: Child,
    pipes: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
}

impl Relay {
    /// Starts `program` and initializes it (2025-11-25).
    async fn start(program: &str, args: &[String]) -> std::io::Result<Relay> {
        let (server, to, from) = mcpx_loadgen::start_piped(program, args)?;
        let relay = Relay {
            _server: server,
            pipes: Mutex::new((to, BufReader::new(from))),
        };
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "mcpx-floor", "version": "0"}}});
        relay.exchange(&initialize.to_string()).await?;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        relay
            .pipes
            .lock()
            .await
            .0
            .write_all(format!("{initialized}\n").as_bytes())
            .await?;
        Ok(relay)
    }

    /// Writes `request` (one line of JSON) and reads the line that answers it.
    async fn exchange(&self, request: &str) -> std::io::Result<String> {
        let mut pipes = self.pipes.lock().await;
        let (to, from) = &mut *pipes;
        let mut line = Vec::with_capacity(request.len() + 1);
        line.extend_from_slice(request.trim_end().as_bytes());
        line.push(b'\n');
        to.write_all(&line).await?;
        let mut answer = String::new();
        if from.read_line(&mut answer).await? == 0 {
            return Err(std::io::Error::other("the server closed its output"));
        }
        Ok(answer)
    }
}

async fn answer(State(relay): State<Option<Arc<Relay>>>, body: String) -> Response {
    let Ok(message) = serde_json::from_str::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = message.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
    if let Some(relay) = relay.filter(|_| message["method"] != "initialize") {
        if body.contains('\n') {
            return StatusCode::BAD_REQUEST.into_response();
        }
        return match relay.exchange(&body).await {
            Ok(line) => ([(header::CONTENT_TYPE, "application/json")], line).into_response(),
            Err(error) => (StatusCode::BAD_GATEWAY, error.to_string()).into_response(),
        };
    }
    let result = match message["method"].as_str() {
        Some("initialize") => {
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcpx-floor", "version": "0"}})
        }
        Some("tools/call") if message["params"]["name"] == "blob" => {
            let bytes = message["params"]["arguments"]["bytes"]
                .as_u64()
                .unwrap_or(0);
            let text = mcpx_fixture::blob(usize::try_from(bytes).unwrap_or(usize::MAX));
            json!({"content": [{"type": "text", "text": text}]})
        }
        Some("tools/call") => {
            let args = &message["params"]["arguments"];
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            json!({"content": [{"type": "text", "text": sum.to_string()}], "structuredContent": {"sum": sum}})
        }
        _ => json!({}),
    };
    let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
    (
        [(header::CONTENT_TYPE, "application/json")],
        response.to_string(),
    )
        .into_response()
}

/// Says how to call it; the exit code of a wrong call.
fn usage() -> ExitCode {
    eprintln!("usage: mcpx-floor ADDR [--one-thread] [--relay PROGRAM [ARG]...]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let one_thread = args.next_if(|a| a == "--one-thread").is_some();
    let runtime = if one_thread {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    match runtime {
        Ok(runtime) => runtime.block_on(serve(addr, args.collect())),
        Err(error) => {
            eprintln!("mcpx-floor: {error}");
            ExitCode::from(2)
        }
    }
}

async fn serve(addr: String, rest: Vec<String>) -> ExitCode {
    let mut args = rest.into_iter();
    let relay = match args.next().as_deref() {
        None => None,
        Some("--relay") => {
            let Some(program) = args.next() else {
                return usage();
            };
            match Relay::start(&program, &args.collect::<Vec<_>>()).await {
                Ok(relay) => Some(Arc::new(relay)),
                Err(error) => {
                    eprintln!("mcpx-floor: {program}: {error}");
                    return ExitCode::from(2);
                }
            }
        }
        Some(_) => return usage(),
    };
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(listener) if listener.local_addr().is_ok_and(|a| a.ip().is_loopback()) => listener,
        Ok(_) => {
            eprintln!("mcpx-floor: loopback addresses only");
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("mcpx-floor: {error}");
            return ExitCode::from(2);
        }
    };
    if let Ok(local) = listener.local_addr() {
        eprintln!("listening {local}");
    }
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let app = axum::Router::new()
        .route("/mcp", post(answer))
        .with_state(relay);
    match axum::serve(listener, app).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcpx-floor: {error}");
            ExitCode::from(2)
        }
    }
}
