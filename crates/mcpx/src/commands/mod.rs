//! One module per command.

pub(crate) mod mcp;
pub(crate) mod schema;
