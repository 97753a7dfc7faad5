//! Liveness and readiness, for a supervisor or a load balancer: `GET /healthz` and `GET /readyz`.
//!
//! - `/healthz` is 200 while the process answers at all: restart it only when this fails.
//! - `/readyz` is 200 once the gateway's startup is over and it is not draining; else 503.
//!   Startup is over when every server that starts with the gateway (all of them, less stdio
//!   servers under `--lazy`) has run or failed once: a server that fails to start, or does not
//!   start within its start timeout ([`crate::options::START_TIMEOUT`]), counts as given up on, so one
//!   broken server never keeps a replica out of rotation (its calls get a clear error naming
//!   it, the others work). A server crashing later does not make the gateway unready: every
//!   replica runs the same config, and taking replicas out for a server they all share would
//!   only turn one tool's errors into an outage; it is restarted with backoff meanwhile. From
//!   the first stop signal on (see [`crate::front::drain::Stop`]) it is 503 at once, so that a balancer stops
//!   sending new sessions before the drain ends.
//!
//! Both answer with a small JSON body of counts (servers up, starting, down, not started) and
//! never a server's name, error or address: they are served without the bearer token.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::json;
use tokio::net::TcpListener;

use crate::front::drain::{Phase, Stop};
use crate::gateway::Gateway;
use crate::upstream::State as Upstate;

/// The liveness path.
pub const HEALTH_PATH: &str = "/healthz";

/// The readiness path.
pub const READY_PATH: &str = "/readyz";

/// What the gateway's servers are doing, counted; for `/readyz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Health {
    /// Servers running.
    pub up: usize,
    /// Servers being started (the first time or again).
    pub starting: usize,
    /// Servers down (failed or crashed; restarted with backoff).
    pub down: usize,
    /// Servers not started yet (stdio servers under `--lazy`, before their first use).
    pub idle: usize,
    /// Every server that starts with the gateway has run or failed once.
    pub started: bool,
}

impl Gateway {
    /// The servers' states, counted, and whether startup is over (see the module's policy).
    pub fn health(&self) -> Health {
        let lazy = self.hub.options.lazy;
        let mut health = Health {
            up: 0,
            starting: 0,
            down: 0,
            idle: 0,
            started: true,
        };
        for upstream in self.hub.upstreams.iter() {
            match upstream.state() {
                Upstate::Ready(_) => health.up += 1,
                Upstate::Starting => health.starting += 1,
                Upstate::Down(_) => health.down += 1,
                Upstate::Idle => health.idle += 1,
            }
            if upstream.starts_eagerly(lazy) && !upstream.has_settled() {
                health.started = false;
            }
        }
        health
    }
}

/// The two routes, answered from `gateway` and `stop`, for a router of any front.
pub(crate) fn routes(gateway: Gateway, stop: Stop) -> Router {
    Router::new()
        .route(HEALTH_PATH, get(alive))
        .route(READY_PATH, get(ready))
        .with_state((gateway, stop))
}

/// Serves `/healthz` and `/readyz` alone on `listener` (`mcpx serve --health ADDR`, beside the
/// stdio front) until `stop` reaches [`Phase::Stopping`].
///
/// # Errors
/// The listener's failure.
pub async fn serve_health(
    gateway: Gateway,
    listener: TcpListener,
    stop: Stop,
) -> std::io::Result<()> {
    let app = routes(gateway, stop.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { stop.reached(Phase::Stopping).await })
        .await
}

async fn alive() -> Response {
    json_response(StatusCode::OK, json!({"status": "alive"}).to_string())
}

async fn ready(State((gateway, stop)): State<(Gateway, Stop)>) -> Response {
    let health = gateway.health();
    let (status, verdict) = if stop.is_draining() {
        (StatusCode::SERVICE_UNAVAILABLE, "draining")
    } else if !health.started {
        (StatusCode::SERVICE_UNAVAILABLE, "starting")
    } else {
        (StatusCode::OK, "ready")
    };
    let body = json!({"status": verdict, "servers": {"up": health.up,
        "starting": health.starting, "down": health.down, "idle": health.idle}});
    json_response(status, body.to_string())
}

fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}
