//! An MCP server written with the Rust SDK (`rmcp`), for mcpclient's interop tests.
//!
//! `rmcp-peer stdio` serves on stdin/stdout; `rmcp-peer http` listens on 127.0.0.1 (an
//! ephemeral port) and prints `listening 127.0.0.1:PORT` on stderr once it accepts.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ProgressNotificationParam, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{schemars, tool, tool_handler, tool_router, RoleServer, ServerHandler, ServiceExt};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SumRequest {
    /// The left operand.
    a: i64,
    /// The right operand.
    b: i64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct CountRequest {
    /// How many steps, 100 ms apart, each reported as progress.
    steps: u32,
}

#[derive(Debug, Clone)]
struct Peer;

#[tool_router]
impl Peer {
    #[tool(description = "Adds two integers")]
    fn sum(&self, Parameters(SumRequest { a, b }): Parameters<SumRequest>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Counts to `steps`, 100 ms a step, reporting progress at each step")]
    async fn count(
        &self,
        Parameters(CountRequest { steps }): Parameters<CountRequest>,
        context: RequestContext<RoleServer>,
    ) -> String {
        for step in 1..=steps {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            if let Some(token) = context.meta.get_progress_token() {
                let progress = ProgressNotificationParam::new(token, f64::from(step))
                    .with_total(f64::from(steps));
                let _ = context.peer.notify_progress(progress).await;
            }
        }
        format!("counted to {steps}")
    }
}

#[tool_handler]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::args().nth(1).as_deref() {
        Some("stdio") => {
            let running = Peer.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        Some("http") => {
            let service = StreamableHttpService::new(
                || Ok(Peer),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            #[allow(clippy::print_stderr)]
            {
                eprintln!("listening {}", listener.local_addr()?);
            }
            axum::serve(listener, router).await?;
        }
        _ => return Err("usage: rmcp-peer stdio|http".into()),
    }
    Ok(())
}
