//! `mcpx serve`: one MCP endpoint in front of many MCP servers, enforcing their tool schemas.
//!
//! The gateway connects to every configured server (with mcpclient, which compiles each tool's
//! schemas when the list arrives) and offers their tools as one list, named `SERVER__TOOL`
//! ([`exposed_name`]), with their resources and prompts. Arguments that violate a tool's
//! `inputSchema` are refused before anything is sent; results are forwarded as the exact JSON
//! text the server sent, an `outputSchema` mismatch being logged and counted, never changed.
//! Servers that fail or crash are restarted with backoff, their tools withdrawn meanwhile;
//! none of that reaches the other servers or the gateway itself. A few start at a time
//! ([`MAX_CONCURRENT_STARTS`]), and [`Gateway::reload`] changes the set of servers while the
//! gateway runs.
//!
//! Fronts: [`serve_stdio`] (the client spawns mcpx) and [`serve_http`] (Streamable HTTP, with
//! sessions, Origin checks and an optional bearer token). Both are thin: what a client sends
//! goes to [`Gateway::receive`], and what goes back leaves through the session's [`Outbox`].
//! They stop in two steps shared through a [`Stop`]: a drain, then the stop
//! ([`Gateway::drain`]); [`HEALTH_PATH`] and [`READY_PATH`] tell a supervisor or a balancer
//! where the gateway is ([`serve_health`] beside the stdio front).

//!
//! The crate's folders are its layers, each using only those below it: the fronts (`front/`),
//! the protocol eras and their conversations (`protocol/`), the requests answered method by
//! method (`requests.rs`, over the gateway itself, `gateway.rs`), the policy over the servers'
//! tools (`policy/`), the sessions and their owners (`sessions/`), the servers under
//! supervision (`upstream.rs`, `upstream/`), and what is observed (`observe/`), with the wire
//! format of answers at the bottom (`wire.rs`).

#![deny(missing_docs)]

mod front;
mod gateway;
#[cfg(test)]
mod in_memory_tests;
mod observe;
mod options;
mod policy;
mod protocol;
mod requests;
#[cfg(test)]
mod routing_tests;
mod sessions;
#[cfg(test)]
mod testing;
mod upstream;
mod wire;

pub use front::bearer::{
    metadata_url, BearerError, Challenge, Grant, ResourceAuth, ToolScope, Verifier,
    CLOCK_LEEWAY_SECONDS, FETCH_TIMEOUT, KEYS_MAX_AGE, KEY_REFRESH_INTERVAL, MAX_JWKS_BYTES,
    MAX_JWKS_KEYS, MAX_METADATA_BYTES, MAX_TOKEN_BYTES,
};
pub use front::drain::{Phase, Stop, DRAIN_TIMEOUT};
pub use front::http::{
    serve_http, HttpError, HttpOptions, BODY_BUDGET_BYTES, BODY_BUDGET_WAIT, BODY_READ_TIMEOUT,
    DEFAULT_HTTP_ADDR, DRAIN_GRACE, HEADER_READ_TIMEOUT, KEEP_ALIVE, MAX_BODY_BYTES,
    MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, MAX_SESSIONS, MAX_SESSIONS_PER_CLIENT,
    MAX_UNREAD_STREAM_BYTES, MCP_PATH, SESSION_IDLE_TIMEOUT, SMALL_BODY_BYTES,
};
pub use front::stdio::{serve_stdio, MAX_HELD_BYTES, MAX_UNREAD_BYTES};
pub use gateway::Gateway;
pub use observe::ratelog::{LOG_WINDOW, MAX_LINES_PER_WINDOW};
pub use observe::{
    serve_metrics, AuditOptions, Limit, Observe, ObserveError, Redactor, TracesError,
    AUDIT_FLUSH_GRACE, EXPORT_TIMEOUT, MAX_ESCAPE_LEVELS, MAX_QUEUED_AUDIT_LINES,
    MAX_TOOL_LABELS_PER_SERVER, METRICS_CONTENT_TYPE, METRICS_PATH, MIN_SECRET_CHARS, OTHER_TOOL,
    REDACTED, TRACES_FLUSH_GRACE,
};
pub use options::{
    DownstreamDialect, Exposure, ExposureOptions, GatewayOptions, InvalidArguments, Isolation,
    Pinning, UpstreamConfig, HEALTH_INTERVAL, INITIAL_BACKOFF, MAX_BACKOFF, MAX_CONCURRENT_STARTS,
    MAX_RESENDS, MAX_SESSION_SERVERS, MAX_SESSION_SERVERS_PER_CLIENT, PARKED_TTL, PROBE_TIMEOUT,
    SETTLE_TIMEOUT, STABLE_AFTER, START_TIMEOUT, STDERR_TAIL_LINES,
};
pub use policy::exposure::{
    AUTO_MAX_LIST_BYTES, AUTO_MAX_TOOLS, MAX_DISCLOSED, MAX_SEARCH_INDEXES,
};
pub use policy::naming::{default_prefix, exposed_name, ToolFilter, MAX_EXPOSED_NAME, SEPARATOR};
pub use policy::pinning::LOCK_POLL_INTERVAL;
pub use protocol::conversation::GATHER_WINDOW;
pub use protocol::listen::MAX_LISTEN_RESOURCES;
pub use protocol::modern::{supported_versions, MODERN_VERSIONS};
pub use protocol::mrtr::{MAX_PARKED_CALLS, MAX_PARKED_PER_PRINCIPAL};
pub use sessions::principal::Principal;
pub use sessions::session::{Outbox, Session, MAX_REQUESTS_IN_FLIGHT};
pub use upstream::fair::MAX_UPSTREAM_IN_FLIGHT;
pub use upstream::health::{serve_health, Health, HEALTH_PATH, READY_PATH};
pub use upstream::reload::{Reloaded, DRAIN_POLL};
