//! Sessions that never mix: several clients of one `mcpx serve --http`, each asked only what its
//! own calls caused. Real peers: the Python SDK server (over Streamable HTTP, where a server's
//! question arrives on the stream of the call that caused it, and over stdio, where nothing
//! says whose call asked).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{config, spec, MCPX};
use mcpclient::{
    BoxFuture, CallOptions, Client, ClientOptions, ElicitationAnswer, ElicitationHandler,
    ElicitationRequest, HandlerError, Handlers, HttpConfig, HttpTransport, SamplingHandler,
};
use mcpspec::Recording;
use mcpx_interop::{peer_file, python, python_over_http, HttpPeer};
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
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
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
    let config = config(dir, &[], extra, "");
    let config = config.display().to_string();
    HttpPeer::start(
        MCPX,
        &["--config", &config, "serve", "--http", "127.0.0.1:0"],
        &[],
        "/mcp",
    )
    .await
}

/// A client of `gateway` named `name`, with elicitation and sampling.
async fn client(gateway: &HttpPeer, name: &'static str) -> (Client, Named) {
    let user = Named {
        name,
        asked: Arc::default(),
    };
    let transport = HttpTransport::new(&HttpConfig {
        url: gateway.url.clone(),
        headers: Vec::new(),
    })
    .unwrap();
    let options = ClientOptions {
        handlers: Handlers::default()
            .elicitation(user.clone())
            .sampling(user.clone()),
        ..ClientOptions::default()
    };
    let (client, _events) =
        Client::connect_with(Recording::new(spec().unwrap(), transport), options)
            .await
            .unwrap();
    client.list_tools().await.unwrap();
    (client, user)
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
