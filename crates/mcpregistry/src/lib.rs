//! The MCP Registry (API v0.1) as `mcpx add` uses it: [`Registry::search`] finds servers by
//! words, [`Registry::latest`] fetches a server's latest `server.json` and checks it against
//! the server.json schema with schemaval ([`ServerJson::checked`]), and [`to_entry`] turns it
//! into an mcpx config entry (how, in the `entry` module). Any registry that speaks the same
//! API can be used instead of [`OFFICIAL_REGISTRY`]; the caller picks it (`--registry`,
//! `MCPX_REGISTRY`): this crate reads no environment, prints nothing and asks the user only
//! through the caller's `ask`.
//!
//! Requests are bounded ([`REQUEST_TIMEOUT`], [`MAX_RESPONSE_BYTES`]), and errors name the URL
//! and the problem.

#![deny(missing_docs)]

mod entry;
mod error;
mod registry;
mod server;

pub use entry::{default_name, to_entry, Entry, Naming, Need, Prefer, Question};
pub use error::Error;
pub use registry::{
    Found, Registry, Summary, CONNECT_TIMEOUT, MAX_RESPONSE_BYTES, MAX_SEARCH_RESULTS,
    OFFICIAL_REGISTRY, REQUEST_TIMEOUT,
};
pub use server::ServerJson;
