//! The gateway in memory: no binary and no child process. Its servers are mcpx-fixture running in
//! this process over an in-memory pipe ([`mcpclient::InProcess`]: a `tokio::io::duplex` that
//! the fixture's thread reads and writes as a process would, the same on every platform), its
//! clients are sessions driven through [`Gateway::receive`], two or more at once for every
//! session rule: subscriptions and log levels per session, batches, a call right after a crash,
//! params passed through, and whom a server's question goes to.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::gateway::Gateway;
use crate::options::GatewayOptions;
use crate::options::Isolation;
use crate::options::UpstreamConfig;
use crate::policy::naming::default_prefix;
use crate::policy::naming::ToolFilter;
use crate::sessions::session::Session;
use crate::testing::Kept;
use mcpclient::{Frame, InProcess, Pipe, Protocol, Reach};
use serde_json::{json, Value};
use tokio_util::io::SyncIoBridge;

/// How long a test waits for any one frame: far above what it takes, so only a bug hits it.
const WAIT: Duration = Duration::from_secs(20);

/// The bytes an in-memory pipe holds in each direction before a writer waits for the reader.
const PIPE_BUFFER: usize = 64 * 1024;

/// A fixture server in this process, each connection a new "process" (a crash ends only its
/// own), every line of every connection recorded in one transcript.
struct Fixture {
    config: UpstreamConfig,
    /// The folder of the transcripts, one file per connection.
    transcript: PathBuf,
    _dir: tempfile::TempDir,
}

fn fixture(name: &str, isolation: Isolation) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().to_owned();
    let connections = AtomicUsize::new(0);
    let server = InProcess::new(name, move || -> std::io::Result<Box<dyn Pipe>> {
        let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        let (ours, theirs) = tokio::io::duplex(PIPE_BUFFER);
        // A transcript per connection: connections run at once.
        let n = connections.fetch_add(1, Ordering::Relaxed);
        let record = std::fs::File::create(transcript.join(format!("{n}.jsonl")))?;
        // The fixture reads and writes as a process would, blocking, on a thread of its own.
        let (read, write) = tokio::io::split(theirs);
        let input = BufReader::new(SyncIoBridge::new_with_handle(read, runtime.clone()));
        let output = SyncIoBridge::new_with_handle(write, runtime);
        std::thread::spawn(move || {
            let options = mcpx_fixture::Options {
                record: Some(record),
                faults: true,
                notifying: true,
                ..Default::default()
            };
            mcpx_fixture::serve(input, output, options);
        });
        Ok(Box::new(ours))
    });
    Fixture {
        config: UpstreamConfig {
            name: name.to_owned(),
            transport: Reach::InProcess(server),
            tools: ToolFilter::default(),
            isolation,
            prefix: default_prefix(name),
            protocol: Protocol::Legacy,
            coerce_arguments: false,
            exposure: None,
            start_timeout: crate::options::START_TIMEOUT,
            pinning: None,
        },
        transcript: dir.path().to_owned(),
        _dir: dir,
    }
}

/// What the server received with `method`, connection by connection, each in order.
/// Lines still being written are not read yet.
fn received(transcripts: &Path, method: &str) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(transcripts)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort_by_key(|f| {
        f.file_stem()
            .and_then(|s| s.to_str()?.parse::<usize>().ok())
            .unwrap_or(usize::MAX)
    });
    files
        .iter()
        .flat_map(|f| {
            // The fixture may be writing its next line as we read: only whole
            // lines (ended by a newline) count.
            let text = std::fs::read_to_string(f).unwrap();
            let whole = text.rfind('\n').map_or("", |end| &text[..end]);
            whole.lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .map(|l| serde_json::from_str::<Value>(&l).unwrap())
        .filter(|l| l["from"] == "client" && l["message"]["method"] == method)
        .map(|l| l["message"].clone())
        .collect()
}

/// A client of the gateway: a session and what reached it.
struct Client {
    gateway: Gateway,
    session: Arc<Session>,
    kept: Kept,
}

impl Client {
    async fn new(gateway: &Gateway, version: &str, capabilities: Value) -> Client {
        let kept = Kept::default();
        let session =
            gateway.open_session(kept.clone(), crate::sessions::principal::Principal::local());
        let client = Client {
            gateway: gateway.clone(),
            session,
            kept,
        };
        let answer = client
            .request(
                "init",
                "initialize",
                json!({"protocolVersion": version, "capabilities": capabilities,
                    "clientInfo": {"name": "in-memory", "version": "1"}}),
            )
            .await;
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        client.notify("notifications/initialized", json!({}));
        client
    }

    fn send(&self, message: Value) {
        self.send_text(&message.to_string());
    }

    fn send_text(&self, text: &str) {
        self.gateway
            .receive(&self.session, Frame::parse(text).unwrap());
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its answer.
    async fn request(&self, id: &str, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(&json!(id)).await
    }

    async fn call(&self, id: &str, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// The first frame that satisfies `wanted`, waiting for it.
    async fn wait_for(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            // A copy: `wanted` may look at the frames too.
            let frames = self.frames();
            if let Some(found) = frames.iter().find(|m| wanted(m)) {
                return found.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {what} within {WAIT:?}; got {frames:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The answer to request `id`.
    async fn answer(&self, id: &Value) -> Value {
        self.wait_for(&format!("answer to {id}"), |m| {
            m.get("method").is_none() && m["id"] == *id
        })
        .await
    }

    /// The notifications with `method` that reached this session so far.
    fn notifications(&self, method: &str) -> Vec<Value> {
        self.kept
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == method && m.get("id").is_none())
            .cloned()
            .collect()
    }

    /// The frames that reached this session so far.
    fn frames(&self) -> Vec<Value> {
        self.kept.frames()
    }
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
}

async fn three_clients(gateway: &Gateway) -> (Client, Client, Client) {
    let capabilities = json!({"elicitation": {}});
    (
        Client::new(gateway, "2025-11-25", capabilities.clone()).await,
        Client::new(gateway, "2025-11-25", capabilities.clone()).await,
        Client::new(gateway, "2025-11-25", capabilities).await,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_each_sessions_own_and_counted_upstream() {
    let server = fixture("demo", Isolation::Shared);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, c) = three_clients(&gateway).await;
    let uri = mcpx_fixture::NOTIFYING_URI;
    let subscribed = a
        .request("s1", "resources/subscribe", json!({"uri": uri}))
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    b.request("s1", "resources/subscribe", json!({"uri": uri}))
        .await;
    // Two sessions subscribed: the server was asked once.
    assert_eq!(received(&server.transcript, "resources/subscribe").len(), 1);

    let notify = json!({"uri": uri, "level": "info"});
    c.call("n1", "demo__notify", notify.clone()).await;
    let updates = |x: &Client| x.notifications("notifications/resources/updated").len();
    a.wait_for("update", |m| {
        m["method"] == "notifications/resources/updated"
    })
    .await;
    b.wait_for("update", |m| {
        m["method"] == "notifications/resources/updated"
    })
    .await;
    assert_eq!((updates(&a), updates(&b), updates(&c)), (1, 1, 0));

    // B leaves: A is still subscribed, so nothing goes upstream, and B gets no more updates.
    b.request("u1", "resources/unsubscribe", json!({"uri": uri}))
        .await;
    assert!(received(&server.transcript, "resources/unsubscribe").is_empty());
    c.call("n2", "demo__notify", notify.clone()).await;
    a.wait_for("second update", |_| updates(&a) == 2).await;
    assert_eq!((updates(&a), updates(&b), updates(&c)), (2, 1, 0));

    // The last subscriber leaves by ending its session: now the server is told, once.
    gateway.close_session(&a.session);
    let deadline = tokio::time::Instant::now() + WAIT;
    while received(&server.transcript, "resources/unsubscribe").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no unsubscribe");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let unsubscribes = received(&server.transcript, "resources/unsubscribe");
    assert_eq!(unsubscribes.len(), 1);
    assert_eq!(unsubscribes[0]["params"]["uri"], uri);
    gateway.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_levels_are_per_session_and_the_server_gets_the_most_verbose() {
    let server = fixture("demo", Isolation::Shared);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, c) = three_clients(&gateway).await;
    a.request("l", "logging/setLevel", json!({"level": "debug"}))
        .await;
    b.request("l", "logging/setLevel", json!({"level": "error"}))
        .await;
    let levels = || -> Vec<Value> {
        received(&server.transcript, "logging/setLevel")
            .iter()
            .map(|m| m["params"]["level"].clone())
            .collect()
    };
    assert_eq!(levels().last(), Some(&json!("debug")), "{:?}", levels());

    // A warning: A (debug) and C (no level chosen: info and above) get it, B (error) does not.
    c.call(
        "n1",
        "demo__notify",
        json!({"uri": "demo://x", "level": "warning"}),
    )
    .await;
    let logs = |x: &Client| x.notifications("notifications/message").len();
    a.wait_for("log", |m| m["method"] == "notifications/message")
        .await;
    c.wait_for("log", |m| m["method"] == "notifications/message")
        .await;
    // The answer to n1 came after the log line on the one stream: B's view is complete.
    assert_eq!((logs(&a), logs(&b), logs(&c)), (1, 0, 1));
    // A debug line reaches A alone.
    c.call(
        "n2",
        "demo__notify",
        json!({"uri": "demo://x", "level": "debug"}),
    )
    .await;
    a.wait_for("debug log", |_| logs(&a) == 2).await;
    assert_eq!((logs(&a), logs(&b), logs(&c)), (2, 0, 1));

    // The debug session ends: the most verbose wish left is error.
    gateway.close_session(&a.session);
    let deadline = tokio::time::Instant::now() + WAIT;
    while levels().last() != Some(&json!("error")) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "levels {:?}",
            levels()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    gateway.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_are_answered_in_2025_03_26_and_refused_per_element_otherwise() {
    let server = fixture("demo", Isolation::Shared);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let old = Client::new(&gateway, "2025-03-26", json!({})).await;
    let new = Client::new(&gateway, "2025-11-25", json!({})).await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "demo__get-sum", "arguments": {"a": 2, "b": 3}}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
    ]);
    old.send(batch.clone());
    assert_eq!(old.answer(&json!(1)).await["result"], json!({}));
    assert_eq!(text(&old.answer(&json!(2)).await), "5");

    new.send(batch);
    for id in [1, 2] {
        let refused = new.answer(&json!(id)).await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert!(refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-03-26"));
    }
    // The refused call never reached the server; the accepted one did, once.
    assert_eq!(received(&server.transcript, "tools/call").len(), 1);

    // Neither request nor response, but with a readable id: answered with that id.
    for client in [&old, &new] {
        client.send_text(r#"{"jsonrpc":"2.0","id":4}"#);
        assert_eq!(client.answer(&json!(4)).await["error"]["code"], -32600);
    }
    // Every request with an id got exactly one answer.
    for client in [&old, &new] {
        let mut ids: Vec<String> = client
            .frames()
            .iter()
            .filter(|m| m.get("method").is_none())
            .map(|m| m["id"].to_string())
            .collect();
        let count = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count, "an id answered twice: {ids:?}");
    }
    gateway.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_right_after_a_crash_waits_for_the_restart() {
    let server = fixture("up", Isolation::Shared);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, _) = three_clients(&gateway).await;
    let crashed = a.call("1", "up__crash", json!({})).await;
    assert!(crashed.get("error").is_some(), "{crashed}");
    // At once, from another session: the server is restarting, so the call waits for it.
    let sum = b.call("1", "up__get-sum", json!({"a": 20, "b": 22})).await;
    assert_eq!(text(&sum), "42", "{sum}");
    assert_eq!(received(&server.transcript, "initialize").len(), 2);
    // A tool that really is unknown is still -32602, at once.
    let unknown = a.call("2", "up__no-such-tool", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    gateway.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_and_meta_pass_through_and_only_the_progress_token_is_mapped() {
    let server = fixture("demo", Isolation::Shared);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, _) = three_clients(&gateway).await;
    // A number no f64 holds, an unknown member and _meta keys mcpx does not own.
    let params = |token: &str| -> Value {
        serde_json::from_str(&format!(
            r#"{{"name": "demo__count", "arguments": {{"steps": 2}},
                "com.example/extra": {{"n": 1E400, "keep": [true]}},
                "_meta": {{"progressToken": "{token}", "com.example/trace": "abc",
                    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}}"#
        ))
        .unwrap()
    };
    // Both sessions use the same progress token: each must get only its own progress.
    a.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params("p1")}));
    b.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params("p1")}));
    a.answer(&json!(1)).await;
    b.answer(&json!(1)).await;
    for client in [&a, &b] {
        let progress = client.notifications("notifications/progress");
        assert_eq!(progress.len(), 2, "{progress:?}");
        assert!(progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "p1"));
    }
    let calls = received(&server.transcript, "tools/call");
    assert_eq!(calls.len(), 2);
    let tokens: Vec<&Value> = calls
        .iter()
        .map(|c| &c["params"]["_meta"]["progressToken"])
        .collect();
    assert_ne!(
        tokens[0], tokens[1],
        "the two sessions' tokens were told apart"
    );
    for call in &calls {
        assert_eq!(call["params"]["arguments"], json!({"steps": 2}));
        // (The transcript is read back through serde_json, so compare as values.)
        let extra: Value = serde_json::from_str(r#"{"n": 1E400, "keep": [true]}"#).unwrap();
        assert_eq!(call["params"]["com.example/extra"], extra);
        assert_eq!(call["params"]["_meta"]["com.example/trace"], "abc");
        assert_eq!(
            call["params"]["_meta"]["traceparent"],
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        );
        assert_eq!(call["params"]["name"], "count");
    }
    gateway.shutdown().await;
}

/// Two sessions each book tables, all at once: every question reaches the session whose call
/// asked it, and every answer lands in that session's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_session_servers_ask_only_their_own_session() {
    let server = fixture("demo", Isolation::PerSession);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, _) = three_clients(&gateway).await;
    let rounds = 10;
    let book = |client: &Client, party: u64| {
        let client = Client {
            gateway: client.gateway.clone(),
            session: client.session.clone(),
            kept: client.kept.clone(),
        };
        async move {
            for round in 0..rounds {
                let id = format!("book-{round}");
                client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "demo__book-table", "arguments": {"restaurant": format!("r{party}")}}}));
                // This round's question (the one after the rounds before), answered with this
                // session's party.
                let questions = || -> Vec<Value> {
                    client
                        .frames()
                        .into_iter()
                        .filter(|m| m["method"] == "elicitation/create")
                        .collect()
                };
                client
                    .wait_for("question", |_| questions().len() > round)
                    .await;
                let question = questions()[round].clone();
                client.send(json!({"jsonrpc": "2.0", "id": question["id"],
                    "result": {"action": "accept", "content": {"party": party, "time": "19:00"}}}));
                let answer = client.answer(&json!(id)).await;
                assert_eq!(
                    text(&answer),
                    format!("booked r{party} for {party} at 19:00")
                );
            }
        }
    };
    tokio::join!(book(&a, 2), book(&b, 7));
    for (client, party) in [(&a, 2), (&b, 7)] {
        let questions = client.notifications("elicitation/create");
        assert!(questions.is_empty(), "questions are requests, with ids");
        let asked = client
            .frames()
            .iter()
            .filter(|m| m["method"] == "elicitation/create")
            .count();
        assert_eq!(asked, rounds, "session with party {party}");
    }
    // Each session had a connection of its own (plus the gateway's listing one).
    assert_eq!(received(&server.transcript, "initialize").len(), 3);
    gateway.shutdown().await;
}

/// A session ended while a request of its was still arriving (its body mid-upload when the
/// client, or the gateway making room, ended it): the request is refused, and no server of its
/// own is started for it (nothing would ever stop it). Another session is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_takes_no_request_and_starts_no_server() {
    let server = fixture("demo", Isolation::PerSession);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, _) = three_clients(&gateway).await;
    let sum = json!({"a": 2, "b": 3});
    let first = a.call("before", "demo__get-sum", sum.clone()).await;
    assert_eq!(text(&first), "5", "{first}");
    // The gateway's listing connection and a's own.
    assert_eq!(received(&server.transcript, "initialize").len(), 2);

    gateway.close_session(&a.session);
    let late = a.call("late", "demo__get-sum", sum.clone()).await;
    assert!(
        late["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the session has ended")),
        "{late}"
    );
    let other = b.call("b", "demo__get-sum", sum).await;
    assert_eq!(text(&other), "5", "{other}");
    // b's own connection, and none for the ended session.
    assert_eq!(received(&server.transcript, "initialize").len(), 3);
    gateway.shutdown().await;
}

/// On a shared server whose transport cannot say whose call a question belongs to, a question
/// goes to the one session calling; with two calling, it is declined, never guessed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_servers_question_is_never_guessed() {
    let server = fixture("demo", Isolation::Shared);
    let gateway = Gateway::start(vec![server.config.clone()], GatewayOptions::default());
    let (a, b, _) = three_clients(&gateway).await;
    // One session calling: its question reaches it.
    a.send(json!({"jsonrpc": "2.0", "id": "q", "method": "tools/call",
        "params": {"name": "demo__book-table", "arguments": {"restaurant": "solo"}}}));
    let question = a
        .wait_for("question", |m| m["method"] == "elicitation/create")
        .await;
    a.send(json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"party": 3, "time": "18:00"}}}));
    assert_eq!(
        text(&a.answer(&json!("q")).await),
        "booked solo for 3 at 18:00"
    );
    // B calls and is asked; it has not answered yet, so its call is in flight when A's call
    // asks too (the fixture asks again for the newest booking): two sessions calling, so the
    // second question is declined, never guessed.
    b.send(json!({"jsonrpc": "2.0", "id": "b1", "method": "tools/call",
        "params": {"name": "demo__book-table", "arguments": {"restaurant": "b"}}}));
    b.wait_for("question", |m| m["method"] == "elicitation/create")
        .await;
    a.send(json!({"jsonrpc": "2.0", "id": "q2", "method": "tools/call",
        "params": {"name": "demo__book-table", "arguments": {"restaurant": "two"}}}));
    let declined = a.answer(&json!("q2")).await;
    assert!(
        text(&declined).starts_with("not booked"),
        "declined, not guessed: {declined}"
    );
    b.notify(
        "notifications/cancelled",
        json!({"requestId": "b1", "reason": "done"}),
    );
    let asked = |x: &Client| {
        x.frames()
            .iter()
            .filter(|m| m["method"] == "elicitation/create")
            .count()
    };
    assert_eq!((asked(&a), asked(&b)), (1, 1));
    gateway.shutdown().await;
}
