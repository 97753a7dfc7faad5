//! The JSON-RPC error codes mcpx sends and reads, by name: JSON-RPC 2.0's own, and the ones MCP
//! defines; and [`ErrorObject`], the one error type every crate that answers requests sends.
//! One place for each.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

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

/// A JSON-RPC error object `{code, message, data}`: what mcpx answers a request with when it
/// does not carry it out, and what a peer's error is read into. (An error mcpx only relays,
/// such as a client's answer to a server's question, is passed on as it came, not through
/// this type.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The code: one of this module's constants when mcpx chose it.
    pub code: i64,
    /// One line saying what went wrong.
    pub message: String,
    /// More, when there is more: the violations of a tool's `inputSchema`, the versions a
    /// server speaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with `code` and `message`, and no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error, with `data`.
    #[must_use]
    pub fn with_data(self, data: Value) -> ErrorObject {
        ErrorObject {
            data: Some(data),
            ..self
        }
    }

    /// The error object as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The error object as JSON text.
    pub fn to_raw(&self) -> Box<RawValue> {
        serde_json::value::to_raw_value(self).expect("an error object serializes")
    }

    /// A peer's error object, read leniently: a missing or non-integer code is 0, a missing
    /// message empty, so that whatever a peer sent can still be reported.
    pub fn from_value(error: &Value) -> ErrorObject {
        ErrorObject {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            data: error.get("data").cloned(),
        }
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error {}: {}", self.code, self.message)
    }
}

/// An error object with `code` and `message` ([`ErrorObject::new`]).
pub fn error(code: i64, message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_is_written_only_when_there_is_some() {
        assert_eq!(
            error(INVALID_PARAMS, "bad").to_raw().get(),
            r#"{"code":-32602,"message":"bad"}"#
        );
        let with = error(UNSUPPORTED_PROTOCOL_VERSION, "no").with_data(json!({"supported": ["x"]}));
        assert_eq!(
            with.to_value(),
            json!({"code": -32022, "message": "no", "data": {"supported": ["x"]}})
        );
        assert_eq!(ErrorObject::from_value(&with.to_value()), with);
        assert_eq!(with.to_string(), "error -32022: no");
    }

    #[test]
    fn a_peers_odd_error_is_still_read() {
        let odd = ErrorObject::from_value(&json!({"code": "x", "data": 1}));
        assert_eq!((odd.code, odd.message.as_str()), (0, ""));
        assert_eq!(odd.data, Some(json!(1)));
    }
}
