//! The Streamable HTTP front (MCP 2025-03-26 and later) on one path, [`MCP_PATH`].
//!
//! - `POST` carries one client message. `initialize` opens a session whose id (128 bits from
//!   the OS's CSPRNG) comes back in `Mcp-Session-Id`; every later request must carry it (400
//!   without, 404 for one that is unknown or ended). A session is bound to the address of the
//!   client that opened it: its id presented from another address is unknown (404). A request
//!   whose answer is the first thing for it is answered with that JSON alone; else on an SSE
//!   stream, which also carries what belongs to it (progress, the server's questions). A client
//!   that accepts only JSON gets the response alone. Notifications and responses get 202.
//! - `GET` opens the session's stream for what belongs to no request (list changes, logs);
//!   `DELETE` ends the session.
//! - Every request is checked first: an `Origin` that is not a localhost origin nor in the
//!   allowed list gets 403 (against DNS rebinding); with a token configured, a missing or wrong
//!   `Authorization: Bearer` gets 401 (compared in constant time); a body over
//!   [`MAX_BODY_BYTES`] gets 413; an `MCP-Protocol-Version` the gateway does not speak gets 400.
//!   With OAuth configured instead of a token, see [`oauth`].
//!
//! - A 2026-07-28 request needs no session: see [`stateless`] (its headers checked against its
//!   body, answered on its own response); `GET` and `DELETE` without a session get 405.
//! - `GET /healthz` and `GET /readyz` (see [`crate::upstream::health`]) are answered before any check:
//!   they carry no secret and a balancer's probe has no token.
//! - Stopping drains first (see [`crate::front::drain`]): from the first signal on, `initialize` and
//!   sessionless (2026-07-28) requests get 503 with `Retry-After`, whatever the connection,
//!   since another replica can take them; a session's requests are still taken, since the
//!   session lives here alone, and the requests in flight get [`HttpOptions::drain_timeout`]
//!   to be answered. Then what is left is answered "shutting down" as before.
//!
//! The client's headers (its credentials above all) never go upstream: each server gets only
//! the headers of its own config.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use mcpclient::codes;
use mcpclient::{Decoded, ErrorObject, Frame, ACCEPTED_VERSIONS};
use serde_json::json;
use subtle::ConstantTimeEq;
use thiserror::Error;
use tokio::net::TcpListener;
use tokio_util::task::AbortOnDropHandle;

use crate::front::bearer::{BearerError, ResourceAuth};
use crate::front::drain::Phase;
use crate::front::drain::Stop;
use crate::gateway::Gateway;
use crate::observe::ratelog::RateLimitedLog;
use crate::observe::Limit;
use crate::protocol::modern::MODERN_VERSIONS;
use crate::sessions::principal::Principal;
use crate::sessions::session::MAX_REQUESTS_IN_FLIGHT;
use crate::wire::lock;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The address `mcpx serve --http` listens on unless told otherwise.
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:8787";

/// The largest request body accepted; 413 beyond (refused before reading when the
/// `Content-Length` says so). What clients send a gateway is small: tool arguments, answers to
/// its questions; the largest is a sampling answer carrying an image, a few MiB of base64.
/// 16 MiB leaves room for that, and bounds what one request can cost (a few copies of it).
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of request bodies held at once, all connections together, from their arrival until
/// they are decoded: a chunk that would pass it waits up to [`BODY_BUDGET_WAIT`] for room, then
/// its request gets 503. Only what has arrived counts, so a stalled body holds what it sent.
pub const BODY_BUDGET_BYTES: usize = 256 * 1024 * 1024;

/// The first bytes of every body, which need no room in [`BODY_BUDGET_BYTES`]: a request this
/// small (most of them) is never refused for the budget; at most [`MAX_CONNECTIONS`] of them
/// are read at once.
pub const SMALL_BODY_BYTES: usize = 64 * 1024;

/// How long a request waits for room in [`BODY_BUDGET_BYTES`].
pub const BODY_BUDGET_WAIT: Duration = Duration::from_secs(2);

/// How long reading a request body may take; past it, 408.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The most sessions kept at once unless configured ([`HttpOptions::max_sessions`]). A new
/// session beyond it first ends the sessions idle past their timeout; when none is, it is
/// refused (503 with `Retry-After`): a session in use is never ended for another.
pub const MAX_SESSIONS: usize = 1_024;

/// How long a session may be idle (no request in flight, no request, no open GET stream)
/// before it is ended, unless configured ([`HttpOptions::session_idle_timeout`]).
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The longest wait between two sweeps for idle sessions.
const MAX_SWEEP_INTERVAL: Duration = Duration::from_secs(60);

/// The `Retry-After` of a refusal for overload (sessions full, requests in flight), in seconds.
const RETRY_AFTER_SECONDS: &str = "1";

/// How long open connections get to take their last answers once the front is stopping (after
/// the drain); then they are dropped.
pub const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How long a client may take to send a request's headers, and how long a kept-alive
/// connection may wait idle for its next request; then the connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections open at once unless configured ([`HttpOptions::max_connections`]);
/// past it a new connection is closed at once. Below the usual soft limit of open files once
/// mcpx has raised it (see `mcpx serve`), leaving room for the servers' pipes.
pub const MAX_CONNECTIONS: usize = 4_096;

/// The pause after a failed `accept` (no file descriptor left, say) before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How often an idle SSE stream gets a comment, so that proxies do not close it.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Bytes of randomness in a session id.
const SESSION_ID_BYTES: usize = 16;

// Names made once: a lookup by `&str` parses and lowercases the name on every request.
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

mod connections;
mod oauth;
mod sessions;
mod stateless;
mod stream;
mod wakes;

pub use connections::MAX_CONNECTIONS_PER_ADDRESS;
use connections::{Admitted, Connections, Guarded};
use oauth::{Protection, METADATA_PATH};
pub use sessions::MAX_SESSIONS_PER_CLIENT;
use sessions::{Ended, FrontSession, Miss, Refused, Table};
pub use stream::MAX_UNREAD_STREAM_BYTES;
use stream::{json_answer, json_answers, sse, sse_unless_answered_at_once};
use stream::{HttpOutbox, RequestStream, Streams};

/// How the HTTP front admits clients. Its `Debug` shows whether there is a token, never the
/// token.
#[derive(Clone)]
pub struct HttpOptions {
    /// The bearer token every request must carry; required to listen beyond loopback
    /// (unless `auth` is given).
    pub token: Option<String>,
    /// OAuth access tokens from an issuer instead of one static token (`gateway.auth`).
    pub auth: Option<ResourceAuth>,
    /// Origins allowed besides localhost ones (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// The most sessions at once ([`MAX_SESSIONS`] unless configured).
    pub max_sessions: usize,
    /// How long a session may be idle before it ends ([`SESSION_IDLE_TIMEOUT`] unless
    /// configured).
    pub session_idle_timeout: Duration,
    /// The most connections open at once ([`MAX_CONNECTIONS`] unless configured).
    pub max_connections: usize,
    /// How long a request's headers may take, and a kept-alive connection may idle
    /// ([`HEADER_READ_TIMEOUT`] unless configured).
    pub header_read_timeout: Duration,
    /// How long a request's body may take ([`BODY_READ_TIMEOUT`] unless configured).
    pub body_read_timeout: Duration,
    /// How long the requests in flight get to finish once a drain starts
    /// ([`crate::front::drain::DRAIN_TIMEOUT`] unless configured).
    pub drain_timeout: Duration,
    /// The most sessions one client keeps ([`MAX_SESSIONS_PER_CLIENT`] unless configured).
    pub max_sessions_per_client: usize,
    /// The most connections from one address ([`MAX_CONNECTIONS_PER_ADDRESS`] unless
    /// configured).
    pub max_connections_per_address: usize,
    /// Bytes on the way one response stream may hold unread ([`MAX_UNREAD_STREAM_BYTES`]
    /// unless configured).
    pub max_unread_stream_bytes: usize,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every field named, so that a new one is not shown by accident: a compile error here
        // asks whether it may be.
        let HttpOptions {
            token,
            auth,
            allowed_origins,
            max_sessions,
            session_idle_timeout,
            max_connections,
            header_read_timeout,
            body_read_timeout,
            drain_timeout,
            max_sessions_per_client,
            max_connections_per_address,
            max_unread_stream_bytes,
        } = self;
        f.debug_struct("HttpOptions")
            .field("token", &token.as_ref().map(|_| mcpclient::REDACTED))
            .field("auth", auth)
            .field("allowed_origins", allowed_origins)
            .field("max_sessions", max_sessions)
            .field("session_idle_timeout", session_idle_timeout)
            .field("max_connections", max_connections)
            .field("header_read_timeout", header_read_timeout)
            .field("body_read_timeout", body_read_timeout)
            .field("drain_timeout", drain_timeout)
            .field("max_sessions_per_client", max_sessions_per_client)
            .field("max_connections_per_address", max_connections_per_address)
            .field("max_unread_stream_bytes", max_unread_stream_bytes)
            .finish()
    }
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions {
            token: None,
            auth: None,
            allowed_origins: Vec::new(),
            max_sessions: MAX_SESSIONS,
            session_idle_timeout: SESSION_IDLE_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
            drain_timeout: crate::front::drain::DRAIN_TIMEOUT,
            max_sessions_per_client: MAX_SESSIONS_PER_CLIENT,
            max_connections_per_address: MAX_CONNECTIONS_PER_ADDRESS,
            max_unread_stream_bytes: MAX_UNREAD_STREAM_BYTES,
        }
    }
}

/// Why the HTTP front cannot serve.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HttpError {
    /// Listening beyond loopback without a token would let anyone on the network in.
    #[error(
        "{addr} is not a loopback address: serving it needs a bearer token (--token or MCPX_TOKEN)"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// A static token and OAuth were both asked for: one request cannot be checked both ways.
    #[error("a static bearer token (--token or MCPX_TOKEN) and gateway.auth exclude each other")]
    TokenAndAuth,
    /// `gateway.auth` cannot be used.
    #[error("gateway.auth: {0}")]
    Auth(#[from] BearerError),
    /// The listener failed.
    #[error("HTTP front: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves the gateway on `listener` until `stop` has drained it (or says stop now).
///
/// # Errors
/// [`HttpError::TokenRequired`] for a non-loopback listener without a token; the listener's
/// failure.
pub async fn serve_http(
    gateway: Gateway,
    listener: TcpListener,
    options: HttpOptions,
    stop: Stop,
) -> Result<(), HttpError> {
    // The accept loop runs as a task of its own, on the runtime's workers, wherever this is
    // awaited: awaited in `block_on`, it ran on the caller's thread, so every new connection was
    // accepted there and handed to a worker, one more thread woken a connection (BENCHMARKS.md,
    // "The accept loop on a worker"). A connection spawned from a worker starts on that worker.
    // Dropping this future stops the loop, as before.
    let accepting = AbortOnDropHandle::new(tokio::spawn(accept(gateway, listener, options, stop)));
    match accepting.await {
        Ok(served) => served,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        // Cancelled: the runtime is shutting down.
        Err(_) => Ok(()),
    }
}

/// [`serve_http`]'s accept loop.
async fn accept(
    gateway: Gateway,
    listener: TcpListener,
    options: HttpOptions,
    stop: Stop,
) -> Result<(), HttpError> {
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && options.token.is_none() && options.auth.is_none() {
        return Err(HttpError::TokenRequired { addr });
    }
    if options.token.is_some() && options.auth.is_some() {
        return Err(HttpError::TokenAndAuth);
    }
    let protection = match options.auth.clone() {
        Some(auth) => Some(Arc::new(Protection::new(auth, addr)?)),
        None => None,
    };
    let front = Arc::new(Front {
        gateway: gateway.clone(),
        stop: stop.clone(),
        sessions: Table::new(
            options.max_sessions,
            options.max_sessions_per_client,
            options.session_idle_timeout,
        ),
        loopback: addr.ip().is_loopback(),
        body_budget: tokio::sync::Semaphore::new(BODY_BUDGET_BYTES),
        refusals: RateLimitedLog::new("a request refused"),
        protection,
        by_address: AddressPrincipals::new(options.token.is_some()),
        options,
    });
    let mut app = Router::new()
        .route(MCP_PATH, any(endpoint))
        .route(crate::observe::METRICS_PATH, get(metrics));
    if front.protection.is_some() {
        let suffixed = format!("{METADATA_PATH}{MCP_PATH}");
        app = app
            .route(METADATA_PATH, get(resource_metadata))
            .route(&suffixed, get(resource_metadata));
    }
    let app = app
        .with_state(front.clone())
        .merge(crate::upstream::health::routes(
            gateway.clone(),
            stop.clone(),
        ));
    let sweeper = front.clone();
    let sweeping = tokio::spawn(async move {
        let every = (sweeper.options.session_idle_timeout / 4).min(MAX_SWEEP_INTERVAL);
        loop {
            tokio::time::sleep(every).await;
            sweeper.end_idle();
        }
    });
    let connections = Arc::new(Connections::new(
        front.options.max_connections,
        front.options.max_connections_per_address,
    ));
    // Told once the connections are to finish their last answers and close.
    let (closing, closed) = tokio::sync::watch::channel(false);
    // Connections are still accepted while draining: a balancer's probe learns it from
    // `/readyz`, and a new session is told 503 rather than refused a connection.
    let drained = async {
        stop.reached(Phase::Draining).await;
        gateway.drain(front.options.drain_timeout, &stop).await;
    };
    tokio::pin!(drained);
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut drained => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: the front goes on once some are free.
                    front.refusals.note(&format!("accept failed: {error}"));
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        let place = match connections.admit(peer.ip()) {
            Some((place, Admitted::Room)) => place,
            Some((place, Admitted::Evicted)) => {
                gateway.observe().limited(Limit::Connections);
                place
            }
            None => {
                // Every connection in the way is answering: the ones open keep their service.
                gateway.observe().limited(Limit::Connections);
                front
                    .refusals
                    .note("a connection (the connection limits are reached, none idle)");
                drop(tcp);
                continue;
            }
        };
        // Without TCP_NODELAY, a small response waits for the client's delayed ACK (~40 ms).
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let place = Arc::new(place);
        let app = app.clone();
        let serving = place.clone();
        let service = hyper::service::service_fn(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                let working = serving.working();
                let answered = tower::ServiceExt::oneshot(app.clone(), request);
                async move {
                    let response = answered.await?;
                    Ok::<_, Infallible>(response.map(|body| Body::new(Guarded::new(body, working))))
                }
            },
        );
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(front.options.header_read_timeout)
            .keep_alive(true);
        let connection = http1.serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
        let mut closed = closed.clone();
        // Woken by its own request body while it runs (see `wakes`): polled again on its
        // thread, not handed to another worker.
        tokio::spawn(wakes::polled_again_when_woken(async move {
            let mut connection = std::pin::pin!(connection);
            let told = async {
                tokio::select! {
                    () = place.evicted() => {}
                    _ = closed.wait_for(|closing| *closing) => {}
                }
            };
            let ended = tokio::select! {
                ended = connection.as_mut() => Some(ended),
                () = told => None,
            };
            let ended = match ended {
                Some(ended) => ended,
                // Its answer in progress (if any) is finished, then it closes.
                None => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = ended {
                tracing::debug!(%error, "a connection ended with an error");
            }
            drop(place);
        }));
    }
    // Every request in flight is answered now, and every stream ends after its last answer,
    // so that the connections can close; those still open after the grace are dropped.
    front.end_all();
    sweeping.abort();
    let _ = closing.send(true);
    if !connections.all_closed(DRAIN_GRACE).await {
        tracing::info!(grace = ?DRAIN_GRACE, "connections still open after the grace; dropped");
    }
    Ok(())
}

struct Front {
    gateway: Gateway,
    /// Draining: no new sessions.
    stop: Stop,
    options: HttpOptions,
    sessions: Table,
    /// Listening on a loopback address: the Host header is checked.
    loopback: bool,
    /// Bytes of bodies being read ([`BODY_BUDGET_BYTES`]).
    body_budget: tokio::sync::Semaphore,
    refusals: RateLimitedLog,
    /// OAuth access tokens are checked (`gateway.auth`).
    protection: Option<Arc<Protection>>,
    /// Who a request without an OAuth token is.
    by_address: AddressPrincipals,
}

/// The principal of a request with no OAuth token, by its address: the static token's holder
/// there when the front has a token (the request was admitted with it), else anonymous. The
/// last one made is kept: the same for every request from that address (on loopback, every
/// request), so written once, not for each.
struct AddressPrincipals {
    static_token: bool,
    last: std::sync::Mutex<Option<(IpAddr, Principal)>>,
}

impl AddressPrincipals {
    fn new(static_token: bool) -> AddressPrincipals {
        AddressPrincipals {
            static_token,
            last: std::sync::Mutex::default(),
        }
    }

    fn of(&self, address: IpAddr) -> Principal {
        let mut last = lock(&self.last);
        if let Some((known, principal)) = last.as_ref() {
            if *known == address {
                return principal.clone();
            }
        }
        let principal = if self.static_token {
            Principal::static_token(address)
        } else {
            Principal::anonymous(address)
        };
        *last = Some((address, principal.clone()));
        principal
    }
}

/// A request turned away before it reaches the gateway: its status, and a JSON-RPC error body
/// saying why.
struct Refusal {
    status: StatusCode,
    id: serde_json::Value,
    /// Boxed: a refusal travels in `Result`s, whose every `Ok` would carry its size.
    error: Box<ErrorObject>,
}

impl Refusal {
    /// Refused with `status`, JSON-RPC code -32600 (invalid request), for no request id.
    fn new(status: StatusCode, message: impl Into<String>) -> Refusal {
        Refusal::with_error(status, codes::error(codes::INVALID_REQUEST, message))
    }

    /// Refused with `status` and `error`, for no request id.
    fn with_error(status: StatusCode, error: ErrorObject) -> Refusal {
        Refusal {
            status,
            id: serde_json::Value::Null,
            error: Box::new(error),
        }
    }

    fn with_code(mut self, code: i64) -> Refusal {
        self.error.code = code;
        self
    }

    /// For the request whose id is the JSON text `id`.
    fn for_request(self, id: &str) -> Refusal {
        let id = serde_json::from_str(id).unwrap_or_default();
        Refusal { id, ..self }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({"jsonrpc": "2.0", "id": self.id, "error": self.error});
        let mut response = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if matches!(
            self.status,
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
        ) {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECONDS),
            );
        }
        response
    }
}

fn status(code: StatusCode, message: &str) -> Response {
    Refusal::new(code, message).into_response()
}

async fn endpoint(
    State(front): State<Arc<Front>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    method: Method,
    request: axum::extract::Request,
) -> Response {
    // The request taken whole: its headers are not copied, and their map (sized for a
    // client's requests) carries the answer's headers, which is the map hyper reads the
    // connection's next request into (see `with_room_of`).
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let response = serve(&front, peer, method, &headers, body).await;
    with_room_of(headers, response)
}

/// `response` with its headers moved into `room` (emptied first), a request's map: hyper
/// keeps the map an answer's headers were in for the connection's next request, so that one
/// sized for a request is read into without growing it (two allocations, one of a kilobyte or
/// more, every request otherwise).
fn with_room_of(mut room: HeaderMap, mut response: Response) -> Response {
    if room.capacity() > response.headers().capacity() {
        room.clear();
        room.extend(response.headers_mut().drain());
        *response.headers_mut() = room;
    }
    response
}

async fn serve(
    front: &Arc<Front>,
    peer: SocketAddr,
    method: Method,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    if let Err(refused) = front.admit(headers) {
        return refused.into_response();
    }
    // Who asks, worked out once: every session, parked call and quota below is bound to it.
    let principal = match &front.protection {
        Some(protection) => match protection.admit(headers).await {
            Ok(grant) => protection.principal(&grant),
            Err(refused) => return refused,
        },
        None => front.by_address.of(peer.ip()),
    };
    let bad_version = match headers.get(VERSION_HEADER).map(|v| v.to_str()) {
        Some(Ok(version))
            if !ACCEPTED_VERSIONS.contains(&version) && !MODERN_VERSIONS.contains(&version) =>
        {
            Some(Refusal::new(
                StatusCode::BAD_REQUEST,
                format!("unsupported MCP-Protocol-Version: {version}"),
            ))
        }
        Some(Err(_)) => Some(Refusal::new(
            StatusCode::BAD_REQUEST,
            "MCP-Protocol-Version is not visible ASCII",
        )),
        _ => None,
    };
    let sessionless = header_text(headers, SESSION_HEADER).is_none();
    if sessionless && matches!(method, Method::GET | Method::DELETE) {
        // No session to stream or end: 2026-07-28 has neither (its streams are POSTs').
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response();
    }
    if let (Some(refused), false) = (&bad_version, method == Method::POST) {
        return Refusal::new(refused.status, refused.error.message.clone()).into_response();
    }
    match method {
        Method::POST => {
            front
                .post(peer.ip(), &principal, headers, body, bad_version)
                .await
        }
        Method::GET => front.get(peer.ip(), &principal, headers),
        Method::DELETE => front.delete(peer.ip(), &principal, headers),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, POST, DELETE")],
        )
            .into_response(),
    }
}

/// `GET /metrics`, admitted as the MCP endpoint is (Origin, Host, then the bearer token or an
/// OAuth access token): the metrics name every server and tool and show how they are used.
async fn metrics(State(front): State<Arc<Front>>, headers: HeaderMap) -> Response {
    if let Err(refused) = front.admit(&headers) {
        return refused.into_response();
    }
    if let Some(protection) = &front.protection {
        if let Err(refused) = protection.admit(&headers).await {
            return refused;
        }
    }
    front.gateway.observe().metrics_response()
}

async fn resource_metadata(State(front): State<Arc<Front>>) -> Response {
    match &front.protection {
        Some(protection) => protection.metadata(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

fn header_text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn accepts_sse(headers: &HeaderMap) -> bool {
    header_text(headers, header::ACCEPT).is_some_and(|a| a.contains("text/event-stream"))
}

/// Whether `origin` is a page served from this machine: `http(s)://localhost`, `127.0.0.1` or
/// `[::1]`, any port.
fn is_local_origin(origin: &str) -> bool {
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(is_local_host)
}

/// Whether a Host (`localhost`, `127.0.0.1:8080`, `[::1]`) names this machine's loopback.
fn is_local_host(rest: &str) -> bool {
    let host = match rest.strip_prefix("[::1]") {
        Some(after) => return after.is_empty() || is_port(after),
        None => rest.split(':').next().unwrap_or_default(),
    };
    let after = &rest[host.len()..];
    matches!(host, "localhost" | "127.0.0.1") && (after.is_empty() || is_port(after))
}

fn is_port(text: &str) -> bool {
    text.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; SESSION_ID_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Front {
    /// The front is stopping: every session's requests in flight are answered with an error,
    /// and its streams end.
    fn end_all(&self) {
        self.gateway.end_sessions();
        for session in self.sessions.take_all() {
            session.streams.end();
            self.gateway.close_session(&session.session);
        }
    }

    /// Reads a request body as it arrives, within [`BODY_READ_TIMEOUT`] and [`MAX_BODY_BYTES`],
    /// each chunk taking its room in [`BODY_BUDGET_BYTES`] (waiting at most
    /// [`BODY_BUDGET_WAIT`]): the bytes, and the room they hold.
    async fn read_body(
        &self,
        body: Body,
        declared: Option<u64>,
    ) -> Result<(Vec<u8>, Vec<tokio::sync::SemaphorePermit<'_>>), Response> {
        use futures_util::StreamExt;
        let within = self.options.body_read_timeout;
        let deadline = tokio::time::Instant::now() + within;
        let expected = declared.map_or(0, |l| usize::try_from(l).unwrap_or(MAX_BODY_BYTES));
        let mut bytes = Vec::with_capacity(expected.min(MAX_BODY_BYTES));
        let mut room = Vec::new();
        let mut chunks = body.into_data_stream();
        loop {
            let chunk = match tokio::time::timeout_at(deadline, chunks.next()).await {
                Ok(None) => return Ok((bytes, room)),
                Ok(Some(Ok(chunk))) => chunk,
                Ok(Some(Err(error))) => {
                    return Err(Refusal::new(
                        StatusCode::BAD_REQUEST,
                        format!("the request body could not be read: {error}"),
                    )
                    .into_response())
                }
                Err(_) => {
                    return Err(Refusal::new(
                        StatusCode::REQUEST_TIMEOUT,
                        format!("the request body did not arrive within {within:?}"),
                    )
                    .into_response())
                }
            };
            if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(too_large());
            }
            // What a small body holds is bounded by the connection cap; only the bytes past
            // SMALL_BODY_BYTES take room, so small requests are never turned away.
            let over =
                (bytes.len() + chunk.len()).saturating_sub(SMALL_BODY_BYTES.max(bytes.len()));
            bytes.extend_from_slice(&chunk);
            if over == 0 {
                continue;
            }
            let permits = u32::try_from(over).unwrap_or(u32::MAX);
            let granted =
                tokio::time::timeout(BODY_BUDGET_WAIT, self.body_budget.acquire_many(permits))
                    .await;
            let Ok(Ok(granted)) = granted else {
                self.refusals
                    .note("a request body (the budget for bodies being read is full)");
                return Err(Refusal::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many request bodies are being read; try again",
                )
                .into_response());
            };
            room.push(granted);
        }
    }

    /// Ends the sessions idle past [`HttpOptions::session_idle_timeout`]: no request in flight,
    /// none for that long, no open GET stream.
    fn end_idle(&self) {
        let idle = self.sessions.take_idle();
        if !idle.is_empty() {
            let timeout = self.options.session_idle_timeout;
            tracing::info!(ended = idle.len(), ?timeout, "idle sessions ended");
        }
        for session in idle {
            self.gateway.close_session(&session.session);
        }
    }

    /// Origin (every one given), Host (on loopback), then token: 403 or 401.
    fn admit(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        for origin in headers.get_all(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let allowed =
                is_local_origin(origin) || self.options.allowed_origins.iter().any(|o| o == origin);
            if !allowed {
                self.refusals.note("a request from a foreign origin");
                return Err(Refusal::new(StatusCode::FORBIDDEN, "origin not allowed"));
            }
        }
        // On loopback a page elsewhere can reach mcpx only through a name that resolves here
        // (DNS rebinding): the Host must be a loopback name, or an allowed origin's host.
        if self.loopback {
            let hosts: Vec<_> = headers.get_all(header::HOST).iter().collect();
            let allowed = hosts.len() <= 1
                && hosts.iter().all(|host| {
                    let host = host.to_str().unwrap_or_default();
                    is_local_host(host)
                        || self
                            .options
                            .allowed_origins
                            .iter()
                            .any(|o| o.split_once("://").is_some_and(|(_, h)| h == host))
                });
            if !allowed {
                self.refusals.note("a request for a foreign Host");
                return Err(Refusal::new(StatusCode::FORBIDDEN, "host not allowed"));
            }
        }
        if let Some(token) = &self.options.token {
            let given = header_text(headers, header::AUTHORIZATION)
                .and_then(|a| a.strip_prefix("Bearer "))
                .unwrap_or_default();
            if !bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
                return Err(Refusal::new(
                    StatusCode::UNAUTHORIZED,
                    "a valid bearer token is required",
                ));
            }
        }
        Ok(())
    }

    /// The session named by the request's `Mcp-Session-Id`: 400 without one, 404 unknown,
    /// opened from another address than `peer`'s or by another principal than `principal`
    /// (the same answer, so that a replayed id learns nothing).
    fn session(
        &self,
        peer: IpAddr,
        principal: &Principal,
        headers: &HeaderMap,
    ) -> Result<Arc<FrontSession>, Refusal> {
        let Some(id) = header_text(headers, SESSION_HEADER) else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "Mcp-Session-Id header required",
            ));
        };
        self.sessions.get(id, peer, principal).map_err(|miss| {
            // The id is a secret: it is not logged.
            match miss {
                Miss::Unknown => {}
                Miss::OtherAddress(owner) => {
                    tracing::warn!(%peer, %owner, "a session id presented from another address; refused");
                }
                Miss::OtherPrincipal(owner) => {
                    tracing::warn!(%principal, %owner, "a session id presented by another principal; refused");
                }
            }
            Refusal::new(StatusCode::NOT_FOUND, "unknown or ended session")
        })
    }

    fn open(
        &self,
        owner: IpAddr,
        principal: &Principal,
    ) -> Result<(String, Arc<FrontSession>), Refusal> {
        let id = new_session_id().map_err(|e| {
            tracing::error!(%e, "no randomness for a session id");
            Refusal::new(StatusCode::SERVICE_UNAVAILABLE, "cannot make a session id")
        })?;
        let streams = Arc::new(Streams::new(
            self.gateway.observe().clone(),
            self.options.max_unread_stream_bytes,
        ));
        let session = self
            .gateway
            .open_session(HttpOutbox(streams.clone()), principal.clone());
        let session = Arc::new(FrontSession::new(session, owner, streams));
        let (ended, kept) = self.sessions.insert(id.clone(), session.clone());
        for (gone, why) in ended {
            gone.streams.end();
            self.gateway.close_session(&gone.session);
            match why {
                Ended::Idle => {}
                Ended::PerClient => self.gateway.observe().limited(Limit::SessionsPerClient),
                Ended::Full => self.gateway.observe().limited(Limit::Sessions),
            }
            tracing::info!(?why, principal = %gone.session.principal(), "a session ended to make room for a new one");
        }
        let refused = match kept {
            Ok(()) => return Ok((id, session)),
            Err(refused) => refused,
        };
        self.gateway.close_session(&session.session);
        let (status, limit, message) = match refused {
            Refused::PerClient => (
                StatusCode::TOO_MANY_REQUESTS,
                Limit::SessionsPerClient,
                format!(
                    "this client holds {} sessions, its most, each with a request in flight; end one (DELETE) or wait",
                    self.options.max_sessions_per_client
                ),
            ),
            Refused::Full => (
                StatusCode::SERVICE_UNAVAILABLE,
                Limit::Sessions,
                format!(
                    "the gateway holds {} sessions, its most, each with a request in flight; try again later",
                    self.options.max_sessions
                ),
            ),
        };
        self.gateway.observe().limited(limit);
        self.refusals.note("a new session (at the session limits)");
        Err(Refusal::new(status, message))
    }

    /// A POST; `bad_version` refuses it, with the id of the request it carries.
    async fn post(
        &self,
        peer: IpAddr,
        principal: &Principal,
        headers: &HeaderMap,
        body: Body,
        bad_version: Option<Refusal>,
    ) -> Response {
        // Refused before the body is read: a declared length over the limit, an unknown session.
        let declared =
            header_text(headers, header::CONTENT_LENGTH).and_then(|l| l.parse::<u64>().ok());
        if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
            return too_large();
        }
        // A modern request's session header is ignored (2026-07-28 has no sessions).
        let modern_header = header_text(headers, VERSION_HEADER)
            .is_some_and(|version| MODERN_VERSIONS.contains(&version));
        let known = match header_text(headers, SESSION_HEADER) {
            Some(_) if modern_header => None,
            Some(_) => match self.session(peer, principal, headers) {
                Ok(session) => Some(session),
                Err(refused) => return refused.into_response(),
            },
            None => None,
        };
        // The budget holds what has arrived of the body (not what it declares), until it is
        // decoded: a client that stalls a body holds only the bytes it sent.
        let (bytes, _room) = match self.read_body(body, declared).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        // Valid UTF-8 in all but broken requests: checked the fast way first.
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&bytes),
        };
        let frame = match Frame::parse(&text) {
            Ok(frame) => frame,
            Err(e) => {
                let (id, error) = crate::wire::unreadable(&e);
                return Refusal::with_error(StatusCode::BAD_REQUEST, error)
                    .for_request(id.get())
                    .into_response();
            }
        };
        // Decoded once: every check below, and the gateway, read this.
        let message = frame.decode();
        if let Some(refused) = self.refuse_call(principal, &message) {
            return refused;
        }
        let message = match self
            .modern_post(headers, message, modern_header, principal)
            .await
        {
            Ok(response) => return response,
            Err(legacy) => legacy,
        };
        let (opens, ids) = match answered_ids(&message) {
            Ok(found) => found,
            Err(reason) => {
                return Refusal::new(
                    StatusCode::BAD_REQUEST,
                    format!("invalid request: {reason}"),
                )
                .into_response()
            }
        };
        if let Some(refused) = bad_version {
            return match ids.first() {
                Some(id) => refused.for_request(id),
                None => refused,
            }
            .into_response();
        }
        let (session_id, session) = match (opens, known) {
            (true, _) if self.stop.is_draining() => {
                return draining().for_request(&ids[0]).into_response()
            }
            (true, _) => match self.open(peer, principal) {
                Ok((id, session)) => (Some(id), session),
                Err(refused) => return refused.into_response(),
            },
            (false, Some(session)) => (None, session),
            (false, None) => {
                return Refusal::new(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required")
                    .into_response()
            }
        };
        if !ids.is_empty() && !session.session.has_room_for_a_request() {
            self.refusals.note("too many requests in flight");
            return Refusal::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("too many requests in flight (at most {MAX_REQUESTS_IN_FLIGHT}); wait for answers"),
            )
            .for_request(&ids[0])
            .into_response();
        }
        if ids.is_empty() {
            // Notifications and responses only: taken, nothing to answer.
            self.gateway.receive(&session.session, message);
            return StatusCode::ACCEPTED.into_response();
        }
        // The POST's stream: the gateway keeps it with each request in flight (and answers a
        // request whose id is in flight already on it, with an error).
        let (stream, frames) = stream::stream(self.options.max_unread_stream_bytes);
        let reply = Arc::new(RequestStream::new(
            stream,
            session.streams.clone(),
            &session.session,
            ids.clone(),
        ));
        self.gateway
            .receive_replying(&session.session, message, reply);
        let mut response = match (ids.len(), accepts_sse(headers)) {
            (1, true) => sse_unless_answered_at_once(frames, ()).await,
            (1, false) => json_answer(frames).await,
            // A batch: every answer on one stream, or all of them in one array.
            (_, true) => sse(None, frames, ()),
            (n, false) => json_answers(frames, n).await,
        };
        if let Some(session_id) = session_id {
            if let Ok(value) = HeaderValue::from_str(&session_id) {
                response.headers_mut().insert(SESSION_HEADER, value);
            }
        }
        response
    }

    /// A 403 for a call of a tool the token lacks the scope for.
    fn refuse_call(&self, principal: &Principal, message: &Decoded) -> Option<Response> {
        self.protection.as_ref()?.refuse_call(principal, message)
    }

    fn get(&self, peer: IpAddr, principal: &Principal, headers: &HeaderMap) -> Response {
        if !accepts_sse(headers) {
            return status(
                StatusCode::NOT_ACCEPTABLE,
                "GET needs Accept: text/event-stream",
            );
        }
        let session = match self.session(peer, principal, headers) {
            Ok(session) => session,
            Err(refused) => return refused.into_response(),
        };
        match session.streams.open() {
            Some(frames) => sse(None, frames, ()),
            None => status(
                StatusCode::CONFLICT,
                "the session's GET stream is open already",
            ),
        }
    }

    fn delete(&self, peer: IpAddr, principal: &Principal, headers: &HeaderMap) -> Response {
        let session = match self.session(peer, principal, headers) {
            Ok(session) => session,
            Err(refused) => return refused.into_response(),
        };
        self.sessions.remove(&session);
        session.streams.end();
        self.gateway.close_session(&session.session);
        StatusCode::OK.into_response()
    }
}

/// The refusal of new work while draining: 503, so that a balancer or client tries elsewhere.
fn draining() -> Refusal {
    Refusal::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "mcpx is shutting down: it takes no new sessions; try again (another replica)",
    )
}

fn too_large() -> Response {
    status(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("request body over {MAX_BODY_BYTES} bytes"),
    )
}

/// Whether the POSTed `frame` opens a session (`initialize`), and the ids of what in it will be
/// answered (its requests, and messages refused for a reason but with a readable id); or why
/// it cannot be taken at all (no id to answer with).
fn answered_ids(message: &Decoded) -> Result<(bool, Vec<String>), &'static str> {
    if let Decoded::Invalid { id: None, reason } = message {
        return Err(reason);
    }
    let opens = matches!(message, Decoded::Request { method, .. } if method == "initialize");
    let ids = message
        .each()
        .iter()
        .filter(|m| matches!(m, Decoded::Request { .. } | Decoded::Invalid { .. }))
        .filter_map(|m| m.id().map(|id| id.get().to_owned()))
        .collect();
    Ok((opens, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_debug_never_shows_the_token() {
        let options = HttpOptions {
            token: Some("front-token-9876".into()),
            ..HttpOptions::default()
        };
        let shown = format!("{options:?}");
        assert!(!shown.contains("front-token-9876"), "{shown}");
        assert!(shown.contains("token: Some(\"[redacted]\")"), "{shown}");
        assert!(shown.contains("max_sessions: "), "{shown}");
    }

    #[test]
    fn an_answer_keeps_every_header_in_the_room_of_the_request() {
        let mut request = HeaderMap::new();
        for n in 0..12 {
            request.insert(
                header::HeaderName::try_from(format!("x-request-{n}")).unwrap(),
                HeaderValue::from_static("r"),
            );
        }
        let room = request.capacity();
        let mut answer = (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "application/json")],
            "{}",
        )
            .into_response();
        answer.headers_mut().append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer a"),
        );
        answer.headers_mut().append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer b"),
        );
        let before: Vec<(String, String)> = answer
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        let answer = with_room_of(request, answer);
        let after: Vec<(String, String)> = answer
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        // The same headers, repeated ones in order, none of the request's; in the larger map.
        assert_eq!(after, before);
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(answer.headers().capacity(), room);
        // A request map smaller than the answer's is not taken.
        let small = with_room_of(HeaderMap::new(), answer);
        assert_eq!(small.headers().capacity(), room);
    }

    #[test]
    fn each_address_is_its_own_principal_whatever_was_kept() {
        let one: IpAddr = "127.0.0.1".parse().unwrap();
        let two: IpAddr = "10.0.0.2".parse().unwrap();
        for static_token in [false, true] {
            let principals = AddressPrincipals::new(static_token);
            let made = |address| {
                if static_token {
                    Principal::static_token(address)
                } else {
                    Principal::anonymous(address)
                }
            };
            // Interleaved: the kept one is replaced, never handed to another address.
            for address in [one, one, two, one, two, two, one] {
                let given = principals.of(address);
                assert!(given.is(&made(address)), "{address} {static_token}");
                assert_eq!(given.quota_key(), made(address).quota_key());
                let other = if address == one { two } else { one };
                assert!(
                    !given.is(&made(other)) || static_token,
                    "{address} {static_token}"
                );
                assert_ne!(given.quota_key(), made(other).quota_key());
            }
        }
    }

    #[test]
    fn local_origins() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:80",
        ] {
            assert!(is_local_origin(ok), "{ok}");
        }
        for foreign in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "http://localhost:3000@evil.example",
            "file://localhost",
            "null",
            "http://[::1]x",
        ] {
            assert!(!is_local_origin(foreign), "{foreign}");
        }
    }

    /// Asks `GET /healthz` of `addr` from a plain thread; the status line, or why none came
    /// within `within`.
    fn health_status(addr: SocketAddr, within: Duration) -> Result<String, String> {
        use std::io::{BufRead, Write};
        let mut tcp =
            std::net::TcpStream::connect_timeout(&addr, within).map_err(|e| e.to_string())?;
        tcp.set_read_timeout(Some(within))
            .map_err(|e| e.to_string())?;
        let ask = format!(
            "GET {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n",
            crate::HEALTH_PATH
        );
        tcp.write_all(ask.as_bytes()).map_err(|e| e.to_string())?;
        let mut line = String::new();
        std::io::BufReader::new(tcp)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        Ok(line.trim_end().to_owned())
    }

    /// How long a test waits for an answer that comes at once when nothing is wrong.
    const WITHIN: Duration = Duration::from_secs(5);

    /// The accept loop is a task of its own: the front serves new connections while the thread
    /// that awaits `serve_http` (here `block_on`'s, as in `mcpx serve`) is busy elsewhere.
    /// Before, it ran in the awaiting future, so this request waited for a poll that never came.
    #[test]
    fn the_front_accepts_while_the_thread_that_awaits_it_is_busy() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let answered = runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let gateway = Gateway::start(Vec::new(), crate::GatewayOptions::default());
            let serving = serve_http(gateway, listener, HttpOptions::default(), Stop::new());
            let mut serving = std::pin::pin!(serving);
            // Polled once (the accept loop starts), then never again while the thread blocks.
            assert!(futures_util::poll!(serving.as_mut()).is_pending());
            health_status(addr, WITHIN)
        });
        assert_eq!(answered, Ok("HTTP/1.1 200 OK".to_owned()));
        runtime.shutdown_timeout(WITHIN);
    }

    /// Dropping `serve_http`'s future stops the front: its listener closes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_front_closes_its_listener() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let gateway = Gateway::start(Vec::new(), crate::GatewayOptions::default());
        let serving = serve_http(gateway, listener, HttpOptions::default(), Stop::new());
        let mut serving = Box::pin(serving);
        assert!(futures_util::poll!(serving.as_mut()).is_pending());
        let before = tokio::task::spawn_blocking(move || health_status(addr, WITHIN));
        assert_eq!(before.await.unwrap(), Ok("HTTP/1.1 200 OK".to_owned()));
        drop(serving);
        let started = std::time::Instant::now();
        loop {
            if tokio::net::TcpStream::connect(addr).await.is_err() {
                break;
            }
            assert!(
                started.elapsed() < WITHIN,
                "still accepting {WITHIN:?} after the drop"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[test]
    fn session_ids_are_long_and_distinct() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), SESSION_ID_BYTES * 2);
        assert_ne!(a, b);
    }
}
