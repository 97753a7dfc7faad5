//! `mcpx-floor ADDR`: the floor no HTTP gateway can beat, for `scripts/bench`. A bare HTTP
//! server (axum on hyper) that answers each POSTed JSON-RPC message at once, as a Streamable HTTP
//! server would without any MCP server behind it: `initialize` with a fixed result, `tools/call`
//! with `get-sum`'s result for its arguments (or the demo server's `blob` text), notifications
//! with 202. Prints
//! `listening ADDR` on stderr. Loopback only.

#![allow(clippy::print_stderr)]

use std::process::ExitCode;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use serde_json::{json, Value};

async fn answer(body: String) -> Response {
    let Ok(message) = serde_json::from_str::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = message.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
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

#[tokio::main]
async fn main() -> ExitCode {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
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
    let app = axum::Router::new().route("/mcp", post(answer));
    match axum::serve(listener, app).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcpx-floor: {error}");
            ExitCode::from(2)
        }
    }
}
