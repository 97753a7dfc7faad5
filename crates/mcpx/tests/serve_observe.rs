//! `mcpx serve` observed: the Prometheus metrics and the audit log after a scripted mix of
//! calls from two concurrent HTTP sessions (valid, invalid arguments, an outputSchema
//! violation, a tool error, an upstream error, a timeout), asserted exactly; and, on the stdio
//! front, `--metrics ADDR`, a refused elicitation answer, and the OpenTelemetry spans a real
//! OTLP/HTTP exporter sends, continuing the client's `traceparent`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::{spec, Downstream, MCPX};
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
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains("_bucket{"))
        .collect();
    samples_of(&kept.join("\n"))
}

/// Asserts that the scraped `text` has each `SERIES VALUE` line of `want`, and, of the series
/// that start with `exact`, no other.
fn assert_samples(text: &str, want: &str, exact: &str) {
    let samples = samples(text);
    let wanted = samples_of(want);
    for (series, value) in &wanted {
        assert_eq!(samples.get(series), Some(value), "{series} in\n{text}");
    }
    let more: Vec<&String> = samples
        .keys()
        .filter(|s| s.starts_with(exact) && !wanted.contains_key(*s))
        .collect();
    assert!(more.is_empty(), "{more:?} in\n{text}");
}

fn samples_of(lines: &str) -> BTreeMap<String, String> {
    lines
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(series, value)| (series.to_owned(), value.to_owned()))
        .collect()
}

/// The metrics after the two sessions' script (histograms by their counts).
const WANT_METRICS: &str = r#"mcpx_calls_total{server="demo",tool="get-sum",outcome="ok"} 5
mcpx_calls_total{server="demo",tool="get-sum",outcome="rejected"} 3
mcpx_calls_total{server="demo",tool="get-sum",outcome="tool_error"} 1
mcpx_calls_total{server="demo",tool="drifting-output",outcome="ok"} 2
mcpx_calls_total{server="demo",tool="echo",outcome="ok"} 1
mcpx_calls_total{server="faulty",tool="crash",outcome="upstream_error"} 1
mcpx_calls_total{server="faulty",tool="slow",outcome="timeout"} 1
mcpx_calls_total{server="",tool="",outcome="unknown_tool"} 1
mcpx_output_warnings_total{server="demo",tool="drifting-output"} 2
mcpx_calls_in_flight 0
mcpx_sessions 2
mcpx_upstream_up{server="demo"} 1
mcpx_upstream_up{server="faulty"} 1
mcpx_upstream_restarts_total{server="demo"} 0
mcpx_upstream_restarts_total{server="faulty"} 1
mcpx_call_duration_seconds_count{server="demo"} 12
mcpx_call_duration_seconds_count{server="faulty"} 2
mcpx_call_duration_seconds_count{server=""} 1
mcpx_gateway_overhead_seconds_count{server="demo"} 12
mcpx_tool_list_compile_seconds_count{server="demo"} 1
mcpx_tool_list_compile_seconds_count{server="faulty"} 2
mcpx_dropped_log_lines_total 0
mcpx_dropped_audit_lines_total 0"#;

/// The metrics after the stdio session's calls.
const WANT_STDIO_METRICS: &str = r#"mcpx_calls_total{server="demo",tool="get-sum",outcome="ok"} 1
mcpx_calls_total{server="demo",tool="get-sum",outcome="rejected"} 1
mcpx_calls_total{server="demo",tool="book-table",outcome="ok"} 1
mcpx_refused_answers_total{server="demo"} 1
mcpx_sessions 1
mcpx_calls_in_flight 0"#;

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
    assert_samples(&text, WANT_METRICS, "mcpx_calls_total{");
    assert!(!text.contains("refused_answers_total{"), "{text}");
    // The timeout took at least its 3 s, all of it upstream.
    let slowest: f64 = samples(&text)[r#"mcpx_call_duration_seconds_sum{server="faulty"}"#]
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

/// Spans an OTLP/HTTP receiver got: the protocol's own protobuf messages, decoded with the
/// OpenTelemetry project's Rust types.
type Received = std::sync::Arc<std::sync::Mutex<Vec<Span>>>;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, Span};

/// What the receiver reads of one request at most.
const MAX_EXPORT_BYTES: usize = 16 * 1024 * 1024;

/// An OTLP/HTTP trace receiver on 127.0.0.1: every POST's body decoded as an
/// `ExportTraceServiceRequest`, answered 200 with an empty `ExportTraceServiceResponse`.
async fn otlp_receiver() -> (String, Received) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let received = Received::default();
    let kept = received.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(tcp);
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap();
                            }
                        }
                    }
                    assert!(length <= MAX_EXPORT_BYTES);
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).await.unwrap();
                    let request =
                        <ExportTraceServiceRequest as prost::Message>::decode(&body[..]).unwrap();
                    for resource in request.resource_spans {
                        for scope in resource.scope_spans {
                            kept.lock().unwrap().extend(scope.spans);
                        }
                    }
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    reader.get_mut().write_all(answer.as_bytes()).await.unwrap();
                }
            });
        }
    });
    (endpoint, received)
}

/// What a test waits, at most, for spans to arrive once mcpx stops.
const SPANS_WAIT: Duration = Duration::from_secs(20);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    span.attributes.iter().find(|a| a.key == key).and_then(|a| {
        match a.value.as_ref()?.value.as_ref()? {
            Any::StringValue(text) => Some(text.clone()),
            _ => None,
        }
    })
}

const CLIENT_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN: &str = "b7ad6b7169203331";
const OTHER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const OTHER_SPAN: &str = "00f067aa0ba902b7";

#[tokio::test(flavor = "multi_thread")]
async fn stdio_metrics_a_refused_answer_and_spans_that_continue_the_clients_trace() {
    let Some(spec) = spec() else { return };
    let (endpoint, received) = otlp_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let gateway = json!({"traces": {"endpoint": endpoint}}).to_string();
    let config = common::config(dir.path(), &[], "", &gateway);
    let mut client = Downstream::start(
        &config,
        &["--metrics", "127.0.0.1:0"],
        json!({"elicitation": {}}),
    )
    .await;

    let traced = |trace: &str, span: &str| format!("00-{trace}-{span}-01");
    let summed = client
        .request(
            "tools/call",
            json!({"name": "demo__get-sum", "arguments": {"a": 2, "b": 3},
                "_meta": {"traceparent": traced(CLIENT_TRACE, CLIENT_SPAN), "tracestate": "vendor=1"}}),
        )
        .await;
    assert_eq!(
        summed.value().unwrap()["result"]["structuredContent"]["sum"],
        5
    );
    let refused = client
        .request(
            "tools/call",
            json!({"name": "demo__get-sum", "arguments": {"a": "2", "b": 3},
                "_meta": {"traceparent": traced(OTHER_TRACE, OTHER_SPAN)}}),
        )
        .await;
    assert_eq!(refused.value().unwrap()["error"]["code"], -32602);
    // An answer to the server's question that violates its requestedSchema is refused.
    let booking = json!({"name": "demo__book-table", "arguments": {"restaurant": "Chez Rust"}});
    let booked = client
        .request_answering(
            "tools/call",
            booking,
            |_| json!({"action": "accept", "content": {"party": 40, "time": "20:00"}}),
        )
        .await;
    let text = booked["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("not booked: "), "{text}");

    let address = client
        .log()
        .lines()
        .find_map(|l| {
            l.split_once("metrics on ")
                .map(|(_, url)| url.trim().to_owned())
        })
        .expect("the metrics address in the log");
    assert!(address.starts_with("http://127.0.0.1:"), "{address}");
    let text = reqwest::get(&address).await.unwrap().text().await.unwrap();
    assert_samples(&text, WANT_STDIO_METRICS, "mcpx_calls_total{");

    // Spans go when mcpx stops (or every few seconds): stop it.
    client.close().await;
    let spans = tokio::time::timeout(SPANS_WAIT, async {
        loop {
            let spans = received.lock().unwrap().clone();
            if spans.len() >= 4 {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the spans in time");
    let of = |trace: &str| -> Vec<&Span> {
        spans.iter().filter(|s| hex(&s.trace_id) == trace).collect()
    };
    let kind = |s: &&Span, k: SpanKind| s.kind == k as i32;

    // The valid call: the gateway's span continues the client's; the upstream span is its child.
    let first = of(CLIENT_TRACE);
    assert_eq!(first.len(), 2, "{first:?}");
    let gateway_span = first.iter().find(|s| kind(s, SpanKind::Server)).unwrap();
    let upstream_span = first.iter().find(|s| kind(s, SpanKind::Client)).unwrap();
    assert_eq!(hex(&gateway_span.parent_span_id), CLIENT_SPAN);
    assert_eq!(gateway_span.trace_state, "vendor=1");
    assert_eq!(upstream_span.parent_span_id, gateway_span.span_id);
    assert_eq!(gateway_span.name, "tools/call demo__get-sum");
    assert_eq!(upstream_span.name, "tools/call get-sum");
    assert_eq!(
        attribute(gateway_span, "mcpx.server").as_deref(),
        Some("demo")
    );
    assert_eq!(
        attribute(gateway_span, "mcpx.verdict").as_deref(),
        Some("ok")
    );
    assert!(upstream_span.start_time_unix_nano >= gateway_span.start_time_unix_nano);
    assert!(upstream_span.end_time_unix_nano <= gateway_span.end_time_unix_nano);
    let validation = &gateway_span.events[0];
    assert_eq!(validation.name, "validation");

    // The rejected call: its own trace, one span (nothing went upstream), the lines in its event.
    let second = of(OTHER_TRACE);
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(hex(&second[0].parent_span_id), OTHER_SPAN);
    assert_eq!(
        attribute(second[0], "mcpx.verdict").as_deref(),
        Some("rejected")
    );
    let event = &second[0].events[0];
    assert_eq!(event.name, "validation");
    let violations = event
        .attributes
        .iter()
        .find(|a| a.key == "mcpx.violations")
        .and_then(|a| a.value.clone());
    assert_eq!(
        format!("{violations:?}"),
        r#"Some(AnyValue { value: Some(StringValue("$.a: got string, want integer")) })"#
    );
    // The booking: a trace of its own, started by the gateway (the client sent none).
    let rest: Vec<&Span> = spans
        .iter()
        .filter(|s| ![CLIENT_TRACE, OTHER_TRACE].contains(&hex(&s.trace_id).as_str()))
        .collect();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(rest
        .iter()
        .any(|s| s.parent_span_id.is_empty() && kind(s, SpanKind::Server)));

    // The server got the client's traceparent unchanged, not the gateway's.
    let transcript = common::demo_transcript(dir.path(), spec);
    let sent: Vec<&Value> = transcript
        .iter()
        .filter(|e| e["from"] == "client" && e["message"]["method"] == "tools/call")
        .map(|e| &e["message"]["params"]["_meta"])
        .collect();
    assert_eq!(sent[0]["traceparent"], traced(CLIENT_TRACE, CLIENT_SPAN));
    assert_eq!(sent[0]["tracestate"], "vendor=1");
}
