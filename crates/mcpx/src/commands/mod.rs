//! One module per command.

pub(crate) mod schema;
