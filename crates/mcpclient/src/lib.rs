//! The MCP client mcpx's CLI and gateway are built on.
//!
//! It talks to servers mcpx does not control, so it is tolerant in what it reads and exact in
//! what it forwards: frames are kept as the JSON text that arrived ([`Frame`]), so unknown
//! fields, `_meta`, number text and key order pass through unchanged.
//!
//! Layers: the transport, one small trait ([`Transport`]) with a stdio implementation
//! ([`StdioTransport`], newline-delimited, bounded by [`MAX_FRAME_BYTES`]) and a Streamable HTTP
//! one ([`HttpTransport`]); JSON-RPC over it ([`Connection`]): calls matched to answers by id,
//! with timeouts and cancellation; and the MCP client ([`Client`]): the handshake, tools compiled
//! at list time, enforced inputs, warn-only outputs, progress, the application's handlers for
//! elicitation, sampling and roots, and raw pass-through for resources, prompts and completion.

#![deny(missing_docs)]

mod auth;
mod client;
pub mod codes;
mod coerced;
mod discovery;
mod elicitation;
mod endpoint;
mod frame;
mod handlers;
mod headers;
mod http;
mod lines;
mod message;
mod modern;
mod own_stdio;
mod params;
mod pipe;
mod process;
mod reach;
mod rpc;
mod serve;
mod sse;
mod stdio;
mod tools;
mod transport;

pub use auth::{
    AuthFailure, AuthHeader, AuthTarget, HttpAuth, Refusal, DPOP_HEADER, DPOP_NONCE_HEADER,
    MAX_AUTH_RETRIES,
};
pub use client::{
    input_key, CallOptions, Client, ClientError, ClientOptions, ACCEPTED_VERSIONS, DEFAULT_TIMEOUT,
    LISTEN_RETRY, LISTEN_TIMEOUT, MAX_ARGUMENT_VALUES, MAX_LIST_PAGES, MAX_QUEUED_PROGRESS,
    MAX_TOOLS_TTL, MIN_TOOLS_TTL, OFFERED_VERSION, RESERVED_METHODS, SUPPORTED_VERSIONS,
};
pub use codes::ErrorObject;
pub use coerced::{mark_coerced, COERCED_META};
pub use discovery::Discovery;
pub use elicitation::MAX_ELICITATION_ATTEMPTS;
pub use endpoint::{shown_url, MIN_SECRET_CHARS, REDACTED};
pub use frame::{
    written_into, Frame, FrameError, Head, CHUNKS, MAX_FRAME_BYTES, MAX_FRAME_DEPTH, MAX_INSERTS,
};
pub use handlers::{
    BoxFuture, ElicitationAnswer, ElicitationHandler, ElicitationRequest, Handlers, RootsHandler,
    SamplingHandler,
};
pub use headers::{
    decode_header_value, encode_header_value, header_params, HeaderParams, ToolHeaders,
    MAX_SAFE_INTEGER,
};
pub use http::{
    HttpConfig, HttpSession, HttpSink, HttpSource, HttpTransport, ACK_TIMEOUT, CONNECT_TIMEOUT,
    DEFAULT_RETRY, MAX_REDIRECTS, MAX_REISSUES, MAX_RESUMPTIONS, MAX_RETRY, POOL_IDLE_TIMEOUT,
};
pub use lines::{gather, write_frames, FrameReader, MAX_BATCH_BYTES, MAX_BATCH_FRAMES};
pub use message::{Decoded, Message};
pub use modern::{
    Era, Protocol, Why, DISCOVER_GRACE, DISCOVER_QUIET, INPUT_METHODS, MAX_INPUT_ROUNDS,
    MAX_PROBES, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    META_SERVER_INFO, META_SUBSCRIPTION_ID, MODERN_VERSION, REQUEST_META_KEYS,
};
pub use own_stdio::{own_stdio, OwnStdio};
pub use params::{count_values, RawParams};
pub use pipe::{InProcess, Pipe, PipeSink, PipeSource};
pub use process::locate;
pub use reach::{
    connect, connect_listing, expand, ConnectError, Connected, EntryError, Listing, Reach,
    ReachSink, ReachSource, ReachTransport, Spawn,
};
pub use rpc::{Connection, Event, Mark, Response, RpcError, MAX_QUEUED_EVENTS, MAX_QUEUED_FRAMES};
pub use sse::{sse_events, SseError, SseEvent, MAX_SSE_EVENT_BYTES};
pub use stdio::{
    StderrTail, StdioCommand, StdioSink, StdioSource, StdioTransport, MAX_STDERR_LINES, STOP_GRACE,
};
pub use tools::{
    CallOutcome, Tool, Upgraded, Warning, HEADER_WARNING, OUTPUT_WARNING, SCHEMA_LOG_TARGET,
    UNCHECKED_OUTPUT_WARNING,
};
pub use transport::{FrameSink, FrameSource, Received, Transport, TransportError};
