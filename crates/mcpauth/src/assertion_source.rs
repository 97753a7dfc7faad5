//! Where the JWT of the JWT-bearer grant (RFC 7523 §2.1) comes from: given in the config, a
//! file the platform keeps fresh (workload identity federation), or an enterprise identity
//! provider that exchanges the user's ID token for an Identity Assertion JWT Authorization Grant
//! (ID-JAG) naming the MCP server's authorization server and resource (RFC 8693 token exchange,
//! the enterprise-managed authorization extension of MCP).

use std::path::PathBuf;

use serde_json::Value;

use crate::fetch::read_bounded;
use crate::{Secret, MAX_TOKEN_RESPONSE_BYTES};

/// The largest assertion or ID token file read.
pub const MAX_ASSERTION_BYTES: u64 = 64 * 1024;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Where the JWT of the JWT-bearer grant comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assertion {
    /// The JWT itself.
    Value(Secret),
    /// A file holding it, read at each token request (a platform rotates it).
    File(PathBuf),
    /// An ID-JAG from an enterprise identity provider, asked for at each token request.
    Exchanged(Box<IdentityProvider>),
}

/// An enterprise identity provider that exchanges ID tokens for ID-JAGs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityProvider {
    /// Its token endpoint.
    pub token_endpoint: String,
    /// mcpx's client id there.
    pub client_id: Option<String>,
    /// Its secret there.
    pub client_secret: Option<Secret>,
    /// The user's ID token from it ([`Assertion::Value`] or [`Assertion::File`]).
    pub id_token: Assertion,
}

impl Assertion {
    /// The JWT given or in the file; the error says why not (never with the JWT).
    fn local(&self) -> Result<Secret, String> {
        let path = match self {
            Assertion::Value(jwt) => return Ok(jwt.clone()),
            Assertion::File(path) => path,
            Assertion::Exchanged(_) => return Err("an ID token cannot itself be exchanged".into()),
        };
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        use std::io::Read;
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_ASSERTION_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| failed(&e))?;
        if text.len() as u64 > MAX_ASSERTION_BYTES {
            return Err(failed(&format!("over {MAX_ASSERTION_BYTES} bytes")));
        }
        Ok(Secret::new(text.trim()))
    }

    /// The JWT for a grant at the authorization server `audience` for `resource`.
    pub(crate) async fn read(
        &self,
        http: &reqwest::Client,
        audience: &str,
        resource: &str,
    ) -> Result<Secret, String> {
        let Assertion::Exchanged(idp) = self else {
            return self.local();
        };
        let endpoint = &idp.token_endpoint;
        let failed = |message: String| format!("token exchange at {endpoint}: {message}");
        let id_token = idp.id_token.local()?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("subject_token", id_token.expose()),
            ("subject_token_type", ID_TOKEN_TYPE),
            ("requested_token_type", ID_JAG_TYPE),
            ("audience", audience),
            ("resource", resource),
        ];
        if let Some(id) = &idp.client_id {
            form.push(("client_id", id));
        }
        if let Some(secret) = &idp.client_secret {
            form.push(("client_secret", secret.expose()));
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let response = http
            .post(endpoint)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let answer = read_bounded(response, MAX_TOKEN_RESPONSE_BYTES)
            .await
            .map_err(failed)?;
        // The body is not quoted: it may hold a token.
        let answer: Value = serde_json::from_slice(&answer)
            .map_err(|_| failed(format!("the answer (HTTP {status}) is not JSON")))?;
        if !status.is_success() {
            let error = answer["error"].as_str().unwrap_or("no error code");
            let description = answer["error_description"].as_str().unwrap_or_default();
            return Err(failed(format!(
                "refused (HTTP {status}): {error} {description}"
            )));
        }
        if answer["issued_token_type"] != ID_JAG_TYPE {
            return Err(failed("the answer is not an ID-JAG".to_owned()));
        }
        answer["access_token"]
            .as_str()
            .map(Secret::new)
            .ok_or_else(|| failed("the answer has no access_token".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assertion_file_is_read_each_time_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let file = Assertion::File(path.clone());
        std::fs::write(&path, "jwt-1\n").unwrap();
        assert_eq!(file.local().unwrap().expose(), "jwt-1");
        std::fs::write(&path, "jwt-2").unwrap();
        assert_eq!(file.local().unwrap().expose(), "jwt-2");
        std::fs::write(&path, "x".repeat(MAX_ASSERTION_BYTES as usize + 1)).unwrap();
        let error = file.local().unwrap_err();
        assert!(
            error.ends_with(&format!("over {MAX_ASSERTION_BYTES} bytes")),
            "{error}"
        );
        std::fs::remove_file(&path).unwrap();
        assert!(file.local().is_err());
        let value = Assertion::Value(Secret::new("jwt-3"));
        assert_eq!(value.local().unwrap().expose(), "jwt-3");
    }
}
