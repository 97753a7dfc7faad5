//! The fronts: how clients reach the gateway, the top layer. Each takes what its client sends,
//! works out who the client is ([`crate::sessions::principal`]) and hands decoded messages to
//! the gateway; what goes back leaves through the session's outbox. Nothing below calls up into
//! a front.
//!
//! - [`http`]: Streamable HTTP (sessions, streams bounded in what waits unread, connections,
//!   the 2026-07-28 sessionless requests, the OAuth resource server's checks);
//! - [`stdio`]: one client over standard input and output;
//! - [`bearer`]: checking OAuth access tokens (RFC 9068), for the HTTP front;
//! - [`drain`]: stopping in two steps, shared by the fronts and the gateway.

pub(crate) mod bearer;
pub(crate) mod drain;
pub(crate) mod http;
pub(crate) mod stdio;
