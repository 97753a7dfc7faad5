//! DPoP (RFC 9449): tokens bound to a key of the client's, so a stolen access or refresh token
//! is no good without the key. Each MCP server's client has its own P-256 key, made when its
//! authorization server first offers DPoP and kept with the tokens it binds. Every request that
//! carries such a token, and every token request, carries a proof: a JWT of type `dpop+jwt`
//! signed with the key, with the public key in its header, the request's method (`htm`) and URL
//! without query or fragment (`htu`), `iat`, a fresh `jti`, the hash of the access token (`ath`)
//! and the server's nonce when it asked for one.

use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;

use crate::clock::now;
use crate::{AuthError, Secret};

/// The algorithm of mcpx's DPoP keys.
pub(crate) const DPOP_ALGORITHM: &str = "ES256";

/// The `token_type` of a DPoP-bound access token, and its `Authorization` scheme.
pub(crate) const DPOP_SCHEME: &str = "DPoP";

/// The error a server answers when a proof lacks the nonce it wants.
pub(crate) const USE_DPOP_NONCE: &str = "use_dpop_nonce";

/// Random bytes in a proof's `jti`.
const JTI_BYTES: u32 = 16;

/// A client's DPoP key.
pub(crate) struct DpopKey {
    pkcs8: Vec<u8>,
    jwk: Jwk,
}

#[derive(Serialize)]
struct Claims<'a> {
    jti: String,
    htm: &'a str,
    htu: &'a str,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl DpopKey {
    /// A new key.
    ///
    /// # Errors
    /// [`AuthError::Store`] when the system cannot make one.
    pub(crate) fn generate() -> Result<DpopKey, AuthError> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| AuthError::Store("cannot make a DPoP key".to_owned()))?;
        let pkcs8 = pair
            .to_pkcs8v1()
            .map_err(|_| AuthError::Store("cannot make a DPoP key".to_owned()))?;
        DpopKey::from_pkcs8(pkcs8.as_ref().to_vec())
            .ok_or_else(|| AuthError::Store("cannot make a DPoP key".to_owned()))
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Option<DpopKey> {
        let jwk =
            Jwk::from_encoding_key(&EncodingKey::from_ec_der(&pkcs8), Algorithm::ES256).ok()?;
        Some(DpopKey { pkcs8, jwk })
    }

    /// The key as it is stored beside the tokens it binds.
    pub(crate) fn to_secret(&self) -> Secret {
        Secret::new(base64url(&self.pkcs8))
    }

    /// The key stored as `secret`; `None` when it is not one.
    pub(crate) fn from_secret(secret: &Secret) -> Option<DpopKey> {
        let pkcs8 = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(secret.expose())
            .ok()?;
        DpopKey::from_pkcs8(pkcs8)
    }

    /// A proof for a `method` request to `url`, carrying `access_token` when given, with the
    /// server's `nonce` when it asked for one.
    ///
    /// # Errors
    /// [`AuthError::Store`] when it cannot be signed or the URL does not parse.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut htu = url::Url::parse(url)
            .map_err(|e| AuthError::Store(format!("DPoP proof for {url}: {e}")))?;
        htu.set_query(None);
        htu.set_fragment(None);
        let ath = access_token.map(|token| {
            base64url(
                aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes()).as_ref(),
            )
        });
        let claims = Claims {
            jti: oauth2::CsrfToken::new_random_len(JTI_BYTES)
                .secret()
                .clone(),
            htm: method,
            htu: htu.as_str(),
            iat: now(),
            ath,
            nonce,
        };
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(&self.pkcs8))
            .map_err(|e| AuthError::Store(format!("DPoP proof: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    #[test]
    fn a_proof_names_the_request_and_verifies_with_its_own_key() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_secret(&key.to_secret()).unwrap();
        assert_eq!(
            key.jwk
                .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
                .unwrap(),
            again
                .jwk
                .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
                .unwrap()
        );
        let proof = again
            .proof(
                "POST",
                "http://127.0.0.1:9/mcp?x=1#f",
                Some("tok"),
                Some("n-1"),
            )
            .unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.unwrap();
        let public = serde_json::to_value(&jwk).unwrap();
        assert!(
            public.get("d").is_none(),
            "the private key is in the proof: {public}"
        );
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_required_spec_claims::<&str>(&[]);
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<serde_json::Value>(
            &proof,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "http://127.0.0.1:9/mcp");
        assert_eq!(claims["nonce"], "n-1");
        // base64url(SHA-256("tok")).
        assert_eq!(claims["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        let second = key
            .proof("GET", "http://127.0.0.1:9/mcp", None, None)
            .unwrap();
        let jti = |p: &str| {
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(p)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&proof), jti(&second));
        assert!(
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(&second)
                .unwrap()
                .claims
                .get("ath")
                .is_none()
        );
        assert!(DpopKey::from_secret(&Secret::new("not a key")).is_none());
    }
}
