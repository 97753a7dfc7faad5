//! Finding and caching the issuer's keys: its metadata (RFC 8414, else OpenID Connect
//! Discovery) names `jwks_uri`; the keys are fetched once, used for [`KEYS_MAX_AGE`], and
//! fetched again for a key id not seen yet, but never twice within [`KEY_REFRESH_INTERVAL`]
//! (a failed fetch counts too), so forged tokens cannot make mcpx hammer the issuer.
//!
//! The issuer must be `https`, or `http` on a loopback address (a local test server); its
//! metadata must name the same issuer (RFC 8414 §3.3), and no fetch follows a redirect.

use std::sync::Arc;
use std::time::Instant;

use reqwest::Url;

use super::{
    verify, BearerError, Expected, Grant, Keys, ResourceAuth, FETCH_TIMEOUT, KEYS_MAX_AGE,
    KEY_REFRESH_INTERVAL, MAX_JWKS_BYTES, MAX_METADATA_BYTES,
};

/// Checks access tokens for the HTTP front, fetching the issuer's keys as needed.
#[derive(Debug)]
pub struct Verifier {
    config: ResourceAuth,
    audience: String,
    issuer: Url,
    http: reqwest::Client,
    cache: tokio::sync::Mutex<Cache>,
    /// [`KEY_REFRESH_INTERVAL`], shorter in tests.
    refresh_interval: std::time::Duration,
}

#[derive(Debug, Default)]
struct Cache {
    jwks_uri: Option<Url>,
    keys: Option<Arc<Keys>>,
    /// When the keys were last fetched (or a fetch was last tried).
    tried: Option<Instant>,
    fetched: Option<Instant>,
}

impl Verifier {
    /// A verifier for `config`, whose tokens must name `audience` (mcpx's canonical URL).
    ///
    /// # Errors
    /// An issuer that is not an `https` URL (or `http` on loopback); an audience that is not
    /// an `http(s)` URL.
    pub fn new(config: ResourceAuth, audience: String) -> Result<Verifier, BearerError> {
        let issuer = Url::parse(&config.issuer)
            .map_err(|e| BearerError::Metadata(format!("issuer `{}`: {e}", config.issuer)))?;
        let loopback = match issuer.host_str() {
            Some("localhost") => true,
            Some(host) => host
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback()),
            None => false,
        };
        let secure = issuer.scheme() == "https" || (issuer.scheme() == "http" && loopback);
        if !secure || issuer.query().is_some() || issuer.fragment().is_some() {
            return Err(BearerError::Metadata(format!(
                "issuer `{}` must be an https URL without query or fragment (http only on loopback)",
                config.issuer
            )));
        }
        if super::metadata_url(&audience).is_none() {
            return Err(BearerError::Metadata(format!(
                "audience `{audience}` is not an http(s) URL"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| BearerError::Metadata(e.to_string()))?;
        Ok(Verifier {
            config,
            audience,
            issuer,
            http,
            cache: tokio::sync::Mutex::default(),
            refresh_interval: KEY_REFRESH_INTERVAL,
        })
    }

    /// The same, fetching keys again as often as asked (tests of rotation).
    #[cfg(test)]
    pub(crate) fn refreshing_always(self) -> Verifier {
        Verifier {
            refresh_interval: std::time::Duration::ZERO,
            ..self
        }
    }

    /// The config it checks against.
    pub fn config(&self) -> &ResourceAuth {
        &self.config
    }

    /// mcpx's canonical URL, the audience tokens must name.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Checks `token`: valid, from the issuer, for mcpx. Scopes are the caller's to check.
    ///
    /// # Errors
    /// Why the token is refused, or why the issuer's keys are not known.
    pub async fn check(&self, token: &str) -> Result<Grant, BearerError> {
        let expected = Expected {
            issuer: &self.config.issuer,
            audience: &self.audience,
        };
        let keys = self.keys(None).await?;
        match verify(token, &keys, &expected) {
            Err(BearerError::UnknownKey { kid }) => {
                // Perhaps the issuer rotated its keys: fetch them again, if not just done.
                let keys = self.keys(Some(kid.as_deref())).await?;
                verify(token, &keys, &expected)
            }
            checked => checked,
        }
    }

    /// The cached keys, fetched when there are none, they are old, or `unknown` (a token's
    /// key id, `Some(None)` for a token without one) is not among them; at most once per
    /// [`KEY_REFRESH_INTERVAL`].
    async fn keys(&self, unknown: Option<Option<&str>>) -> Result<Arc<Keys>, BearerError> {
        let mut cache = self.cache.lock().await;
        let stale = cache.fetched.is_none_or(|at| at.elapsed() >= KEYS_MAX_AGE);
        let missing = match (unknown, &cache.keys) {
            (Some(Some(kid)), Some(keys)) => !keys.has_kid(kid),
            (Some(None), _) => true,
            _ => false,
        };
        let recent = cache
            .tried
            .is_some_and(|at| at.elapsed() < self.refresh_interval);
        if let Some(keys) = &cache.keys {
            if (!stale && !missing) || recent {
                return Ok(keys.clone());
            }
        } else if recent {
            return Err(BearerError::Unreachable {
                url: self.config.issuer.clone(),
                reason: "the last fetch failed; not tried again yet".into(),
            });
        }
        cache.tried = Some(Instant::now());
        let jwks_uri = match &cache.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri = self.discover().await?;
                cache.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let fetched = match self.fetch(&jwks_uri, "JWKS", MAX_JWKS_BYTES).await {
            Ok(bytes) => Keys::parse(&bytes),
            Err(e) => Err(e),
        };
        match fetched {
            Ok(keys) => {
                let keys = Arc::new(keys);
                tracing::info!(issuer = %self.config.issuer, ?keys, "the issuer's keys fetched");
                cache.keys = Some(keys.clone());
                cache.fetched = Some(Instant::now());
                Ok(keys)
            }
            // Keys that worked stay in use while the issuer is unreachable.
            Err(e) => match &cache.keys {
                Some(keys) => {
                    tracing::warn!(%e, "the issuer's keys could not be fetched again; the last ones stay");
                    Ok(keys.clone())
                }
                None => Err(e),
            },
        }
    }

    /// The issuer's `jwks_uri`, from the first metadata document found.
    async fn discover(&self) -> Result<Url, BearerError> {
        let mut last = None;
        for url in metadata_urls(&self.issuer) {
            match self.fetch(&url, "metadata", MAX_METADATA_BYTES).await {
                Ok(bytes) => return jwks_uri(&bytes, &self.config.issuer),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| BearerError::Metadata("no metadata URL".into())))
    }

    async fn fetch(
        &self,
        url: &Url,
        what: &'static str,
        limit: usize,
    ) -> Result<Vec<u8>, BearerError> {
        let unreachable = |reason: String| BearerError::Unreachable {
            url: url.to_string(),
            reason,
        };
        let mut response = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        if !response.status().is_success() {
            return Err(unreachable(format!("HTTP {}", response.status())));
        }
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(BearerError::TooLarge { what, limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unreachable(e.to_string()))?
        {
            if body.len() + chunk.len() > limit {
                return Err(BearerError::TooLarge { what, limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Where the metadata of `issuer` may be, in the order the MCP specification lists: RFC 8414
/// (the well-known path before the issuer's path), OpenID Connect the same way, then OpenID
/// Connect appended to the issuer's path.
pub(crate) fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| {
        let mut url = issuer.clone();
        url.set_path(&p);
        url
    };
    let mut urls = vec![
        at(format!("/.well-known/oauth-authorization-server{path}")),
        at(format!("/.well-known/openid-configuration{path}")),
    ];
    if !path.is_empty() {
        urls.push(at(format!("{path}/.well-known/openid-configuration")));
    }
    urls
}

/// The `jwks_uri` of a metadata document, which must name `issuer` as its issuer and a
/// `jwks_uri` on `https` (or the issuer's own scheme and host).
pub(crate) fn jwks_uri(metadata: &[u8], issuer: &str) -> Result<Url, BearerError> {
    if metadata.len() > MAX_METADATA_BYTES {
        return Err(BearerError::TooLarge {
            what: "metadata",
            limit: MAX_METADATA_BYTES,
        });
    }
    let doc: serde_json::Value = serde_json::from_slice(metadata)
        .map_err(|e| BearerError::Metadata(format!("not JSON: {e}")))?;
    let named = doc.get("issuer").and_then(|v| v.as_str());
    if named != Some(issuer) {
        return Err(BearerError::Metadata(format!(
            "it names issuer {}, not {issuer}",
            named.unwrap_or("none")
        )));
    }
    let uri = doc
        .get("jwks_uri")
        .and_then(|v| v.as_str())
        .ok_or_else(|| BearerError::Metadata("no jwks_uri".into()))?;
    let uri = Url::parse(uri).map_err(|e| BearerError::Metadata(format!("jwks_uri: {e}")))?;
    let issuer_url = Url::parse(issuer).map_err(|e| BearerError::Metadata(e.to_string()))?;
    if uri.scheme() != "https" && uri.origin() != issuer_url.origin() {
        return Err(BearerError::Metadata(format!(
            "jwks_uri {uri} is neither https nor on the issuer's origin"
        )));
    }
    Ok(uri)
}
