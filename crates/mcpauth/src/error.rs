//! The one error type of the crate. No variant carries a secret.

use thiserror::Error;

/// Why authorization failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A person has to log in (or a new scope be granted) and none can be asked now.
    #[error("a login is needed: {reason}")]
    LoginRequired {
        /// What made it necessary.
        reason: String,
    },
    /// No Protected Resource Metadata nor authorization server metadata could be found.
    #[error("authorization discovery for {url}: {message}")]
    Discovery {
        /// The MCP server.
        url: String,
        /// What was tried, or what was wrong.
        message: String,
    },
    /// A metadata document cannot be used.
    #[error("{url}: {message}")]
    Metadata {
        /// Where it came from.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The client has no identity at this authorization server.
    #[error("no client id for {issuer}: {message}")]
    NoClient {
        /// The authorization server.
        issuer: String,
        /// Why none could be had.
        message: String,
    },
    /// The authorization response was refused or is not to be trusted.
    #[error("authorization response: {0}")]
    Callback(String),
    /// The token endpoint refused, or answered something unusable.
    #[error("token request to {url}: {message}")]
    Token {
        /// The token endpoint.
        url: String,
        /// The OAuth error code and description, or what was wrong.
        message: String,
    },
    /// The credential store failed.
    #[error("credential store: {0}")]
    Store(String),
    /// Local I/O (the loopback listener).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
