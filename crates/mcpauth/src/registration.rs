//! The client's identity at an authorization server: from the config, a Client ID Metadata
//! Document URL, or Dynamic Client Registration (RFC 7591), in the order the MCP specification
//! prefers. A registered client is kept per issuer: it is never offered to another server.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::assertion::PRIVATE_KEY_JWT;
use crate::fetch::read_bounded;
use crate::{AuthError, PrivateKey, Secret, ServerMetadata, MAX_METADATA_BYTES};

/// The name mcpx registers under.
const CLIENT_NAME: &str = "mcpx";

/// A client identity at one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// The issuer that knows this client.
    pub issuer: String,
    /// The client id.
    pub client_id: String,
    /// Its secret, for a confidential client.
    #[serde(default)]
    pub client_secret: Option<Secret>,
    /// How it authenticates at the token endpoint, as registered.
    #[serde(default)]
    pub auth_method: Option<String>,
    /// The private key of a `private_key_jwt` client, from the config; never stored.
    #[serde(skip)]
    pub private_key: Option<PrivateKey>,
}

impl ClientRecord {
    /// How the client authenticates at `server`'s token endpoint: as registered, else
    /// `private_key_jwt` with a private key, else the first of `client_secret_basic` and
    /// `client_secret_post` it offers when there is a secret, else `none`.
    pub(crate) fn auth_method(&self, server: &ServerMetadata) -> &str {
        if let Some(method) = &self.auth_method {
            return method;
        }
        if self.private_key.is_some() {
            return PRIVATE_KEY_JWT;
        }
        if self.client_secret.is_none() {
            return "none";
        }
        match &server.token_endpoint_auth_methods_supported {
            Some(methods)
                if !methods.iter().any(|m| m == "client_secret_basic")
                    && methods.iter().any(|m| m == "client_secret_post") =>
            {
                "client_secret_post"
            }
            _ => "client_secret_basic",
        }
    }
}

/// Registers mcpx at `server` with `redirect_uri`.
///
/// # Errors
/// [`AuthError::NoClient`] when the server offers no registration or refuses it.
pub(crate) async fn register(
    http: &reqwest::Client,
    server: &ServerMetadata,
    redirect_uri: &str,
    grant_types: &[&str],
) -> Result<ClientRecord, AuthError> {
    let failed = |message: String| AuthError::NoClient {
        issuer: server.issuer.clone(),
        message,
    };
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(failed(
            "it offers neither Client ID Metadata Documents nor registration: give `auth.clientId` in the config".to_owned(),
        ));
    };
    let methods = server
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_default();
    let method = if methods.is_empty() || methods.iter().any(|m| m == "none") {
        "none"
    } else if methods.iter().any(|m| m == "client_secret_basic") {
        "client_secret_basic"
    } else {
        methods[0].as_str()
    };
    let body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    let response = http
        .post(endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| failed(format!("registration at {endpoint}: {e}")))?;
    let status = response.status();
    let answer = read_bounded(response, MAX_METADATA_BYTES)
        .await
        .map_err(|e| failed(format!("registration at {endpoint}: {e}")))?;
    let answer: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
    if !status.is_success() {
        let error = answer["error"].as_str().unwrap_or("no error code");
        let description = answer["error_description"].as_str().unwrap_or_default();
        return Err(failed(format!(
            "registration at {endpoint} refused (HTTP {status}): {error} {description}"
        )));
    }
    let Some(client_id) = answer["client_id"].as_str().filter(|id| !id.is_empty()) else {
        return Err(failed(format!(
            "registration at {endpoint} gave no client_id"
        )));
    };
    Ok(ClientRecord {
        issuer: server.issuer.clone(),
        client_id: client_id.to_owned(),
        client_secret: answer["client_secret"].as_str().map(Secret::new),
        auth_method: answer["token_endpoint_auth_method"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| Some(method.to_owned())),
        private_key: None,
    })
}
