//! The MCP client mcpx's CLI and gateway are built on.
//!
//! It talks to servers mcpx does not control, so it is tolerant in what it reads and exact in
//! what it forwards: frames are kept as the JSON text that arrived ([`Frame`]), so unknown
//! fields, `_meta`, number text and key order pass through unchanged.
//!
//! This first layer is the transport: one small trait ([`Transport`]) and its stdio
//! implementation ([`StdioTransport`]), newline-delimited, bounded by [`MAX_FRAME_BYTES`].

#![deny(missing_docs)]

mod frame;
mod stdio;
mod transport;

pub use frame::{Frame, FrameError, MAX_FRAME_BYTES};
pub use stdio::{StdioCommand, StdioTransport, MAX_STDERR_LINES, STOP_GRACE};
pub use transport::{Transport, TransportError};
