//! What can go wrong asking a registry and reading its answer.

/// Why a server could not be found, read or turned into a config entry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The registry's address is not an http(s) URL.
    #[error("registry '{base}' is not an http:// or https:// URL")]
    BadBase {
        /// The address given.
        base: String,
    },
    /// The request failed or the answer was not what the API says.
    #[error("{url}: {problem}")]
    Http {
        /// The URL asked.
        url: String,
        /// What went wrong.
        problem: String,
    },
    /// The registry has no such server (404).
    #[error("{url}: no such server in the registry (404); `mcpx add --search WORDS` finds names")]
    NotFound {
        /// The URL asked.
        url: String,
    },
    /// The answer was larger than [`crate::MAX_RESPONSE_BYTES`].
    #[error("{url}: the answer is over {limit} bytes, not read")]
    TooLarge {
        /// The URL asked.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// The server.json does not validate against the server.json schema.
    #[error("the registry's server.json{} is not valid:\n  {}", name.as_deref().map(|n| format!(" of {n}")).unwrap_or_default(), lines.join("\n  "))]
    Invalid {
        /// The server's name, when it has one.
        name: Option<String>,
        /// One line per problem.
        lines: Vec<String>,
    },
    /// The server offers nothing mcpx can start or reach.
    #[error("{name}: {why}")]
    Unusable {
        /// The server.
        name: String,
        /// Why.
        why: String,
    },
}
