//! MCP 2026-07-28, the "modern" era, on the gateway's front: no `initialize`, every request
//! carries its version and the client's capabilities in `_meta`, and is served on its own.
//!
//! This module holds what is the same on every front: which requests are modern, the checks of
//! their `_meta` (with the spec's error codes), the versions the gateway serves, and the fields
//! a modern result gains over what a legacy server sent (`resultType`, `ttlMs`/`cacheScope`,
//! `serverInfo`), added without touching the rest of the result's text. The upstream servers
//! are spoken to in a legacy version (mcpclient initializes them), so the gateway translates:
//! what a modern client sends loses the per-request `_meta` keys and the MRTR members before it
//! goes upstream (see [`crate::protocol::mrtr`]).

use std::fmt::{self, Write as _};

use mcpclient::codes::{self, error};
use mcpclient::ErrorObject;
use mcpclient::{RawParams, ACCEPTED_VERSIONS};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::sessions::session::{level_index, LOG_LEVELS};
use crate::wire::Reply;

/// The modern protocol versions the gateway serves per request, newest first.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// `_meta` key: the request's protocol version (required).
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version (optional).
pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the least severe log level the client wants for this request (optional).
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of a result: who answered.
pub(crate) const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of what a `subscriptions/listen` stream carries: the listen request's id.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The methods a modern client may call. `ping`, `logging/setLevel` and
/// `resources/(un)subscribe` are gone in 2026-07-28, and `initialize` selects the legacy flow.
pub(crate) const MODERN_METHODS: [&str; 10] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
];

/// The methods whose answer may be `input_required` (MRTR), and the member of `params` that
/// names what they act on (`Mcp-Name` on HTTP; the binding of a `requestState`).
pub(crate) fn named_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// How long a modern client may cache a list the gateway answers (`ttlMs`). Lists change when a
/// server starts, stops or relists; a client that must know at once listens
/// (`subscriptions/listen`). A minute bounds how long a withdrawn tool may be believed there.
pub(crate) const LIST_TTL_MS: u64 = 60_000;

/// `ttlMs` of `resources/read` when the server gave none: the gateway cannot know how fresh a
/// resource stays, so it is stale at once.
pub(crate) const READ_TTL_MS: u64 = 0;

/// `ttlMs` of `server/discover`: capabilities change when servers start or stop.
pub(crate) const DISCOVER_TTL_MS: u64 = 60_000;

/// `cacheScope` of every cacheable answer. "private": the gateway's lists and reads may one day
/// differ per authorization context (per-client servers, filters, upstream credentials), and a
/// shared cache serving one client's list to another is the worse mistake.
pub(crate) const CACHE_SCOPE: &str = "private";

/// Every version the gateway serves, newest first: the modern ones per request, then the legacy
/// ones through `initialize`. Not what the servers behind it speak: the gateway translates both
/// ways, so a client in any of these versions reaches every server.
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS
        .iter()
        .chain(ACCEPTED_VERSIONS.iter())
        .copied()
        .collect()
}

/// What a modern request declared in its `_meta`.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub(crate) version: String,
    pub(crate) capabilities: Value,
    /// An index into [`LOG_LEVELS`], when the client asked for log messages.
    pub(crate) log_level: Option<usize>,
    /// The request's `_meta.progressToken`, when it wants progress notifications.
    pub(crate) progress_token: Option<Value>,
}

/// A modern request's `params` read once: its members, and the members of its `_meta`, for the
/// checks of the front and the gateway to take from. (A 2026-07-28 `tools/call` over HTTP had
/// its params parsed fifteen times on its way to the server; now six: twice on the front,
/// twice to tell its era, the `_meta` left for the server, and the members `tools/call` takes.)
pub(crate) struct Read {
    pub(crate) members: Option<RawParams>,
    pub(crate) meta: Option<RawParams>,
    /// What [`check`] found in `meta`, once asked ([`Read::checked`]): the front checks it
    /// against the headers, the gateway serves by it.
    checked: Option<Result<Meta, ErrorObject>>,
}

impl Read {
    pub(crate) fn of(params: Option<&RawValue>) -> Read {
        let members = params.and_then(|p| RawParams::parse(p).ok());
        let meta = members
            .as_ref()
            .and_then(|m| m.get("_meta"))
            .and_then(|m| RawParams::parse(m).ok());
        Read {
            members,
            meta,
            checked: None,
        }
    }

    /// [`check`] of these params, made the first time it is asked for.
    pub(crate) fn checked(&mut self) -> &Result<Meta, ErrorObject> {
        let meta = &self.meta;
        self.checked.get_or_insert_with(|| check(meta.as_ref()))
    }

    /// [`Read::checked`], taken.
    pub(crate) fn take_checked(&mut self) -> Result<Meta, ErrorObject> {
        match self.checked.take() {
            Some(checked) => checked,
            None => check(self.meta.as_ref()),
        }
    }
}

/// Whether a request is served the modern way: any request but `initialize` whose `_meta`
/// names a protocol version, and `server/discover` and `subscriptions/listen`, which only the
/// modern era has. (A legacy request never carries that key.)
pub(crate) fn is_modern(method: &str, params: Option<&RawValue>) -> bool {
    era(method, params).is_some()
}

/// [`is_modern`], with the params it read to tell: `None` for a legacy request.
pub(crate) fn era(method: &str, params: Option<&RawValue>) -> Option<Read> {
    if method == "initialize" {
        return None;
    }
    if matches!(method, "server/discover" | "subscriptions/listen") {
        return Some(Read::of(params));
    }
    // The parse only for a request whose text mentions the key (a searcher built once: `str`'s
    // `contains` builds one each time, a cost every legacy call paid).
    static MENTIONS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(PROTOCOL_VERSION));
    if params.is_none_or(|p| MENTIONS.find(p.get().as_bytes()).is_none()) {
        return None;
    }
    let read = Read::of(params);
    let modern = read
        .meta
        .as_ref()
        .is_some_and(|meta| meta.get(PROTOCOL_VERSION).is_some());
    modern.then_some(read)
}

/// The `_meta` of a modern request (its params as [`Read`]), checked: a missing or ill-typed
/// required field is -32602, a version not served per request -32022 with the versions that are.
fn check(meta: Option<&RawParams>) -> Result<Meta, ErrorObject> {
    let missing = |what: &str| {
        error(
            codes::INVALID_PARAMS,
            format!("invalid params: a 2026-07-28 request needs params._meta[\"{what}\"]"),
        )
    };
    let meta = meta.ok_or_else(|| missing(PROTOCOL_VERSION))?;
    let version: String = meta
        .get_as(PROTOCOL_VERSION)
        .ok_or_else(|| missing(PROTOCOL_VERSION))?;
    let capabilities: Value = meta
        .get_as(CLIENT_CAPABILITIES)
        .filter(Value::is_object)
        .ok_or_else(|| missing(CLIENT_CAPABILITIES))?;
    let log_level = match meta.get(LOG_LEVEL) {
        None => None,
        Some(raw) => {
            let level = serde_json::from_str::<String>(raw.get()).ok();
            let index = level.as_deref().and_then(level_index);
            Some(index.ok_or_else(|| {
                error(
                    codes::INVALID_PARAMS,
                    format!(
                        "invalid params: _meta[\"{LOG_LEVEL}\"] is {}, not one of {}",
                        raw.get(),
                        LOG_LEVELS.join(", ")
                    ),
                )
            })?)
        }
    };
    if !MODERN_VERSIONS.contains(&version.as_str()) {
        return Err(unsupported(&version));
    }
    Ok(Meta {
        version,
        capabilities,
        log_level,
        progress_token: meta.get_as("progressToken"),
    })
}

/// -32022 for `requested`, listing every version served.
pub(crate) fn unsupported(requested: &str) -> ErrorObject {
    let legacy = ACCEPTED_VERSIONS.contains(&requested);
    let message = if legacy {
        format!("Unsupported protocol version: {requested} is served through initialize (a session), not per request")
    } else {
        format!("Unsupported protocol version: {requested}")
    };
    codes::error(codes::UNSUPPORTED_PROTOCOL_VERSION, message)
        .with_data(json!({"supported": supported_versions(), "requested": requested}))
}

/// A modern request's `params` (their members) as they go to a legacy server: without
/// `inputResponses` and `requestState` (MRTR, answered by the gateway) and without the
/// per-request `_meta` keys (version, capabilities, client info, log level), which a legacy
/// server must not take for its own. Every other member, and the rest of `_meta`, as the client
/// wrote them. `meta`: the members of `members`' `_meta`, when they were read already.
pub(crate) fn upstream_members(mut members: RawParams, meta: Option<RawParams>) -> RawParams {
    members.remove("inputResponses");
    members.remove("requestState");
    let meta = meta.or_else(|| members.get("_meta").and_then(|m| RawParams::parse(m).ok()));
    if let Some(mut meta) = meta {
        let mut taken = 0;
        for key in [
            PROTOCOL_VERSION,
            CLIENT_CAPABILITIES,
            CLIENT_INFO,
            LOG_LEVEL,
        ] {
            taken += usize::from(meta.remove(key).is_some());
        }
        if meta.is_empty() {
            members.remove("_meta");
        } else if taken > 0 {
            members.set_raw("_meta", meta.to_raw());
        }
    }
    members
}

/// The gateway's name and version, as `serverInfo`.
pub(crate) fn server_info() -> Value {
    json!({"name": "mcpx", "version": env!("CARGO_PKG_VERSION")})
}

/// Whether `method`'s result is cacheable (`ttlMs`, `cacheScope` required), and its TTL.
fn cache_ttl(method: &str) -> Option<u64> {
    match method {
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            Some(LIST_TTL_MS)
        }
        "resources/read" => Some(READ_TTL_MS),
        "server/discover" => Some(DISCOVER_TTL_MS),
        _ => None,
    }
}

/// A result for a modern client: `resultType: "complete"`, `ttlMs`/`cacheScope` for the
/// cacheable ones, and `_meta` serverInfo, each added only when absent; every member the
/// result has keeps its text.
///
/// A server's result is answered with what it lacks written into it, the rest uncopied
/// ([`Reply::Completed`]); a result the gateway made, or one of a shape the splice does not
/// take on, is written anew.
pub(crate) fn complete(method: &str, reply: Reply) -> Reply {
    match reply {
        Reply::Forwarded(response) => match insertions(method, response.result_text()) {
            Some(inserts) if inserts.is_empty() => Reply::Forwarded(response),
            Some(inserts) => Reply::Completed(response, inserts),
            None => Reply::Made(complete_by_members(method, response.result_raw())),
        },
        made => Reply::Made(complete_raw(method, &made.raw())),
    }
}

/// [`complete`] of a result's text.
fn complete_raw(method: &str, result: &RawValue) -> Box<RawValue> {
    spliced(method, result).unwrap_or_else(|| complete_by_members(method, result))
}

/// What [`complete`] looks for in a result (any value counts as there, `null` too); the rest
/// is skipped, not copied.
#[derive(Deserialize)]
struct Present<'a> {
    #[serde(rename = "resultType", borrow, default, deserialize_with = "present")]
    result_type: Option<&'a RawValue>,
    #[serde(rename = "ttlMs", borrow, default, deserialize_with = "present")]
    ttl: Option<&'a RawValue>,
    #[serde(rename = "cacheScope", borrow, default, deserialize_with = "present")]
    scope: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default, deserialize_with = "present")]
    meta: Option<&'a RawValue>,
}

/// Whether a `_meta` object names the server already.
#[derive(Deserialize)]
struct MetaInfo<'a> {
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        borrow,
        default,
        deserialize_with = "present"
    )]
    server_info: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// [`complete`] by writing the members a result lacks into its text, which is read once and
/// otherwise kept byte for byte. `None` for what it does not take on: a member it looks for
/// given twice, a `_meta` that is not an object (the general way handles those).
fn spliced(method: &str, result: &RawValue) -> Option<Box<RawValue>> {
    let text = result.get();
    let inserts = insertions(method, text)?;
    if inserts.is_empty() {
        return Some(result.to_owned());
    }
    RawValue::from_string(mcpclient::written_into(text, &inserts)).ok()
}

/// The most text [`insertions`] writes besides the gateway's `serverInfo`: each member it may
/// add (`resultType`, `ttlMs` with a 20-digit number, `cacheScope`, `_meta`'s braces), commas.
const ADDED_ROOM: usize = 96;

/// What [`spliced`] writes into the JSON text `text` of a result: each text, and the byte it
/// goes before, in order (at most two: into `_meta`, and before the closing brace). Empty for
/// a result that is not an object or lacks nothing; `None` for what the splice does not take on.
fn insertions(method: &str, text: &str) -> Option<Vec<(usize, String)>> {
    if !text.starts_with('{') {
        return Some(Vec::new());
    }
    let present: Present<'_> = serde_json::from_str(text).ok()?;
    // The member naming the gateway, as text: written once.
    static INFO: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("{}:{}", Value::from(SERVER_INFO), server_info()));
    let info = INFO.as_str();
    // Room for every member it may add, so that it is written without growing.
    let mut added = String::with_capacity(ADDED_ROOM + info.len());
    let mut add = |key: &str, value: &dyn fmt::Display| {
        if !added.is_empty() {
            added.push(',');
        }
        let _ = write!(added, "\"{key}\":{value}");
    };
    if present.result_type.is_none() {
        add("resultType", &"\"complete\"");
    }
    if let Some(ttl) = cache_ttl(method) {
        if present.ttl.is_none() {
            add("ttlMs", &ttl);
        }
        if present.scope.is_none() {
            // As JSON text, written once (escaped, whatever the constant holds).
            static SCOPE: std::sync::LazyLock<String> =
                std::sync::LazyLock::new(|| Value::from(CACHE_SCOPE).to_string());
            add("cacheScope", &SCOPE.as_str());
        }
    }
    let mut inserts = Vec::with_capacity(2);
    match present.meta {
        None => add("_meta", &format_args!("{{{info}}}")),
        // (A struct reads from an array too: only an object's text is written into.)
        Some(meta) if !meta.get().starts_with('{') => return None,
        Some(meta) => {
            let shape: MetaInfo<'_> = serde_json::from_str(meta.get()).ok()?;
            if shape.server_info.is_none() {
                // Before the closing brace of `_meta`.
                let start = (meta.get().as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
                let close = start + meta.get().len() - 1;
                let comma = if has_members(meta.get()) { "," } else { "" };
                inserts.push((close, [comma, info].concat()));
            }
        }
    }
    if !added.is_empty() {
        if has_members(text) {
            added.insert(0, ',');
        }
        inserts.push((text.len() - 1, added));
    }
    Some(inserts)
}

/// Whether the JSON object text `object` has a member (anything but blanks between its braces).
fn has_members(object: &str) -> bool {
    object
        .get(1..object.len() - 1)
        .is_some_and(|inner| !inner.trim().is_empty())
}

/// [`complete`] member by member: every member read and the object written anew.
fn complete_by_members(method: &str, result: &RawValue) -> Box<RawValue> {
    let Ok(mut members) = RawParams::parse(result) else {
        return result.to_owned();
    };
    if members.get("resultType").is_none() {
        members.set("resultType", &json!("complete"));
    }
    if let Some(ttl) = cache_ttl(method) {
        if members.get("ttlMs").is_none() {
            members.set("ttlMs", &json!(ttl));
        }
        if members.get("cacheScope").is_none() {
            members.set("cacheScope", &json!(CACHE_SCOPE));
        }
    }
    let has_info = members
        .get("_meta")
        .and_then(|m| RawParams::parse(m).ok())
        .is_some_and(|m| m.get(SERVER_INFO).is_some());
    if !has_info {
        members.set_within("_meta", SERVER_INFO, &server_info());
    }
    members.to_raw()
}

/// An error for a modern client: the legacy "resource not found" code becomes -32602, as
/// 2026-07-28 has it; the rest as it is.
pub(crate) fn modern_error(mut error: ErrorObject) -> ErrorObject {
    if error.code == codes::LEGACY_RESOURCE_NOT_FOUND {
        error.code = codes::INVALID_PARAMS;
    }
    error
}

/// The value of an `Mcp-Name` (or `Mcp-Param-*`) header: as it is, or decoded from the
/// `=?base64?…?=` form; `None` when that form does not decode to UTF-8.
pub(crate) fn header_value(text: &str) -> Option<String> {
    use base64::Engine;
    match text
        .strip_prefix("=?base64?")
        .and_then(|t| t.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(text.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn the_meta_is_checked_with_the_specs_codes() {
        let ok = raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"}}"#,
        );
        let meta = Read::of(Some(&ok)).take_checked().unwrap();
        assert_eq!(meta.log_level, level_index("warning"));
        assert_eq!(meta.progress_token, None);
        let with_token = raw(
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p7"}}"#,
        );
        let mut read = era("tools/call", Some(&with_token)).expect("modern");
        assert_eq!(
            read.members
                .as_ref()
                .and_then(|m| m.get_str("name"))
                .as_deref(),
            Some("t")
        );
        // Checked once (the front), taken after (the gateway): the same.
        assert!(read.checked().is_ok());
        assert_eq!(
            read.take_checked().unwrap().progress_token,
            Some(json!("p7"))
        );
        let no_caps = raw(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert_eq!(
            Read::of(Some(&no_caps)).take_checked().unwrap_err().code,
            codes::INVALID_PARAMS
        );
        assert_eq!(
            Read::of(None).take_checked().unwrap_err().code,
            codes::INVALID_PARAMS
        );
        let old = raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        let refused = Read::of(Some(&old)).take_checked().unwrap_err();
        assert_eq!(refused.code, codes::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(refused.to_value()["data"]["requested"], "1900-01-01");
        assert_eq!(refused.to_value()["data"]["supported"][0], "2026-07-28");
        assert!(is_modern("tools/list", Some(&ok)));
        assert!(!is_modern("initialize", Some(&ok)));
        assert!(!is_modern("tools/list", Some(&raw(r#"{"_meta":{}}"#))));
    }

    #[test]
    fn a_result_gains_only_what_it_lacks_and_keeps_its_text() {
        let listed = complete_raw("tools/list", &raw(r#"{"tools":[{"n":1.0e400}]}"#));
        assert_eq!(
            listed.get(),
            r#"{"tools":[{"n":1.0e400}],"resultType":"complete","ttlMs":60000,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpx","version":"0.1.0"}}}"#
        );
        let own = complete_raw(
            "tools/call",
            &raw(r#"{"resultType":"complete","_meta":{"x":1},"content":[]}"#),
        );
        assert!(own
            .get()
            .starts_with(r#"{"resultType":"complete","_meta":{"x":1,"io.model"#));
    }

    #[test]
    fn the_text_of_a_result_is_kept_and_the_same_members_added_as_member_by_member() {
        for (method, result) in [
            ("tools/list", r#"{"tools":[]}"#),
            (
                "tools/call",
                r#"{ "content" : [ {"type":"text","text":"}"} ] , "structuredContent":{"sum":3} }"#,
            ),
            ("tools/call", r#"{}"#),
            ("tools/call", r#"{ }"#),
            ("tools/call", r#"{"content":[],"_meta":{}}"#),
            ("tools/call", r#"{"content":[],"_meta":{ "x" : 1 }}"#),
            (
                "tools/call",
                r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"content":[]}"#,
            ),
            ("tools/call", r#"{"content":[],"resultType":null}"#),
            (
                "resources/read",
                r#"{"contents":[],"ttlMs":5,"cacheScope":"public"}"#,
            ),
            ("server/discover", r#"{"n":1.0e400,"s":"\u00e9"}"#),
        ] {
            let raw = raw(result);
            let spliced = spliced(method, &raw).expect("taken on");
            let general = complete_by_members(method, &raw);
            let (a, b): (Value, Value) = (
                serde_json::from_str(spliced.get()).unwrap(),
                serde_json::from_str(general.get()).unwrap(),
            );
            assert_eq!(a, b, "{result}");
            // The text before the first member added is the result's own.
            let kept = result.trim_end().trim_end_matches('}').trim_end();
            let head = kept.find("\"_meta\"").map_or(kept, |at| &kept[..at]);
            assert!(
                spliced.get().starts_with(head),
                "{} from {result}",
                spliced.get()
            );
        }
    }

    #[test]
    fn a_forwarded_result_is_completed_in_place_as_a_copy_would_be() {
        let id = raw("9");
        for (method, result) in [
            ("tools/list", r#"{"tools":[]}"#),
            (
                "tools/call",
                r#"{ "content" : [ {"type":"text","text":"}"} ] }"#,
            ),
            ("tools/call", r#"{ }"#),
            ("tools/call", r#"{"content":[],"_meta":{}}"#),
            ("tools/call", r#"{"content":[],"_meta":{ "x" : "é" }}"#),
            (
                "tools/call",
                r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{}}}"#,
            ),
            ("resources/read", r#"{"contents":[],"ttlMs":5}"#),
            // Not taken on by the splice, or not an object: the other ways, the same answer.
            ("tools/call", r#"{"_meta":[1],"content":[]}"#),
            ("tools/call", r#"{"resultType":"a","resultType":"b"}"#),
            ("tools/call", r#"[1]"#),
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let response =
                mcpclient::Response::from_frame(mcpclient::Frame::parse(&text).unwrap()).unwrap();
            let copied =
                crate::wire::response(&id, Ok(Reply::Made(complete_raw(method, &raw(result)))));
            let completed = complete(method, Reply::Forwarded(response));
            let in_place = !matches!(completed, Reply::Made(_));
            assert_eq!(
                completed.raw().get(),
                complete_raw(method, &raw(result)).get()
            );
            let answer = crate::wire::response(&id, Ok(completed));
            assert_eq!(answer.text(), copied.text(), "{result}");
            assert_eq!(answer.chunks().concat(), copied.text(), "{result}");
            // Written around the server's bytes, unless it is a shape the splice leaves.
            assert_eq!(
                in_place,
                !result.contains(r#""_meta":[1]"#) && !result.contains(r#""a""#),
                "{result}"
            );
        }
    }

    #[test]
    fn results_it_does_not_take_on_go_the_general_way() {
        for result in [
            r#"{"resultType":"a","resultType":"b"}"#,
            r#"{"_meta":null,"content":[]}"#,
            r#"{"_meta":[],"content":[]}"#,
            r#"{"_meta":[null],"content":[]}"#,
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":1,"io.modelcontextprotocol/serverInfo":2}}"#,
        ] {
            assert!(spliced("tools/call", &raw(result)).is_none(), "{result}");
            assert_eq!(
                complete_raw("tools/call", &raw(result)).get(),
                complete_by_members("tools/call", &raw(result)).get()
            );
        }
    }

    #[test]
    fn upstream_params_lose_the_per_request_keys_only() {
        let params = raw(
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7},"requestState":"s","inputResponses":{}}"#,
        );
        let want = r#"{"name":"t","_meta":{"progressToken":7}}"#;
        // With the `_meta` read already (as the front read it), and without.
        let read = Read::of(Some(&params));
        let members = read.members.unwrap();
        assert_eq!(
            upstream_members(members.clone(), read.meta).to_raw().get(),
            want
        );
        assert_eq!(upstream_members(members, None).to_raw().get(), want);
        // A `_meta` with nothing to take keeps its text; one left empty goes.
        for (params, want) in [
            (
                r#"{"name":"t","_meta":{ "progressToken" : 7 }}"#,
                r#"{"name":"t","_meta":{ "progressToken" : 7 }}"#,
            ),
            (
                r#"{"name":"t","_meta":{"io.modelcontextprotocol/clientInfo":{}}}"#,
                r#"{"name":"t"}"#,
            ),
            (r#"{"name":"t","_meta":{}}"#, r#"{"name":"t"}"#),
            (r#"{"name":"t","_meta":[1]}"#, r#"{"name":"t","_meta":[1]}"#),
        ] {
            let read = Read::of(Some(&raw(params)));
            let members = read.members.unwrap();
            assert_eq!(
                upstream_members(members.clone(), read.meta).to_raw().get(),
                want
            );
            assert_eq!(upstream_members(members, None).to_raw().get(), want);
        }
    }

    #[test]
    fn header_values_decode_the_sentinel_form() {
        assert_eq!(header_value("plain").as_deref(), Some("plain"));
        assert_eq!(
            header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(header_value("=?base64?!!?="), None);
    }
}
