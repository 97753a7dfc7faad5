//! The HTTP front's side of [`crate::bearer`]: with `gateway.auth` configured, every request
//! to [`MCP_PATH`] needs a valid access token (401 with `WWW-Authenticate: Bearer
//! resource_metadata=…` without one, 403 `insufficient_scope` without a required scope), the
//! Protected Resource Metadata is served at its two well-known paths, and per-tool scope rules
//! hide tools from `tools/list` and refuse `tools/call` of them.
//!
//! The token is read from the request's headers here and nowhere else; the gateway forwards no
//! client header upstream, so it never leaves mcpx.

use std::net::SocketAddr;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpclient::{Decoded, Frame, RawParams};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{header_text, Refusal, ToClient, MCP_PATH};
use crate::bearer::{token_of, BearerError, Challenge, Grant, ResourceAuth, Verifier};

/// The well-known path of the Protected Resource Metadata (RFC 9728 §3).
pub(super) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The token check of an HTTP front.
pub(super) struct Protection {
    verifier: Verifier,
    metadata_url: String,
    metadata: String,
}

impl Protection {
    /// For `auth`, on a listener at `addr` (whose `http://ADDR/mcp` is the audience unless one
    /// is configured).
    pub(super) fn new(auth: ResourceAuth, addr: SocketAddr) -> Result<Protection, BearerError> {
        let audience = auth
            .audience
            .clone()
            .unwrap_or_else(|| format!("http://{addr}{MCP_PATH}"));
        let metadata_url = crate::bearer::metadata_url(&audience).ok_or_else(|| {
            BearerError::Metadata(format!("audience `{audience}` is not an http(s) URL"))
        })?;
        let metadata = auth.metadata(&audience).to_string();
        Ok(Protection {
            verifier: Verifier::new(auth, audience)?,
            metadata_url,
            metadata,
        })
    }

    fn auth(&self) -> &ResourceAuth {
        self.verifier.config()
    }

    /// The metadata document, for a GET of [`METADATA_PATH`] (with or without the resource's
    /// path after it).
    pub(super) fn metadata(&self) -> Response {
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            self.metadata.clone(),
        )
            .into_response()
    }

    /// What the request's token grants, or the refusal to answer with.
    pub(super) async fn admit(&self, headers: &HeaderMap) -> Result<Grant, Response> {
        let scopes = &self.auth().scopes;
        let checked = match token_of(header_text(headers, header::AUTHORIZATION.as_str())) {
            Ok(token) => self.verifier.check(token).await,
            Err(missing) => Err(missing),
        };
        let grant = match checked {
            Ok(grant) => grant,
            Err(error) => {
                if error.is_issuer_fault() {
                    tracing::warn!(%error, "an access token could not be checked");
                } else {
                    tracing::debug!(%error, "an access token refused");
                }
                return Err(challenge(
                    Challenge::refused(&error, &self.metadata_url, scopes),
                    None,
                ));
            }
        };
        let missing = grant.missing(scopes);
        if !missing.is_empty() {
            return Err(challenge(
                Challenge::insufficient(&missing, &self.metadata_url),
                None,
            ));
        }
        Ok(grant)
    }

    /// A 403 for a `tools/call` in `frame` (one request or a batch) of a tool `grant` lacks the
    /// scope for.
    pub(super) fn refuse_call(&self, grant: &Grant, message: &Decoded) -> Option<Response> {
        if self.auth().tool_scopes.is_empty() {
            return None;
        }
        message.each().iter().find_map(|message| {
            let Decoded::Request { id, method, params } = message else {
                return None;
            };
            if method != "tools/call" {
                return None;
            }
            let tool = RawParams::parse(params.as_deref()?).ok()?.get_str("name")?;
            let scope = self.auth().missing_tool_scope(grant, &tool)?;
            Some(challenge(
                Challenge::insufficient(&[scope], &self.metadata_url),
                Some(id.get()),
            ))
        })
    }

    /// `frames`, with the tools `grant` may not see taken out of `tools/list` answers, when
    /// `frame` holds a `tools/list` and some tool needs a scope.
    pub(super) fn filter_lists(
        self: &std::sync::Arc<Self>,
        grant: &Grant,
        message: &Decoded,
        frames: mpsc::UnboundedReceiver<ToClient>,
    ) -> mpsc::UnboundedReceiver<ToClient> {
        let has_list = message
            .each()
            .iter()
            .any(|m| m.is_request() && m.method() == Some("tools/list"));
        if self.auth().tool_scopes.is_empty() || !has_list {
            return frames;
        }
        let (to, filtered) = mpsc::unbounded_channel();
        let (protection, grant) = (self.clone(), grant.clone());
        let mut frames = frames;
        tokio::spawn(async move {
            while let Some(item) = frames.recv().await {
                let item = match item {
                    ToClient::Answer(frame) => ToClient::Answer(protection.visible(&grant, frame)),
                    on_the_way => on_the_way,
                };
                if to.send(item).is_err() {
                    break;
                }
            }
        });
        filtered
    }

    /// `frame` without the tools of its `result.tools` that `grant` may not see.
    fn visible(&self, grant: &Grant, frame: Frame) -> Frame {
        let Ok(mut value) = frame.value() else {
            return frame;
        };
        let Some(Value::Array(tools)) = value.pointer_mut("/result/tools") else {
            return frame;
        };
        let before = tools.len();
        tools.retain(|tool| {
            tool.get("name")
                .and_then(Value::as_str)
                .is_none_or(|name| self.auth().missing_tool_scope(grant, name).is_none())
        });
        if tools.len() == before {
            return frame;
        }
        Frame::from_value(&value)
    }
}

/// `challenge` as a response, for the request with the JSON id `id` when there is one.
fn challenge(challenge: Challenge, id: Option<&str>) -> Response {
    let status = StatusCode::from_u16(challenge.status).unwrap_or(StatusCode::UNAUTHORIZED);
    let refusal = Refusal::new(status, challenge.message);
    let mut response = match id {
        Some(id) => refusal.for_request(id),
        None => refusal,
    }
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge.www_authenticate) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
