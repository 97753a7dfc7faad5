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

#![deny(missing_docs)]

mod bearer;
mod bridge;
mod catalog;
mod conversation;
mod drain;
mod exposure;
mod fair;
mod gateway;
mod health;
mod http;
#[cfg(test)]
mod in_memory_tests;
mod instances;
mod isolated;
mod listen;
mod modern;
mod mrtr;
mod naming;
mod observe;
mod observed;
mod options;
mod pinning;
mod principal;
mod question;
mod ratelog;
mod registry;
mod reload;
mod requests;
mod roster;
#[cfg(test)]
mod routing_tests;
mod search_tools;
mod session;
mod stateless;
mod stdio;
#[cfg(test)]
mod testing;
mod upstream;
mod wire;

pub use bearer::{
    metadata_url, BearerError, Challenge, Grant, ResourceAuth, ToolScope, Verifier,
    CLOCK_LEEWAY_SECONDS, FETCH_TIMEOUT, KEYS_MAX_AGE, KEY_REFRESH_INTERVAL, MAX_JWKS_BYTES,
    MAX_JWKS_KEYS, MAX_METADATA_BYTES, MAX_TOKEN_BYTES,
};
pub use conversation::GATHER_WINDOW;
pub use drain::{Phase, Stop, DRAIN_TIMEOUT};
pub use exposure::{
    Exposure, ExposureOptions, AUTO_MAX_LIST_BYTES, AUTO_MAX_TOOLS, MAX_DISCLOSED,
    MAX_SEARCH_INDEXES,
};
pub use fair::MAX_UPSTREAM_IN_FLIGHT;
pub use gateway::Gateway;
pub use health::{serve_health, Health, HEALTH_PATH, READY_PATH};
pub use http::{
    serve_http, HttpError, HttpOptions, BODY_BUDGET_BYTES, BODY_BUDGET_WAIT, BODY_READ_TIMEOUT,
    DEFAULT_HTTP_ADDR, DRAIN_GRACE, HEADER_READ_TIMEOUT, KEEP_ALIVE, MAX_BODY_BYTES,
    MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, MAX_SESSIONS, MAX_SESSIONS_PER_CLIENT,
    MAX_UNREAD_STREAM_BYTES, MCP_PATH, SESSION_IDLE_TIMEOUT, SMALL_BODY_BYTES,
};
pub use isolated::{MAX_SESSION_SERVERS, MAX_SESSION_SERVERS_PER_CLIENT};
pub use listen::MAX_LISTEN_RESOURCES;
pub use modern::{supported_versions, MODERN_VERSIONS};
pub use mrtr::{MAX_PARKED_CALLS, MAX_PARKED_PER_PRINCIPAL, PARKED_TTL};
pub use naming::{default_prefix, exposed_name, ToolFilter, MAX_EXPOSED_NAME, SEPARATOR};
pub use observe::{
    serve_metrics, AuditOptions, Limit, Observe, ObserveError, Redactor, TracesError,
    AUDIT_FLUSH_GRACE, EXPORT_TIMEOUT, MAX_ESCAPE_LEVELS, MAX_QUEUED_AUDIT_LINES,
    MAX_TOOL_LABELS_PER_SERVER, METRICS_CONTENT_TYPE, METRICS_PATH, MIN_SECRET_CHARS, OTHER_TOOL,
    REDACTED, TRACES_FLUSH_GRACE,
};
pub use options::{
    DownstreamDialect, GatewayOptions, InvalidArguments, Isolation, UpstreamConfig,
    HEALTH_INTERVAL, INITIAL_BACKOFF, MAX_BACKOFF, MAX_CONCURRENT_STARTS, MAX_RESENDS,
    PROBE_TIMEOUT, SETTLE_TIMEOUT, STABLE_AFTER, START_TIMEOUT, STDERR_TAIL_LINES,
};
pub use pinning::{Pinning, LOCK_POLL_INTERVAL};
pub use principal::Principal;
pub use ratelog::{LOG_WINDOW, MAX_LINES_PER_WINDOW};
pub use reload::{Reloaded, DRAIN_POLL};
pub use session::{Outbox, Session, MAX_REQUESTS_IN_FLIGHT};
pub use stdio::{serve_stdio, MAX_HELD_BYTES, MAX_UNREAD_BYTES};
