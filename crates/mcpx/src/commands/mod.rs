//! One module per command.

pub(crate) mod add;
pub(crate) mod auth;
pub(crate) mod clients;
pub(crate) mod doctor;
pub(crate) mod mcp;
pub(crate) mod pin;
pub(crate) mod reload;
pub(crate) mod schema;
pub(crate) mod search;
pub(crate) mod serve;
