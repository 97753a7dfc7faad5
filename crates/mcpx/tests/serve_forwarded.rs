//! What `mcpx serve` checks is exactly what it forwards (issue 32): no member a legacy client
//! must not send, no name given twice, no nesting a peer cannot read, and no secret in the logs
//! whatever its spelling. Each goes through the real binary, and each refusal is checked to
//! leave no trace upstream (the demo server's transcript) while another client goes on.

mod common;

use std::time::Duration;

use common::{config, serve_stdio_with, MCPX};
use mcpclient::{Frame, FrameSink, FrameSource, StdioTransport, Transport};
use mcpx_interop::{peer_file, python26, HttpPeer};
use serde_json::{json, Value};

/// How many times a test asks a server that is restarting, at 0.1 s apart, for why it failed.
const MAX_ASKS: u64 = 50;

/// How long a test waits for one answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// A raw stdio client of `mcpx serve`, initialized as a 2025-11-25 client declaring
/// `capabilities`, sending text as it is written.
struct Raw {
    transport: StdioTransport,
}

impl Raw {
    async fn start(config: &std::path::Path, capabilities: Value) -> Raw {
        Raw::start_with(config, capabilities, &[]).await
    }

    /// [`Raw::start`] with `env` set for mcpx.
    async fn start_with(
        config: &std::path::Path,
        capabilities: Value,
        env: &[(&str, &str)],
    ) -> Raw {
        let mut raw = Raw {
            transport: serve_stdio_with(config, env),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "forwarded-test", "version": "0"}}});
        let answer = raw.ask(&init.to_string()).await;
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-11-25",
            "{answer}"
        );
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        raw
    }

    async fn send(&mut self, text: &str) {
        let (sink, _) = self.transport.halves();
        sink.send_all(&[Frame::parse(text).unwrap()]).await.unwrap();
    }

    /// The next frame from the gateway.
    async fn next(&mut self) -> Value {
        let (_, source) = self.transport.halves();
        let frame = tokio::time::timeout(ANSWER_WITHIN, source.receive())
            .await
            .expect("a frame in time")
            .expect("the gateway is there")
            .unwrap();
        frame.value().unwrap()
    }

    /// Sends `text` (a request) and returns the answer with its id; requests from the gateway
    /// on the way are answered by `answer`.
    async fn ask_answering(&mut self, text: &str, answer: impl Fn(&Value) -> Value) -> Value {
        let id = serde_json::from_str::<Value>(text).unwrap()["id"].clone();
        self.send(text).await;
        loop {
            let message = self.next().await;
            if message.get("method").is_some() && message.get("id").is_some() {
                let reply =
                    json!({"jsonrpc": "2.0", "id": message["id"], "result": answer(&message)});
                self.send(&reply.to_string()).await;
            } else if message.get("method").is_none() && message["id"] == id {
                return message;
            }
        }
    }

    async fn ask(&mut self, text: &str) -> Value {
        self.ask_answering(text, |_| json!({})).await
    }
}

/// The calls the demo server received (its transcript at `dir/demo.jsonl`), as text.
fn upstream(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("demo.jsonl")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Python SDK 2.x server, a Linux program here"
)]
async fn a_legacy_client_cannot_send_the_gateways_multi_round_trip_members() {
    let Some(python) = python26() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = json!({"command": python, "args": [peer_file("sdk26/python_server.py")],
        "prefix": ""});
    let config = dir.path().join("mcpx.json");
    std::fs::write(&config, json!({"mcpServers": {"py": server}}).to_string()).unwrap();
    let mut client = Raw::start(&config, json!({"elicitation": {}})).await;

    // The answer breaks the question's schema (`name` is a string); forwarded as written, the
    // modern server would greet 42.
    for (id, members) in [
        (
            1,
            r#""inputResponses":{"user_name":{"action":"accept","content":{"name":42}}},"requestState":"{\"round\":1}""#,
        ),
        (2, r#""requestState":"forged""#),
        (
            3,
            r#""inputResponses":{"user_name":{"action":"accept","content":{"name":"Eve"}}}"#,
        ),
        // The names written with escapes, which every reader after the check decodes.
        (
            11,
            r#""input\u0052esponses":{"user_name":{"action":"accept","content":{"name":42}}},"request\u0053tate":"{\"round\":1}""#,
        ),
        (12, r#""request\u0053tate":"forged""#),
    ] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ask_name","arguments":{{}},{members}}}}}"#
        );
        let refused = client.ask(&call).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("belongs to MCP 2026-07-28 requests"),
            "{message}"
        );
    }

    // The way a legacy client answers: the gateway asks it, and checks the answer against the
    // question's schema before it goes to the server.
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}"#;
    let invalid = client
        .ask_answering(
            call,
            |_| json!({"action": "accept", "content": {"name": 42}}),
        )
        .await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    assert_eq!(
        invalid["error"]["data"]["violations"],
        json!(["$.name: got integer, want string"]),
        "{invalid}"
    );
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}"#;
    let valid = client
        .ask_answering(
            call,
            |_| json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .await;
    let greeting = valid["result"]["content"][0]["text"].as_str().unwrap();
    assert!(greeting.starts_with("Hello, Ada!"), "{valid}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_named_twice_is_refused_and_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = Raw::start(&config, json!({})).await;
    let cases = [
        (
            1,
            r#"{"name":"demo__echo","arguments":{"text":"DUP","text":"checked"}}"#,
            "$.arguments.text",
            "text",
        ),
        (
            2,
            r#"{"name":"demo__echo","arguments":{"text":"fine"},"name":"demo__get-sum"}"#,
            "$.name",
            "name",
        ),
        (
            3,
            r#"{"name":"demo__echo","arguments":{"text":"x","\u0074ext":"y"}}"#,
            "$.arguments.text",
            "text",
        ),
    ];
    for (id, params, path, name) in cases {
        let call =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#);
        let refused = client.ask(&call).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                r#"{path}: the member name "{name}" appears twice"#
            )),
            "{message}"
        );
    }
    let fine = client
        .ask(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"demo__echo","arguments":{"text":"once"}}}"#)
        .await;
    assert_eq!(fine["result"]["content"][0]["text"], "once", "{fine}");
    let sent = upstream(dir.path());
    assert!(sent.contains("once"), "{sent}");
    for never in ["DUP", "checked", "fine", "\"x\""] {
        assert!(!sent.contains(never), "{never} reached the server:\n{sent}");
    }

    // The command line: the same text is refused before anything is sent.
    let (_, err) = common::run(
        &config,
        &["call", "demo", "echo", r#"{"text":"a","text":"b"}"#],
        2,
    );
    assert!(
        err.contains(r#"the member name "text" appears twice"#),
        "{err}"
    );
}

/// `depth` arrays around `1`, as JSON text.
fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test(flavor = "multi_thread")]
async fn nesting_past_the_limit_is_refused_both_ways_while_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let gateway = common::serve_http(&config).await;
    let attacker = common::Raw::new(&gateway);
    let bystander = common::Raw::new(&gateway);
    let (mine, theirs) = (
        attacker.open("attacker").await,
        bystander.open("bystander").await,
    );

    let attacks = async {
        for (id, depth) in [(1, 10_000), (2, 1_000_000), (3, mcpclient::MAX_FRAME_DEPTH)] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"demo__echo","arguments":{{"text":"never-forwarded"}},"_meta":{{"x":{}}}}}}}"#,
                nested(depth)
            );
            let answer = attacker.post(Some(&mine), body).await.unwrap();
            assert_eq!(answer.status().as_u16(), 400);
            let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
            assert_eq!(answer["id"], id, "refused for its own id: {answer}");
            assert_eq!(answer["error"]["code"], -32600, "{answer}");
            assert!(answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("deeper than 128 levels"));
        }
    };
    let calls = async {
        for i in 0..20u64 {
            let body = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                "params": {"name": "demo__get-sum", "arguments": {"a": i, "b": 1}}});
            let answer = bystander
                .post(Some(&theirs), body.to_string())
                .await
                .unwrap();
            let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
            assert_eq!(
                answer["result"]["structuredContent"]["sum"],
                i + 1,
                "{answer}"
            );
        }
    };
    tokio::join!(attacks, calls);
    assert!(
        !upstream(dir.path()).contains("never-forwarded"),
        "a refused frame reached the server"
    );

    // From the server: an answer nested past the limit becomes an error for its call, and the
    // next call of the same client is answered as usual.
    for (id, depth, passes) in [(10, 100, true), (11, 200, false), (12, 1_000_000, false)] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "demo__deep", "arguments": {"depth": depth}}});
        let answer = attacker.post(Some(&mine), body.to_string()).await.unwrap();
        let answer: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
        if passes {
            assert!(answer.get("result").is_some(), "{answer:.300}");
        } else {
            assert_eq!(answer["id"], id, "{answer}");
            assert_eq!(answer["error"]["code"], -32603, "{answer}");
            assert!(answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("deeper than 128 levels"));
        }
    }
    let after = attacker
        .post(
            Some(&mine),
            json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                "params": {"name": "demo__echo", "arguments": {"text": "after"}}})
            .to_string(),
        )
        .await
        .unwrap();
    let after: Value = serde_json::from_str(&after.text().await.unwrap()).unwrap();
    assert_eq!(after["result"]["content"][0]["text"], "after", "{after}");

    // The stdio front answers a deep line for its id too, and reads on. (Written as bytes: the
    // test's own frames are checked the same way.)
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::new(MCPX)
        .args(["--config", &config.display().to_string(), "serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "forwarded-test", "version": "0"}}});
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"_meta":{{"x":{}}}}}}}"#,
        nested(10_000)
    );
    for line in [
        init.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        deep,
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.to_owned(),
    ] {
        input.write_all(line.as_bytes()).await.unwrap();
        input.write_all(b"\n").await.unwrap();
    }
    let mut answers = std::collections::HashMap::new();
    tokio::time::timeout(ANSWER_WITHIN, async {
        while answers.len() < 3 {
            let line = output
                .next_line()
                .await
                .unwrap()
                .expect("the gateway answers");
            let answer: Value = serde_json::from_str(&line).unwrap();
            answers.insert(answer["id"].to_string(), answer);
        }
    })
    .await
    .expect("three answers in time");
    assert_eq!(answers["7"]["error"]["code"], -32600, "{:?}", answers["7"]);
    assert_eq!(answers["8"]["result"], json!({}), "{:?}", answers["8"]);
}

const API_KEY: &str = "sk-live-12345";
const TOKEN: &str = "tok-SECRET-4242";

#[tokio::test(flavor = "multi_thread")]
async fn no_spelling_of_a_secret_reaches_the_audit_log_or_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let demo = json!({"command": MCPX, "args": ["demo-server", "--record",
        dir.path().join("demo.jsonl")], "env": {"API_KEY": "${API_KEY}"}});
    let config = dir.path().join("mcpx.json");
    let text = json!({"mcpServers": {"demo": demo},
        "gateway": {"audit": {"file": audit, "arguments": true}}});
    std::fs::write(&config, text.to_string()).unwrap();
    let config_arg = config.display().to_string();
    let gateway = HttpPeer::start(
        MCPX,
        &["--config", &config_arg, "serve", "--http", "127.0.0.1:0"],
        &[
            ("API_KEY", API_KEY),
            ("MCPX_TOKEN", TOKEN),
            ("MCPX_LOG", "trace"),
        ],
        "/mcp",
    )
    .await;
    let http = reqwest::Client::new();
    let post = |session: Option<String>, body: String| {
        let mut request = http
            .post(&gateway.url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("authorization", format!("Bearer {TOKEN}"));
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.body(body).send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "secrets", "version": "0"}}});
    let opened = post(None, init.to_string()).await.unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    // Each secret spelt plainly, with one escape, split by escapes, and all escapes.
    let spellings = [
        r#"sk-live-12345"#,
        r#"sk-live-1234\u0035"#,
        r#"\u0073k-live-\u00312345"#,
        r#"\u0073\u006b\u002d\u006c\u0069\u0076\u0065\u002d\u0031\u0032\u0033\u0034\u0035"#,
        r#"tok-SECRET-424\u0032"#,
        r#"tok\u002DSECRET\u002d4242"#,
    ];
    for (id, spelt) in spellings.iter().enumerate() {
        // Once as a valid call, once as a refused one (the violation lines are audited too).
        for (tool, arguments) in [
            ("demo__echo", format!(r#"{{"text":"key {spelt} end"}}"#)),
            ("demo__get-sum", format!(r#"{{"a":"{spelt}","b":1}}"#)),
        ] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
            );
            let answered = post(Some(session.clone()), body).await.unwrap();
            assert_eq!(answered.status().as_u16(), 200);
        }
    }
    let lines = tokio::time::timeout(ANSWER_WITHIN, async {
        loop {
            let text = std::fs::read_to_string(&audit).unwrap_or_default();
            if text.lines().count() >= 2 * spellings.len() {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the audit lines in time");
    // Every piece of a secret's text, decoded or not, is absent.
    for (what, text) in [
        ("the audit log", lines.as_str()),
        ("the log", &gateway.log()),
    ] {
        for piece in ["k-live-", "\\u006c\\u0069", "SECRET"] {
            assert!(!text.contains(piece), "{piece} in {what}:\n{text}");
        }
    }
    for line in lines.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let decoded = entry.to_string();
        assert!(
            !decoded.contains(API_KEY) && !decoded.contains(TOKEN),
            "{line}"
        );
    }
    assert!(lines.contains(mcpgateway::REDACTED), "{lines}");
}

/// A server down for a reason that names its secrets (the `${PATH_KEY}` in its URL's path, a
/// token written in the path, the user and password and query key written in it): the error a
/// client gets for calling it names the server and why, with none of them.
#[tokio::test(flavor = "multi_thread")]
async fn a_servers_failure_reaches_a_client_without_its_secrets() {
    const PATH_KEY: &str = "sk_path_secret_31";
    const LITERAL_PATH_TOKEN: &str = "sk-live-pathliteral0123456789abc";
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens there: its calls fail at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    // A token written in the path as it is (as Zapier's URLs hold theirs) as well.
    let url = format!(
        "http://bot:pw_literal_1@{address}/s/${{PATH_KEY}}/{LITERAL_PATH_TOKEN}/mcp?key=q_literal_2"
    );
    let config = dir.path().join("mcpx.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"far": {"url": url, "headers": {"X-Api-Key": "h_literal_3"}}}})
            .to_string(),
    )
    .unwrap();
    let mut client = Raw::start_with(&config, json!({}), &[("PATH_KEY", PATH_KEY)]).await;
    // The server is restarted with backoff: a call may find it starting again, when the
    // answer says so and not why it failed; asked again until it says why (a bounded number
    // of times).
    let mut answer = Value::Null;
    for id in 1..=MAX_ASKS {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "far__echo", "arguments": {}}});
        answer = client.ask(&call.to_string()).await;
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("server 'far'"), "{answer}");
        if message.contains("last error") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("last error"), "{answer}");
    assert!(message.contains("[redacted]"), "{answer}");
    for secret in [
        PATH_KEY,
        LITERAL_PATH_TOKEN,
        "pw_literal_1",
        "q_literal_2",
        "h_literal_3",
    ] {
        assert!(!answer.to_string().contains(secret), "{secret}: {answer}");
    }
}
