//! `mcpx serve` over stdio, driven frame by frame with every frame on both sides checked
//! against the protocol schema: aggregation, enforced inputs, byte-exact outputs, progress,
//! elicitation, cancellation and a crashing server.

mod common;

use std::time::Duration;

#[cfg(target_os = "linux")]
use common::processes_with;
use common::{config, demo_transcript, result_text, spec, Downstream, DRIFTING, MCPX};
use mcpclient::Frame;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_aggregated_inputs_enforced_and_outputs_forwarded_unchanged() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mirror = format!(
        r#""mirror": {{"command": "{}", "args": ["demo-server"], "allowTools": ["get-*", "echo"], "denyTools": ["echo"]}}"#,
        common::MCPX
    );
    let config = config(dir.path(), &[], &mirror, "");
    let mut client = Downstream::start(&config, &[], json!({})).await;

    let names = client.tool_names().await;
    assert_eq!(
        names,
        [
            "demo__get-sum",
            "demo__echo",
            "demo__book-table",
            "demo__count",
            "demo__tiny-image",
            "demo__drifting-output",
            "mirror__get-sum"
        ]
    );

    let summed = client.call("demo__get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(
        result_text(&summed),
        r#"{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5}}"#
    );
    let mirrored = client
        .call("mirror__get-sum", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(
        mirrored.value().unwrap()["result"]["structuredContent"]["sum"],
        2
    );

    let rejected = client
        .call("demo__get-sum", json!({"a": 2, "b": "three"}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        rejected["error"],
        json!({"code": -32602,
            "message": "invalid arguments for tool 'demo__get-sum': $.b: got string, want integer",
            "data": {"violations": ["$.b: got string, want integer"]}})
    );
    let denied = client
        .call("mirror__echo", json!({"text": "hi"}))
        .await
        .value()
        .unwrap();
    assert_eq!(denied["error"]["message"], "unknown tool 'mirror__echo'");

    let drifted = client.call("demo__drifting-output", json!({})).await;
    assert_eq!(
        drifted.text(),
        format!(r#"{{"jsonrpc":"2.0","id":7,"result":{DRIFTING}}}"#)
    );

    let log = client.close().await;
    assert!(
        log.lines().any(|l| l
            .contains("structuredContent violates outputSchema (delivered unchanged)")
            && l.contains(r#"server="demo""#)
            && l.contains("$.sum: got string, want integer")),
        "{log}"
    );
    // Counted: one rejected call, one drifted result.
    assert!(
        log.lines().any(|l| l.contains("stopped")
            && l.contains("rejected_calls=1")
            && l.contains("output_warnings=1")),
        "{log}"
    );

    let transcript = demo_transcript(dir.path(), spec);
    let calls: Vec<&Value> = transcript
        .iter()
        .filter(|e| e["from"] == "client" && e["message"]["method"] == "tools/call")
        .map(|e| &e["message"]["params"])
        .collect();
    assert_eq!(
        calls,
        [
            &json!({"name": "get-sum", "arguments": {"a": 2, "b": 3}}),
            &json!({"name": "drifting-output", "arguments": {}})
        ],
        "the rejected call never reached the server"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_reaches_the_caller_under_its_own_token() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let counted = client
        .request(
            "tools/call",
            json!({"name": "demo__count", "arguments": {"steps": 3}, "_meta": {"progressToken": "mine"}}),
        )
        .await;
    assert_eq!(
        result_text(&counted),
        r#"{"content":[{"type":"text","text":"counted to 3"}]}"#
    );
    let progress: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"])
        .collect();
    assert_eq!(
        progress,
        [
            &json!({"progressToken": "mine", "progress": 1, "total": 3}),
            &json!({"progressToken": "mine", "progress": 2, "total": 3}),
            &json!({"progressToken": "mine", "progress": 3, "total": 3})
        ]
    );
}

/// Answers the gateway's `elicitation/create` with `content` and returns the request's params.
async fn answer_elicitation(client: &mut Downstream, content: Value) -> Value {
    let asked = loop {
        let frame = client.receive().await.value().unwrap();
        if frame.get("id").is_some() {
            break frame;
        }
        client.seen.push(frame);
    };
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    client
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": content}}))
        .await;
    asked["params"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_round_trips_and_an_invalid_answer_never_reaches_the_server() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = Downstream::start(&config, &[], json!({"elicitation": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
        "params": {"name": "demo__book-table", "arguments": {"restaurant": "Chez Rust"}}});

    client.send(call.clone()).await;
    let asked = answer_elicitation(&mut client, json!({"party": 4, "time": "20:00"})).await;
    assert_eq!(asked["message"], "How many, and when?");
    let booked = client.response_to(100).await;
    assert_eq!(
        booked.value().unwrap()["result"]["content"][0]["text"],
        "booked Chez Rust for 4 at 20:00"
    );

    let mut again = call;
    again["id"] = json!(101);
    client.send(again).await;
    answer_elicitation(&mut client, json!({"party": 40, "time": "20:00"})).await;
    let refused = client.response_to(101).await.value().unwrap();
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("not booked: "), "{text}");

    drop(client);
    let transcript = demo_transcript(dir.path(), spec);
    let answers: Vec<&Value> = transcript
        .iter()
        .filter(|e| e["from"] == "client" && e["message"]["id"] == "fixture-elicitation")
        .map(|e| &e["message"])
        .collect();
    assert_eq!(answers.len(), 2);
    assert_eq!(
        answers[0]["result"],
        json!({"action": "accept", "content": {"party": 4, "time": "20:00"}})
    );
    assert_eq!(
        answers[1]["error"],
        json!({"code": -32602,
            "message": "the client's answer violates requestedSchema: $.party: maximum: got 40, want 12",
            "data": {"violations": ["$.party: maximum: got 40, want 12"]}})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_capability_an_elicitation_is_declined() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let answer = client
        .call("demo__book-table", json!({"restaurant": "Chez Rust"}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "not booked (decline)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_can_be_answered_as_a_tool_result() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        &[],
        "",
        r#"{"invalidArguments": "tool-result"}"#,
    );
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let answer = client
        .call("demo__get-sum", json!({"a": "two"}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text":
            "invalid arguments for tool 'demo__get-sum':\n$: missing property 'b'\n  hint: add 'b' (integer)\n$.a: got string, want integer"}],
            "isError": true})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_are_coerced_only_where_asked_and_only_when_certain() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let lenient = json!({"command": MCPX, "args": ["demo-server"], "coerceArguments": "safe"});
    let config = config(dir.path(), &[], &format!(r#""lenient": {lenient}"#), "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let quoted = json!({"a": "2", "b": 3});
    let fixed = client.call("lenient__get-sum", quoted.clone()).await;
    let fixed = fixed.value().unwrap();
    assert_eq!(fixed["result"]["structuredContent"]["sum"], 5, "{fixed}");
    assert_eq!(
        fixed["result"]["_meta"]["io.mcpx/coerced"],
        json!(["$.a: \"2\" → 2"])
    );
    // Off by default: the same arguments to the demo server are refused, with the hint.
    let refused = client.call("demo__get-sum", quoted).await.value().unwrap();
    assert_eq!(
        refused["error"]["data"]["hints"],
        json!(["did you mean 2, without quotes?"])
    );
    // No certain fix: refused as ever.
    let refused = client
        .call("lenient__get-sum", json!({"a": "two", "b": 3}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        refused["error"]["data"]["violations"],
        json!(["$.a: got string, want integer"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn schemas_can_be_presented_as_2020_12_and_calls_are_checked_as_listed() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let tools = |answer: Frame| -> Vec<Value> {
        answer.value().unwrap()["result"]["tools"]
            .as_array()
            .unwrap()
            .clone()
    };
    let listed = {
        let config = config(dir.path(), &[], "", "");
        let mut client = Downstream::start(&config, &[], json!({})).await;
        tools(client.request("tools/list", json!({})).await)
    };
    let sub = dir.path().join("upgraded");
    std::fs::create_dir_all(&sub).unwrap();
    let config = config(&sub, &[], "", r#"{"downstreamDialect": "2020-12"}"#);
    let mut client = Downstream::start(&config, &[], json!({})).await;
    let presented = tools(client.request("tools/list", json!({})).await);
    assert_eq!(presented.len(), listed.len());
    for (p, l) in presented.iter().zip(&listed) {
        if l["name"] == "demo__echo" {
            assert_eq!(
                l["inputSchema"]["$schema"],
                "http://json-schema.org/draft-07/schema#"
            );
            let mut want = l.clone();
            want["inputSchema"]["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
            assert_eq!(p, &want);
        } else {
            assert_eq!(p, l, "a 2020-12 tool is presented as listed");
        }
    }
    let rejected = client
        .call("demo__echo", json!({"text": ""}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        rejected["error"]["data"]["violations"],
        json!(["$.text: minLength: got 0 characters, want 1"])
    );
    let hinted = client
        .call("demo__get-sum", json!({"a": 2, "b": "3"}))
        .await
        .value()
        .unwrap();
    assert_eq!(
        hinted["error"]["data"],
        json!({"violations": ["$.b: got string, want integer"],
            "hints": ["did you mean 3, without quotes?"]})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_is_cancelled_upstream_and_gets_no_answer() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
            "params": {"name": "demo__slow", "arguments": {"ms": 1500}}}))
        .await;
    // Let the call reach the server before it is cancelled.
    tokio::time::sleep(Duration::from_millis(300)).await;
    client
        .notify(
            "notifications/cancelled",
            Some(json!({"requestId": 50, "reason": "changed my mind"})),
        )
        .await;
    let pong = client.request("ping", json!({})).await;
    assert_eq!(result_text(&pong), "{}");
    // The slow answer comes and goes; the cancelled request gets nothing.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = client.call("demo__get-sum", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        after.value().unwrap()["result"]["structuredContent"]["sum"],
        3
    );
    assert!(
        client.seen.iter().all(|m| m["id"] != 50),
        "the cancelled request was answered: {:?}",
        client.seen
    );
    drop(client);
    let transcript = demo_transcript(dir.path(), spec);
    assert!(
        transcript
            .iter()
            .any(|e| e["from"] == "client" && e["message"]["method"] == "notifications/cancelled"),
        "the server was told"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_server_fails_its_call_at_once_and_is_restarted() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let other = format!(
        r#""other": {{"command": "{}", "args": ["demo-server"]}}"#,
        common::MCPX
    );
    let config = config(dir.path(), &["--faults"], &other, "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    assert!(client
        .tool_names()
        .await
        .contains(&"demo__crash".to_owned()));

    // At once, not at the call's timeout (which is -32603 too).
    let crashed = common::at_once(client.call("demo__crash", json!({}))).await;
    let crashed = crashed.value().unwrap();
    assert_eq!(crashed["error"]["code"], -32603, "{crashed}");
    // The other server goes on as if nothing happened.
    let other = client.call("other__get-sum", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        other.value().unwrap()["result"]["structuredContent"]["sum"],
        3
    );

    // Withdrawn, then back after the restart: the client is told both times.
    let mut back = false;
    for _ in 0..100 {
        if client
            .tool_names()
            .await
            .contains(&"demo__get-sum".to_owned())
        {
            let summed = client.call("demo__get-sum", json!({"a": 2, "b": 2})).await;
            if summed.value().unwrap()["result"]["structuredContent"]["sum"] == 4 {
                back = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "the demo server was not restarted");
    client.assert_withdrawn_and_restored();
    assert!(client.log().contains("server down"), "{}", client.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_holds_up_nothing_else() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Started, but silent: it never answers initialize. And one that reads initialize and
    // exits without answering (restarted with backoff, and failing again).
    let others = r#""hung": {"command": "sleep", "args": ["600"]},
        "gone": {"command": "sh", "args": ["-c", "read line; exit 3"]}"#;
    let config = config(dir.path(), &[], others, "");
    let mut client = Downstream::start(&config, &[], json!({})).await;
    // Answered (within the frame wait) without the silent server's tools.
    let names = client.tool_names().await;
    assert!(names.contains(&"demo__get-sum".to_owned()), "{names:?}");
    assert!(!names
        .iter()
        .any(|n| n.starts_with("hung__") || n.starts_with("gone__")));
    let gone = client
        .call("gone__anything", json!({}))
        .await
        .value()
        .unwrap();
    // Unknown, and why: its server is down, with the reason, or starting again (a server that
    // exits after the probe is started once more without it).
    let message = gone["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("unknown tool 'gone__anything': server 'gone' is down (")
            || message.starts_with("unknown tool 'gone__anything': server 'gone' is starting ("),
        "{gone}"
    );
    let summed = client.call("demo__get-sum", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        summed.value().unwrap()["result"]["structuredContent"]["sum"],
        3
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lazy_servers_start_on_first_use() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut client = Downstream::start(&config, &["--lazy"], json!({})).await;
    client.request("ping", json!({})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !dir.path().join("demo.jsonl").exists(),
        "the demo server started before anyone used it"
    );
    assert!(client
        .tool_names()
        .await
        .contains(&"demo__get-sum".to_owned()));
    drop(client);
    demo_transcript(dir.path(), spec);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_the_server_withdraws_is_withdrawn_from_the_client() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let mut client = Downstream::start(&config, &[], json!({"elicitation": {}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 70, "method": "tools/call",
            "params": {"name": "demo__withdrawn-question", "arguments": {}}}))
        .await;
    let asked = loop {
        let frame = client.receive().await.value().unwrap();
        if frame["method"] == "elicitation/create" {
            break frame;
        }
    };
    // Any traffic to the server makes it withdraw its question.
    client
        .send(json!({"jsonrpc": "2.0", "id": 71, "method": "tools/call",
            "params": {"name": "demo__echo", "arguments": {"text": "hi"}}}))
        .await;
    let withdrawn = client.response_to(70).await.value().unwrap();
    assert_eq!(
        withdrawn["result"]["content"][0]["text"],
        "question withdrawn"
    );
    // The client is told the question is withdrawn (after the answers or before: the
    // cancellation takes its own path).
    let told = |m: &Value| {
        m["method"] == "notifications/cancelled" && m["params"]["requestId"] == asked["id"]
    };
    while !client.seen.iter().any(told) {
        let frame = client.receive().await.value().unwrap();
        client.seen.push(frame);
    }
    // A late answer from the client goes nowhere.
    client
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}))
        .await;
    client.request("ping", json!({})).await;
    drop(client);
    let transcript = demo_transcript(dir.path(), spec);
    assert!(
        !transcript
            .iter()
            .any(|e| e["message"]["id"] == "fixture-withdrawn" && e["from"] == "client"),
        "the withdrawn question was answered upstream"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_protocol_version_is_negotiated_and_spoken() {
    for version in mcpclient::ACCEPTED_VERSIONS {
        let Some(spec) = mcpspec::spec_or_skip(version) else {
            return;
        };
        // Each version's frames are checked against that version's own schema.
        let spec: &'static mcpspec::Spec = Box::leak(Box::new(spec));
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), &[], "", "");
        let mut client = Downstream::start_speaking(spec, &config, &[], json!({})).await;
        // Only what a server has is offered: the demo server has no logging, completions or
        // resource subscriptions.
        let capabilities = &client.initialized["capabilities"];
        assert_eq!(
            capabilities,
            &json!({"tools": {"listChanged": true}, "resources": {"listChanged": true},
                "prompts": {"listChanged": true}}),
            "{version}"
        );
        assert!(
            client.tool_names().await.contains(&"demo__echo".to_owned()),
            "{version}"
        );
        let echoed = client.call("demo__echo", json!({"text": version})).await;
        assert_eq!(
            echoed.value().unwrap()["result"]["content"][0]["text"],
            version
        );
        let rejected = client
            .call("demo__echo", json!({"text": ""}))
            .await
            .value()
            .unwrap();
        assert_eq!(
            rejected["error"]["data"]["violations"][0],
            "$.text: minLength: got 0 characters, want 1"
        );
    }
}

/// `mcpx --config CONFIG serve` with its input and output piped (and unread) and its log
/// discarded; killed when dropped.
fn serve_quietly(config: &std::path::Path) -> tokio::process::Child {
    common::serve_piped(config, &[], std::process::Stdio::null())
}

/// Starts `mcpx serve` in front of a stubborn demo server, a server started through a wrapper
/// that leaves a child of its own running (as `npx` does) and a stubborn one that ignores
/// SIGTERM, waits until all run, stops mcpx with `stop`, and checks that mcpx exits 0 within
/// [`EXITS_WITHIN`], that it reaped every server (none left, running or zombie) and that the
/// wrapper's child was killed too.
#[cfg(target_os = "linux")]
async fn nothing_is_left_after(stop: impl FnOnce(&mut tokio::process::Child)) {
    // What mcpx's servers leave when they die comes to this process, not to init, and stays
    // a zombie until reaped here: a server process mcpx did not reap is seen below, whatever
    // init does with orphans (this machine's never reaps them; most do at once).
    nix::sys::prctl::set_child_subreaper(true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Unique to this run: the wrapper's child's time to sleep, by which it is found in /proc
    // (its command line, NUL-separated, so that the shell's own does not match).
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let seconds = format!("600.{}{run}", std::process::id());
    let child_marker = format!("sleep\0{seconds}");
    // The one that ignores SIGTERM (an ignored signal stays ignored across exec): only SIGKILL
    // stops it.
    let deaf_marker = dir.path().join("deaf.jsonl").display().to_string();
    let others = format!(
        r#""wrapped": {{"command": "sh", "args": ["-c", "sleep {seconds} & exec {mcpx} demo-server"]}},
        "deaf": {{"command": "sh", "args": ["-c", "trap '' TERM; exec {mcpx} demo-server --stubborn --record {deaf_marker}"]}}"#,
        mcpx = common::MCPX
    );
    let config = config(dir.path(), &["--stubborn"], &others, "");
    let marker = dir.path().join("demo.jsonl").display().to_string();
    let markers = [marker.as_str(), child_marker.as_str(), deaf_marker.as_str()];
    let mut gateway = serve_quietly(&config);
    let mut running = Vec::new();
    for _ in 0..200 {
        running = markers.map(|m| processes_with(m).len()).to_vec();
        if running.iter().all(|n| *n > 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(running, [1, 1, 1], "each started once: {markers:?}");
    let _output = all_listed(&mut gateway, &["demo", "wrapped", "deaf"]).await;
    // mcpx's own children, the three servers, which it must reap; and the wrapper's child,
    // which it must kill (its parent gone, it is this process's to reap).
    let servers = common::children_of(gateway.id().expect("running"));
    assert_eq!(servers.len(), 3, "{servers:?}");
    let orphan = processes_with(&child_marker)[0].0;
    stop(&mut gateway);
    let status = tokio::time::timeout(EXITS_WITHIN, gateway.wait())
        .await
        .unwrap_or_else(|_| panic!("mcpx still running {EXITS_WITHIN:?} after it was stopped"))
        .unwrap();
    assert!(status.success(), "{status}");
    let left = common::still_there(&servers);
    assert!(left.is_empty(), "left by mcpx, running or zombie: {left:?}");
    let mut orphan_state = common::stat(orphan);
    for _ in 0..50 {
        if orphan_state.is_none_or(|s| s.state == 'Z') {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        orphan_state = common::stat(orphan);
    }
    if let Some(state) = orphan_state {
        assert_eq!(
            state.state, 'Z',
            "the wrapper's child still runs: {state:?}"
        );
        let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(orphan as i32), None);
    }
}

/// Waits (at most [`common::FRAME_WAIT`]) until `mcpx serve` on stdio lists the tools of every
/// one of `servers`, as a client (initialized) would see them: their starts are over. Its
/// output, to be kept open.
#[cfg(target_os = "linux")]
async fn all_listed(
    gateway: &mut tokio::process::Child,
    servers: &[&str],
) -> tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let input = gateway.stdin.as_mut().expect("its input");
    let mut output = tokio::io::BufReader::new(gateway.stdout.take().expect("its output")).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stop-test", "version": "0"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let handshake = format!("{initialize}\n{initialized}\n");
    input.write_all(handshake.as_bytes()).await.unwrap();
    let listed = async {
        for id in 1.. {
            let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            input
                .write_all(format!("{list}\n").as_bytes())
                .await
                .unwrap();
            let answer = loop {
                let line = output.next_line().await.unwrap().expect("mcpx answers");
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == id {
                    break message;
                }
            };
            let names = answer["result"]["tools"].to_string();
            if servers.iter().all(|s| names.contains(&format!("\"{s}__"))) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(common::FRAME_WAIT, listed)
        .await
        .expect("every server listed");
    output
}

/// How long mcpx may take to exit once stopped with a server that ignores both the end of its
/// input and SIGTERM: its servers' stop (documented: "within about 4 s").
#[cfg(target_os = "linux")]
const EXITS_WITHIN: Duration = common::SERVERS_STOP;

// Linux only: its server is `sleep`, its processes are looked up in /proc and it makes the
// test a subreaper (on Windows: scripts/cross-smoke and mcpclient's process_tree).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_will_not_stop_is_killed_and_reaped_when_the_client_goes() {
    let Some(_) = spec() else { return };
    // The client goes away: mcpx closes each server's input, waits its grace, kills and reaps
    // it, and kills what is left of its process group.
    nothing_is_left_after(|gateway| drop(gateway.stdin.take())).await;
}

// Linux only: SIGTERM, /proc and a subreaper (Ctrl-C under wine: scripts/cross-smoke).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_stops_mcpx_and_every_server_it_started() {
    let Some(_) = spec() else { return };
    nothing_is_left_after(|gateway| {
        let pid = gateway.id().expect("running");
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    })
    .await;
}

/// The gateway's `--timeout` in the fault tests, in seconds: room for a debug build to write
/// and skip an oversized answer.
const FAULT_TIMEOUT: u64 = 4;

/// `mcpx serve --timeout FAULT_TIMEOUT` in front of the demo server with its misbehaving tools.
async fn with_faults(dir: &std::path::Path) -> Downstream {
    let config = config(dir, &["--faults"], "", "");
    let timeout = FAULT_TIMEOUT.to_string();
    Downstream::start(&config, &["--timeout", &timeout], json!({})).await
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "its time bounds are set for a native build; under wine the oversized answer takes longer than they allow"
)]
async fn a_server_that_breaks_the_wire_protocol_gets_each_call_one_clear_answer() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut client = with_faults(dir.path()).await;
    let text = |frame: &Frame| frame.value().unwrap()["result"]["content"][0]["text"].clone();
    let mut sums = 0;
    let mut sum = async |client: &mut Downstream| {
        sums += 1;
        let summed = client
            .call("demo__get-sum", json!({"a": sums, "b": 1}))
            .await;
        assert_eq!(
            summed.value().unwrap()["result"]["structuredContent"]["sum"],
            sums + 1,
            "a later call gets its own answer: {}",
            summed.text().chars().take(300).collect::<String>()
        );
    };

    // Lines that are not JSON are skipped; the answer after them arrives.
    let noise = client.call("demo__noise", json!({})).await;
    assert_eq!(
        text(&noise),
        "answered through the noise",
        "{}",
        noise.text()
    );
    // An answer to a request nobody sent goes nowhere; the call's own answer arrives.
    let unknown = client.call("demo__unknown-id", json!({})).await;
    assert_eq!(text(&unknown), "answered after an unknown id");
    // An answer sent twice is delivered once.
    let twice = client.call("demo__duplicate", json!({})).await;
    assert_eq!(text(&twice), "answered twice");
    sum(&mut client).await;
    // An answer with both `result` and `error` is an error, not half of one.
    let both = client.call("demo__both", json!({})).await.value().unwrap();
    assert!(both["error"]["code"].is_i64(), "{both}");
    assert!(both.get("result").is_none(), "{both}");
    sum(&mut client).await;
    // An answer over the frame limit is dropped: the call ends with the timeout.
    let oversized = client
        .call("demo__oversized", json!({}))
        .await
        .value()
        .unwrap();
    assert!(
        oversized["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("no answer within {FAULT_TIMEOUT}s"))),
        "{oversized}"
    );
    sum(&mut client).await;
    // An answer after the timeout: the call has already ended with an error, and the late
    // answer goes to nobody, not to the calls after it.
    let late = client
        .call("demo__slow", json!({"ms": FAULT_TIMEOUT * 1000 + 500}))
        .await
        .value()
        .unwrap();
    assert!(late["error"]["code"].is_i64(), "{late}");
    for _ in 0..3 {
        sum(&mut client).await;
    }

    // Every answer came once, to the request it answers: nothing else arrived but notifications.
    client.assert_no_strays();
    let log = client.close().await;
    // Each misbehaviour is in the log, the dropped answers by id only.
    assert!(log.contains("not JSON"), "{log}");
    assert!(log.contains("frame too large"), "{log}");
    assert!(log.contains(r#"id="nobody-asked""#), "{log}");
    let dropped = log.matches("answer to no pending request").count();
    assert_eq!(
        dropped, 3,
        "the invented id, the duplicate and the late answer: {log}"
    );
    assert!(
        !log.contains("answered twice"),
        "answers are not logged: {log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_id_is_refused_and_a_client_past_the_limit_is_paced() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut client = with_faults(dir.path()).await;
    let slow = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "demo__slow", "arguments": {"ms": FAULT_TIMEOUT * 1000 + 3000}}})
    };
    // A call, the same id again while it is in flight, then calls up to the limit and one past
    // it. The server takes them one by one, slowly: each ends with the timeout.
    let first = 1_000;
    let limit = mcpgateway::MAX_REQUESTS_IN_FLIGHT as u64;
    client.send(slow(first)).await;
    client.send(slow(first)).await;
    for id in first + 1..=first + limit {
        client.send(slow(id)).await;
    }
    let mut answers: std::collections::HashMap<u64, Vec<Value>> = Default::default();
    while answers.values().map(Vec::len).sum::<usize>() < limit as usize + 2 {
        let value = client.receive().await.value().unwrap();
        if value.get("method").is_none() {
            let id = value["id"].as_u64().unwrap();
            answers.entry(id).or_default().push(value);
        }
    }
    // The repeated id is refused at once, saying why; the first keeps its answer.
    let repeated = &answers[&first];
    assert_eq!(repeated.len(), 2, "{repeated:?}");
    let messages: Vec<&str> = repeated
        .iter()
        .filter_map(|a| a["error"]["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("is in flight already")),
        "{messages:?}"
    );
    // Over stdio nothing is refused for the limit: the call past it waited until there was
    // room, and every call got exactly one answer.
    assert_eq!(answers.len(), limit as usize + 1);
    for (id, got) in &answers {
        assert_eq!(got.len(), if *id == first { 2 } else { 1 }, "{id}: {got:?}");
        let message = got[0]["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains("too many requests"), "{id}: {message}");
    }
}

/// What a pipelining client writes: the handshake, then calls 1 to `calls` of `tool`, each
/// with `arguments`, one per line.
fn handshake_and_calls(client: &str, calls: u64, tool: &str, arguments: Value) -> String {
    handshake_and_padded_calls(client, calls, tool, arguments, 0)
}

/// [`handshake_and_calls`] with `pad` bytes in each call's `_meta` (which servers ignore).
fn handshake_and_padded_calls(
    client: &str,
    calls: u64,
    tool: &str,
    arguments: Value,
    pad: usize,
) -> String {
    let meta = json!({"com.example/pad": "p".repeat(pad)});
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": client, "version": "0"}}});
    let mut text = format!(
        "{init}\n{}\n",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    for id in 1..=calls {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta}});
        text.push_str(&format!("{call}\n"));
    }
    text
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(windows, ignore = "reads the gateway's memory from /proc")]
async fn a_client_that_never_reads_its_answers_holds_itself_up_not_mcpx_memory() {
    use tokio::io::AsyncWriteExt;
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &["--faults"], "", "");
    let mut gateway = serve_quietly(&config);
    let pid = gateway.id().unwrap();
    let mut input = gateway.stdin.take().unwrap();
    // 3,000 calls for 256 KiB each (750 MiB of answers), written without reading any answer;
    // each call is padded to 8 KiB, so that the calls held past the in-flight limit pass
    // MAX_HELD_BYTES long before the client is done writing.
    let calls = 3_000;
    let writing = tokio::spawn(async move {
        let text = handshake_and_padded_calls(
            "never-reads",
            calls,
            "demo__blob",
            json!({"bytes": 256 * 1024}),
            8 * 1024,
        );
        let _ = input.write_all(text.as_bytes()).await;
        input
    });
    // mcpx stops reading once the unread answers pass its limit: its memory levels off.
    let mut peak = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        peak = peak.max(mcpx_loadgen::resident_kib(pid).expect("mcpx is running"));
    }
    assert!(
        !writing.is_finished(),
        "mcpx kept reading requests nobody reads the answers of"
    );
    let bound_kib = ((mcpgateway::MAX_UNREAD_BYTES
        + mcpgateway::MAX_HELD_BYTES
        + mcpgateway::MAX_REQUESTS_IN_FLIGHT * 256 * 1024)
        / 1024) as u64
        + 64 * 1024;
    assert!(peak < bound_kib, "peak {peak} KiB, bound {bound_kib} KiB");
    writing.abort();
}

/// A client that pipes mcpx's standard error and never reads it: the log (a warning for every
/// call here) fills the pipe in a few hundred lines, and mcpx must go on answering rather than
/// wait for the pipe, dropping log lines instead.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_reads_the_log_holds_nothing_up() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let mut gateway = common::serve_piped(&config, &[], std::process::Stdio::piped());
    // Held open, never read.
    let _log = gateway.stderr.take().unwrap();
    let mut input = gateway.stdin.take().unwrap();
    let mut answers = mcpclient::FrameReader::new(gateway.stdout.take().unwrap());
    // Each call's result violates the tool's outputSchema: one warning line each, 2,000 lines
    // (about ten times what the pipe holds).
    let calls = 2_000;
    let text = handshake_and_calls(
        "never-reads-the-log",
        calls,
        "demo__drifting-output",
        json!({}),
    );
    let writing = tokio::spawn(async move {
        input.write_all(text.as_bytes()).await.unwrap();
        input
    });
    let answered = tokio::time::timeout(Duration::from_secs(120), async {
        let mut results = 0;
        while results < calls {
            let answer = answers.next().await.expect("mcpx answers").unwrap();
            if answer.value().unwrap()["id"]
                .as_u64()
                .is_some_and(|id| id > 0)
            {
                assert_eq!(result_text(&answer), DRIFTING, "{answer}");
                results += 1;
            }
        }
        results
    })
    .await;
    assert_eq!(
        answered.ok(),
        Some(calls),
        "mcpx stopped answering once its unread log filled the pipe"
    );
    writing.await.unwrap();
}
