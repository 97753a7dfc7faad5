//! `mcpx serve`: the gateway on stdio or Streamable HTTP, with its log on stderr.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use mcpgateway::{Gateway, GatewayOptions, HttpOptions, Phase, Stop};

use mcpx::config::Config;

use crate::platform;
use crate::stderr_log::{StderrLog, LOG_FLUSH_GRACE};

/// `mcpx serve`, its arguments checked.
#[derive(Debug)]
pub(crate) struct Serve {
    pub(crate) http: Option<SocketAddr>,
    pub(crate) token: Option<String>,
    pub(crate) lazy: bool,
    pub(crate) timeout: Duration,
    /// Reload the config when its file changes (SIGHUP reloads it either way, where there is
    /// one).
    pub(crate) watch: bool,
    /// Where to serve metrics besides the HTTP front's /metrics.
    pub(crate) metrics: Option<SocketAddr>,
    /// The audit log's file, over the config's.
    pub(crate) audit: Option<std::path::PathBuf>,
    /// How long the requests in flight get after the first stop signal.
    pub(crate) drain_timeout: Duration,
    /// The HTTP front's worker threads (`--threads`); [`http_workers`] when not given.
    pub(crate) threads: Option<usize>,
    /// Where to serve `/healthz` and `/readyz` beside the stdio front.
    pub(crate) health: Option<SocketAddr>,
    /// How much the log says (`-q`, `-v`).
    pub(crate) log: crate::log::Verbosity,
}

/// What the gateway's logs never show: the config's secrets ([`Config::secrets`]) and the
/// bearer token.
fn secrets(config: &Config, serve: &Serve) -> Vec<String> {
    let mut secrets = config.secrets();
    secrets.extend(serve.token.iter().cloned());
    secrets
}

/// The metrics, the audit log (`gateway.audit`, or `--audit FILE`) and the traces
/// (`gateway.traces`) as configured. The audit log never shows a secret ([`secrets`]), in any
/// spelling.
fn observe(
    config: &Config,
    serve: &Serve,
    redactor: &mcpgateway::Redactor,
) -> anyhow::Result<mcpgateway::Observe> {
    let mut audit = config.gateway.audit.clone();
    if let Some(file) = &serve.audit {
        audit
            .get_or_insert_with(mcpgateway::AuditOptions::default)
            .file
            .clone_from(file);
    }
    if let Some(audit) = &mut audit {
        audit.redactor = redactor.clone();
    }
    Ok(mcpgateway::Observe::new(
        audit.as_ref(),
        config.gateway.traces.as_deref(),
    )?)
}

/// Serves the metrics on `addr` (`--metrics`) until the gateway stops; beyond loopback only
/// with a token, which scrapers must then send.
async fn serve_metrics(
    observe: mcpgateway::Observe,
    addr: SocketAddr,
    token: Option<String>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(mcpgateway::HttpError::TokenRequired { addr }.into());
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for metrics"))?;
    let local = listener.local_addr()?;
    tracing::info!("metrics on http://{local}{}", mcpgateway::METRICS_PATH);
    Ok(tokio::spawn(async move {
        let served =
            mcpgateway::serve_metrics(observe, listener, token, std::future::pending()).await;
        if let Err(error) = served {
            tracing::warn!(%error, "the metrics endpoint failed");
        }
    }))
}

/// Logs to stderr (never stdout: on the stdio front it carries the protocol), filtered by
/// `MCPX_LOG`, else `-q` and `-v` (default `info`: see [`crate::log`]), through a queue that
/// never holds the gateway up ([`StderrLog`]).
fn log_to_stderr(verbosity: crate::log::Verbosity) -> StderrLog {
    let filter = verbosity.filter(tracing_subscriber::filter::LevelFilter::INFO);
    let log = StderrLog::start();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(log.clone())
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    log
}

/// Turns SIGINT and SIGTERM (Ctrl-C and Ctrl-Break on Windows) into `stop`: the first starts
/// the drain, the second stops at once. Either way the gateway then stops its servers (and what
/// they started) before mcpx exits, rather than leaving them behind.
async fn watch_signals(stop: Stop) {
    let mut signals = match platform::StopSignals::listen() {
        Ok(signals) => signals,
        Err(error) => {
            tracing::warn!(%error, "cannot watch the stop signals");
            let _ = tokio::signal::ctrl_c().await;
            stop.now();
            return;
        }
    };
    for step in [Phase::Draining, Phase::Stopping] {
        let name = signals.next().await;
        tracing::info!("{name}");
        match step {
            Phase::Draining => stop.drain(),
            _ => stop.now(),
        }
    }
}

/// How long mcpx waits at exit for the runtime's blocking threads. Where standard input is read
/// on one (Windows), the read lasts until the client closes it, which a stop on Ctrl-C does
/// not wait for; everything else has been flushed by then.
const RUNTIME_STOP_GRACE: Duration = Duration::from_secs(1);

/// Worker threads for the HTTP front unless `--threads` says: one per core, so that a big
/// machine is used, and at least two, so that one long request never holds up the others
/// (BENCHMARKS.md, "Threads").
fn http_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, usize::from)
        .max(2)
}

pub(crate) fn run(config: &Config, serve: Serve) -> anyhow::Result<ExitCode> {
    let log = log_to_stderr(serve.log);
    // One redactor for the log and the audit log: a reload adds its config's secrets to both.
    let redactor = mcpgateway::Redactor::new(secrets(config, &serve));
    log.redact_with(redactor.clone());
    let observe = observe(config, &serve, &redactor)?;
    log.count_drops_in(&observe);
    platform::raise_open_files();
    // The stdio front has one client: one thread for the async work, since handing each frame
    // between worker threads cost more than a second thread gave (BENCHMARKS.md). The HTTP
    // front has many: with one thread, one client's huge request (megabytes to read, decode and
    // check) held up every other client for its whole duration (a ping waited 1.3 s), so it
    // gets a worker per core (`--threads`).
    // `--threads 1` makes the stdio front's choice on the HTTP front: one thread, not a
    // multi-thread runtime with one worker (a sixth less CPU a call with a connection per call),
    // for a gateway with one client at a time.
    let workers = match serve.http {
        None => 1,
        Some(_) => serve.threads.unwrap_or_else(http_workers),
    };
    let runtime = match workers {
        1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        workers => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build(),
    }
    .context("cannot start the async runtime")?;
    let applied = super::reload::Applied::new(config)?;
    let served = runtime.block_on(async {
        let options = GatewayOptions {
            invalid_arguments: config.gateway.invalid_arguments,
            downstream_dialect: config.gateway.downstream_dialect,
            exposure: config.gateway.exposure.clone(),
            lock_file: Some(config.path.with_file_name(toolpin::LOCK_FILE)),
            lazy: serve.lazy,
            timeout: serve.timeout,
            max_session_servers: config.gateway.max_session_servers,
            max_session_servers_per_client: config.gateway.max_session_servers_per_client,
            observe: observe.clone(),
            eras: crate::remembered::eras(),
            redactor: redactor.clone(),
            ..GatewayOptions::default()
        };
        let metrics = match serve.metrics {
            Some(addr) => Some(serve_metrics(observe.clone(), addr, serve.token.clone()).await?),
            None => None,
        };
        let gateway = Gateway::start(applied.upstreams(), options);
        let reloads = tokio::spawn(super::reload::reloads(
            gateway.clone(),
            config.path.clone(),
            applied,
            serve.watch,
            redactor,
        ));
        let stop = Stop::new();
        let signals = tokio::spawn(watch_signals(stop.clone()));
        let served = match serve.http {
            None => {
                if let Some(addr) = serve.health {
                    let listener = tokio::net::TcpListener::bind(addr)
                        .await
                        .with_context(|| format!("cannot listen on {addr} (--health)"))?;
                    let local = listener.local_addr()?;
                    tracing::info!(
                        "health on http://{local}{} and {}",
                        mcpgateway::HEALTH_PATH,
                        mcpgateway::READY_PATH
                    );
                    let health = mcpgateway::serve_health(gateway.clone(), listener, stop.clone());
                    tokio::spawn(async move {
                        if let Err(error) = health.await {
                            tracing::warn!(%error, "the health endpoints stopped");
                        }
                    });
                }
                let (input, output) = mcpclient::own_stdio();
                let drained = async {
                    stop.reached(Phase::Draining).await;
                    gateway.drain(serve.drain_timeout, &stop).await;
                };
                tokio::select! {
                    served = mcpgateway::serve_stdio(&gateway, input, output, serve.drain_timeout) => {
                        served.context("stdio front")
                    }
                    () = drained => {
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
                    max_connections_per_address: config.gateway.max_connections_per_address,
                    max_sessions_per_client: config.gateway.max_sessions_per_client,
                    max_unread_stream_bytes: config.gateway.max_unread_stream_bytes,
                    header_read_timeout: config.gateway.header_read_timeout,
                    body_read_timeout: config.gateway.body_read_timeout,
                    session_idle_timeout: config.gateway.session_idle_timeout,
                    drain_timeout: serve.drain_timeout,
                };
                mcpgateway::serve_http(gateway.clone(), listener, http, stop.clone())
                    .await
                    .map_err(anyhow::Error::from)
            }
        };
        reloads.abort();
        stop.now();
        signals.abort();
        gateway.shutdown().await;
        if let Some(metrics) = metrics {
            metrics.abort();
        }
        tracing::info!(
            rejected_calls = gateway.rejected_calls(),
            output_warnings = gateway.output_warnings(),
            pin_changes = gateway.pin_changes(),
            dropped_log_lines = log.dropped(),
            "stopped"
        );
        served.map(|()| ExitCode::SUCCESS)
    });
    observe.flush();
    log.flush(LOG_FLUSH_GRACE);
    runtime.shutdown_timeout(RUNTIME_STOP_GRACE);
    served
}
