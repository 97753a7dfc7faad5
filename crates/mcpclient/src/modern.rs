//! MCP 2026-07-28, the first "modern" protocol version: no `initialize` handshake, the version,
//! the client's capabilities and identity in every request's `_meta`, `server/discover` to learn
//! what a server speaks, and server-to-client questions carried in results
//! (`resultType: "input_required"`, the multi round-trip pattern) instead of requests.
//!
//! This module holds the era's facts and the pure steps on them: stamping a request's `_meta`,
//! telling a modern server from a legacy one by its answer to the probe, and building the retry
//! of a request the server needs input for. The client ([`crate::Client`]) drives them.

use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::codes::{self, ErrorObject};
use crate::{RawParams, Response, RpcError};

/// The modern protocol version the client speaks.
pub const MODERN_VERSION: &str = "2026-07-28";

/// How long the `server/discover` probe waits for an answer before also sending `initialize`,
/// pipelined behind it. This clock decides nothing: a server that is still starting reads the
/// probe first and its answer (a discover result, an error) is what decides, whenever it comes
/// within the start timeout. It only bounds how long a server that ignores requests before
/// `initialize` waits for the handshake it does answer. See [`crate::Discovery`].
pub const DISCOVER_QUIET: Duration = Duration::from_secs(2);

/// How long, after a server answered `initialize` while leaving the `server/discover` sent
/// before it unanswered, the probe still waits for that answer before taking the server for
/// legacy. A server reading its input in order has already passed the probe by then (and
/// dropped it: legacy); this covers a dual-era server that answers concurrently. A modern
/// answer that comes later still is ignored: the server speaks the legacy era too.
pub const DISCOVER_GRACE: Duration = Duration::from_secs(1);

/// Most rounds of one request that the server answers `input_required` (a question, then the
/// retry with the answer): a server that keeps asking is stopped there, with an error.
pub const MAX_INPUT_ROUNDS: usize = 16;

/// How many times the probe is sent to a server that refuses its version while naming it.
pub const MAX_PROBES: usize = 2;

/// The requests a server may answer with `input_required`.
pub const INPUT_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// `_meta` key: the request's protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the most verbose log level the server may send for this request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of a result: the server's name and version.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a notification on a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The request-level keys of the modern era, which a request to a legacy server does not carry.
pub const REQUEST_META_KEYS: [&str; 4] = [
    META_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
];

/// Which era a server is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Probe with `server/discover`; modern when the server answers as a modern server,
    /// else the `initialize` handshake (see [`crate::Discovery`]).
    #[default]
    Auto,
    /// The `initialize` handshake only (2024-11-05 … 2025-11-25).
    Legacy,
    /// 2026-07-28 only: a server that does not speak it is an error.
    Modern,
    /// What an earlier connection to the same server learnt: that era directly (no probe
    /// beside `initialize` for a legacy server; `server/discover` waited for without a clock
    /// for a modern one). An answer that contradicts it (a legacy server's error to
    /// `server/discover`, an `initialize` refused naming 2026-07-28) is followed instead.
    Remembered(Era),
}

/// The two protocol eras: legacy (`initialize`, 2024-11-05 … 2025-11-25) and modern
/// (2026-07-28: `_meta` in every request, no session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// The `initialize` handshake.
    Legacy,
    /// 2026-07-28.
    Modern,
}

impl Era {
    /// `legacy` or `modern`.
    pub fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// Why a connection speaks the era it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The server's config entry says (`"protocol": "legacy"` or `"2026-07-28"`).
    Configured,
    /// An earlier connection to the same server learnt it ([`Protocol::Remembered`]).
    Remembered,
    /// The server's answers to the probe said.
    Probed,
    /// A start with the probe failed (the server closed, crashed or erred after it), and the
    /// server was started again without it.
    FellBack,
}

impl Why {
    /// For a person: `configured`, `remembered`, `probed`, `fell back after a failed start`.
    pub fn describe(self) -> &'static str {
        match self {
            Why::Configured => "configured",
            Why::Remembered => "remembered",
            Why::Probed => "probed",
            Why::FellBack => "fell back after a failed start",
        }
    }

    /// One word, for JSON: `configured`, `remembered`, `probed`, `fell-back`.
    pub fn name(self) -> &'static str {
        match self {
            Why::FellBack => "fell-back",
            other => other.describe(),
        }
    }
}

/// What the answer to the `server/discover` probe says about the server.
#[derive(Debug)]
pub(crate) enum Probed {
    /// A modern server that speaks [`MODERN_VERSION`]: its discover result.
    Modern(Value),
    /// A modern server that does not speak [`MODERN_VERSION`]: the versions it names.
    ModernWithout(Vec<String>),
    /// A modern server that refused the probe's version while naming it among the versions it
    /// speaks: asked again.
    Again,
    /// Anything else: a legacy server (why, for the log).
    Legacy(String),
}

/// Reads the answer to the probe: a discover result naming [`MODERN_VERSION`], or a modern
/// error, is a modern server; any other error (legacy servers answer an unknown method before
/// `initialize` with -32601, -32602 or -32600), or none, is a legacy one.
pub(crate) fn probed(answer: Result<Response, RpcError>) -> Probed {
    match answer {
        Ok(response) => match response.result() {
            Ok(result) => {
                let supported = versions(result.get("supportedVersions"));
                if supported.iter().any(|v| v == MODERN_VERSION) {
                    Probed::Modern(result)
                } else if result.get("supportedVersions").is_some() {
                    Probed::ModernWithout(supported)
                } else {
                    Probed::Legacy("a result that is no discover result".to_owned())
                }
            }
            Err(e) => Probed::Legacy(e.to_string()),
        },
        Err(RpcError::Remote(ErrorObject {
            code: codes::UNSUPPORTED_PROTOCOL_VERSION,
            data,
            ..
        })) => {
            let supported = versions(data.as_ref().and_then(|d| d.get("supported")));
            if supported.iter().any(|v| v == MODERN_VERSION) {
                Probed::Again
            } else {
                Probed::ModernWithout(supported)
            }
        }
        Err(error) => Probed::Legacy(error.to_string()),
    }
}

impl Probed {
    /// What the answer was, for the log.
    pub(crate) fn describe(&self) -> String {
        match self {
            Probed::Modern(_) => "server/discover answered".to_owned(),
            Probed::ModernWithout(versions) => format!(
                "server/discover named other versions ({})",
                versions.join(", ")
            ),
            Probed::Again => format!("server/discover refused {MODERN_VERSION} while naming it"),
            Probed::Legacy(why) => format!("server/discover: {why}"),
        }
    }
}

fn versions(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// What a modern request says about its client: written into each request's `_meta`.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
}

/// `params` with the modern request fields set in `_meta` (the rest of `params` and of `_meta`
/// as written). A log level already there is kept (a gateway passing on its client's); else
/// `log_level` is set when given.
pub(crate) fn stamp(
    params: Option<&RawValue>,
    identity: &Identity,
    log_level: Option<&str>,
) -> Result<Box<RawValue>, serde_json::Error> {
    let mut members = match params {
        Some(raw) => RawParams::parse(raw)?,
        None => RawParams::default(),
    };
    let mut meta = members
        .get("_meta")
        .and_then(|raw| RawParams::parse(raw).ok())
        .unwrap_or_default();
    meta.set(META_PROTOCOL_VERSION, &json!(MODERN_VERSION));
    meta.set(META_CLIENT_CAPABILITIES, &identity.capabilities);
    meta.set(META_CLIENT_INFO, &identity.client_info);
    if let (None, Some(level)) = (meta.get(META_LOG_LEVEL), log_level) {
        meta.set(META_LOG_LEVEL, &json!(level));
    }
    members.set_raw("_meta", meta.to_raw());
    Ok(members.to_raw())
}

/// `params` without the modern request fields in `_meta`, for a legacy server (a gateway passing
/// on a modern client's request); untouched, without a parse, when they are not there.
pub(crate) fn unstamp(params: Option<Box<RawValue>>) -> Option<Box<RawValue>> {
    let raw = params?;
    // A key may be written with escapes (`io.modelcontextprotocol\/...`, a letter as
    // `\uXXXX`), which the server decodes: text with either is read.
    let text = raw.get();
    if !text.contains("io.modelcontextprotocol") && !text.contains("\\u") {
        return Some(raw);
    }
    let Ok(mut members) = RawParams::parse(&raw) else {
        return Some(raw);
    };
    let Some(mut meta) = members.get("_meta").and_then(|m| RawParams::parse(m).ok()) else {
        return Some(raw);
    };
    let mut removed = false;
    for key in REQUEST_META_KEYS {
        removed |= meta.remove(key).is_some();
    }
    if !removed {
        return Some(raw);
    }
    if meta.is_empty() {
        members.remove("_meta");
    } else {
        members.set_raw("_meta", meta.to_raw());
    }
    Some(members.to_raw())
}

/// An `input_required` result: the server's questions, by its keys, and the state to echo.
#[derive(Debug, Default)]
pub(crate) struct InputRequired {
    /// `inputRequests`: key → `{method, params}`.
    pub(crate) requests: Vec<(String, Value)>,
    /// `requestState`, exactly as sent.
    pub(crate) state: Option<Box<RawValue>>,
}

/// The `input_required` result in `response`, if that is what it is. A result without
/// `resultType` (a legacy server's) is complete.
pub(crate) fn input_required(response: &Response) -> Option<InputRequired> {
    let text = response.result_text();
    // Cheap test first: most results are complete and large.
    if !text.contains("input_required") {
        return None;
    }
    let members = RawParams::parse(response.result_raw()).ok()?;
    if members.get_str("resultType").as_deref() != Some("input_required") {
        return None;
    }
    let requests = members
        .get("inputRequests")
        .and_then(|raw| serde_json::from_str::<indexmap::IndexMap<String, Value>>(raw.get()).ok())
        .map(|map| map.into_iter().collect())
        .unwrap_or_default();
    let state = members.get("requestState").map(RawValue::to_owned);
    Some(InputRequired { requests, state })
}

/// The retry of a request: its `params` as first sent, with `inputResponses` and the exact
/// `requestState` of the last round (neither when that round had none).
pub(crate) fn retry_params(
    original: Option<&RawValue>,
    responses: Option<Box<RawValue>>,
    state: Option<Box<RawValue>>,
) -> Result<Box<RawValue>, serde_json::Error> {
    let mut members = match original {
        Some(raw) => RawParams::parse(raw)?,
        None => RawParams::default(),
    };
    members.remove("inputResponses");
    members.remove("requestState");
    if let Some(responses) = responses {
        members.set_raw("inputResponses", responses);
    }
    if let Some(state) = state {
        members.set_raw("requestState", state);
    }
    Ok(members.to_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn stamping_keeps_what_the_caller_wrote() {
        let identity = Identity {
            capabilities: json!({"elicitation": {"form": {}}}),
            client_info: json!({"name": "mcpx", "version": "1"}),
        };
        let params = raw(
            r#"{"name":"t","arguments":{"n":1E2},"_meta":{"traceparent":"00-ab","progressToken":"p1"},"x":1}"#,
        );
        let stamped = stamp(Some(&params), &identity, Some("debug")).unwrap();
        let text = stamped.get();
        assert!(text.starts_with(r#"{"name":"t","arguments":{"n":1E2},"_meta":{"traceparent":"00-ab","progressToken":"p1","#), "{text}");
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["_meta"][META_PROTOCOL_VERSION], MODERN_VERSION);
        assert_eq!(
            v["_meta"][META_CLIENT_CAPABILITIES]["elicitation"],
            json!({"form": {}})
        );
        assert_eq!(v["_meta"][META_LOG_LEVEL], "debug");
        assert_eq!(v["x"], 1);
        // A level the request has is kept; none is added without one.
        let own = raw(&format!(r#"{{"_meta":{{"{META_LOG_LEVEL}":"error"}}}}"#));
        let v: Value =
            serde_json::from_str(stamp(Some(&own), &identity, Some("debug")).unwrap().get())
                .unwrap();
        assert_eq!(v["_meta"][META_LOG_LEVEL], "error");
        let v: Value = serde_json::from_str(stamp(None, &identity, None).unwrap().get()).unwrap();
        assert!(v["_meta"].get(META_LOG_LEVEL).is_none());
    }

    #[test]
    fn unstamping_takes_only_the_modern_fields() {
        let untouched = raw(r#"{"name":"t","_meta":{"progressToken":1}}"#);
        assert_eq!(
            unstamp(Some(untouched)).unwrap().get(),
            r#"{"name":"t","_meta":{"progressToken":1}}"#
        );
        let modern = raw(&format!(
            r#"{{"name":"t","_meta":{{"{META_PROTOCOL_VERSION}":"2026-07-28","{META_CLIENT_CAPABILITIES}":{{}},"traceparent":"x"}}}}"#
        ));
        assert_eq!(
            unstamp(Some(modern)).unwrap().get(),
            r#"{"name":"t","_meta":{"traceparent":"x"}}"#
        );
        let only = raw(&format!(
            r#"{{"_meta":{{"{META_PROTOCOL_VERSION}":"2026-07-28"}}}}"#
        ));
        assert_eq!(unstamp(Some(only)).unwrap().get(), "{}");
        // Written with escapes, as a client may: the server would decode them.
        let escaped = raw(
            r#"{"name":"t\n","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","k":"v"}}"#,
        );
        assert_eq!(
            unstamp(Some(escaped)).unwrap().get(),
            r#"{"name":"t\n","_meta":{"k":"v"}}"#
        );
    }

    #[test]
    fn retries_carry_the_answers_and_the_exact_state() {
        let original = raw(r#"{"name":"t","arguments":{"a":1.50}}"#);
        let retry = retry_params(
            Some(&original),
            Some(raw(r#"{"q":{"action":"accept","content":{"x":1}}}"#)),
            Some(raw(r#""st\u0041te""#)),
        )
        .unwrap();
        assert_eq!(
            retry.get(),
            r#"{"name":"t","arguments":{"a":1.50},"inputResponses":{"q":{"action":"accept","content":{"x":1}}},"requestState":"st\u0041te"}"#
        );
        // A round without state sends none, even if an earlier one had it.
        let again = retry_params(Some(&retry), Some(raw("{}")), None).unwrap();
        assert!(!again.get().contains("requestState"), "{}", again.get());
    }
}
