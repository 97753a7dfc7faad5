//! What an error or a log line shows of an HTTP endpoint: where it is, never what it holds.
//!
//! A server's URL may carry a credential (`https://bot:PASS@host/mcp`, `?api_key=KEY`), and its
//! headers do (`Authorization: Bearer TOKEN`). An error of the transport reaches the caller's
//! caller: a gateway hands it to the client whose call failed, a team member who must not
//! learn the server's key. So an error names the endpoint by its [`shown_url`] (the user's
//! name and password, and every query value, replaced by [`REDACTED`]), and what the server
//! said back is scrubbed of the endpoint's own secrets (it may echo the key it was sent).

use std::borrow::Cow;
use std::sync::Mutex;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use percent_encoding::percent_decode_str;
use reqwest::Url;

/// What a secret is replaced with wherever text is shown.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not searched for: a one- or two-character value (`${DEBUG}`
/// set to `1`, `?v=2`) would blank every digit of every line and hide nothing worth hiding.
pub const MIN_SECRET_CHARS: usize = 4;

/// `url` as errors and logs show it: its scheme, host, port and path as they are; a user name
/// or password as one [`REDACTED`] before the `@`; each query value (or a query member with no
/// `=`, a bare key) as [`REDACTED`], the member names kept; no fragment.
///
/// ```
/// let url = reqwest::Url::parse("https://bot:pw@api.example.com:8443/mcp?key=s3cr3t&v").unwrap();
/// assert_eq!(
///     mcpclient::shown_url(&url),
///     "https://[redacted]@api.example.com:8443/mcp?key=[redacted]&[redacted]"
/// );
/// ```
pub fn shown_url(url: &Url) -> String {
    let mut shown = format!("{}://", url.scheme());
    if !url.username().is_empty() || url.password().is_some() {
        shown.push_str(REDACTED);
        shown.push('@');
    }
    if let Some(host) = url.host_str() {
        shown.push_str(host);
    }
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    shown.push_str(url.path());
    if let Some(query) = url.query() {
        let members: Vec<String> = query
            .split('&')
            .filter(|member| !member.is_empty())
            .map(|member| match member.split_once('=') {
                Some((name, "")) => format!("{name}="),
                Some((name, _)) => format!("{name}={REDACTED}"),
                None => REDACTED.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&members.join("&"));
    }
    shown
}

/// The `Authorization` values an OAuth provider gave that an endpoint remembers, to scrub them
/// from what the server says back: the newest; an older token is no longer sent.
pub(crate) const MAX_REMEMBERED_CREDENTIALS: usize = 4;

/// An endpoint as the transport shows it: its [`shown_url`], and the secrets its URL and
/// headers hold, to be scrubbed from what the server says back.
pub(crate) struct Endpoint {
    shown: String,
    /// Longest first, so that a secret holding another is replaced whole.
    secrets: Vec<String>,
    /// The `Authorization` values given for it since ([`Endpoint::sent`]), newest last, at
    /// most [`MAX_REMEMBERED_CREDENTIALS`], each with its credential alone after it.
    sent: Mutex<Vec<(String, String)>>,
}

/// Headers that never carry a credential: their values are not scrubbed (`application/json`
/// blanked out of every error would hide what went wrong and nothing worth hiding).
const PLAIN_HEADERS: [&str; 5] = [
    "accept",
    "accept-language",
    "content-type",
    "user-agent",
    "mcp-protocol-version",
];

/// `value`'s credential alone: its last word (`Bearer TOKEN`, `DPoP TOKEN`).
fn credential(value: &str) -> &str {
    value
        .trim()
        .rsplit_once(char::is_whitespace)
        .map_or(value, |(_, last)| last)
}

impl Endpoint {
    /// The endpoint at `url`, sent `headers` with each request.
    pub(crate) fn new(url: &Url, headers: &[(String, String)]) -> Endpoint {
        let mut secrets = Vec::new();
        // The HTTP library sends a URL's user and password as `Authorization: Basic`, which a
        // server may echo.
        if !url.username().is_empty() || url.password().is_some() {
            let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
            let user = decode(url.username());
            let password = decode(url.password().unwrap_or_default());
            secrets.push(STANDARD.encode(format!("{user}:{password}")));
        }
        let mut spelt = |raw: &str| {
            secrets.push(raw.to_owned());
            if let Cow::Owned(decoded) = percent_decode_str(raw).decode_utf8_lossy() {
                secrets.push(decoded);
            }
        };
        spelt(url.username());
        spelt(url.password().unwrap_or_default());
        for member in url.query().unwrap_or_default().split('&') {
            match member.split_once('=') {
                Some((_, value)) => {
                    spelt(value);
                    // A form's `+` is a space.
                    spelt(&value.replace('+', " "));
                }
                None => spelt(member),
            }
        }
        for (name, value) in headers {
            if PLAIN_HEADERS
                .iter()
                .any(|plain| name.eq_ignore_ascii_case(plain))
            {
                continue;
            }
            secrets.push(value.clone());
            // `Bearer TOKEN`, `Basic CREDENTIALS`: the credential alone as well.
            secrets.push(credential(value).to_owned());
        }
        secrets.retain(|s| s.chars().count() >= MIN_SECRET_CHARS);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Endpoint {
            shown: shown_url(url),
            secrets,
            sent: Mutex::default(),
        }
    }

    /// Remembers the `Authorization` value an OAuth provider gave for a request, to scrub it
    /// (and its token alone) from what the server says back.
    pub(crate) fn sent(&self, value: &str) {
        let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        if sent.last().is_some_and(|(last, _)| last == value) {
            return;
        }
        sent.retain(|(kept, _)| kept != value);
        sent.push((value.to_owned(), credential(value).to_owned()));
        if sent.len() > MAX_REMEMBERED_CREDENTIALS {
            sent.remove(0);
        }
    }

    /// The URL as errors and logs show it.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// `text` with each of the endpoint's secrets replaced by [`REDACTED`].
    pub(crate) fn scrub(&self, text: String) -> String {
        let mut text = text;
        let sent = self.sent.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let given = sent.iter().flat_map(|(value, token)| [value, token]);
        for secret in given.chain(&self.secrets) {
            if secret.chars().count() >= MIN_SECRET_CHARS && text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn a_url_without_secrets_is_shown_as_it_is() {
        assert_eq!(
            shown_url(&url("http://127.0.0.1:3000/mcp")),
            "http://127.0.0.1:3000/mcp"
        );
        assert_eq!(
            shown_url(&url("https://example.com")),
            "https://example.com/"
        );
        assert_eq!(
            shown_url(&url("https://example.com/mcp?empty=&&x=")),
            "https://example.com/mcp?empty=&x="
        );
    }

    #[test]
    fn user_password_query_values_and_fragment_are_not_shown() {
        let shown = shown_url(&url(
            "https://bot:ab%2Fcd%3Def@api.example.com/v1/mcp?api_key=sk_live_123&bare#frag",
        ));
        assert_eq!(
            shown,
            "https://[redacted]@api.example.com/v1/mcp?api_key=[redacted]&[redacted]"
        );
        assert_eq!(
            shown_url(&url("https://token123@api.example.com/")),
            "https://[redacted]@api.example.com/"
        );
    }

    #[test]
    fn what_the_server_says_back_is_scrubbed_of_the_endpoints_secrets_in_each_spelling() {
        let endpoint = Endpoint::new(
            &url("https://bot:ab%2Fcd%3Def@h/mcp?key=k%20e+y&v=1&sk_bare_token"),
            &[
                ("Authorization".into(), "Bearer tok-en-123".into()),
                ("X-Api-Key".into(), "xyz-987".into()),
                ("Accept".into(), "application/json".into()),
            ],
        );
        assert_eq!(
            endpoint.shown(),
            "https://[redacted]@h/mcp?key=[redacted]&v=[redacted]&[redacted]"
        );
        let said = "bad ab/cd=ef ab%2Fcd%3Def k e y k%20e+y v=1 sk_bare_token \
                    Bearer tok-en-123 tok-en-123 xyz-987 bot application/json"
            .to_owned();
        assert_eq!(
            endpoint.scrub(said),
            "bad [redacted] [redacted] [redacted] [redacted] v=1 [redacted] \
             [redacted] [redacted] [redacted] bot application/json"
        );
    }

    #[test]
    fn the_newest_oauth_credentials_are_scrubbed_too() {
        let endpoint = Endpoint::new(&url("https://h/mcp"), &[]);
        for n in 0..=MAX_REMEMBERED_CREDENTIALS {
            endpoint.sent(&format!("Bearer access-token-{n}"));
        }
        let said = (0..=MAX_REMEMBERED_CREDENTIALS)
            .map(|n| format!("access-token-{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut want = vec!["access-token-0".to_owned()];
        want.extend((1..=MAX_REMEMBERED_CREDENTIALS).map(|_| REDACTED.to_owned()));
        assert_eq!(endpoint.scrub(said), want.join(" "));
        assert_eq!(
            endpoint.scrub("got DPoP x-1 and Bearer access-token-4".to_owned()),
            "got DPoP x-1 and [redacted]"
        );
    }
}
