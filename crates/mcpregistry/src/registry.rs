//! The registry's HTTP API (v0.1): `GET /v0.1/servers?search=WORDS&version=latest` and `GET
//! /v0.1/servers/{name}/versions/latest`. Every request has a timeout, every answer a size
//! limit read chunk by chunk, so a registry that stalls or sends without end costs at most
//! [`REQUEST_TIMEOUT`] and [`MAX_RESPONSE_BYTES`].

use std::time::Duration;

use serde_json::Value;

use crate::error::Error;
use crate::server::ServerJson;

/// The official MCP Registry.
pub const OFFICIAL_REGISTRY: &str = "https://registry.modelcontextprotocol.io";

/// The most bytes read of one answer: a page of servers is tens of KiB.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How long one request may take, connecting included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most redirects followed.
const MAX_REDIRECTS: usize = 5;

/// The most servers a search asks for (one page).
pub const MAX_SEARCH_RESULTS: usize = 30;

/// One server of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Its name (`io.github.user/weather`).
    pub name: String,
    /// Its latest version.
    pub version: String,
    /// What it does.
    pub description: String,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The servers, at most [`MAX_SEARCH_RESULTS`], in the registry's order.
    pub servers: Vec<Summary>,
    /// More servers match than these: the registry has a next page.
    pub more: bool,
}

/// A registry.
#[derive(Debug, Clone)]
pub struct Registry {
    base: String,
    http: reqwest::Client,
}

/// `text` with every byte but the unreserved ones percent-encoded (a path segment or a query
/// value).
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

impl Registry {
    /// The registry at `base` (`https://registry.modelcontextprotocol.io`).
    pub fn new(base: &str) -> Result<Registry, Error> {
        let base = base.trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(Error::BadBase {
                base: base.to_owned(),
            });
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            .user_agent(concat!("mcpx/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Http {
                url: base.to_owned(),
                problem: e.to_string(),
            })?;
        Ok(Registry {
            base: base.to_owned(),
            http,
        })
    }

    /// The registry's address.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// GET `url`: the JSON answer, or why not.
    async fn get(&self, url: &str) -> Result<Value, Error> {
        let failed = |problem: String| Error::Http {
            url: url.to_owned(),
            problem,
        };
        let mut response = self
            .http
            .get(url)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| failed(without_url(&e)))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(Error::NotFound {
                url: url.to_owned(),
            });
        }
        if !status.is_success() {
            return Err(failed(format!("answered {status}")));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| failed(without_url(&e)))?
        {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(Error::TooLarge {
                    url: url.to_owned(),
                    limit: MAX_RESPONSE_BYTES,
                });
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| failed(format!("not JSON ({e})")))
    }

    /// The servers whose name or description holds `words` (latest versions): the first
    /// [`MAX_SEARCH_RESULTS`], and whether more match (the answer's `metadata.nextCursor`).
    pub async fn search(&self, words: &str) -> Result<Found, Error> {
        let url = format!(
            "{}/v0.1/servers?search={}&version=latest&limit={MAX_SEARCH_RESULTS}",
            self.base,
            encode(words)
        );
        let answer = self.get(&url).await?;
        let Some(items) = answer.get("servers").and_then(Value::as_array) else {
            return Err(Error::Http {
                url,
                problem: "no \"servers\" list in the answer".into(),
            });
        };
        let text = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let next_page = answer
            .pointer("/metadata/nextCursor")
            .and_then(Value::as_str)
            .is_some_and(|cursor| !cursor.is_empty());
        let more = next_page || items.len() > MAX_SEARCH_RESULTS;
        let servers = items
            .iter()
            .take(MAX_SEARCH_RESULTS)
            .map(|item| {
                // v0.1 wraps each server.json in {"server": …, "_meta": …}.
                let server = item.get("server").unwrap_or(item);
                Summary {
                    name: text(server, "name"),
                    version: text(server, "version"),
                    description: text(server, "description"),
                }
            })
            .filter(|s| !s.name.is_empty())
            .collect();
        Ok(Found { servers, more })
    }

    /// The latest server.json of `name`, checked against the server.json schema.
    pub async fn latest(&self, name: &str) -> Result<ServerJson, Error> {
        let url = format!(
            "{}/v0.1/servers/{}/versions/latest",
            self.base,
            encode(name)
        );
        let answer = self.get(&url).await?;
        // v0.1 wraps the server.json: {"server": …, "_meta": {OFFICIAL: {"status": …}}}.
        let status = answer
            .pointer("/_meta/io.modelcontextprotocol.registry~1official/status")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let server = match answer.get("server") {
            Some(server) => server.clone(),
            None => answer,
        };
        let server = ServerJson::checked(server)?;
        if server.name() != name {
            return Err(Error::Http {
                url,
                problem: format!(
                    "asked for {name}, the registry answered with {}",
                    server.name()
                ),
            });
        }
        if let Some(status @ ("deleted" | "deprecated")) = status.as_deref() {
            return Err(Error::Unusable {
                name: name.to_owned(),
                why: format!("the registry marks it {status}"),
            });
        }
        Ok(server)
    }
}

/// reqwest's message without the URL it names (the caller names it once).
fn without_url(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    if let Some(url) = err.url() {
        text = text
            .replace(&format!(" ({url})"), "")
            .replace(url.as_str(), "");
    }
    if err.is_timeout() {
        return format!("no answer within {} s", REQUEST_TIMEOUT.as_secs());
    }
    if err.is_connect() {
        return "cannot connect".into();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_encoded_as_one_segment() {
        assert_eq!(
            super::encode("io.github.user/weather"),
            "io.github.user%2Fweather"
        );
        assert_eq!(super::encode("two words"), "two%20words");
    }
}
