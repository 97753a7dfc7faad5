//! The MCP client mcpx's CLI and gateway are built on.
//!
//! It talks to servers mcpx does not control, so it is tolerant in what it reads and exact in
//! what it forwards: frames are kept as the JSON text that arrived ([`Frame`]), so unknown
//! fields, `_meta`, number text and key order pass through unchanged.
//!
//! Layers so far: the transport, one small trait ([`Transport`]) with its stdio implementation
//! ([`StdioTransport`]), newline-delimited and bounded by [`MAX_FRAME_BYTES`]; and JSON-RPC over
//! it ([`Connection`]): calls matched to answers by id, with timeouts and cancellation.

#![deny(missing_docs)]

mod client;
mod frame;
mod rpc;
mod stdio;
mod transport;

pub use client::{
    CallOutcome, Client, ClientError, Tool, Warning, ACCEPTED_VERSIONS, DEFAULT_TIMEOUT,
    MAX_LIST_PAGES, OFFERED_VERSION, OUTPUT_WARNING,
};
pub use frame::{Frame, FrameError, MAX_FRAME_BYTES};
pub use rpc::{Connection, Event, Response, RpcError, MAX_QUEUED_FRAMES};
pub use stdio::{StdioCommand, StdioTransport, MAX_STDERR_LINES, STOP_GRACE};
pub use transport::{Transport, TransportError};
