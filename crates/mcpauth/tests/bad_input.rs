//! A login against a hostile server: an authorization response with a wrong `state` or `iss`,
//! metadata that names another origin, oversized or malformed metadata and token responses.
//! Each is a clear error, the token endpoint is not asked after a bad authorization response,
//! and the credentials file is left as it was, byte for byte.
//!
//! The hostile server is a few canned answers on 127.0.0.1, one connection per request; the
//! "browser" follows the authorization URL to mcpx's loopback listener with the answer the case
//! wants, as the authorization server's redirect would.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcpauth::{
    AuthConfig, AuthError, Authorizer, FileStore, Interaction, Store, MAX_METADATA_BYTES,
    MAX_TOKEN_RESPONSE_BYTES,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The access token the server hands out; no error may show it.
const ACCESS_TOKEN: &str = "at-never-in-an-error-7731";

/// The largest request head the hostile server reads.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Most requests one case makes (probe, metadata, token): the server stops after these.
const MAX_REQUESTS: usize = 16;

/// A canned answer.
#[derive(Clone)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn json_answer(value: serde_json::Value) -> Answer {
    raw(200, value.to_string().into_bytes())
}

fn raw(status: u16, body: Vec<u8>) -> Answer {
    Answer {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body,
    }
}

/// The hostile server's answers by `METHOD PATH`, and the requests it saw.
struct Hostile {
    base: String,
    routes: HashMap<String, Answer>,
    /// mcpx has no client id from the config: it registers (RFC 7591).
    registers: bool,
}

impl Hostile {
    /// The answers of an honest server at `base`: the MCP endpoint's 401, resource metadata,
    /// authorization server metadata that promises `iss`, and a token.
    fn honest(base: &str) -> Hostile {
        let mut routes = HashMap::new();
        let mut challenge = raw(401, Vec::new());
        challenge.headers.push((
            "www-authenticate".into(),
            format!(r#"Bearer resource_metadata="{base}/prm""#),
        ));
        routes.insert("POST /mcp".into(), challenge);
        routes.insert(
            "GET /prm".into(),
            json_answer(
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            ),
        );
        routes.insert(
            "GET /.well-known/oauth-authorization-server".into(),
            json_answer(json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"), "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true})),
        );
        routes.insert(
            "POST /token".into(),
            json_answer(
                json!({"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600}),
            ),
        );
        Hostile {
            base: base.to_owned(),
            routes,
            registers: false,
        }
    }
}

/// Serves `routes` on `listener` until [`MAX_REQUESTS`]; records each `METHOD PATH`.
async fn serve(
    listener: tokio::net::TcpListener,
    routes: HashMap<String, Answer>,
    seen: Arc<Mutex<Vec<String>>>,
) {
    for _ in 0..MAX_REQUESTS {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let mut head = Vec::new();
        let mut buffer = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let mut words = head.split(' ');
        let method = words.next().unwrap_or_default();
        let target = words.next().unwrap_or_default();
        let path = target.split('?').next().unwrap_or_default();
        let key = format!("{method} {path}");
        seen.lock().unwrap().push(key.clone());
        let answer = routes
            .get(&key)
            .cloned()
            .unwrap_or_else(|| raw(404, Vec::new()));
        let mut text = format!(
            "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
            answer.status,
            answer.body.len()
        );
        for (name, value) in &answer.headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str("\r\n");
        // The body is not waited for (a token request's form is small and was read with the
        // head, or is dropped with the connection).
        let _ = stream.write_all(text.as_bytes()).await;
        let _ = stream.write_all(&answer.body).await;
        let _ = stream.shutdown().await;
    }
}

/// What the "browser" sends back to the loopback listener.
#[derive(Clone, Copy)]
enum Browser {
    /// The state sent, and `iss` as the server's issuer.
    Honest,
    /// Another state.
    WrongState,
    /// `iss` of another server.
    WrongIss,
}

/// Follows the authorization `url` to its `redirect_uri` with a code, as `browser` says.
fn follow(url: &str, browser: Browser, issuer: &str) {
    let url = url::Url::parse(url).unwrap();
    let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
    let redirect = url::Url::parse(&query["redirect_uri"]).unwrap();
    let state = match browser {
        Browser::WrongState => "forged-state".to_owned(),
        _ => query["state"].clone(),
    };
    let iss = match browser {
        Browser::WrongIss => "https://evil.example".to_owned(),
        _ => issuer.to_owned(),
    };
    let target = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("code", "code-1")
        .append_pair("state", &state)
        .append_pair("iss", &iss)
        .finish();
    let port = redirect.port().unwrap();
    let path = redirect.path().to_owned();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "GET {path}?{target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
    });
}

/// One login against `hostile` (made from the honest server by `change`) with `browser`:
/// its result, the requests the server saw, and whether the credentials file is as it was.
async fn login(
    change: impl FnOnce(&mut Hostile),
    browser: Browser,
) -> (Result<bool, AuthError>, Vec<String>, bool) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let mut hostile = Hostile::honest(&base);
    change(&mut hostile);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = tokio::spawn(serve(listener, hostile.routes.clone(), seen.clone()));

    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().join("credentials.json"));
    store.set("tokens http://elsewhere/mcp", "kept").unwrap();
    let before = std::fs::read(store.path()).unwrap();
    let issuer = hostile.base.clone();
    let interaction =
        Interaction::Browser(Arc::new(move |url: &str| follow(url, browser, &issuer)));
    let config = AuthConfig {
        client_id: (!hostile.registers).then(|| "test-client".into()),
        ..AuthConfig::default()
    };
    let authorizer = Authorizer::new(
        &format!("{base}/mcp"),
        config,
        Arc::new(store.clone()),
        interaction,
    )
    .unwrap();
    let result = authorizer.login().await;
    server.abort();
    let untouched = std::fs::read(store.path()).unwrap() == before;
    let seen = seen.lock().unwrap().clone();
    (result, seen, untouched)
}

/// The error of a login that must fail, checked to leave the file as it was and to show no
/// token.
async fn refused(change: impl FnOnce(&mut Hostile), browser: Browser) -> (String, Vec<String>) {
    let (result, seen, untouched) = login(change, browser).await;
    let error = result.expect_err("the login must fail").to_string();
    assert!(untouched, "the credentials file changed after: {error}");
    assert!(!error.contains(ACCESS_TOKEN), "{error}");
    (error, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_honest_server_stores_tokens() {
    // The harness itself: the same login with nothing wrong succeeds and writes the file.
    let (result, seen, untouched) = login(|_| {}, Browser::Honest).await;
    assert!(result.unwrap());
    assert!(!untouched);
    assert!(seen.contains(&"POST /token".to_owned()), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_state_or_iss_is_refused_before_the_token_request() {
    let (error, seen) = refused(|_| {}, Browser::WrongState).await;
    assert_eq!(
        error,
        "authorization response: its `state` is not the one sent"
    );
    assert!(!seen.contains(&"POST /token".to_owned()), "{seen:?}");
    let (error, seen) = refused(|_| {}, Browser::WrongIss).await;
    assert!(
        error.starts_with("authorization response: it names the issuer `https://evil.example`, not `http://127.0.0.1:"),
        "{error}"
    );
    assert!(!seen.contains(&"POST /token".to_owned()), "{seen:?}");
    // A client registered for the login is not kept when the login fails.
    let (error, seen) = refused(
        |h| {
            h.registers = true;
            let metadata = h
                .routes
                .get_mut("GET /.well-known/oauth-authorization-server")
                .unwrap();
            let mut doc: serde_json::Value = serde_json::from_slice(&metadata.body).unwrap();
            doc["registration_endpoint"] = json!(format!("{}/register", h.base));
            metadata.body = doc.to_string().into_bytes();
            h.routes.insert(
                "POST /register".into(),
                json_answer(json!({"client_id": "registered-1"})),
            );
        },
        Browser::WrongState,
    )
    .await;
    assert_eq!(
        error,
        "authorization response: its `state` is not the one sent"
    );
    assert!(seen.contains(&"POST /register".to_owned()), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_naming_another_origin_is_refused() {
    let (error, seen) = refused(
        |h| {
            h.routes.insert(
                "GET /prm".into(),
                json_answer(json!({"resource": "https://evil.example/mcp",
                    "authorization_servers": [h.base.clone()]})),
            );
        },
        Browser::Honest,
    )
    .await;
    assert!(
        error.contains("/prm: its resource `https://evil.example/mcp` is not the server asked"),
        "{error}"
    );
    assert!(!seen
        .iter()
        .any(|s| s.contains("oauth-authorization-server")));
    let (error, _) = refused(
        |h| {
            let metadata = h
                .routes
                .get_mut("GET /.well-known/oauth-authorization-server")
                .unwrap();
            let mut doc: serde_json::Value = serde_json::from_slice(&metadata.body).unwrap();
            doc["issuer"] = json!("https://evil.example");
            metadata.body = doc.to_string().into_bytes();
        },
        Browser::Honest,
    )
    .await;
    assert!(
        error.contains("its issuer `https://evil.example` is not `http://127.0.0.1:"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_or_malformed_metadata_is_refused() {
    let padding = " ".repeat(MAX_METADATA_BYTES);
    let (error, _) = refused(
        |h| {
            let body = format!(r#"{{"resource": "{}/mcp"{padding}}}"#, h.base);
            h.routes
                .insert("GET /prm".into(), raw(200, body.into_bytes()));
        },
        Browser::Honest,
    )
    .await;
    assert!(
        error.ends_with(&format!(
            "/prm: the answer is over {MAX_METADATA_BYTES} bytes"
        )),
        "{error}"
    );
    let (error, _) = refused(
        |h| {
            h.routes.insert(
                "GET /.well-known/oauth-authorization-server".into(),
                raw(200, br#"{"issuer": "#.to_vec()),
            );
        },
        Browser::Honest,
    )
    .await;
    assert!(
        error.contains("/.well-known/oauth-authorization-server: not JSON: EOF"),
        "{error}"
    );
    let (error, _) = refused(
        |h| {
            h.routes.insert(
                "GET /.well-known/oauth-authorization-server".into(),
                json_answer(json!({"issuer": h.base, "authorization_endpoint": "x"})),
            );
        },
        Browser::Honest,
    )
    .await;
    assert!(
        error.contains("not authorization server metadata: missing field `token_endpoint`"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_or_malformed_token_responses_are_refused() {
    let (error, _) = refused(
        |h| {
            let body = format!(
                r#"{{"access_token": "{ACCESS_TOKEN}", "token_type": "Bearer", "x": "{}"}}"#,
                "y".repeat(MAX_TOKEN_RESPONSE_BYTES)
            );
            h.routes
                .insert("POST /token".into(), raw(200, body.into_bytes()));
        },
        Browser::Honest,
    )
    .await;
    assert!(
        error.starts_with("token request to http://127.0.0.1:")
            && error.ends_with(&format!(
                "/token: the answer is over {MAX_TOKEN_RESPONSE_BYTES} bytes"
            )),
        "{error}"
    );
    for body in [
        format!(r#"{{"access_token": "{ACCESS_TOKEN}"}}"#),
        format!(r#"{{"access_token": "{ACCESS_TOKEN}", "token_type": "Bearer""#),
        "<html>not a token</html>".to_owned(),
    ] {
        let (error, _) = refused(
            |h| {
                h.routes
                    .insert("POST /token".into(), raw(200, body.into_bytes()));
            },
            Browser::Honest,
        )
        .await;
        assert!(
            error.contains("/token: the answer is not a token response"),
            "{error}"
        );
    }
}
