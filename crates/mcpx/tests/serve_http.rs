//! `mcpx serve --http`: sessions, the security checks every request passes first, and a real
//! client (mcpclient over Streamable HTTP, every frame checked) calling through it.

mod common;

use common::{config, spec, DRIFTING, MCPX};
use mcpclient::{Client, ClientOptions, HttpConfig, HttpTransport, MAX_FRAME_BYTES};
use mcpspec::Recording;
use mcpx_interop::HttpPeer;
use reqwest::StatusCode;
use serde_json::json;

const TOKEN: &str = "s3cret-token";

/// `mcpx serve --http` on loopback with [`TOKEN`], in front of the demo server and `extra`.
async fn gateway(dir: &std::path::Path, extra: &str) -> HttpPeer {
    let config = config(
        dir,
        &[],
        extra,
        r#"{"allowedOrigins": ["https://app.example.com"]}"#,
    );
    let config = config.display().to_string();
    HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        &[("MCPX_TOKEN", TOKEN)],
        "/mcp",
    )
    .await
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

fn post(http: &reqwest::Client, url: &str, body: String) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
}

/// A POST of `body` with the right token and `headers`.
async fn send(
    http: &reqwest::Client,
    url: &str,
    body: String,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = post(http, url, body).header("authorization", format!("Bearer {TOKEN}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// The status line and headers mcpx answers a POST whose headers declare `length` bytes of
/// body, none of which is sent.
async fn too_large_head(url: &str, session: &str, length: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {length}\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), tcp.read(&mut answer))
        .await
        .expect("answered without the body")
        .unwrap();
    String::from_utf8_lossy(&answer[..read]).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_is_checked_before_it_reaches_the_gateway() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path(), "").await;
    let http = reqwest::Client::new();
    let url = peer.url.as_str();

    let no_token = post(&http, url, initialize()).send().await.unwrap();
    assert_eq!(no_token.status(), StatusCode::UNAUTHORIZED);
    let wrong = post(&http, url, initialize())
        .header("authorization", "Bearer s3cret-tokeN")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");

    let foreign = send(
        &http,
        url,
        initialize(),
        &[("origin", "http://evil.example")],
    )
    .await;
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    for allowed in ["http://localhost:3000", "https://app.example.com"] {
        let ok = send(&http, url, initialize(), &[("origin", allowed)]).await;
        assert_eq!(ok.status(), StatusCode::OK, "{allowed}");
    }

    let opened = send(&http, url, initialize(), &[]).await;
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(session.len(), 32);
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
    let body = opened.text().await.unwrap();
    assert!(body.contains(r#""protocolVersion":"2025-11-25""#), "{body}");

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let in_session = [("mcp-session-id", session.as_str())];
    let without = send(&http, url, list.clone(), &[]).await;
    assert_eq!(without.status(), StatusCode::BAD_REQUEST);
    let bogus = [("mcp-session-id", "0123456789abcdef0123456789abcdef")];
    let unknown = send(&http, url, list.clone(), &bogus).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let odd = [in_session[0], ("mcp-protocol-version", "1999-01-01")];
    let odd_version = send(&http, url, list.clone(), &odd).await;
    assert_eq!(odd_version.status(), StatusCode::BAD_REQUEST);

    // A declared length over the limit is refused before a byte of the body is sent.
    let head = too_large_head(url, &session, MAX_FRAME_BYTES + 1).await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");

    // The session is bound to the address that opened it: from 127.0.0.2 its id is unknown,
    // for every method, and the session goes on for its owner.
    let elsewhere = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let replayed = send(&elsewhere, url, list.clone(), &in_session).await;
    assert_eq!(replayed.status(), StatusCode::NOT_FOUND);
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let replayed = elsewhere
            .request(method.clone(), url)
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(replayed.status(), StatusCode::NOT_FOUND, "{method}");
    }
    // The log is written by a thread of its own: the line comes soon after the answer.
    common::at_once(async {
        while !peer
            .log()
            .contains("a session id presented from another address")
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(!peer.log().contains(&session), "session ids are not logged");

    let listed = send(&http, url, list, &in_session).await;
    assert_eq!(listed.status(), StatusCode::OK);
    // Answered at once with nothing before it: plain JSON, no event stream to parse.
    assert_eq!(listed.headers()["content-type"], "application/json");
    assert!(listed.text().await.unwrap().contains("demo__get-sum"));
    // With progress before the answer: an event stream, the steps first.
    let counted = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "demo__count", "arguments": {"steps": 2}, "_meta": {"progressToken": "t"}}});
    let streamed = send(&http, url, counted.to_string(), &in_session).await;
    assert_eq!(streamed.headers()["content-type"], "text/event-stream");
    let events = streamed.text().await.unwrap();
    let step = events.find("notifications/progress").expect("a step");
    let answer = events.find(r#""id":5"#).expect("the answer");
    assert!(step < answer, "{events}");

    let ended = http
        .delete(url)
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::OK);
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}).to_string();
    let gone = send(&http, url, ping, &in_session).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

/// A client of the 2025 era (which has sessions).
fn legacy() -> ClientOptions {
    ClientOptions {
        protocol: mcpclient::Protocol::Legacy,
        ..ClientOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_calls_through_the_http_front() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path(), "").await;
    let transport = HttpTransport::new(&HttpConfig {
        url: peer.url.clone(),
        headers: vec![("Authorization".into(), format!("Bearer {TOKEN}"))],
        auth: None,
    })
    .unwrap();
    // The 2025 era: a session, and results exactly as the server wrote them (a modern
    // client's also carry resultType, serve_modern.rs).
    let (client, _events) = Client::connect_with(Recording::new(spec, transport), legacy())
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    let (tools, _) = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name() == "demo__get-sum"));

    let summed = client
        .call_tool("demo__get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(
        summed.response.result_text(),
        r#"{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5}}"#
    );
    let drifted = client
        .call_tool("demo__drifting-output", json!({}))
        .await
        .unwrap();
    assert_eq!(drifted.response.result_text(), DRIFTING);
    assert_eq!(
        drifted.warnings.len(),
        1,
        "the client's own check sees the drift too"
    );

    // Other requests pass through as they are.
    let raw = client
        .request("tools/list", None, mcpclient::CallOptions::default())
        .await
        .unwrap();
    assert!(raw.result_text().contains("demo__count"));
    let (mut options, mut progress) = mcpclient::CallOptions::with_progress();
    options.timeout = None;
    let counted = client
        .call_tool_with("demo__count", json!({"steps": 2}), options)
        .await
        .unwrap();
    assert!(counted.response.result_text().contains("counted to 2"));
    let mut steps = Vec::new();
    while let Ok(step) = progress.try_recv() {
        steps.push(step["progress"].clone());
    }
    assert_eq!(steps, [json!(1), json!(2)]);
    drop(client);
    common::demo_transcript(dir.path(), spec);
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn the_clients_credentials_never_reach_a_server() {
    let Some(spec) = spec() else { return };
    let Some(server) = mcpx_interop::python_over_http().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let py = format!(
        r#""py": {{"url": "{}", "headers": {{"X-Upstream-Key": "for-py-only"}}}}"#,
        server.url
    );
    let peer = gateway(dir.path(), &py).await;
    let transport = HttpTransport::new(&HttpConfig {
        url: peer.url.clone(),
        headers: vec![
            ("Authorization".into(), format!("Bearer {TOKEN}")),
            ("X-Client-Secret".into(), "the client's own".into()),
        ],
        auth: None,
    })
    .unwrap();
    let (client, _events) =
        Client::connect_with(Recording::new(spec, transport), ClientOptions::default())
            .await
            .unwrap();
    client.list_tools().await.unwrap();
    let header = |name: &'static str| {
        let client = &client;
        async move {
            let answer = client
                .call_tool("py__header", json!({"name": name}))
                .await
                .unwrap();
            answer.response.result().unwrap()["content"][0]["text"].clone()
        }
    };
    assert_eq!(header("x-upstream-key").await, "for-py-only");
    assert_eq!(header("authorization").await, "");
    assert_eq!(header("x-client-secret").await, "");
}

#[test]
fn listening_beyond_loopback_needs_a_token() {
    let out = std::process::Command::new(MCPX)
        .args([
            "--config",
            "examples/mcpx.json",
            "serve",
            "--http",
            "0.0.0.0:0",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env_remove("MCPX_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("0.0.0.0:0 is not a loopback address: serving it needs a bearer token"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_never_reach_the_log_even_at_trace_level() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A server whose config carries secrets from the environment, in env and in headers.
    let upstream = gateway(dir.path(), "").await;
    let secrets = format!(
        r#""keyed": {{"url": "{}", "headers": {{"Authorization": "Bearer {TOKEN}", "X-Api-Key": "${{MCPX_TEST_HEADER_SECRET}}"}}}},
        "envy": {{"command": "{MCPX}", "args": ["demo-server"], "env": {{"API_KEY": "${{MCPX_TEST_ENV_SECRET}}"}}}}"#,
        upstream.url
    );
    let inner = tempfile::tempdir().unwrap();
    let config = config(inner.path(), &[], &secrets, "")
        .display()
        .to_string();
    let front_token = "front-door-token-0451";
    let peer = HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        &[
            ("MCPX_TOKEN", front_token),
            ("MCPX_LOG", "trace"),
            ("MCPX_TEST_HEADER_SECRET", "header-secret-7781"),
            ("MCPX_TEST_ENV_SECRET", "env-secret-9923"),
        ],
        "/mcp",
    )
    .await;
    // A wrong token, then a session that lists and calls (also through the keyed server).
    let http = reqwest::Client::new();
    let wrong = post(&http, &peer.url, initialize())
        .header("authorization", "Bearer wrong-token-3312")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let transport = HttpTransport::new(&HttpConfig {
        url: peer.url.clone(),
        headers: vec![("Authorization".into(), format!("Bearer {front_token}"))],
        auth: None,
    })
    .unwrap();
    let session = transport.session();
    let (client, _events) = Client::connect_with(Recording::new(spec, transport), legacy())
        .await
        .unwrap();
    let (tools, _) = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name() == "keyed__demo__get-sum"));
    for tool in ["envy__get-sum", "keyed__demo__get-sum"] {
        let summed = client
            .call_tool(tool, json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert!(summed.response.result_text().contains("3"), "{tool}");
    }
    let session = session.id().unwrap();
    drop(client);
    let log = peer.log();
    assert!(
        log.contains("TRACE") || log.contains("DEBUG"),
        "a verbose log: {log}"
    );
    for secret in [
        front_token,
        "wrong-token-3312",
        TOKEN,
        "header-secret-7781",
        "env-secret-9923",
        session.as_str(),
    ] {
        assert!(!log.contains(secret), "`{secret}` is in the log");
    }
}

/// The gateway in front of the demo server and of `f`, one with its misbehaving tools; a client
/// and the id of the session it opened.
async fn faulty_session(dir: &std::path::Path) -> (HttpPeer, reqwest::Client, String) {
    let faulty = format!(r#""f": {{"command": "{MCPX}", "args": ["demo-server", "--faults"]}}"#);
    let peer = gateway(dir, &faulty).await;
    let http = reqwest::Client::new();
    let opened = send(&http, &peer.url, initialize(), &[]).await;
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    (peer, http, session)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_id_in_flight_twice_is_refused_and_the_other_answered() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (peer, http, session) = faulty_session(dir.path()).await;
    let url = peer.url.clone();
    let slow = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "f__slow", "arguments": {"ms": 1500}}})
    .to_string();
    let post = || {
        let (http, url, slow, session) = (http.clone(), url.clone(), slow.clone(), session.clone());
        tokio::spawn(async move {
            let answer = send(&http, &url, slow, &[("mcp-session-id", &session)]).await;
            (answer.status(), answer.text().await.unwrap())
        })
    };
    // The same id twice, the second while the first is in flight: one is answered, the other
    // refused at once with a JSON-RPC error on its own POST (whichever the gateway took
    // second); the request in flight keeps its stream.
    let first = post();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let second = post();
    let mut answers = [first.await.unwrap(), second.await.unwrap()];
    answers.sort_by_key(|(_, body)| body.contains("in flight already"));
    let [(ok, answered), (also_ok, refused)] = answers;
    assert_eq!((ok, also_ok), (StatusCode::OK, StatusCode::OK));
    assert!(answered.contains("slept 1500 ms"), "{answered}");
    assert!(refused.contains("-32600"), "{refused}");
    assert!(refused.contains("is in flight already"), "{refused}");
    assert!(refused.contains(r#""id":7"#), "{refused}");
}

/// How long each call of [`a_request_past_the_limit_in_flight_is_refused_at_once`] takes: the
/// refusal must come before the first of them could end and free a place.
const HELD_MS: u64 = 5_000;

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "its time bounds are set for a native build; under wine the calls in flight take longer than they allow"
)]
async fn a_request_past_the_limit_in_flight_is_refused_at_once() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (peer, http, session) = faulty_session(dir.path()).await;
    // The server takes the calls one by one, each for HELD_MS: all of them are in flight at
    // once but the one past the limit, which is answered at once: 429, `Retry-After: 1`, and
    // the JSON-RPC error with its id.
    let limit = mcpgateway::MAX_REQUESTS_IN_FLIGHT;
    let mut calls = tokio::task::JoinSet::new();
    for id in 0..=limit {
        let (http, url, session) = (http.clone(), peer.url.clone(), session.clone());
        calls.spawn(async move {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "f__slow", "arguments": {"ms": HELD_MS}}});
            let answer = send(
                &http,
                &url,
                call.to_string(),
                &[("mcp-session-id", &session)],
            )
            .await;
            let retry_after = answer.headers().get("retry-after").cloned();
            (answer.status(), retry_after, answer.text().await.unwrap())
        });
    }
    // At once: the 257 requests are sent and the refusal read in about 0.3 s (debug build),
    // well before a place could be freed. Before: within 30 s, time for several of the calls
    // to end and another to be refused then.
    let (status, retry_after, body) = common::at_once(calls.join_next()).await.unwrap().unwrap();
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(retry_after.as_ref().map(|v| v.as_bytes()), Some(&b"1"[..]));
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many requests in flight"),
        "{body}"
    );
    assert!(body["id"].is_u64(), "{body}");
    calls.abort_all();
}
