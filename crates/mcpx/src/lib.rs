//! What the `mcpx` command reads from its user, as a library so that it can be fuzzed and
//! tested on its own: its command line ([`cli`], also read by `cargo xtask` for the
//! completions, man pages and CLI reference), the config file ([`config`]), a tool call's arguments typed from
//! `key=value` words ([`arguments`]), and what a property's schema accepts ([`shape`], read for
//! that typing and for the argument table), and where mcpx keeps its files on each platform
//! ([`places`]). Tool pinning's lock file is the `toolpin` crate, shared with the gateway. The
//! command itself is the binary beside it.

pub mod arguments;
pub mod cli;
pub mod config;
mod config_schema;
pub mod places;
pub mod shape;
