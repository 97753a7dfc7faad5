//! `mcpx serve --http` as an OAuth 2.1 resource server (MCP authorization, RFC 9728, RFC 9068).
//!
//! With an issuer configured, every request to the HTTP front carries `Authorization: Bearer`
//! with a JWT access token from that issuer. The token is accepted only when its signature
//! verifies against a key of the issuer's JWKS (asymmetric algorithms only: a JWKS `oct` key
//! or an `HS*` token is refused, so a public key can never serve as an HMAC secret), its `iss`
//! is the issuer, its `aud` names mcpx's canonical URL, it is within `exp`/`nbf` (give or take
//! [`CLOCK_LEEWAY_SECONDS`]), and it holds the required scopes. Keys are found through the
//! issuer's metadata (see [`discovery`]), cached, and fetched again for a key id not seen yet,
//! at most once per [`KEY_REFRESH_INTERVAL`].
//!
//! The functions here are pure (a token and a key set in, a [`Grant`] or a [`BearerError`]
//! out); the HTTP front turns an error into the `401`/`403` and `WWW-Authenticate` the MCP
//! specification asks for ([`Challenge`]). The token itself is never logged and never passed
//! upstream: it is read from the client's headers only here.

use std::collections::BTreeSet;
use std::time::Duration;

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};
use thiserror::Error;

pub(crate) mod discovery;

pub use discovery::Verifier;

/// Seconds a token's `exp` and `nbf` may be off, for clocks that disagree a little.
pub const CLOCK_LEEWAY_SECONDS: u64 = 30;

/// The longest access token read (a JWT with a few dozen scopes is under 2 KiB).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The largest JWKS document taken from the issuer.
pub const MAX_JWKS_BYTES: usize = 64 * 1024;

/// The most keys a JWKS may hold (issuers publish two or three while rotating).
pub const MAX_JWKS_KEYS: usize = 32;

/// The largest authorization server metadata document taken from the issuer.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// The shortest time between two fetches of the issuer's keys: a token with an unknown key id
/// triggers a fetch, and a stream of forged ones must not turn into a stream of fetches.
pub const KEY_REFRESH_INTERVAL: Duration = Duration::from_secs(30);

/// How long fetched keys are used before they are fetched again (on the next request).
pub const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);

/// How long a fetch of the issuer's metadata or keys may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The algorithms a token may be signed with: asymmetric ones only.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The `gateway.auth` config: who issues the tokens mcpx accepts, and what they must allow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAuth {
    /// The authorization server's issuer identifier (`https://auth.example.com`).
    pub issuer: String,
    /// mcpx's canonical URL, the audience tokens must name; the listener's
    /// `http://ADDR/mcp` when not given.
    pub audience: Option<String>,
    /// Scopes every request needs.
    pub scopes: Vec<String>,
    /// Tools (globs over exposed names) seen and called only with a scope.
    pub tool_scopes: Vec<ToolScope>,
}

/// One per-tool scope rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolScope {
    /// A glob (`*`, `?`) over the exposed tool names.
    pub tools: String,
    /// The scope a token needs to see and call them.
    pub scope: String,
}

impl ResourceAuth {
    /// Every scope mcpx knows of, for `scopes_supported`.
    fn all_scopes(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.scopes.iter().map(String::as_str).collect();
        for rule in &self.tool_scopes {
            if !all.contains(&rule.scope.as_str()) {
                all.push(&rule.scope);
            }
        }
        all
    }

    /// The Protected Resource Metadata document (RFC 9728 §2) for `resource`.
    pub fn metadata(&self, resource: &str) -> Value {
        json!({
            "resource": resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.all_scopes(),
            "bearer_methods_supported": ["header"],
        })
    }
}

/// What a valid token grants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    /// Its `sub`, when it has one (not a secret): with the issuer, who holds it.
    pub subject: Option<String>,
    /// Its `client_id` (RFC 9068) or `azp`, when it has one: who holds a token without a
    /// subject (client credentials).
    pub client_id: Option<String>,
    /// Its scopes (`scope`, space-separated, or `scp`, a list).
    pub scopes: BTreeSet<String>,
}

impl Grant {
    /// Whether it holds `scope`.
    pub fn has(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The scopes of `required` it does not hold.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .filter(|s| !self.has(s))
            .map(String::as_str)
            .collect()
    }
}

/// Why a token, or the issuer's keys, cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BearerError {
    /// No `Authorization: Bearer` header.
    #[error("a bearer access token is required")]
    Missing,
    /// The token is over [`MAX_TOKEN_BYTES`].
    #[error("the access token is {size} bytes, over the limit of {limit}")]
    TooLong {
        /// Its length.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Not a JWT, or a header or claims that cannot be read.
    #[error("the access token is not a readable JWT: {0}")]
    Malformed(String),
    /// Signed with an algorithm mcpx does not take (symmetric ones above all).
    #[error("the access token is signed with {0}, which is not accepted")]
    Algorithm(String),
    /// No key of the issuer's JWKS has the token's key id (or fits its algorithm).
    #[error("no key of the issuer matches the access token (kid {})", kid.as_deref().unwrap_or("none"))]
    UnknownKey {
        /// The token's `kid`.
        kid: Option<String>,
    },
    /// The signature does not verify.
    #[error("the access token's signature does not verify")]
    BadSignature,
    /// Past `exp`.
    #[error("the access token has expired")]
    Expired,
    /// Before `nbf`.
    #[error("the access token is not valid yet")]
    NotYetValid,
    /// `iss` is not the issuer.
    #[error("the access token is from another issuer")]
    WrongIssuer,
    /// `aud` does not name mcpx.
    #[error("the access token is for another audience")]
    WrongAudience,
    /// A claim is missing or has the wrong type.
    #[error("the access token's claims: {0}")]
    Claims(String),
    /// The issuer's key set cannot be used.
    #[error("the issuer's JWKS: {0}")]
    Jwks(String),
    /// A document from the issuer is over its limit.
    #[error("the issuer's {what} is over {limit} bytes")]
    TooLarge {
        /// Which document.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// The issuer's metadata cannot be used.
    #[error("the issuer's metadata: {0}")]
    Metadata(String),
    /// The issuer could not be reached (its keys are not known).
    #[error("the issuer's {url} could not be fetched: {reason}")]
    Unreachable {
        /// What was fetched.
        url: String,
        /// Why it failed.
        reason: String,
    },
}

impl BearerError {
    /// Whether the fault is the issuer's (or the network's), not the token's: answered with 503
    /// rather than 401, since the token may well be valid.
    pub fn is_issuer_fault(&self) -> bool {
        matches!(
            self,
            BearerError::Jwks(_)
                | BearerError::TooLarge { .. }
                | BearerError::Metadata(_)
                | BearerError::Unreachable { .. }
        )
    }
}

/// The issuer's signing keys.
#[derive(Clone, Default)]
pub(crate) struct Keys {
    keys: Vec<Key>,
}

#[derive(Clone)]
struct Key {
    kid: Option<String>,
    /// The algorithm the JWKS binds the key to, if it does.
    alg: Option<Algorithm>,
    decoding: DecodingKey,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<_> = self.keys.iter().map(|k| k.kid.as_deref()).collect();
        f.debug_struct("Keys").field("kids", &kids).finish()
    }
}

impl Keys {
    /// Reads a JWKS document: at most [`MAX_JWKS_BYTES`] and [`MAX_JWKS_KEYS`] keys; keys
    /// marked for encryption, symmetric keys and key types not known are left out; none left
    /// is an error.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Keys, BearerError> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(BearerError::TooLarge {
                what: "JWKS",
                limit: MAX_JWKS_BYTES,
            });
        }
        let set: JwkSet =
            serde_json::from_slice(bytes).map_err(|e| BearerError::Jwks(e.to_string()))?;
        if set.keys.len() > MAX_JWKS_KEYS {
            return Err(BearerError::Jwks(format!(
                "{} keys, over the limit of {MAX_JWKS_KEYS}",
                set.keys.len()
            )));
        }
        let keys: Vec<Key> = set.keys.iter().filter_map(signing_key).collect();
        if keys.is_empty() {
            return Err(BearerError::Jwks("no usable signing key".into()));
        }
        Ok(Keys { keys })
    }

    /// Whether a key has the id `kid`.
    pub(crate) fn has_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
    }
}

/// A JWKS entry as a verification key, unless it is not one mcpx uses.
fn signing_key(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    if !matches!(
        jwk.algorithm,
        AlgorithmParameters::RSA(_)
            | AlgorithmParameters::EllipticCurve(_)
            | AlgorithmParameters::OctetKeyPair(_)
    ) {
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        Some(alg) => Some(
            Algorithm::try_from(alg)
                .ok()
                .filter(|a| ALGORITHMS.contains(a))?,
        ),
        None => None,
    };
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        decoding: DecodingKey::from_jwk(jwk).ok()?,
    })
}

/// What a token must say about whom it is for.
#[derive(Debug, Clone)]
pub(crate) struct Expected<'a> {
    /// The issuer identifier.
    pub(crate) issuer: &'a str,
    /// mcpx's canonical URL.
    pub(crate) audience: &'a str,
}

/// Verifies `token` against `keys`: signature, `iss`, `aud`, `exp` and `nbf`. Scopes are the
/// caller's to check ([`Grant::missing`]), since a missing one is answered differently (403).
pub(crate) fn verify(
    token: &str,
    keys: &Keys,
    expected: &Expected<'_>,
) -> Result<Grant, BearerError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(BearerError::TooLong {
            size: token.len(),
            limit: MAX_TOKEN_BYTES,
        });
    }
    let header =
        jsonwebtoken::decode_header(token).map_err(|e| BearerError::Malformed(e.to_string()))?;
    if !ALGORITHMS.contains(&header.alg) {
        return Err(BearerError::Algorithm(format!("{:?}", header.alg)));
    }
    let candidates: Vec<&Key> = keys
        .keys
        .iter()
        .filter(|k| header.kid.is_none() || k.kid == header.kid)
        .filter(|k| k.alg.is_none_or(|alg| alg == header.alg))
        .filter(|k| k.decoding.family() == header.alg.family())
        .collect();
    if candidates.is_empty() {
        return Err(BearerError::UnknownKey { kid: header.kid });
    }
    let mut validation = Validation::new(header.alg);
    validation.leeway = CLOCK_LEEWAY_SECONDS;
    validation.validate_nbf = true;
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.set_issuer(&[expected.issuer]);
    let audience = expected.audience.trim_end_matches('/');
    validation.set_audience(&[audience.to_owned(), format!("{audience}/")]);
    let mut last = BearerError::BadSignature;
    for key in candidates {
        match jsonwebtoken::decode::<Value>(token, &key.decoding, &validation) {
            Ok(data) => return grant(&data.claims),
            Err(e) => {
                last = from_jwt_error(e.into_kind());
                if last != BearerError::BadSignature {
                    // The signature held (claims are checked after it): no other key to try.
                    return Err(last);
                }
            }
        }
    }
    Err(last)
}

fn from_jwt_error(kind: jsonwebtoken::errors::ErrorKind) -> BearerError {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::InvalidSignature | K::InvalidEcdsaKey | K::InvalidEddsaKey | K::InvalidRsaKey(_) => {
            BearerError::BadSignature
        }
        K::ExpiredSignature => BearerError::Expired,
        K::ImmatureSignature => BearerError::NotYetValid,
        K::InvalidIssuer => BearerError::WrongIssuer,
        K::InvalidAudience => BearerError::WrongAudience,
        K::MissingRequiredClaim(claim) => BearerError::Claims(format!("no `{claim}`")),
        K::InvalidClaimFormat(claim) => {
            BearerError::Claims(format!("`{claim}` has the wrong type"))
        }
        K::InvalidAlgorithm | K::UnsupportedAlgorithm | K::InvalidAlgorithmName => {
            BearerError::Algorithm("an algorithm that does not fit the key".into())
        }
        other => BearerError::Malformed(format!("{other:?}")),
    }
}

/// What `claims` grant; refused when they name nobody (no `sub`, no `client_id`): a holder
/// mcpx cannot tell apart from another must not own sessions or calls.
fn grant(claims: &Value) -> Result<Grant, BearerError> {
    let mut scopes = BTreeSet::new();
    if let Some(Value::String(scope)) = claims.get("scope") {
        scopes.extend(scope.split_ascii_whitespace().map(str::to_owned));
    }
    match claims.get("scp") {
        Some(Value::Array(list)) => {
            scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        Some(Value::String(scp)) => scopes.extend(scp.split_ascii_whitespace().map(str::to_owned)),
        _ => {}
    }
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let grant = Grant {
        subject: text("sub"),
        client_id: text("client_id").or_else(|| text("azp")),
        scopes,
    };
    if grant.subject.is_none() && grant.client_id.is_none() {
        return Err(BearerError::Claims(
            "neither `sub` nor `client_id`: the token names nobody".to_owned(),
        ));
    }
    Ok(grant)
}

/// The token of an `Authorization` header value (`Bearer TOKEN`, the scheme in any case).
pub(crate) fn token_of(authorization: Option<&str>) -> Result<&str, BearerError> {
    let value = authorization.ok_or(BearerError::Missing)?;
    let (scheme, token) = value.split_once(' ').ok_or(BearerError::Missing)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(BearerError::Missing);
    }
    Ok(token)
}

/// A refusal's status and `WWW-Authenticate` value (RFC 6750 §3, RFC 9728 §5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// 401, 403 or 503.
    pub status: u16,
    /// The `WWW-Authenticate` header value.
    pub www_authenticate: String,
    /// The message for the body.
    pub message: String,
}

impl Challenge {
    /// The answer to a request whose token was refused for `error`.
    pub fn refused(error: &BearerError, metadata_url: &str, scopes: &[String]) -> Challenge {
        let mut value = format!("Bearer resource_metadata=\"{metadata_url}\"");
        if !scopes.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        let status = if error.is_issuer_fault() {
            503
        } else {
            if *error != BearerError::Missing {
                value.push_str(&format!(
                    ", error=\"invalid_token\", error_description=\"{}\"",
                    quoted(&error.to_string())
                ));
            }
            401
        };
        Challenge {
            status,
            www_authenticate: value,
            message: error.to_string(),
        }
    }

    /// The answer to a request whose token lacks `scopes` (403, RFC 6750 `insufficient_scope`).
    pub fn insufficient(scopes: &[&str], metadata_url: &str) -> Challenge {
        let scope = scopes.join(" ");
        Challenge {
            status: 403,
            www_authenticate: format!(
                "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata_url}\""
            ),
            message: format!("the access token lacks the scope {scope}"),
        }
    }
}

/// `text` fit for a quoted-string: no quotes or backslashes, printable ASCII only.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '?',
        })
        .collect()
}

/// The metadata URL for `resource` (RFC 9728 §3.1: the well-known path inserted between the
/// host and the resource's path), or `None` for a resource that is not an `http(s)` URL.
pub fn metadata_url(resource: &str) -> Option<String> {
    let url = reqwest::Url::parse(resource).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    Some(format!(
        "{origin}/.well-known/oauth-protected-resource{path}"
    ))
}

#[cfg(test)]
mod tests;
