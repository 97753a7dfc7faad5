//! The hook through which the HTTP transport is authorized (MCP authorization, OAuth 2.1).
//!
//! The transport knows nothing of OAuth: before each request it asks an [`HttpAuth`] for the
//! `Authorization` header, and when the server refuses a request with 401 or 403 it hands the
//! refusal back and, if told to, sends the request again ([`MAX_AUTH_RETRIES`] times at most).
//! Discovery, login, token refresh and scope step-up are the provider's (crate `mcpauth`).

use std::fmt;

use crate::BoxFuture;

/// Most times one request is sent again after the server refused its credentials: a refresh,
/// a login and a scope step-up, each once.
pub const MAX_AUTH_RETRIES: u32 = 3;

/// An `Authorization` header value, and a stamp naming the credentials it carries, so that a
/// refusal of stale credentials is told from a refusal of the current ones.
#[derive(Clone)]
pub struct AuthHeader {
    /// The whole header value (`Bearer …`).
    pub value: String,
    /// Changes whenever the provider's credentials change.
    pub stamp: u64,
}

impl fmt::Debug for AuthHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthHeader")
            .field("value", &"<redacted>")
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
}

/// Why no credentials could be had; it goes to the caller as [`crate::TransportError::Auth`].
pub type AuthFailure = Box<dyn std::error::Error + Send + Sync>;

/// What authorizes the requests of an [`crate::HttpTransport`].
pub trait HttpAuth: Send + Sync {
    /// The header for the next request; `None` to send it without one.
    fn header(&self) -> BoxFuture<'_, Result<Option<AuthHeader>, AuthFailure>>;

    /// The server refused a request: `Ok(true)` when the request should be sent again (new
    /// credentials were obtained), `Ok(false)` to give the refusal to the caller as it is.
    fn refused<'a>(&'a self, refusal: Refusal<'a>) -> BoxFuture<'a, Result<bool, AuthFailure>>;
}
