//! `mcpx serve`: one MCP endpoint in front of many MCP servers, enforcing their tool schemas.
//!
//! The gateway connects to every configured server (with mcpclient, which compiles each tool's
//! schemas when the list arrives) and offers their tools as one list, named `SERVER__TOOL`
//! ([`exposed_name`]), with their resources and prompts. Arguments that violate a tool's
//! `inputSchema` are refused before anything is sent; results are forwarded as the exact JSON
//! text the server sent, an `outputSchema` mismatch being logged and counted, never changed.
//! Servers that fail or crash are restarted with backoff, their tools withdrawn meanwhile;
//! none of that reaches the other servers or the gateway itself.
//!
//! Fronts: [`serve_stdio`] (the client spawns mcpx) and [`serve_http`] (Streamable HTTP, with
//! sessions, Origin checks and an optional bearer token). Both are thin: what a client sends
//! goes to [`Gateway::receive`], and what goes back leaves through the session's [`Outbox`].

#![deny(missing_docs)]

mod bearer;
mod bridge;
mod catalog;
mod conversation;
mod exposure;
mod fair;
mod gateway;
mod http;
mod instances;
mod isolated;
mod listen;
mod modern;
mod mrtr;
mod naming;
mod options;
mod pinning;
mod question;
mod ratelog;
mod registry;
mod requests;
#[cfg(test)]
mod routing_tests;
mod search_tools;
mod session;
mod stateless;
mod stdio;
mod upstream;
mod wire;

pub use bearer::{
    metadata_url, BearerError, Challenge, Grant, ResourceAuth, ToolScope, Verifier,
    CLOCK_LEEWAY_SECONDS, FETCH_TIMEOUT, KEYS_MAX_AGE, KEY_REFRESH_INTERVAL, MAX_JWKS_BYTES,
    MAX_JWKS_KEYS, MAX_METADATA_BYTES, MAX_TOKEN_BYTES,
};
pub use conversation::GATHER_WINDOW;
pub use exposure::{Exposure, ExposureOptions, AUTO_MAX_LIST_BYTES, AUTO_MAX_TOOLS, MAX_DISCLOSED};
pub use fair::MAX_UPSTREAM_IN_FLIGHT;
pub use gateway::Gateway;
pub use http::{
    serve_http, HttpError, HttpOptions, BODY_BUDGET_BYTES, BODY_BUDGET_WAIT, BODY_READ_TIMEOUT,
    DEFAULT_HTTP_ADDR, DRAIN_GRACE, HEADER_READ_TIMEOUT, KEEP_ALIVE, MAX_BODY_BYTES,
    MAX_CONNECTIONS, MAX_SESSIONS, MCP_PATH, SESSION_IDLE_TIMEOUT, SMALL_BODY_BYTES,
};
pub use listen::MAX_LISTEN_RESOURCES;
pub use modern::{supported_versions, MODERN_VERSIONS};
pub use mrtr::{MAX_PARKED_CALLS, PARKED_TTL};
pub use naming::{default_prefix, exposed_name, ToolFilter, MAX_EXPOSED_NAME, SEPARATOR};
pub use options::{
    DownstreamDialect, GatewayOptions, InvalidArguments, Isolation, UpstreamConfig,
    HEALTH_INTERVAL, INITIAL_BACKOFF, MAX_BACKOFF, PROBE_TIMEOUT, SETTLE_TIMEOUT, STABLE_AFTER,
    START_TIMEOUT,
};
pub use pinning::{Pinning, LOCK_POLL_INTERVAL};
pub use ratelog::{LOG_WINDOW, MAX_LINES_PER_WINDOW};
pub use session::{Outbox, Session, MAX_REQUESTS_IN_FLIGHT};
pub use stdio::{serve_stdio, MAX_HELD_BYTES, MAX_UNREAD_BYTES};
