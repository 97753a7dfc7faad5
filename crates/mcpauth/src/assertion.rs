//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): instead of
//! a secret, the client sends a short-lived JWT it signed with its private key. The assertion
//! names the client as `iss` and `sub`, the authorization server's issuer as `aud` (the
//! audience RFC 7523bis requires, so an assertion made for one server is no good at another),
//! and carries a fresh `jti` and an `exp` [`ASSERTION_LIFETIME`] ahead.
//!
//! The key is a PEM PKCS#8 (or PKCS#1 RSA) private key from the config; it is never logged, and
//! no error quotes it.

use std::str::FromStr;
use std::time::Duration;

use jsonwebtoken::{Algorithm, AlgorithmFamily, EncodingKey, Header};
use serde::Serialize;

use crate::clock::now;
use crate::{AuthError, Secret, ServerMetadata};

/// How long a client assertion is valid: long enough for one token request, short enough that
/// a captured one is soon useless.
pub const ASSERTION_LIFETIME: Duration = Duration::from_secs(60);

/// The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub(crate) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The token endpoint authentication method that sends an assertion.
pub(crate) const PRIVATE_KEY_JWT: &str = "private_key_jwt";

/// Random bytes in an assertion's `jti`.
const JTI_BYTES: u32 = 16;

/// The algorithms tried, in order, for a key when neither the config nor the authorization
/// server names one: the defaults of each key family.
const DEFAULT_ALGORITHMS: [Algorithm; 4] = [
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
    Algorithm::RS256,
];

/// A client's private key, and the algorithm the config names for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateKey {
    /// The PEM text.
    pub pem: Secret,
    /// The JWS algorithm (`ES256`, `RS256`, `EdDSA`, …); when absent, the first the
    /// authorization server lists that fits the key.
    pub algorithm: Option<String>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

/// The algorithms to try for `key` at `server`, in order: asymmetric ones only.
fn candidates(key: &PrivateKey, server: &ServerMetadata) -> Result<Vec<Algorithm>, AuthError> {
    let parse = |name: &str| {
        Algorithm::from_str(name)
            .ok()
            .filter(|a| a.family() != AlgorithmFamily::Hmac)
            .ok_or_else(|| AuthError::NoClient {
                issuer: server.issuer.clone(),
                message: format!(
                    "`auth.signingAlgorithm`: `{name}` is not an asymmetric JWS algorithm"
                ),
            })
    };
    if let Some(name) = &key.algorithm {
        return Ok(vec![parse(name)?]);
    }
    Ok(
        match &server.token_endpoint_auth_signing_alg_values_supported {
            Some(names) if !names.is_empty() => {
                names.iter().filter_map(|n| parse(n).ok()).collect()
            }
            _ => DEFAULT_ALGORITHMS.to_vec(),
        },
    )
}

/// The key in the family of `algorithm`; `None` when the PEM is not such a key. EC and Ed25519
/// keys are PKCS#8 (`PRIVATE KEY`); RSA keys PKCS#1 (`RSA PRIVATE KEY`), as the signer reads them.
fn encoding_key(pem: &pem::Pem, algorithm: Algorithm) -> Option<EncodingKey> {
    let der = pem.contents();
    match (algorithm.family(), pem.tag()) {
        (AlgorithmFamily::Ec, "PRIVATE KEY") => Some(EncodingKey::from_ec_der(der)),
        (AlgorithmFamily::Ed, "PRIVATE KEY") => Some(EncodingKey::from_ed_der(der)),
        (AlgorithmFamily::Rsa, "RSA PRIVATE KEY") => Some(EncodingKey::from_rsa_der(der)),
        _ => None,
    }
}

/// A signed assertion authenticating `client_id` at `server`.
///
/// # Errors
/// [`AuthError::NoClient`] when the key is not a private key of an algorithm the server takes
/// (the message names the algorithms tried, never the key).
pub(crate) fn sign(
    key: &PrivateKey,
    client_id: &str,
    server: &ServerMetadata,
) -> Result<String, AuthError> {
    let tried = candidates(key, server)?;
    let issued = now();
    let claims = Claims {
        iss: client_id,
        sub: client_id,
        aud: &server.issuer,
        iat: issued,
        exp: issued + ASSERTION_LIFETIME.as_secs(),
        jti: oauth2::CsrfToken::new_random_len(JTI_BYTES)
            .secret()
            .clone(),
    };
    // The parse error is not quoted: it may show part of the key.
    let pem = pem::parse(key.pem.expose()).ok();
    for algorithm in &tried {
        let Some(encoding) = pem.as_ref().and_then(|pem| encoding_key(pem, *algorithm)) else {
            continue;
        };
        // A key of the family but another curve or size fails here; the next may fit.
        if let Ok(jwt) = jsonwebtoken::encode(&Header::new(*algorithm), &claims, &encoding) {
            return Ok(jwt);
        }
    }
    let names: Vec<String> = tried.iter().map(|a| format!("{a:?}")).collect();
    Err(AuthError::NoClient {
        issuer: server.issuer.clone(),
        message: format!(
            "`auth.privateKey` is not a PEM private key (PKCS#8 EC or Ed25519, PKCS#1 RSA) for {}",
            if names.is_empty() {
                "any algorithm the authorization server lists".to_owned()
            } else {
                names.join(", ")
            }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{DecodingKey, Validation};

    // A P-256 key made for this test only (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256).
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgGyVybPdGncCeyGJ+
otnJG2P//FVa4Xfao2S3dJn47QOhRANCAATLq6wn64a0CqXDfbNBPLAdmWTZygNu
lJjUlWXvTAHh7ftzMAHRvlJabE+mcplHQOMVz1bZqt+obVqBhX1UeYsa
-----END PRIVATE KEY-----
";

    /// The public half of [`EC_KEY`].
    fn public() -> DecodingKey {
        let der = pem::parse(EC_KEY).unwrap().into_contents();
        let jwk =
            Jwk::from_encoding_key(&EncodingKey::from_ec_der(&der), Algorithm::ES256).unwrap();
        DecodingKey::from_jwk(&jwk).unwrap()
    }

    fn server(algs: Option<&[&str]>) -> ServerMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "https://as.example",
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "token_endpoint_auth_signing_alg_values_supported": algs,
        }))
        .unwrap()
    }

    fn key(algorithm: Option<&str>) -> PrivateKey {
        PrivateKey {
            pem: Secret::new(EC_KEY),
            algorithm: algorithm.map(str::to_owned),
        }
    }

    #[test]
    fn the_assertion_names_the_client_and_the_issuer() {
        let jwt = sign(&key(None), "client-1", &server(Some(&["RS256", "ES256"]))).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["https://as.example"]);
        validation.set_issuer(&["client-1"]);
        validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        let decoded =
            jsonwebtoken::decode::<serde_json::Value>(&jwt, &public(), &validation).unwrap();
        let claims = decoded.claims;
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(
            claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
            ASSERTION_LIFETIME.as_secs()
        );
        assert_eq!(claims["jti"].as_str().unwrap().len(), 22);
        let again = sign(&key(None), "client-1", &server(None)).unwrap();
        let jti = |jwt: &str| {
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(jwt)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&jwt), jti(&again));
    }

    #[test]
    fn a_key_that_fits_no_algorithm_is_a_clear_error_without_the_key() {
        let error = sign(&key(None), "c", &server(Some(&["RS256"]))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no client id for https://as.example: `auth.privateKey` is not a PEM private key (PKCS#8 EC or Ed25519, PKCS#1 RSA) for RS256"
        );
        let error = sign(&key(Some("HS256")), "c", &server(None)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`HS256` is not an asymmetric JWS algorithm"),
            "{error}"
        );
        let garbage = PrivateKey {
            pem: Secret::new("-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----"),
            algorithm: None,
        };
        let error = sign(&garbage, "c", &server(None)).unwrap_err().to_string();
        assert!(!error.contains("not base64"), "{error}");
    }
}
