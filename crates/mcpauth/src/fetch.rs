//! HTTP for authorization: metadata documents and token requests, bounded in size and time,
//! and never following a redirect (a metadata document or a token must come from the URL that
//! was asked).

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::dpop::{DpopKey, USE_DPOP_NONCE};
use crate::AuthError;
use mcpclient::{DPOP_HEADER, DPOP_NONCE_HEADER};

/// The largest metadata document (resource, authorization server, registration) read.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// The largest token endpoint answer read.
pub const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;

/// How long one request to a metadata, registration or token endpoint may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The client the crate's requests go through.
pub(crate) fn client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| AuthError::Store(format!("HTTP client: {e}")))
}

/// What a GET of a metadata document gave.
pub(crate) enum Fetched {
    /// A JSON object.
    Found(Value),
    /// Not there (an error status): the next place may have it.
    Missing(u16),
}

/// GETs the JSON document at `url`.
pub(crate) async fn get_json(http: &reqwest::Client, url: &str) -> Result<Fetched, AuthError> {
    let failed = |message: String| AuthError::Metadata {
        url: url.to_owned(),
        message,
    };
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    if !response.status().is_success() {
        return Ok(Fetched::Missing(response.status().as_u16()));
    }
    let body = read_bounded(response, MAX_METADATA_BYTES)
        .await
        .map_err(failed)?;
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(Fetched::Found(value)),
        Ok(_) => Err(failed("not a JSON object".to_owned())),
        Err(e) => Err(failed(format!("not JSON: {e}"))),
    }
}

/// The body of `response`, refused past `limit` bytes.
pub(crate) async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > limit {
            return Err(format!("the answer is over {limit} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A failed token endpoint exchange, for `oauth2`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HttpError(pub(crate) String);

/// The DPoP key token requests prove, and the authorization server's latest nonce.
#[derive(Clone, Copy)]
pub(crate) struct Dpop<'a> {
    pub(crate) key: &'a DpopKey,
    pub(crate) nonce: &'a Mutex<Option<String>>,
}

/// Sends an `oauth2` request with `http`, reading at most [`MAX_TOKEN_RESPONSE_BYTES`]; with a
/// DPoP proof when `dpop` is given, sent once more with the server's nonce when it asks for one
/// (RFC 9449 §8).
pub(crate) async fn send(
    http: &reqwest::Client,
    dpop: Option<Dpop<'_>>,
    request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, HttpError> {
    let (parts, body) = request.into_parts();
    let url = parts.uri.to_string();
    let mut asked_nonce = false;
    loop {
        let mut builder = http
            .request(parts.method.clone(), &url)
            .headers(parts.headers.clone())
            .body(body.clone());
        if let Some(dpop) = dpop {
            let nonce = dpop.nonce.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let proof = dpop
                .key
                .proof(parts.method.as_str(), &url, None, nonce.as_deref())
                .map_err(|e| HttpError(e.to_string()))?;
            builder = builder.header(DPOP_HEADER, proof);
        }
        let response = builder.send().await.map_err(|e| HttpError(e.to_string()))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = read_bounded(response, MAX_TOKEN_RESPONSE_BYTES)
            .await
            .map_err(HttpError)?;
        let nonce = headers
            .get(DPOP_NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let (Some(dpop), Some(nonce)) = (dpop, nonce) {
            *dpop.nonce.lock().unwrap_or_else(|e| e.into_inner()) = Some(nonce);
            let wants_nonce = status == reqwest::StatusCode::BAD_REQUEST
                && serde_json::from_slice::<Value>(&body)
                    .is_ok_and(|v| v["error"] == USE_DPOP_NONCE);
            if wants_nonce && !asked_nonce {
                asked_nonce = true;
                continue;
            }
        }
        let mut answer = oauth2::HttpResponse::new(body);
        *answer.status_mut() = status;
        *answer.headers_mut() = headers;
        return Ok(answer);
    }
}

/// `oauth2`'s HTTP client: [`send`] through a reqwest client, with DPoP proofs when given.
pub(crate) struct OauthHttp<'a>(pub(crate) &'a reqwest::Client, pub(crate) Option<Dpop<'a>>);

impl<'c> oauth2::AsyncHttpClient<'c> for OauthHttp<'_> {
    type Error = HttpError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, HttpError>> + Send + 'c>,
    >;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(send(self.0, self.1, request))
    }
}
