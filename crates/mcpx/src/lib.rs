//! What the `mcpx` command reads from its user, as a library so that it can be fuzzed and
//! tested on its own: the config file ([`config`]) and a tool call's arguments typed from
//! `key=value` words ([`arguments`]). The command itself is the binary beside it.

pub mod arguments;
pub mod config;
