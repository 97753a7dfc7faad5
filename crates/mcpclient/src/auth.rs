//! The hook through which the HTTP transport is authorized (MCP authorization, OAuth 2.1).
//!
//! The transport knows nothing of OAuth: before each request it asks an [`HttpAuth`] for the
//! `Authorization` header (and a `DPoP` proof, RFC 9449, made for the request's method and URL),
//! and when the server refuses a request with 401 or 403 it hands the
//! refusal back and, if told to, sends the request again ([`MAX_AUTH_RETRIES`] times at most).
//! Discovery, login, token refresh and scope step-up are the provider's (crate `mcpauth`).

use std::fmt;

use crate::BoxFuture;

/// Most times one request is sent again after the server refused its credentials: a refresh,
/// a login and a scope step-up, each once.
pub const MAX_AUTH_RETRIES: u32 = 3;

/// The header of a DPoP proof (RFC 9449 §4.1).
pub const DPOP_HEADER: &str = "dpop";

/// The header a server gives a DPoP nonce in (RFC 9449 §8, §9).
pub const DPOP_NONCE_HEADER: &str = "dpop-nonce";

/// An `Authorization` header value, and a stamp naming the credentials it carries, so that a
/// refusal of stale credentials is told from a refusal of the current ones.
#[derive(Clone)]
pub struct AuthHeader {
    /// The whole header value (`Bearer …` or `DPoP …`).
    pub value: String,
    /// The `DPoP` header: a proof of possession for this request, with a DPoP-bound token.
    pub dpop: Option<String>,
    /// Changes whenever the provider's credentials change.
    pub stamp: u64,
}

/// The request a header is asked for.
#[derive(Debug, Clone, Copy)]
pub struct AuthTarget<'a> {
    /// Its HTTP method.
    pub method: &'a str,
    /// Its URL.
    pub url: &'a str,
}

impl fmt::Debug for AuthHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthHeader")
            .field("value", &"<redacted>")
            .field("dpop", &self.dpop.as_ref().map(|_| "<redacted>"))
            .field("stamp", &self.stamp)
            .finish()
    }
}

/// How the server refused a request.
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'a> {
    /// 401 or 403.
    pub status: u16,
    /// Its `WWW-Authenticate` header, when it sent one that is text.
    pub challenge: Option<&'a str>,
    /// The stamp of the credentials the request carried, if it carried any.
    pub stamp: Option<u64>,
    /// Its `DPoP-Nonce` header (RFC 9449 §9), when it sent one that is text.
    pub dpop_nonce: Option<&'a str>,
}

/// Why no credentials could be had; it goes to the caller as [`crate::TransportError::Auth`].
pub type AuthFailure = Box<dyn std::error::Error + Send + Sync>;

/// What authorizes the requests of an [`crate::HttpTransport`].
pub trait HttpAuth: Send + Sync {
    /// The header for the request `target`; `None` to send it without one.
    fn header<'a>(
        &'a self,
        target: AuthTarget<'a>,
    ) -> BoxFuture<'a, Result<Option<AuthHeader>, AuthFailure>>;

    /// The server refused a request: `Ok(true)` when the request should be sent again (new
    /// credentials were obtained), `Ok(false)` to give the refusal to the caller as it is.
    fn refused<'a>(&'a self, refusal: Refusal<'a>) -> BoxFuture<'a, Result<bool, AuthFailure>>;
}
