//! Sessions that never mix: several clients of one `mcpx serve --http`, each asked only what its
//! own calls caused. Real peers: the Python SDK server (over Streamable HTTP, where a server's
//! question arrives on the stream of the call that caused it, and over stdio, where nothing
//! says whose call asked). The clients are mcpx's own and, at the end, the official Python and
//! TypeScript SDK clients (`peers/sdk_client_isolation.*`), several processes at once.
//!
//! Sessions are a 2025-era notion: these clients speak 2025-11-25 (the modern era's isolation,
//! one request at a time, is tested in serve_modern.rs and serve_translate.rs).

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{config, plain_client, spec};
use mcpclient::{
    BoxFuture, CallOptions, Client, ClientOptions, ElicitationAnswer, ElicitationHandler,
    ElicitationRequest, ErrorObject, Handlers, Protocol, SamplingHandler,
};
use mcpx_interop::{peer_file, python, python_over_http, run_client, ts_sdk, HttpPeer};
use serde_json::{json, Value};

/// Concurrent calls per client and per tool.
const CALLS: usize = 12;

/// A client that answers every question with its own name, and counts the questions.
#[derive(Clone)]
struct Named {
    name: &'static str,
    asked: Arc<AtomicUsize>,
}

impl ElicitationHandler for Named {
    fn elicit<'a>(
        &'a self,
        _request: &'a ElicitationRequest,
        _problems: &'a [String],
    ) -> BoxFuture<'a, ElicitationAnswer> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let name = self.name;
        Box::pin(async move { ElicitationAnswer::Accept(json!({"name": name, "age": 7})) })
    }
}

impl SamplingHandler for Named {
    fn create_message<'a>(
        &'a self,
        _params: &'a Value,
        _during: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let name = self.name;
        Box::pin(async move {
            Ok(
                json!({"role": "assistant", "model": "scripted", "stopReason": "endTurn",
                "content": {"type": "text", "text": format!("summary by {name}")}}),
            )
        })
    }
}

/// `mcpx serve --http` in front of the demo server and `extra`.
async fn gateway(dir: &std::path::Path, extra: &str) -> HttpPeer {
    common::serve_http(&config(dir, &[], extra, "")).await
}

/// A client of `gateway` named `name`, with elicitation and sampling.
async fn client(gateway: &HttpPeer, name: &'static str) -> (Client, Named) {
    let user = Named {
        name,
        asked: Arc::default(),
    };
    let options = ClientOptions {
        handlers: Handlers::default()
            .elicitation(user.clone())
            .sampling(user.clone()),
        protocol: Protocol::Legacy,
        ..ClientOptions::default()
    };
    (common::http_client(gateway, options).await.0, user)
}

/// The text of a tool result.
fn text(outcome: &mcpclient::CallOutcome) -> String {
    let result = outcome.response.result().unwrap();
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `CALLS` eliciting and `CALLS` sampling calls of `tool_prefix`'s tools at once; each answer
/// names the client that made the call.
async fn ask_many(client: &Client, user: &Named, tool_prefix: &str) {
    let greet = format!("{tool_prefix}greet");
    let summarize = format!("{tool_prefix}summarize");
    let greetings = (0..CALLS).map(|_| client.call_tool(&greet, json!({})));
    let summaries =
        (0..CALLS).map(|i| client.call_tool(&summarize, json!({"text": format!("text {i}")})));
    let (greetings, summaries) = tokio::join!(
        futures_util::future::join_all(greetings),
        futures_util::future::join_all(summaries)
    );
    for greeting in greetings {
        assert_eq!(text(&greeting.unwrap()), format!("hello {}, 7", user.name));
    }
    for summary in summaries {
        assert_eq!(text(&summary.unwrap()), format!("summary by {}", user.name));
    }
}

/// Over a Streamable HTTP server, each question goes to the client whose call caused it: two
/// clients, many eliciting and sampling calls each at once, zero cross-deliveries.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn each_question_reaches_the_client_whose_call_asked_it() {
    let (Some(_), Some(upstream)) = (spec(), python_over_http().await) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(r#""py": {{"url": "{}"}}"#, upstream.url);
    let gateway = gateway(dir.path(), &extra).await;
    let (a, user_a) = client(&gateway, "alice").await;
    let (b, user_b) = client(&gateway, "bob").await;
    tokio::join!(ask_many(&a, &user_a, "py__"), ask_many(&b, &user_b, "py__"));
    assert_eq!(user_a.asked.load(Ordering::SeqCst), 2 * CALLS);
    assert_eq!(user_b.asked.load(Ordering::SeqCst), 2 * CALLS);
}

/// Over stdio nothing says whose call asked: with one client calling, it is asked; while two
/// clients have calls in flight to the server, the question is declined, never guessed.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn an_ambiguous_question_from_a_shared_stdio_server_is_declined_not_guessed() {
    let (Some(_), Some(python)) = (spec(), python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let extra = json!({"pys": {"command": python, "args": [peer_file("python_peer.py"), "stdio"]}});
    let extra = extra.to_string();
    let gateway = gateway(dir.path(), &extra[1..extra.len() - 1]).await;
    let (a, user_a) = client(&gateway, "alice").await;
    let (b, user_b) = client(&gateway, "bob").await;

    let alone = a.call_tool("pys__greet", json!({})).await.unwrap();
    assert_eq!(text(&alone), "hello alice, 7");

    // Bob's call is in flight once its first progress step arrives.
    let (mut options, mut progress) = CallOptions::with_progress();
    options.timeout = None;
    let waiting = b.call_tool_with("pys__wait", json!({"seconds": 5}), options);
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => panic!("the wait ended before its first progress step"),
        step = progress.recv() => assert!(step.is_some()),
    }
    let asked_before = user_a.asked.load(Ordering::SeqCst);
    let ambiguous = a.call_tool("pys__greet", json!({})).await.unwrap();
    assert_eq!(text(&ambiguous), "decline");
    assert_eq!(user_a.asked.load(Ordering::SeqCst), asked_before);
    assert_eq!(user_b.asked.load(Ordering::SeqCst), 0);
    assert_eq!(text(&waiting.await.unwrap()), "waited 5.0");
    assert!(
        gateway
            .log()
            .contains("clients have calls in flight to this server"),
        "{}",
        gateway.log()
    );
}

/// How long a notification that should come may take to come.
const NOTIFICATION_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long one that should not come is waited for, after one that should came to another
/// client.
const STRAY_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The params of the next notification `method` within `within`; others are skipped.
async fn notified(
    events: &mut tokio::sync::mpsc::Receiver<mcpclient::Event>,
    method: &str,
    within: std::time::Duration,
) -> Option<Value> {
    tokio::time::timeout(within, async {
        while let Some(event) = events.recv().await {
            if let mcpclient::Event::Notification(frame) = event {
                let value = frame.value().unwrap();
                if value["method"] == method {
                    return Some(value["params"].clone());
                }
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
}

/// Whether a log message at `level` arrives within `within`.
async fn logged(
    events: &mut tokio::sync::mpsc::Receiver<mcpclient::Event>,
    level: &str,
    within: std::time::Duration,
) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match notified(events, "notifications/message", left).await {
            Some(params) if params["level"] == level => return true,
            Some(_) => continue,
            None => return false,
        }
    }
}

/// How many times the demo server was sent `method`, from its transcript.
fn upstream_calls(dir: &std::path::Path, method: &str) -> Vec<Value> {
    common::demo_transcript(dir, spec().unwrap())
        .into_iter()
        .filter(|e| e["from"] == "client" && e["message"]["method"] == method)
        .map(|e| e["message"]["params"].clone())
        .collect()
}

const URI: &str = "demo://counter";

async fn subscribe(client: &Client, method: &str) {
    client
        .request(method, Some(json!({"uri": URI})), CallOptions::default())
        .await
        .unwrap();
}

async fn level(client: &Client, level: &str) {
    client
        .request(
            "logging/setLevel",
            Some(json!({"level": level})),
            CallOptions::default(),
        )
        .await
        .unwrap();
}

async fn notify(client: &Client, level: &str) {
    let outcome = client
        .call_tool("demo__notify", json!({"uri": URI, "level": level}))
        .await
        .unwrap();
    assert_eq!(text(&outcome), "notified");
}

/// Subscriptions and log levels belong to the session that asked: updates reach only
/// subscribed sessions, one session's unsubscribe leaves the other's subscription alone, the
/// server hears the first subscribe and the last unsubscribe, and each session gets log
/// messages at its own level.
#[tokio::test(flavor = "multi_thread")]
async fn subscriptions_and_log_levels_belong_to_their_session() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gateway = common::serve_http(&config(dir.path(), &["--notifying"], "", "")).await;
    let (a, mut a_events) = plain_client(&gateway).await;
    let (b, mut b_events) = plain_client(&gateway).await;
    let updated = "notifications/resources/updated";

    subscribe(&a, "resources/subscribe").await;
    notify(&a, "notice").await;
    assert_eq!(
        notified(&mut a_events, updated, NOTIFICATION_WAIT).await,
        Some(json!({"uri": URI}))
    );
    assert_eq!(
        notified(&mut b_events, updated, STRAY_WAIT).await,
        None,
        "b never subscribed"
    );

    subscribe(&b, "resources/subscribe").await;
    subscribe(&a, "resources/unsubscribe").await;
    notify(&a, "notice").await;
    assert!(
        notified(&mut b_events, updated, NOTIFICATION_WAIT)
            .await
            .is_some(),
        "b is still subscribed"
    );
    assert_eq!(
        notified(&mut a_events, updated, STRAY_WAIT).await,
        None,
        "a unsubscribed"
    );
    assert_eq!(upstream_calls(dir.path(), "resources/subscribe").len(), 1);
    assert!(upstream_calls(dir.path(), "resources/unsubscribe").is_empty());
    subscribe(&b, "resources/unsubscribe").await;
    assert_eq!(upstream_calls(dir.path(), "resources/unsubscribe").len(), 1);

    // The log messages above were "notice"; these are "info" and "error".
    level(&a, "debug").await;
    level(&b, "error").await;
    assert_eq!(
        upstream_calls(dir.path(), "logging/setLevel"),
        [json!({"level": "debug"})]
    );
    notify(&a, "info").await;
    assert!(
        logged(&mut a_events, "info", NOTIFICATION_WAIT).await,
        "a asked for debug"
    );
    assert!(
        !logged(&mut b_events, "info", STRAY_WAIT).await,
        "b asked for errors only"
    );
    notify(&b, "error").await;
    assert!(logged(&mut b_events, "error", NOTIFICATION_WAIT).await);
    assert!(logged(&mut a_events, "error", NOTIFICATION_WAIT).await);
}

/// With `"isolation": "per-session"`, a stdio server that asks questions gets a process per
/// session: many eliciting and sampling calls from two clients at once, each answered by its
/// own caller; a session's process stops when the session ends.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn a_per_session_server_asks_each_session_only_its_own_questions() {
    let (Some(_), Some(python)) = (spec(), python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A copy of its own, so that its processes are told apart from other tests'.
    let script = dir.path().join("python_peer.py").display().to_string();
    std::fs::copy(peer_file("python_peer.py"), &script).unwrap();
    let extra = json!({"pys": {"command": python, "args": [&script, "stdio"],
        "isolation": "per-session"}})
    .to_string();
    let gateway = gateway(dir.path(), &extra[1..extra.len() - 1]).await;
    let (a, user_a) = client(&gateway, "alice").await;
    let (b, user_b) = client(&gateway, "bob").await;
    tokio::join!(
        ask_many(&a, &user_a, "pys__"),
        ask_many(&b, &user_b, "pys__")
    );
    assert_eq!(user_a.asked.load(Ordering::SeqCst), 2 * CALLS);
    assert_eq!(user_b.asked.load(Ordering::SeqCst), 2 * CALLS);
    // The gateway's own connection for its lists, and one per session.
    let pids: Vec<u32> = common::processes_with(&script)
        .iter()
        .map(|(pid, _)| *pid)
        .collect();
    assert_eq!(pids.len(), 3);
    a.close().await;
    // Gone, not even a zombie: stopped and reaped.
    let mut left = common::still_there(&pids);
    for _ in 0..100 {
        if left.len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        left = common::still_there(&pids);
    }
    assert_eq!(
        left.len(),
        2,
        "alice's process stops with her session: {left:?}"
    );
}

/// Calls per tool that each official SDK client makes, all at once.
const SDK_CALLS: usize = 20;

/// An official SDK, as a client.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

/// The server the gateway fronts in an SDK isolation test.
#[derive(Clone, Copy)]
enum Upstream {
    /// The Python SDK server over Streamable HTTP, shared: a question is routed by the stream
    /// of the POST it arrives on.
    SharedHttp,
    /// The Python SDK server over stdio with `"isolation": "per-session"`: a process per session.
    PerSessionStdio,
}

/// `sdk_client_isolation.{py,cjs}` of `sdk` as `name`, against `url`: the program and its
/// arguments; `None` (skipped) when that SDK is not installed.
fn sdk_client(sdk: Sdk, url: &str, name: &str, prefix: &str) -> Option<(PathBuf, Vec<String>)> {
    let calls = SDK_CALLS.to_string();
    let (program, mut args) = match sdk {
        Sdk::Python => (python()?, vec![peer_file("sdk_client_isolation.py")]),
        Sdk::TypeScript => (
            PathBuf::from("node"),
            vec![
                peer_file("sdk_client_isolation.cjs"),
                ts_sdk()?.display().to_string(),
            ],
        ),
    };
    args.extend([url, name, &calls, prefix].map(str::to_owned));
    Some((program, args))
}

/// One SDK client's summary: each question it was asked is its own, asked once; each call
/// it made was answered, and by it.
fn assert_own_answers(name: &str, summary: &Value) {
    assert_eq!(summary["client"], name);
    let own = format!("{name} ");
    let asked = summary["asked"].as_array().unwrap();
    let foreign: Vec<&Value> = asked
        .iter()
        .filter(|q| !q["text"].as_str().unwrap_or_default().starts_with(&own))
        .collect();
    assert!(
        foreign.is_empty(),
        "{name} was asked {} questions of other clients: {foreign:?}",
        foreign.len()
    );
    let mut asked: Vec<(String, String)> = asked
        .iter()
        .map(|q| {
            let field = |key: &str| q[key].as_str().unwrap_or_default().to_owned();
            (field("kind"), field("text"))
        })
        .collect();
    asked.sort();
    let mut expected: Vec<(String, String)> = (0..SDK_CALLS)
        .flat_map(|i| {
            [
                ("elicitation".to_owned(), format!("{name} question {i}")),
                ("sampling".to_owned(), format!("{name} text {i}")),
            ]
        })
        .collect();
    expected.sort();
    assert_eq!(asked, expected, "the questions {name} was asked");

    let results = summary["results"].as_array().unwrap();
    assert_eq!(results.len(), 2 * SDK_CALLS, "{name}'s results");
    for result in results {
        let question = result["question"].as_str().unwrap();
        let want = match result["tool"].as_str().unwrap() {
            "greet" => format!("hello {name} answering {question}, 7"),
            _ => format!("summary by {name} of {question}"),
        };
        assert_eq!(result["text"], want.as_str(), "{name}'s call: {result}");
        assert_eq!(result["isError"], false, "{name}'s call: {result}");
    }
}

/// The gateway in front of `upstream`, and two clients of `sdks` at once, each calling an
/// eliciting and a sampling tool `SDK_CALLS` times at once: every answer lands with its own
/// caller, zero cross-deliveries, every call answered.
async fn sdk_clients_never_mix(upstream: Upstream, sdks: [Sdk; 2]) {
    let (Some(_), Some(python)) = (spec(), python()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_http_upstream, extra, prefix) = match upstream {
        Upstream::SharedHttp => {
            let Some(peer) = python_over_http().await else {
                return;
            };
            let extra = format!(r#""py": {{"url": "{}"}}"#, peer.url);
            (Some(peer), extra, "py__")
        }
        Upstream::PerSessionStdio => {
            let extra = json!({"pys": {"command": python,
                "args": [peer_file("python_peer.py"), "stdio"], "isolation": "per-session"}})
            .to_string();
            (None, extra[1..extra.len() - 1].to_owned(), "pys__")
        }
    };
    let gateway = gateway(dir.path(), &extra).await;
    let names: Vec<String> = ["alice", "bob"]
        .iter()
        .zip(sdks)
        .map(|(name, sdk)| format!("{name}-{sdk:?}"))
        .collect();
    let mut runs = Vec::new();
    for (sdk, name) in sdks.iter().zip(&names) {
        let Some((program, args)) = sdk_client(*sdk, &gateway.url, name, prefix) else {
            return;
        };
        runs.push(async move { run_client(&program, &args).await });
    }
    let outputs = futures_util::future::join_all(runs).await;
    for (name, output) in names.iter().zip(&outputs) {
        let summary: Value = serde_json::from_str(output.trim())
            .unwrap_or_else(|e| panic!("{name}'s summary: {e}: {output}"));
        assert_own_answers(name, &summary);
    }
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_sdk_clients_never_mix_over_a_shared_http_server() {
    sdk_clients_never_mix(Upstream::SharedHttp, [Sdk::Python, Sdk::Python]).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn typescript_sdk_clients_never_mix_over_a_shared_http_server() {
    sdk_clients_never_mix(Upstream::SharedHttp, [Sdk::TypeScript, Sdk::TypeScript]).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_and_typescript_sdk_clients_never_mix_over_a_shared_http_server() {
    sdk_clients_never_mix(Upstream::SharedHttp, [Sdk::Python, Sdk::TypeScript]).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_sdk_clients_never_mix_over_a_per_session_stdio_server() {
    sdk_clients_never_mix(Upstream::PerSessionStdio, [Sdk::Python, Sdk::Python]).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn typescript_sdk_clients_never_mix_over_a_per_session_stdio_server() {
    sdk_clients_never_mix(
        Upstream::PerSessionStdio,
        [Sdk::TypeScript, Sdk::TypeScript],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_and_typescript_sdk_clients_never_mix_over_a_per_session_stdio_server() {
    sdk_clients_never_mix(Upstream::PerSessionStdio, [Sdk::Python, Sdk::TypeScript]).await;
}
