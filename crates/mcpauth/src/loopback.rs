//! The redirect target of a login: a listener on 127.0.0.1 at a port the system picks (RFC
//! 8252 §7.3), which takes the browser's one `GET /callback?…` and answers it with a short page.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::AuthError;

/// How long a login waits for the browser to come back.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// The largest request head read from the browser.
pub const MAX_CALLBACK_BYTES: usize = 16 * 1024;

/// Most connections taken while waiting for the callback (a browser also asks for a favicon).
pub const MAX_CALLBACK_CONNECTIONS: usize = 32;

/// How long one connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

const CALLBACK_PATH: &str = "/callback";

/// The parameters of the authorization response.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Callback {
    /// `code`.
    pub code: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `iss` (RFC 9207).
    pub iss: Option<String>,
    /// `error`.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl Callback {
    /// The parameters of the query string `query`.
    pub fn from_query(query: &str) -> Callback {
        let mut callback = Callback::default();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match name.as_ref() {
                "code" => &mut callback.code,
                "state" => &mut callback.state,
                "iss" => &mut callback.iss,
                "error" => &mut callback.error,
                "error_description" => &mut callback.error_description,
                _ => continue,
            };
            *slot = Some(value.into_owned());
        }
        callback
    }
}

/// A bound loopback listener.
#[derive(Debug)]
pub struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Loopback {
    /// Listens on 127.0.0.1 at a free port.
    ///
    /// # Errors
    /// [`AuthError::Io`] when no port can be bound.
    pub async fn bind() -> Result<Loopback, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// The `redirect_uri` to send.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the browser's callback, [`LOGIN_TIMEOUT`] at most.
    ///
    /// # Errors
    /// [`AuthError::Callback`] when it does not come in time, or only other requests do.
    pub async fn wait(self) -> Result<Callback, AuthError> {
        let waited = tokio::time::timeout(LOGIN_TIMEOUT, async {
            for _ in 0..MAX_CALLBACK_CONNECTIONS {
                let (mut stream, _) = self.listener.accept().await?;
                let head = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await
                {
                    Ok(Ok(head)) => head,
                    _ => continue,
                };
                let target = head
                    .lines()
                    .next()
                    .and_then(|line| line.strip_prefix("GET "))
                    .and_then(|rest| rest.split(' ').next())
                    .unwrap_or_default();
                let (path, query) = target.split_once('?').unwrap_or((target, ""));
                if path != CALLBACK_PATH {
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    continue;
                }
                let page = "<!doctype html><title>mcpx</title><p>mcpx got the answer; you can close this window.</p>";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
                return Ok(Callback::from_query(query));
            }
            Err(AuthError::Callback(format!(
                "{MAX_CALLBACK_CONNECTIONS} requests came to {} and none was the callback",
                self.redirect_uri
            )))
        })
        .await;
        waited.unwrap_or_else(|_| {
            Err(AuthError::Callback(format!(
                "the browser did not come back within {} s",
                LOGIN_TIMEOUT.as_secs()
            )))
        })
    }
}

/// The request head, up to the blank line, [`MAX_CALLBACK_BYTES`] at most.
async fn read_head(stream: &mut tokio::net::TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).await?;
        if n == 0 || head.len() + n > MAX_CALLBACK_BYTES {
            break;
        }
        head.extend_from_slice(&buffer[..n]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters() {
        let callback = Callback::from_query("code=abc&state=s%20t&iss=https%3A%2F%2Fas&x=1");
        assert_eq!(callback.code.as_deref(), Some("abc"));
        assert_eq!(callback.state.as_deref(), Some("s t"));
        assert_eq!(callback.iss.as_deref(), Some("https://as"));
        assert_eq!(callback.error, None);
    }

    #[tokio::test]
    async fn takes_the_callback_after_other_requests() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:"));
        let port: u16 = uri["http://127.0.0.1:".len()..uri.len() - CALLBACK_PATH.len()]
            .parse()
            .unwrap();
        let waiting = tokio::spawn(loopback.wait());
        for target in ["/favicon.ico", "/callback?code=c1&state=s1"] {
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            stream
                .write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            let want = if target.starts_with("/callback") {
                "200"
            } else {
                "404"
            };
            assert!(answer.starts_with(&format!("HTTP/1.1 {want}")), "{answer}");
        }
        let callback = waiting.await.unwrap().unwrap();
        assert_eq!(callback.code.as_deref(), Some("c1"));
        assert_eq!(callback.state.as_deref(), Some("s1"));
    }
}
