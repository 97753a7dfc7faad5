//! An HTTP transport's errors keep the endpoint's secrets out: the password and query values of
//! its URL and the values of its headers, however the server or the HTTP library spells them.
//! A gateway hands these errors to the client whose call failed, who must not learn the
//! server's key. The server here is a real HTTP/1.1 server on loopback (a std thread, raw
//! bytes) that answers 502 with everything it was sent: the request line and every header.

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::Duration;

use mcpclient::{Frame, HttpConfig, HttpTransport, Transport, TransportError};
use serde_json::json;

/// How long anything here waits for what should come.
const WAIT: Duration = Duration::from_secs(10);

const PASSWORD: &str = "pa/ss=w0rd";
const PASSWORD_IN_URL: &str = "pa%2Fss%3Dw0rd";
const KEY: &str = "sk_live_query_key_123";
const HEADER_TOKEN: &str = "header-token-456";
const API_KEY: &str = "x-api-key-789";

/// The base64 of `bot:pa/ss=w0rd`, as `Authorization: Basic` carries the URL's user and
/// password.
const BASIC: &str = "Ym90OnBhL3NzPXcwcmQ=";

/// The secrets, in every spelling the server or an HTTP library could use.
const SPELLINGS: [&str; 6] = [PASSWORD, PASSWORD_IN_URL, KEY, HEADER_TOKEN, API_KEY, BASIC];

/// A server that answers one request with 502 and the whole request (its head) as the body.
fn echoing_server() -> (String, JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let done = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let (head, _) = common::read_whole(&mut stream).expect("a request");
        let body = format!("you sent: {head}");
        let answer = format!(
            "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(answer.as_bytes()).unwrap();
        head
    });
    (format!("{address}"), done)
}

fn config(address: &str) -> HttpConfig {
    HttpConfig {
        url: format!("http://bot:{PASSWORD_IN_URL}@{address}/mcp?api_key={KEY}&v=1"),
        headers: vec![
            // Not `Authorization`: that one the HTTP library fills from the URL's user and
            // password, as `Basic`.
            ("X-Auth".into(), format!("Bearer {HEADER_TOKEN}")),
            ("X-Api-Key".into(), API_KEY.into()),
        ],
        auth: None,
    }
}

/// Sends a ping and returns the error it gets.
async fn failed_ping(config: &HttpConfig) -> TransportError {
    let mut transport = HttpTransport::new(config).unwrap();
    let ping = Frame::from_value(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    transport.send(&ping).await.unwrap();
    match tokio::time::timeout(WAIT, transport.receive())
        .await
        .expect("an error in time")
        .expect("the transport is open")
    {
        Ok(frame) => panic!("an answer where an error was due: {}", frame.text()),
        Err(error) => error,
    }
}

fn assert_no_secret(text: &str) {
    for secret in SPELLINGS {
        assert!(!text.contains(secret), "`{secret}` in: {text}");
    }
}

/// The server echoes the request (its URL and every header) in its 502: the error names the
/// endpoint and the status, and shows the server's words, with no secret in any spelling.
#[test]
fn an_error_status_shows_the_servers_words_without_the_endpoints_secrets() {
    common::runtime().block_on(async {
        let (address, server) = echoing_server();
        let config = config(&address);
        let error = failed_ping(&config).await;
        let head = server.join().unwrap();
        // The server was sent every secret: the test would be empty otherwise.
        for secret in [BASIC, KEY, HEADER_TOKEN, API_KEY] {
            assert!(head.contains(secret), "`{secret}` not sent: {head}");
        }
        let TransportError::Http {
            url,
            status,
            message,
            ..
        } = &error
        else {
            panic!("not an HTTP error: {error}");
        };
        assert_eq!(*status, Some(502));
        assert_eq!(
            url,
            &format!("http://[redacted]@{address}/mcp?api_key=[redacted]&v=[redacted]")
        );
        assert!(
            message.starts_with("HTTP 502 Bad Gateway: you sent: POST /mcp?api_key=[redacted]&v=1"),
            "{message}"
        );
        assert!(message.contains("[redacted]"), "{message}");
        let shown = error.to_string();
        assert_no_secret(&shown);
        assert_no_secret(&format!("{error:?}"));
        assert_no_secret(&format!("{config:?}"));
    });
}

/// Nothing listens: the HTTP library's error, which names the whole URL, shows no secret.
#[test]
fn a_refused_connection_shows_no_secret_of_the_url() {
    common::runtime().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        drop(listener);
        let error = failed_ping(&config(&address)).await;
        assert!(
            matches!(error, TransportError::Http { status: None, .. }),
            "{error}"
        );
        let shown = error.to_string();
        assert!(
            shown.contains(&format!("POST http://[redacted]@{address}/mcp")),
            "{shown}"
        );
        assert_no_secret(&shown);
        assert_no_secret(&format!("{error:?}"));
    });
}

/// A URL that does not parse is not quoted in the error (it may hold a credential).
#[test]
fn a_url_that_does_not_parse_is_not_quoted() {
    let config = HttpConfig {
        url: format!("http://bot:{KEY}@[not-a-host/mcp"),
        headers: Vec::new(),
        auth: None,
    };
    let Err(error) = HttpTransport::new(&config) else {
        panic!("a bad URL was taken");
    };
    let shown = error.to_string();
    assert!(shown.contains("does not parse"), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!format!("{config:?}").contains(KEY));
}
