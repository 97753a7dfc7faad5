//! `mcpx serve` observed: the Prometheus metrics and the audit log after a scripted mix of
//! calls from two concurrent HTTP sessions (valid, invalid arguments, an outputSchema
//! violation, a tool error, an upstream error, a timeout), asserted exactly; and, on the stdio
//! front, `--metrics ADDR`, a refused elicitation answer, and the OpenTelemetry spans a real
//! OTLP/HTTP exporter sends, continuing the client's `traceparent`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::MCPX;
use serde_json::{json, Value};

/// What a test waits, at most, for the audit file to hold its lines.
const AUDIT_WAIT: Duration = Duration::from_secs(20);

/// What a test waits, at most, for a crashed server to be started again.
const RESTART_WAIT: Duration = Duration::from_secs(30);

/// The value of a secret `${VAR}` of the config: it must never reach the audit log.
const SECRET: &str = "hunter2-s3cret-value";

/// A raw Streamable HTTP client of one session: requests are sent as written (the gateway, not
/// the client, checks the arguments).
struct Raw {
    http: reqwest::Client,
    url: String,
    session: String,
    next_id: u64,
}

impl Raw {
    async fn post(&self, body: &Value, session: Option<&str>) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", mcpclient::OFFERED_VERSION)
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.unwrap()
    }

    async fn open(url: &str) -> Raw {
        let mut raw = Raw {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            session: String::new(),
            next_id: 1,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": mcpclient::OFFERED_VERSION, "capabilities": {},
                "clientInfo": {"name": "observer", "version": "0"}}});
        let answer = raw.post(&init, None).await;
        raw.session = answer.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let sent = raw.post(&initialized, Some(&raw.session.clone())).await;
        assert_eq!(sent.status(), 202);
        raw
    }

    /// A `tools/call`: its response (from a JSON body or the last SSE event).
    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let text = self
            .post(&call, Some(&self.session.clone()))
            .await
            .text()
            .await
            .unwrap();
        let body = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .next_back()
            .unwrap_or(&text);
        let answer: Value = serde_json::from_str(body.trim()).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

/// The config: `demo` (with a secret in its environment) and `faulty` (the demo server's
/// misbehaving tools), auditing arguments to `dir/audit.jsonl`.
fn observed_config(dir: &Path) -> std::path::PathBuf {
    let config = json!({
        "mcpServers": {
            "demo": {"command": MCPX, "args": ["demo-server"], "env": {"DEMO_TOKEN": "${MCPX_OBSERVE_SECRET}"}},
            "faulty": {"command": MCPX, "args": ["demo-server", "--faults"]}
        },
        "gateway": {"audit": {"file": dir.join("audit.jsonl"), "arguments": true}}
    });
    let path = dir.join("mcpx.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// The metric samples (no comments, no histogram buckets), by series.
fn samples(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.contains("_bucket{"))
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(series, value)| (series.to_owned(), value.to_owned()))
        .collect()
}

/// The audit file's lines once it holds `count` (without their times, which are checked to be
/// RFC 3339 UTC).
async fn audit_lines(path: &Path, count: usize) -> Vec<Value> {
    let read = || std::fs::read_to_string(path).unwrap_or_default();
    tokio::time::timeout(AUDIT_WAIT, async {
        while read().lines().count() < count {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the audit lines in time");
    let text = read();
    assert!(!text.contains(SECRET), "a secret in the audit log:\n{text}");
    text.lines()
        .map(|l| {
            let mut line: Value = serde_json::from_str(l).unwrap();
            let time = line["time"].as_str().unwrap().to_owned();
            assert!(
                time.len() == 24 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
                "{time}"
            );
            line.as_object_mut().unwrap().remove("time");
            line
        })
        .collect()
}

/// Audit lines in one order whatever their members' order.
fn sorted(mut lines: Vec<Value>) -> Vec<Value> {
    let key = |l: &Value| {
        ["session", "server", "tool", "verdict", "lines", "arguments"]
            .map(|k| l[k].to_string())
            .join(" ")
    };
    lines.sort_by_key(key);
    lines
}

/// The audit lines the script makes, without their times, in no particular order (the two
/// sessions run at once).
const WANT_AUDIT: &str = r#"{"session":1,"server":"demo","tool":"get-sum","verdict":"ok","lines":[],"arguments":{"a":0,"b":1}}
{"session":1,"server":"demo","tool":"get-sum","verdict":"ok","lines":[],"arguments":{"a":1,"b":1}}
{"session":1,"server":"demo","tool":"get-sum","verdict":"ok","lines":[],"arguments":{"a":2,"b":1}}
{"session":1,"server":"demo","tool":"get-sum","verdict":"rejected","lines":["$.a: got string, want integer"],"arguments":{"a":"1","b":1}}
{"session":1,"server":"demo","tool":"drifting-output","verdict":"output_invalid","lines":["$.sum: got string, want integer"],"arguments":{}}
{"session":1,"server":"demo","tool":"get-sum","verdict":"tool_error","lines":[],"arguments":{"a":9223372036854775807,"b":1}}
{"session":2,"server":"demo","tool":"get-sum","verdict":"ok","lines":[],"arguments":{"a":0,"b":2}}
{"session":2,"server":"demo","tool":"get-sum","verdict":"ok","lines":[],"arguments":{"a":1,"b":2}}
{"session":2,"server":"demo","tool":"echo","verdict":"ok","lines":[],"arguments":{"text":"[redacted]"}}
{"session":2,"server":"demo","tool":"get-sum","verdict":"rejected","lines":["$.a: got string, want integer"],"arguments":{"a":"x","b":2}}
{"session":2,"server":"demo","tool":"get-sum","verdict":"rejected","lines":["$.a: got string, want integer"],"arguments":{"a":"x","b":2}}
{"session":2,"server":"demo","tool":"drifting-output","verdict":"output_invalid","lines":["$.sum: got string, want integer"],"arguments":{}}
{"session":2,"server":"","tool":"nobody__nothing","verdict":"unknown_tool","lines":[],"arguments":{}}
{"session":1,"server":"faulty","tool":"crash","verdict":"upstream_error","lines":["the connection closed before the answer"],"arguments":{}}
{"session":1,"server":"faulty","tool":"slow","verdict":"timeout","lines":[],"arguments":{"ms":10000}}"#;

#[tokio::test(flavor = "multi_thread")]
async fn metrics_and_audit_lines_after_a_scripted_mix_from_two_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let config = observed_config(dir.path());
    let config_arg = config.display().to_string();
    let gateway = mcpx_interop::HttpPeer::start(
        MCPX,
        &[
            "--config",
            &config_arg,
            "serve",
            "--http",
            "127.0.0.1:0",
            "--timeout",
            "3",
        ],
        &[("MCPX_OBSERVE_SECRET", SECRET)],
        "/mcp",
    )
    .await;
    let mut first = Raw::open(&gateway.url).await;
    let mut second = Raw::open(&gateway.url).await;

    let one = async {
        for n in 0..3 {
            let sum = first.call("demo__get-sum", json!({"a": n, "b": 1})).await;
            assert_eq!(sum["result"]["structuredContent"]["sum"], n + 1, "{sum}");
        }
        let refused = first.call("demo__get-sum", json!({"a": "1", "b": 1})).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let drifted = first.call("demo__drifting-output", json!({})).await;
        assert_eq!(drifted["result"]["isError"], false);
        let overflow = first
            .call("demo__get-sum", json!({"a": i64::MAX, "b": 1}))
            .await;
        assert_eq!(overflow["result"]["isError"], true, "{overflow}");
    };
    let two = async {
        for n in 0..2 {
            let sum = second.call("demo__get-sum", json!({"a": n, "b": 2})).await;
            assert_eq!(sum["result"]["structuredContent"]["sum"], n + 2, "{sum}");
        }
        let echoed = second.call("demo__echo", json!({"text": SECRET})).await;
        assert_eq!(echoed["result"]["content"][0]["text"], SECRET);
        for _ in 0..2 {
            let refused = second
                .call("demo__get-sum", json!({"a": "x", "b": 2}))
                .await;
            assert_eq!(refused["error"]["code"], -32602, "{refused}");
        }
        let drifted = second.call("demo__drifting-output", json!({})).await;
        assert_eq!(drifted["result"]["isError"], false);
        let unknown = second.call("nobody__nothing", json!({})).await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    };
    tokio::join!(one, two);
    // The faulty server's calls one after the other: it answers one line at a time.
    let crashed = first.call("faulty__crash", json!({})).await;
    assert!(crashed["error"].is_object(), "{crashed}");
    // Once the server is back (the gateway saw it go down and started it again), a call that
    // outlasts the 3 s timeout.
    let metrics_url = gateway.url.replace("/mcp", mcpgateway::METRICS_PATH);
    let restarted = [
        r#"mcpx_upstream_restarts_total{server="faulty"} 1"#,
        r#"mcpx_upstream_up{server="faulty"} 1"#,
    ];
    tokio::time::timeout(RESTART_WAIT, async {
        loop {
            let text = reqwest::get(&metrics_url)
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            if restarted
                .iter()
                .all(|line| text.lines().any(|l| l == *line))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the faulty server restarted in time");
    let slow = first.call("faulty__slow", json!({"ms": 10_000})).await;
    assert!(
        slow["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no answer within"),
        "{slow}"
    );

    let scraped = reqwest::get(&metrics_url).await.unwrap();
    assert_eq!(
        scraped.headers()["content-type"],
        mcpgateway::METRICS_CONTENT_TYPE
    );
    let text = scraped.text().await.unwrap();
    let samples = samples(&text);
    let counted = |series: &str| samples.get(series).cloned().unwrap_or_default();
    let calls: BTreeMap<&String, &String> = samples
        .iter()
        .filter(|(series, _)| series.starts_with("mcpx_calls_total{"))
        .collect();
    let want = [
        (
            r#"mcpx_calls_total{server="demo",tool="get-sum",outcome="ok"}"#,
            "5",
        ),
        (
            r#"mcpx_calls_total{server="demo",tool="get-sum",outcome="rejected"}"#,
            "3",
        ),
        (
            r#"mcpx_calls_total{server="demo",tool="get-sum",outcome="tool_error"}"#,
            "1",
        ),
        (
            r#"mcpx_calls_total{server="demo",tool="drifting-output",outcome="ok"}"#,
            "2",
        ),
        (
            r#"mcpx_calls_total{server="demo",tool="echo",outcome="ok"}"#,
            "1",
        ),
        (
            r#"mcpx_calls_total{server="faulty",tool="crash",outcome="upstream_error"}"#,
            "1",
        ),
        (
            r#"mcpx_calls_total{server="faulty",tool="slow",outcome="timeout"}"#,
            "1",
        ),
        (
            r#"mcpx_calls_total{server="",tool="",outcome="unknown_tool"}"#,
            "1",
        ),
    ];
    assert_eq!(calls.len(), want.len(), "{text}");
    for (series, value) in want {
        assert_eq!(counted(series), value, "{series} in\n{text}");
    }
    for (series, value) in [
        (
            r#"mcpx_output_warnings_total{server="demo",tool="drifting-output"}"#,
            "2",
        ),
        ("mcpx_calls_in_flight", "0"),
        ("mcpx_sessions", "2"),
        (r#"mcpx_upstream_up{server="demo"}"#, "1"),
        (r#"mcpx_upstream_up{server="faulty"}"#, "1"),
        (r#"mcpx_upstream_restarts_total{server="demo"}"#, "0"),
        (r#"mcpx_upstream_restarts_total{server="faulty"}"#, "1"),
        (r#"mcpx_call_duration_seconds_count{server="demo"}"#, "12"),
        (r#"mcpx_call_duration_seconds_count{server="faulty"}"#, "2"),
        (r#"mcpx_call_duration_seconds_count{server=""}"#, "1"),
        (
            r#"mcpx_gateway_overhead_seconds_count{server="demo"}"#,
            "12",
        ),
        (
            r#"mcpx_tool_list_compile_seconds_count{server="demo"}"#,
            "1",
        ),
        (
            r#"mcpx_tool_list_compile_seconds_count{server="faulty"}"#,
            "2",
        ),
        ("mcpx_dropped_log_lines_total", "0"),
        ("mcpx_dropped_audit_lines_total", "0"),
    ] {
        assert_eq!(counted(series), value, "{series} in\n{text}");
    }
    assert!(!text.contains("refused_answers_total{"), "{text}");
    // The timeout took at least its 3 s, all of it upstream.
    let slowest: f64 = counted(r#"mcpx_call_duration_seconds_sum{server="faulty"}"#)
        .parse()
        .unwrap();
    assert!(slowest >= 3.0, "{text}");

    let audited = audit_lines(&dir.path().join("audit.jsonl"), WANT_AUDIT.lines().count()).await;
    let want: Vec<Value> = WANT_AUDIT
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sorted(audited), sorted(want), "log:\n{}", gateway.log());
}
