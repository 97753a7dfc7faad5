//! The interop tests' helpers (in the crate's library) and the rmcp peer built with this crate.

#![allow(dead_code, unreachable_pub)]

pub use mcpx_interop::*;

/// The rmcp peer built with this crate.
pub fn rmcp_peer() -> String {
    env!("CARGO_BIN_EXE_rmcp-peer").to_owned()
}
