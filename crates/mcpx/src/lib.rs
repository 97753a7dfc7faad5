//! What the `mcpx` command reads from its user, as a library so that it can be fuzzed and
//! tested on its own: the config file ([`config`]), a tool call's arguments typed from
//! `key=value` words ([`arguments`]), and what a property's schema accepts ([`shape`], read for
//! that typing and for the argument table), and tool pinning's lock file and change classes
//! ([`pin`]). The command itself is the binary beside it.

pub mod arguments;
pub mod config;
pub mod pin;
pub mod shape;
