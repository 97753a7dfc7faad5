//! MCP authorization, mcpx as the OAuth 2.1 client of a remote MCP server.
//!
//! On a 401 the server's Protected Resource Metadata (RFC 9728) names its authorization
//! server, whose metadata (RFC 8414 or OpenID discovery) gives the endpoints ([`discover`]).
//! The client's identity comes from the config, a Client ID Metadata Document, or Dynamic
//! Client Registration (RFC 7591), in that order. A login is the authorization code grant with
//! PKCE S256, `state`, the `resource` indicator (RFC 8707) and a loopback redirect on
//! 127.0.0.1, the `iss` of the answer checked (RFC 9207). Tokens go to a [`Store`] (the OS
//! keyring, or a file only its owner reads) and are refreshed before they expire and on a 401;
//! a `403 insufficient_scope` asks for the union of the scopes (step-up). Machines use the
//! client-credentials grant, or a JWT they were given (workload identity federation, the
//! JWT-bearer grant of RFC 7523), or an ID-JAG their enterprise identity provider exchanged an
//! ID token for (RFC 8693).
//!
//! [`Authorizer`] ties it together as the [`mcpclient::HttpAuth`] of an HTTP transport.
//! Where the authorization server offers DPoP (RFC 9449), tokens are bound to a key of the
//! client's and every request carries a proof of it.
//! A confidential client authenticates with its secret, or with a JWT signed by its private key
//! (`private_key_jwt`, RFC 7523).
//! Secrets are [`Secret`]s: their `Debug` is redacted, and no error carries one.

#![deny(missing_docs)]

mod assertion;
mod assertion_source;
mod authorizer;
mod challenge;
mod clock;
mod discovery;
mod dpop;
mod error;
mod fetch;
mod loopback;
mod registration;
mod secret;
mod store;
mod token;

pub use assertion::{PrivateKey, ASSERTION_LIFETIME};
pub use assertion_source::{Assertion, IdentityProvider, MAX_ASSERTION_BYTES};
pub use authorizer::{
    AuthConfig, Authorizer, Grant, Interaction, Status, MAX_GRANTS, MAX_STEP_UPS, REFRESH_MARGIN,
};
pub use challenge::Challenge;
pub use discovery::{
    discover, resource_metadata_urls, server_metadata_urls, Discovery, ResourceMetadata,
    ServerMetadata,
};
pub use error::AuthError;
pub use fetch::{MAX_METADATA_BYTES, MAX_TOKEN_RESPONSE_BYTES, REQUEST_TIMEOUT};
pub use loopback::{
    Callback, Loopback, LOGIN_TIMEOUT, MAX_CALLBACK_BYTES, MAX_CALLBACK_CONNECTIONS,
};
pub use registration::ClientRecord;
pub use secret::Secret;
pub use store::{FileStore, KeyringStore, Store, TokenRecord};
