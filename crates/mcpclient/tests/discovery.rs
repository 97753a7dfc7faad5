//! The era of a server found from its answers, never from a clock alone (see the
//! `discovery` module): each branch against a scripted stdio server, and the start again
//! without the probe for a server that fails after it ([`mcpclient::connect`]).

mod common;

use std::path::Path;
use std::time::Duration;

use mcpclient::{
    connect, Client, ClientOptions, Era, Event, Protocol, Reach, Spawn, StdioCommand,
    StdioTransport, Why, DISCOVER_GRACE, DISCOVER_QUIET,
};

const DISCOVERED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"1"}}}}"#;

/// The answer to `initialize` sent second (id 2), behind the probe.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}"#;

/// How long a test's start may take in all: long enough for a loaded machine.
const WITHIN: Duration = Duration::from_secs(60);

/// Longer than the probe waits before sending `initialize` behind it, and the grace after.
fn past_the_quiet() -> String {
    format!(
        "{:.1}",
        (DISCOVER_QUIET + DISCOVER_GRACE + Duration::from_millis(500)).as_secs_f64()
    )
}

fn stdio(script: &str) -> StdioCommand {
    StdioCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..StdioCommand::default()
    }
}

fn server(script: &str) -> StdioTransport {
    StdioTransport::spawn(&stdio(script)).unwrap()
}

fn with(protocol: Protocol) -> ClientOptions {
    ClientOptions {
        protocol,
        ..ClientOptions::default()
    }
}

/// The methods of the requests `path` logged, one line each.
fn methods(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).ok()?;
            Some(value["method"].as_str()?.to_owned())
        })
        .collect()
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_modern_server_slower_than_the_quiet_period_is_modern_and_its_initialize_answer_dropped_unseen(
) {
    // A dual-era server still starting: it reads the probe first, then the initialize sent
    // behind it, and answers both in order.
    let script = format!(
        "sleep {}; read discover; echo '{DISCOVERED}'; read init; echo '{INITIALIZED}'; read rest",
        past_the_quiet()
    );
    let (client, mut events) = Client::connect_with(server(&script), ClientOptions::default())
        .await
        .unwrap();
    assert!(client.is_modern());
    let found = client.discovery();
    assert_eq!((found.era, found.why), (Era::Modern, Why::Probed));
    // The late answer to initialize is expected: no event says it answered nothing.
    client.close().await;
    while let Some(event) = events.recv().await {
        assert!(!matches!(event, Event::Unmatched(_)), "{event:?}");
        if matches!(event, Event::Closed) {
            break;
        }
    }
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_server_that_ignores_the_probe_is_legacy_once_it_answers_initialize() {
    let script =
        format!("read discover; read init; echo '{INITIALIZED}'; read initialized; read rest");
    let (client, _events) = Client::connect_with(server(&script), ClientOptions::default())
        .await
        .unwrap();
    assert!(!client.is_modern());
    assert_eq!(client.protocol_version(), "2025-06-18");
    let found = client.discovery();
    assert_eq!((found.era, found.why), (Era::Legacy, Why::Probed));
    assert!(found.evidence.contains("stayed unanswered"), "{found:?}");
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_dual_era_server_answering_initialize_first_and_the_probe_within_the_grace_is_modern() {
    let script =
        format!("read discover; read init; echo '{INITIALIZED}'; echo '{DISCOVERED}'; read rest");
    let (client, _events) = Client::connect_with(server(&script), ClientOptions::default())
        .await
        .unwrap();
    assert!(client.is_modern());
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_legacy_server_answering_the_probe_late_is_legacy_and_its_pipelined_initialize_used() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sent");
    let refused =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    let script = format!(
        "sleep {}; read discover; echo '{refused}'; read init; echo \"$init\" >> {log}; echo '{INITIALIZED}'; read initialized; read rest",
        past_the_quiet(),
        log = log.display()
    );
    let (client, _events) = Client::connect_with(server(&script), ClientOptions::default())
        .await
        .unwrap();
    assert!(!client.is_modern());
    let found = client.discovery();
    assert_eq!((found.era, found.why), (Era::Legacy, Why::Probed));
    assert!(found.evidence.contains("Method not found"), "{found:?}");
    // One initialize: the one sent behind the probe.
    assert_eq!(methods(&log), ["initialize"]);
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_server_that_dies_on_the_probe_is_started_again_without_it() {
    // As a server on the MCP Python SDK 1.6: slow to start, then dies on the probe it cannot
    // validate. Its second start is not probed.
    let dir = tempfile::tempdir().unwrap();
    let (mark, log) = (dir.path().join("started"), dir.path().join("sent"));
    let script = format!(
        "if [ -e {mark} ]; then read first; echo \"$first\" >> {log}; echo '{}'; read initialized; read rest; \
         else touch {mark}; sleep {}; read discover; echo 'validation error' >&2; exit 1; fi",
        INITIALIZED.replace(r#""id":2"#, r#""id":1"#),
        past_the_quiet(),
        mark = mark.display(),
        log = log.display()
    );
    let reach = Reach::Stdio(stdio(&script));
    let connected = connect(&reach, ClientOptions::default(), Spawn::Inline, WITHIN)
        .await
        .unwrap();
    let found = connected.client.discovery();
    assert_eq!((found.era, found.why), (Era::Legacy, Why::FellBack));
    assert!(found.evidence.contains("closed"), "{found:?}");
    assert_eq!(methods(&log), ["initialize"]);
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_server_that_errs_on_initialize_after_the_probe_is_started_again_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("started");
    let failed = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Invalid request"}}"#;
    let script = format!(
        "if [ -e {mark} ]; then read first; echo '{}'; read initialized; read rest; \
         else touch {mark}; read discover; read init; echo '{failed}'; read rest; fi",
        INITIALIZED.replace(r#""id":2"#, r#""id":1"#),
        mark = mark.display(),
    );
    let reach = Reach::Stdio(stdio(&script));
    let connected = connect(&reach, ClientOptions::default(), Spawn::Inline, WITHIN)
        .await
        .unwrap();
    assert_eq!(connected.client.discovery().why, Why::FellBack);
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_remembered_legacy_server_is_not_probed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sent");
    let script = format!(
        "read first; echo \"$first\" >> {log}; echo '{}'; read initialized; read rest",
        INITIALIZED.replace(r#""id":2"#, r#""id":1"#),
        log = log.display()
    );
    let (client, _events) =
        Client::connect_with(server(&script), with(Protocol::Remembered(Era::Legacy)))
            .await
            .unwrap();
    assert_eq!(client.discovery().why, Why::Remembered);
    assert_eq!(methods(&log), ["initialize"]);
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_remembered_era_the_server_contradicts_gives_way_to_its_answer() {
    // Remembered modern, but the server now answers the probe as a legacy server does.
    let refused =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    let script = format!(
        "read discover; echo '{refused}'; read init; echo '{INITIALIZED}'; read initialized; read rest"
    );
    let (client, _events) =
        Client::connect_with(server(&script), with(Protocol::Remembered(Era::Modern)))
            .await
            .unwrap();
    let found = client.discovery();
    assert_eq!((found.era, found.why), (Era::Legacy, Why::Probed));

    // Remembered legacy, but the server refuses initialize naming 2026-07-28; or without
    // naming a version (a 2026-07-28 HTTP server asking for its header): either way it is asked
    // what it speaks.
    for (refusal, code) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#,
            "2026-07-28",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}"#,
            "-32020",
        ),
    ] {
        let discovered = DISCOVERED.replace(r#""id":1"#, r#""id":2"#);
        let script =
            format!("read init; echo '{refusal}'; read discover; echo '{discovered}'; read rest");
        let (client, _events) =
            Client::connect_with(server(&script), with(Protocol::Remembered(Era::Legacy)))
                .await
                .unwrap();
        let found = client.discovery();
        assert_eq!((found.era, found.why), (Era::Modern, Why::Probed));
        assert!(found.evidence.contains(code), "{}", found.evidence);
    }
}

#[tokio::test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
async fn a_configured_era_is_said_to_be_configured() {
    let script = format!(
        "read first; echo '{}'; read initialized; read rest",
        INITIALIZED.replace(r#""id":2"#, r#""id":1"#)
    );
    let (client, _events) = Client::connect_with(server(&script), with(Protocol::Legacy))
        .await
        .unwrap();
    assert_eq!(client.discovery().why, Why::Configured);
}

/// An HTTP server on loopback that refuses `server/discover` with 403 (a scope it will never
/// grant) and `initialize` as a 2026-07-28 server does without its header; the requests' methods
/// are sent on `methods`.
fn refusing_http_server(methods: std::sync::mpsc::Sender<String>) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut stream) = stream else { return };
            let methods = methods.clone();
            std::thread::spawn(move || loop {
                let Some(request) = common::read_request(&mut stream) else {
                    return;
                };
                let method = request["method"].as_str().unwrap_or_default().to_owned();
                let _ = methods.send(method.clone());
                let (status, body) = if method == "server/discover" {
                    (
                        "403 Forbidden",
                        r#"{"error":"insufficient_scope","error_description":"Scope upgrade will never succeed"}"#
                            .to_owned(),
                    )
                } else {
                    (
                        "400 Bad Request",
                        serde_json::json!({"jsonrpc": "2.0", "id": request["id"],
                            "error": {"code": -32020, "message": "Missing MCP-Protocol-Version header"}})
                        .to_string(),
                    )
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                );
                if stream.write_all(head.as_bytes()).is_err()
                    || stream.write_all(body.as_bytes()).is_err()
                {
                    return;
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn a_probe_refused_authorization_is_what_the_start_reports() {
    // initialize is still tried (the refusal says nothing of the era), and when it fails too the
    // user reads the refusal, not the 2026-07-28 server's complaint about initialize.
    let (tx, rx) = std::sync::mpsc::channel();
    let url = refusing_http_server(tx);
    let transport = mcpclient::HttpTransport::new(&mcpclient::HttpConfig {
        url,
        headers: Vec::new(),
        auth: None,
    })
    .unwrap();
    let error = tokio::time::timeout(
        WITHIN,
        Client::connect_with(transport, ClientOptions::default()),
    )
    .await
    .expect("the start ends")
    .err()
    .expect("the start fails");
    let error = error.to_string();
    assert!(
        error.contains("403") && error.contains("insufficient_scope"),
        "{error}"
    );
    let methods: Vec<String> = rx.try_iter().collect();
    assert!(methods.contains(&"initialize".to_owned()), "{methods:?}");
}
