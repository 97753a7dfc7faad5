//! The JSON-RPC error codes mcpx sends and reads, by name: JSON-RPC 2.0's own, and the ones MCP
//! defines. One place for each: every crate that answers requests uses these.

use serde_json::{json, Value};

/// The message is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// The message is JSON, but not a JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// No such method (for this side, or in this protocol version).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The params are wrong: arguments that violate a tool's `inputSchema`, an unknown tool, a
/// missing required `_meta` field, a resource not found (2026-07-28).
pub const INVALID_PARAMS: i64 = -32602;
/// The request could not be carried out (a server down, a timeout, the gateway stopping).
pub const INTERNAL_ERROR: i64 = -32603;
/// Resource not found, in 2025-11-25 and before (-32602 since 2026-07-28).
pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;
/// The HTTP headers contradict the body, or a required header is missing (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability the client did not declare (2026-07-28).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The server does not speak the request's protocol version; `data.supported` lists what it
/// speaks (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object `{code, message}`.
pub fn error(code: i64, message: impl Into<String>) -> Value {
    json!({"code": code, "message": message.into()})
}
