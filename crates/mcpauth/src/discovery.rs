//! Where the authorization server is, and what it offers.
//!
//! Protected Resource Metadata (RFC 9728) comes from the challenge's `resource_metadata`, else
//! from the well-known URI with the MCP endpoint's path, else at the root. Its `resource` must
//! be the server the client asked (its origin, and a path that is a prefix of the endpoint's),
//! or nothing is used: a server cannot get a token meant for another. The authorization
//! server's metadata is tried at the RFC 8414 and OpenID Connect well-known URIs in the order the
//! MCP specification gives, and its `issuer` must be the one the URI was made from. A server
//! with no resource metadata (MCP 2025-03-26) has its authorization server at its own origin,
//! with `/authorize`, `/token` and `/register` as the endpoints when that has no metadata either.

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use crate::fetch::{get_json, Fetched};
use crate::{AuthError, Challenge};

/// A server's Protected Resource Metadata, the fields the client uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource identifier.
    #[serde(default)]
    pub resource: Option<String>,
    /// Its authorization servers' issuers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes needed for basic use.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// The DPoP algorithms it takes (RFC 9728 §2): it takes DPoP-bound tokens.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// It takes DPoP-bound tokens only (RFC 9728 §2).
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
}

/// An authorization server's metadata, the fields the client uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user authorizes.
    pub authorization_endpoint: String,
    /// Where codes become tokens.
    pub token_endpoint: String,
    /// Dynamic Client Registration (RFC 7591), when offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes it knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// How clients may authenticate at the token endpoint (default `client_secret_basic`).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The algorithms it takes for `private_key_jwt` assertions.
    #[serde(default)]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// The algorithms it takes DPoP proofs in (RFC 9449 §5.1); absent when it offers no DPoP.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// It fetches Client ID Metadata Documents.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// It puts `iss` in authorization responses (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// PKCE methods; absent means unknown.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
}

/// What discovery found for one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The `resource` to ask tokens for (RFC 8707).
    pub resource: String,
    /// The server's resource metadata, when it has one.
    pub resource_metadata: Option<ResourceMetadata>,
    /// Its authorization server.
    pub server: ServerMetadata,
}

/// The canonical URI of the MCP endpoint `url`: without fragment, and without the trailing
/// slash of an empty path.
pub(crate) fn canonical(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    match text.strip_suffix('/') {
        Some(stripped) if url.path() == "/" && url.query().is_none() => stripped.to_owned(),
        _ => text,
    }
}

/// Where to look for the resource metadata of the endpoint `server`, in order.
pub fn resource_metadata_urls(server: &Url, challenge: Option<&Challenge>) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(url) = challenge.and_then(|c| c.resource_metadata.clone()) {
        urls.push(url);
    }
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    urls
}

/// Where to look for the metadata of the authorization server `issuer`, in order.
///
/// # Errors
/// [`AuthError::Metadata`] when `issuer` is not an `http(s)` URL.
pub fn server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let url = Url::parse(issuer)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| AuthError::Metadata {
            url: issuer.to_owned(),
            message: "the authorization server is not an http(s) URL".to_owned(),
        })?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// Whether the metadata's `resource` names the endpoint `server`: the same origin, and a path
/// that is the endpoint's or a prefix of it at a `/`.
pub(crate) fn resource_allowed(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    let want = resource.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    have == want || have.starts_with(&format!("{want}/"))
}

/// Discovers the authorization server of the MCP endpoint `server_url`, after a 401 that gave
/// `challenge`.
///
/// # Errors
/// [`AuthError::Discovery`] when nothing could be found, [`AuthError::Metadata`] for a
/// document that cannot be used (a `resource` for another server, an `issuer` that is not the
/// one asked, malformed or oversized JSON).
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Discovery, AuthError> {
    let server = Url::parse(server_url).map_err(|e| AuthError::Discovery {
        url: server_url.to_owned(),
        message: e.to_string(),
    })?;
    let mut tried = Vec::new();
    let mut found = None;
    for url in resource_metadata_urls(&server, challenge) {
        match get_json(http, &url).await? {
            Fetched::Found(value) => {
                found = Some((url, value));
                break;
            }
            Fetched::Missing(status) => tried.push(format!("{url} ({status})")),
        }
    }
    let Some((prm_url, value)) = found else {
        // MCP 2025-03-26: the authorization server is at the server's origin.
        let issuer = server.origin().ascii_serialization();
        let metadata = match server_metadata(http, &issuer, Issuer::OnOrigin).await? {
            Some(metadata) => metadata,
            None => ServerMetadata {
                authorization_endpoint: format!("{issuer}/authorize"),
                token_endpoint: format!("{issuer}/token"),
                registration_endpoint: Some(format!("{issuer}/register")),
                issuer,
                scopes_supported: None,
                token_endpoint_auth_methods_supported: None,
                token_endpoint_auth_signing_alg_values_supported: None,
                dpop_signing_alg_values_supported: None,
                client_id_metadata_document_supported: false,
                authorization_response_iss_parameter_supported: false,
                code_challenge_methods_supported: None,
            },
        };
        return Ok(Discovery {
            resource: canonical(&server),
            resource_metadata: None,
            server: metadata,
        });
    };
    let bad = |message: String| AuthError::Metadata {
        url: prm_url.clone(),
        message,
    };
    let prm: ResourceMetadata =
        serde_json::from_value(value).map_err(|e| bad(format!("not resource metadata: {e}")))?;
    let resource = match &prm.resource {
        Some(resource) if resource_allowed(resource, &server) => resource.clone(),
        Some(resource) => {
            return Err(bad(format!(
                "its resource `{resource}` is not the server asked, {}",
                canonical(&server)
            )))
        }
        None => canonical(&server),
    };
    let mut last = None;
    for issuer in &prm.authorization_servers {
        match server_metadata(http, issuer, Issuer::Exact).await {
            Ok(Some(metadata)) => {
                return Ok(Discovery {
                    resource,
                    resource_metadata: Some(prm),
                    server: metadata,
                })
            }
            Ok(None) => tried.push(format!("no metadata for {issuer}")),
            Err(e) => last = Some(e),
        }
    }
    if let Some(error) = last {
        return Err(error);
    }
    if prm.authorization_servers.is_empty() {
        return Err(bad("it names no authorization server".to_owned()));
    }
    Err(AuthError::Discovery {
        url: server_url.to_owned(),
        message: tried.join("; "),
    })
}

/// Which `issuer` a metadata document may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Issuer {
    /// The one asked (RFC 8414 §3.3): an authorization server the resource metadata named.
    Exact,
    /// Any on the origin asked: MCP 2025-03-26 derives the metadata's URL from the MCP
    /// server's origin and names no issuer, so the server may keep its issuer under a path.
    OnOrigin,
}

/// The metadata of `issuer` from the first well-known URI that has it; `None` when none does.
async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
    expect: Issuer,
) -> Result<Option<ServerMetadata>, AuthError> {
    for url in server_metadata_urls(issuer)? {
        let Fetched::Found(value) = get_json(http, &url).await? else {
            continue;
        };
        return checked_server_metadata(&url, issuer, expect, value).map(Some);
    }
    Ok(None)
}

/// `value` as the metadata of `issuer`, fetched from `url`.
fn checked_server_metadata(
    url: &str,
    issuer: &str,
    expect: Issuer,
    value: Value,
) -> Result<ServerMetadata, AuthError> {
    let bad = |message: String| AuthError::Metadata {
        url: url.to_owned(),
        message,
    };
    let metadata: ServerMetadata = serde_json::from_value(value)
        .map_err(|e| bad(format!("not authorization server metadata: {e}")))?;
    let origin = |u: &str| Url::parse(u).ok().map(|u| u.origin());
    let accepted = match expect {
        Issuer::Exact => metadata.issuer == issuer,
        Issuer::OnOrigin => {
            origin(&metadata.issuer).is_some_and(|o| o.is_tuple() && Some(o) == origin(issuer))
        }
    };
    if !accepted {
        return Err(bad(format!(
            "its issuer `{}` is not `{issuer}`, the one asked",
            metadata.issuer
        )));
    }
    if let Some(methods) = &metadata.code_challenge_methods_supported {
        if !methods.iter().any(|m| m == "S256") {
            return Err(bad("it does not offer PKCE with S256".to_owned()));
        }
    }
    for endpoint in [&metadata.authorization_endpoint, &metadata.token_endpoint] {
        Url::parse(endpoint).map_err(|e| bad(format!("endpoint `{endpoint}`: {e}")))?;
    }
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_order() {
        let server = Url::parse("https://example.com/public/mcp").unwrap();
        assert_eq!(
            resource_metadata_urls(&server, None),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource"
            ]
        );
        let challenge = Challenge {
            resource_metadata: Some("https://example.com/custom.json".to_owned()),
            ..Challenge::default()
        };
        assert_eq!(
            resource_metadata_urls(&server, Some(&challenge))[0],
            "https://example.com/custom.json"
        );
        let root = Url::parse("https://example.com/").unwrap();
        assert_eq!(
            resource_metadata_urls(&root, None),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_order() {
        assert_eq!(
            server_metadata_urls("https://auth.example.com/tenant1").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_urls("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert!(server_metadata_urls("ftp://x").is_err());
    }

    #[test]
    fn resource_must_name_the_server() {
        let server = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        assert!(resource_allowed("http://127.0.0.1:9/mcp", &server));
        assert!(resource_allowed("http://127.0.0.1:9", &server));
        assert!(!resource_allowed("https://evil.example.com/mcp", &server));
        assert!(!resource_allowed("http://127.0.0.1:9/mc", &server));
        assert!(!resource_allowed("http://127.0.0.1:10/mcp", &server));
        assert_eq!(
            canonical(&Url::parse("https://a.example/#x").unwrap()),
            "https://a.example"
        );
        assert_eq!(canonical(&server), "http://127.0.0.1:9/mcp");
    }

    #[test]
    fn issuer_must_match() {
        let doc = serde_json::json!({"issuer": "https://honest.example",
            "authorization_endpoint": "https://honest.example/a", "token_endpoint": "https://honest.example/t"});
        for expect in [Issuer::Exact, Issuer::OnOrigin] {
            let err = checked_server_metadata(
                "https://attacker.example/m",
                "https://attacker.example",
                expect,
                doc.clone(),
            )
            .unwrap_err();
            assert_eq!(
                err.to_string(),
                "https://attacker.example/m: its issuer `https://honest.example` is not `https://attacker.example`, the one asked"
            );
        }
        assert!(checked_server_metadata("u", "https://honest.example", Issuer::Exact, doc).is_ok());
        let plain = serde_json::json!({"issuer": "https://a", "authorization_endpoint": "https://a/a",
            "token_endpoint": "https://a/t", "code_challenge_methods_supported": ["plain"]});
        assert!(checked_server_metadata("u", "https://a", Issuer::Exact, plain).is_err());
    }

    #[test]
    fn the_2025_03_26_fallback_takes_an_issuer_under_a_path_of_the_origin_only() {
        let doc = |issuer: &str| {
            serde_json::json!({"issuer": issuer, "authorization_endpoint": "http://127.0.0.1:9/oauth/a",
                "token_endpoint": "http://127.0.0.1:9/oauth/t"})
        };
        let origin = "http://127.0.0.1:9";
        let on_path = doc("http://127.0.0.1:9/oauth");
        assert!(checked_server_metadata("u", origin, Issuer::OnOrigin, on_path.clone()).is_ok());
        assert!(checked_server_metadata("u", origin, Issuer::Exact, on_path).is_err());
        for other in [
            "http://127.0.0.1:10/oauth",
            "https://127.0.0.1:9",
            "not a url",
        ] {
            assert!(
                checked_server_metadata("u", origin, Issuer::OnOrigin, doc(other)).is_err(),
                "{other}"
            );
        }
    }
}
