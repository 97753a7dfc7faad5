//! Modern (2026-07-28) POSTs on the Streamable HTTP front: no session; the request's headers
//! checked against its body first, then the request answered on its own response (JSON, or
//! SSE when something precedes the answer).
//!
//! A POST is modern when its `MCP-Protocol-Version` is a modern version or its body is a
//! request (not `initialize`) whose `_meta` names a protocol version. Refused with 400 and the
//! request's id: `Mcp-Method` missing or unlike `method`, `MCP-Protocol-Version` missing or
//! unlike the body's, `Mcp-Name` missing or unlike `params.name`/`params.uri` (after decoding
//! the `=?base64?…?=` form) -32020; a missing required `_meta` field -32602; a version not
//! served -32022 with the versions that are. A method 2026-07-28 does not have: 404, -32601.
//! An `Mcp-Session-Id` is ignored. The request gets a connection-session of its own, ended
//! when its response ends, so that a client that goes away cancels its request.

use mcpclient::codes;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpclient::{Decoded, ErrorObject};
use serde_json::value::RawValue;

use super::stream::{self, json_answer, sse_unless_answered_at_once};
use super::stream::{HttpOutbox, RequestStream, Streams};
use super::{accepts_sse, draining, header_text, Front, Refusal, VERSION_HEADER};
use crate::gateway::Gateway;
use crate::protocol::modern::{self, MODERN_METHODS, PROTOCOL_VERSION};
use crate::sessions::principal::Principal;
use crate::sessions::session::Session;

const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// Ends a modern POST's connection-session when its response ends or is dropped (the client
/// went away): what is still in flight for it stops.
struct Ending(Gateway, Arc<Session>);

impl Drop for Ending {
    fn drop(&mut self) {
        self.0.close_session(&self.1);
    }
}

/// A refusal of request `id` (JSON text).
fn refused(status: StatusCode, code: i64, id: &str, message: String) -> Refusal {
    Refusal::new(status, message)
        .with_code(code)
        .for_request(id)
}

fn mismatch(id: &str, message: String) -> Refusal {
    refused(StatusCode::BAD_REQUEST, codes::HEADER_MISMATCH, id, message)
}

impl Front {
    /// Answers `message` when it is a modern POST (`modern_header`: its `MCP-Protocol-Version`
    /// is modern); gives it back when it is not, for the legacy path.
    pub(super) async fn modern_post(
        &self,
        headers: &HeaderMap,
        message: Decoded,
        modern_header: bool,
        principal: &Principal,
    ) -> Result<Response, Decoded> {
        let (id, method, params) = match &message {
            Decoded::Request { id, method, params } => (id, method, params.as_deref()),
            // 2026-07-28 has no client notifications or responses over HTTP: taken, dropped.
            Decoded::Notification { .. } | Decoded::Response { .. } if modern_header => {
                return Ok(StatusCode::ACCEPTED.into_response())
            }
            Decoded::Batch(_) if modern_header => {
                return Ok(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "invalid request: 2026-07-28 has no batches",
                )
                .into_response())
            }
            _ => return Err(message),
        };
        if !modern_header && !modern::is_modern(method, params) {
            return Err(message);
        }
        let id = id.get().to_owned();
        let read = match check_headers(headers, &id, method, params) {
            Ok(read) => read,
            Err(refusal) => return Ok(refusal.into_response()),
        };
        if self.stop.is_draining() {
            return Ok(draining().for_request(&id).into_response());
        }
        let limit = self.options.max_unread_stream_bytes;
        let streams = Arc::new(Streams::new(self.gateway.observe().clone(), limit));
        let session = self
            .gateway
            .open_session(HttpOutbox(streams.clone()), principal.clone());
        let ending = Ending(self.gateway.clone(), session.clone());
        let (stream, frames) = stream::stream(limit);
        let reply = Arc::new(RequestStream::new(stream, streams, &session, vec![id]));
        // The params as the check read them go on with the request: read once.
        match message {
            Decoded::Request { id, method, params } => {
                self.gateway
                    .receive_modern(&session, (id, method, params), read, reply)
            }
            other => self.gateway.receive_replying(&session, other, reply),
        }
        Ok(if accepts_sse(headers) {
            sse_unless_answered_at_once(frames, ending).await
        } else {
            let answer = json_answer(frames).await;
            drop(ending);
            answer
        })
    }
}

/// The checks of a modern request's headers and `_meta`, in the order a client can fix them;
/// its params as they read them when they pass.
fn check_headers(
    headers: &HeaderMap,
    id: &str,
    method: &str,
    params: Option<&RawValue>,
) -> Result<modern::Read, Refusal> {
    same(headers, id, METHOD_HEADER, "Mcp-Method", method)?;
    let mut read = modern::Read::of(params);
    if let Err(error) = read.checked() {
        if error.code != codes::UNSUPPORTED_PROTOCOL_VERSION {
            return Err(answer_error(StatusCode::BAD_REQUEST, id, error.clone()));
        }
    }
    let body_version: Option<String> = read
        .meta
        .as_ref()
        .and_then(|meta| meta.get_as(PROTOCOL_VERSION));
    let body_version = body_version.unwrap_or_default();
    same(
        headers,
        id,
        VERSION_HEADER,
        "MCP-Protocol-Version",
        &body_version,
    )?;
    if let Err(error) = read.checked() {
        return Err(answer_error(StatusCode::BAD_REQUEST, id, error.clone()));
    }
    if !MODERN_METHODS.contains(&method) {
        let error = codes::error(
            codes::METHOD_NOT_FOUND,
            format!("method not found: {method} (not part of MCP 2026-07-28)"),
        );
        return Err(answer_error(StatusCode::NOT_FOUND, id, error));
    }
    let Some(member) = modern::named_member(method) else {
        return Ok(read);
    };
    let body_name = read
        .members
        .as_ref()
        .and_then(|p| p.get_str(member))
        .unwrap_or_default();
    let Some(given) = header_text(headers, NAME_HEADER) else {
        return Err(mismatch(
            id,
            format!("Header mismatch: the Mcp-Name header is required for {method}"),
        ));
    };
    match modern::header_value(given) {
        None => Err(mismatch(
            id,
            format!("Header mismatch: Mcp-Name header value '{given}' is not valid base64 of UTF-8"),
        )),
        Some(name) if name != body_name => Err(mismatch(
            id,
            format!("Header mismatch: Mcp-Name header value '{name}' does not match body value '{body_name}'"),
        )),
        Some(_) => Ok(read),
    }
}

/// Header `name` (`label` in messages) is there and says `body`.
fn same(
    headers: &HeaderMap,
    id: &str,
    name: HeaderName,
    label: &str,
    body: &str,
) -> Result<(), Refusal> {
    match header_text(headers, name) {
        None => Err(mismatch(
            id,
            format!("Header mismatch: the {label} header is required"),
        )),
        Some(given) if given != body => Err(mismatch(
            id,
            format!("Header mismatch: {label} header value '{given}' does not match body value '{body}'"),
        )),
        Some(_) => Ok(()),
    }
}

/// A refusal carrying the gateway's error object for request `id`.
fn answer_error(status: StatusCode, id: &str, error: ErrorObject) -> Refusal {
    Refusal::with_error(status, error).for_request(id)
}
