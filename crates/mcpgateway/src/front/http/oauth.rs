//! The HTTP front's side of [`crate::front::bearer`]: with `gateway.auth` configured, every request
//! to [`MCP_PATH`] needs a valid access token (401 with `WWW-Authenticate: Bearer
//! resource_metadata=…` without one, 403 `insufficient_scope` without a required scope), the
//! Protected Resource Metadata is served at its two well-known paths, and each request's
//! principal is the token's holder ([`Principal::oauth`]), whose per-tool scopes the gateway
//! applies on every path that names a tool; a `tools/call` of a tool it lacks the scope for is
//! answered 403 `insufficient_scope` here, so that the client can step up.
//!
//! The token is read from the request's headers here and nowhere else; the gateway forwards no
//! client header upstream, so it never leaves mcpx.

use std::net::SocketAddr;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpclient::{Decoded, RawParams};

use super::{header_text, Refusal, MCP_PATH};
use crate::front::bearer::{token_of, BearerError, Challenge, Grant, ResourceAuth, Verifier};
use crate::sessions::principal::Principal;

/// The well-known path of the Protected Resource Metadata (RFC 9728 §3).
pub(super) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The token check of an HTTP front.
pub(super) struct Protection {
    verifier: Verifier,
    /// The per-tool scope rules, shared by every principal's access.
    rules: std::sync::Arc<[crate::front::bearer::ToolScope]>,
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
        let metadata_url = crate::front::bearer::metadata_url(&audience).ok_or_else(|| {
            BearerError::Metadata(format!("audience `{audience}` is not an http(s) URL"))
        })?;
        let metadata = auth.metadata(&audience).to_string();
        Ok(Protection {
            rules: auth.tool_scopes.clone().into(),
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
        let checked = match token_of(header_text(headers, header::AUTHORIZATION)) {
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

    /// The principal holding `grant`: its subject (or client id) at the issuer, with the
    /// per-tool scope rules applied to what it may reach.
    pub(super) fn principal(&self, grant: &Grant) -> Principal {
        Principal::oauth(&self.auth().issuer, grant, &self.rules)
    }

    /// A 403 for a `tools/call` in `message` (one request or a batch) of a tool `principal`
    /// lacks the scope for: named directly, or through the gateway's call tool. (The gateway
    /// hides and refuses such tools on every path too; this is the HTTP answer that lets a
    /// client step up its authorization.)
    pub(super) fn refuse_call(&self, principal: &Principal, message: &Decoded) -> Option<Response> {
        if !principal.is_scoped() {
            return None;
        }
        message.each().iter().find_map(|message| {
            let Decoded::Request { id, method, params } = message else {
                return None;
            };
            if method != "tools/call" {
                return None;
            }
            let params = RawParams::parse(params.as_deref()?).ok()?;
            let mut tool = params.get_str("name")?;
            if tool == toolsearch::CALL_TOOL {
                let arguments = RawParams::parse(params.get("arguments")?).ok()?;
                tool = arguments.get_str("name")?;
            }
            let scope = principal.missing_scope(&tool)?;
            Some(challenge(
                Challenge::insufficient(&[scope], &self.metadata_url),
                Some(id.get()),
            ))
        })
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
