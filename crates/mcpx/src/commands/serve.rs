//! `mcpx serve`: the gateway on stdio or Streamable HTTP, with its log on stderr.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use mcpgateway::{Gateway, GatewayOptions, HttpOptions};

use mcpx::config::Config;

use crate::stderr_log::{StderrLog, LOG_FLUSH_GRACE};

/// `mcpx serve`, its arguments checked.
#[derive(Debug)]
pub(crate) struct Serve {
    pub(crate) http: Option<SocketAddr>,
    pub(crate) token: Option<String>,
    pub(crate) lazy: bool,
    pub(crate) timeout: Duration,
}

/// Logs to stderr (never stdout: on the stdio front it carries the protocol), filtered by
/// `MCPX_LOG` (default `info`), through a queue that never holds the gateway up
/// ([`StderrLog`]).
fn log_to_stderr() -> StderrLog {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("MCPX_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let log = StderrLog::start();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(log.clone())
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    log
}

/// Standard input and output for the stdio front. When they are pipes (as when a client
/// spawns mcpx) they are read and written as non-blocking pipes on the runtime; Tokio's own
/// stdin and stdout go through a blocking thread for every read and write, which costs a
/// thread hand-off per frame.
fn stdio() -> (
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let input = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd);
    let output = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd);
    let input: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match input {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let output: Box<dyn tokio::io::AsyncWrite + Unpin + Send> = match output {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// Completes on SIGINT or SIGTERM: the gateway then stops its servers (and what they started)
/// before mcpx exits, rather than leaving them behind.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(error) => {
            tracing::warn!(%error, "cannot watch SIGTERM");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT"),
        _ = term.recv() => tracing::info!("SIGTERM"),
    }
}

/// The most worker threads of the HTTP front's runtime.
const HTTP_WORKERS: usize = 4;

/// Worker threads for the HTTP front: one per core, at least two (so that a long request never
/// holds up the others), at most [`HTTP_WORKERS`].
fn http_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, HTTP_WORKERS)
}

/// Raises the soft limit of open files to the hard one: each HTTP connection and each stdio
/// server's pipes take descriptors, and the common soft limit (1,024) is below the connection
/// cap.
fn raise_open_files() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => tracing::debug!(from = soft, to = hard, "open files limit raised"),
            Err(error) => tracing::warn!(%error, soft, "cannot raise the open files limit"),
        },
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot read the open files limit"),
    }
}

pub(crate) fn run(config: &Config, serve: Serve) -> anyhow::Result<ExitCode> {
    let log = log_to_stderr();
    raise_open_files();
    // The stdio front has one client: one thread for the async work, since handing each frame
    // between worker threads cost more than a second thread gave (BENCHMARKS.md). The HTTP
    // front has many: with one thread, one client's huge request (megabytes to read, decode and
    // check) held up every other client for its whole duration (a ping waited 1.3 s), so it
    // gets a worker per core, at most HTTP_WORKERS.
    let runtime = match serve.http {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(http_workers())
            .enable_all()
            .build(),
    }
    .context("cannot start the async runtime")?;
    // Each upstream's OAuth client: stored tokens, refreshed, never a login.
    let upstreams: Vec<_> = config
        .servers
        .iter()
        .map(|s| {
            let reach = crate::login::upstream_reach(s)?;
            Ok(mcpgateway::UpstreamConfig {
                transport: reach,
                ..s.upstream()
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let served = runtime.block_on(async {
        let options = GatewayOptions {
            invalid_arguments: config.gateway.invalid_arguments,
            downstream_dialect: config.gateway.downstream_dialect,
            exposure: config.gateway.exposure.clone(),
            lock_file: Some(config.path.with_file_name(toolpin::LOCK_FILE)),
            lazy: serve.lazy,
            timeout: serve.timeout,
            ..GatewayOptions::default()
        };
        let gateway = Gateway::start(upstreams, options);
        let served = match serve.http {
            None => {
                let (input, output) = stdio();
                tokio::select! {
                    served = mcpgateway::serve_stdio(&gateway, input, output) => {
                        served.context("stdio front")
                    }
                    () = stop_signal() => {
                        gateway.end_sessions();
                        Ok(())
                    }
                }
            }
            Some(addr) => {
                // Refused before binding: nothing listens beyond loopback without a token or OAuth.
                let protected = serve.token.is_some() || config.gateway.auth.is_some();
                if !addr.ip().is_loopback() && !protected {
                    return Err(mcpgateway::HttpError::TokenRequired { addr }.into());
                }
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot listen on {addr}"))?;
                let local = listener.local_addr()?;
                tracing::info!(
                    "listening {local} (MCP endpoint http://{local}{})",
                    mcpgateway::MCP_PATH
                );
                let http = HttpOptions {
                    token: serve.token.clone(),
                    auth: config.gateway.auth.clone(),
                    allowed_origins: config.gateway.allowed_origins.clone(),
                    max_sessions: config.gateway.max_sessions,
                    max_connections: config.gateway.max_connections,
                    header_read_timeout: config.gateway.header_read_timeout,
                    body_read_timeout: config.gateway.body_read_timeout,
                    session_idle_timeout: config.gateway.session_idle_timeout,
                };
                mcpgateway::serve_http(gateway.clone(), listener, http, stop_signal())
                    .await
                    .map_err(anyhow::Error::from)
            }
        };
        gateway.shutdown().await;
        tracing::info!(
            rejected_calls = gateway.rejected_calls(),
            output_warnings = gateway.output_warnings(),
            pin_changes = gateway.pin_changes(),
            dropped_log_lines = log.dropped(),
            "stopped"
        );
        served.map(|()| ExitCode::SUCCESS)
    });
    log.flush(LOG_FLUSH_GRACE);
    served
}
