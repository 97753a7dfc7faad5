//! The metrics endpoint of its own (`mcpx serve --metrics ADDR`), for the stdio front, which
//! has no HTTP listener, or to scrape the HTTP front's metrics on another address.
//!
//! It answers `GET` [`METRICS_PATH`] and nothing else. With a token it requires
//! `Authorization: Bearer TOKEN` (compared in constant time), as the MCP endpoint does.

use std::future::Future;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;

use super::Observe;

/// Where the metrics are served, on the HTTP front and on `--metrics ADDR`.
pub const METRICS_PATH: &str = "/metrics";

/// The content type of the metrics (the OpenMetrics text format, which Prometheus reads).
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

impl Observe {
    /// The metrics as an HTTP response.
    pub fn metrics_response(&self) -> Response {
        (
            [(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)],
            self.metrics_text(),
        )
            .into_response()
    }
}

#[derive(Clone)]
struct Endpoint {
    observe: Observe,
    token: Option<String>,
}

async fn metrics(State(endpoint): State<Endpoint>, headers: HeaderMap) -> Response {
    if let Some(token) = &endpoint.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|a| a.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
            return (StatusCode::UNAUTHORIZED, "a valid bearer token is required").into_response();
        }
    }
    endpoint.observe.metrics_response()
}

/// Serves `observe`'s metrics on `listener` until `shutdown` completes; with `token`, only to
/// requests that carry it.
///
/// # Errors
/// The listener failed.
pub async fn serve_metrics(
    observe: Observe,
    listener: TcpListener,
    token: Option<String>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new()
        .route(METRICS_PATH, get(metrics))
        .with_state(Endpoint { observe, token });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
