//! JSON-RPC over the stdio transport, against scripted real child processes.
//!
//! Unix only: its scripted peers are `sh` scripts. The transport's platform-specific part
//! (starting, stopping and reaping a child and what it started) is tested on every platform in
//! `process_tree.rs`.

#![cfg(unix)]

use std::time::Duration;

use mcpclient::{Connection, Event, RpcError, StdioCommand, StdioTransport};
use serde_json::json;

fn peer(script: &str) -> (Connection, tokio::sync::mpsc::Receiver<Event>) {
    let transport = StdioTransport::spawn(&StdioCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..StdioCommand::default()
    })
    .unwrap();
    Connection::start(transport)
}

const LONG: Duration = Duration::from_secs(10);

async fn next_event(events: &mut tokio::sync::mpsc::Receiver<Event>) -> Event {
    tokio::time::timeout(LONG, events.recv())
        .await
        .expect("no event")
        .expect("events ended")
}

#[tokio::test]
async fn answers_reach_their_own_calls_whatever_their_order() {
    let (c, _events) = peer(
        "read a; read b; echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"n\":2}}'; \
         echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":1,\"big\":18446744073709551617}}'; read rest",
    );
    let (first, second) = tokio::join!(c.request("one", None, LONG), c.request("two", None, LONG));
    let first = first.unwrap();
    assert_eq!(first.result_text(), r#"{"n":1,"big":18446744073709551617}"#);
    assert_eq!(second.unwrap().result().unwrap(), json!({"n": 2}));
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_and_its_late_answer_goes_to_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("received.jsonl");
    let (c, mut events) = peer(&format!(
        "read l1; echo \"$l1\" >> {log}; sleep 1; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"late\":true}}}}'; \
         read l2; echo \"$l2\" >> {log}; read l3; echo \"$l3\" >> {log}; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"ok\":true}}}}'; read rest",
        log = log.display()
    ));
    let err = c
        .request("slow", None, Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RpcError::Timeout { method, .. } if method == "slow"),
        "{err}"
    );
    let ok = c.request("fast", None, LONG).await.unwrap();
    assert_eq!(ok.result_text(), r#"{"ok":true}"#);
    let Event::Unmatched(late) = next_event(&mut events).await else {
        panic!("want the late answer")
    };
    assert_eq!(
        late.text(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"late":true}}"#
    );
    let received: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(received[0]["method"], "slow");
    assert_eq!(received[1]["method"], "notifications/cancelled");
    assert_eq!(received[1]["params"]["requestId"], 1);
    assert_eq!(received[2]["method"], "fast");
}

#[tokio::test]
async fn errors_and_invalid_answers_are_typed() {
    let (c, _events) = peer(
        "read a; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"no such method\",\"data\":{\"m\":\"x\"}}}'; \
         read b; echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{},\"error\":{\"code\":1,\"message\":\"both\"}}'; \
         read c; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"n\":1},\"error\":null}'; read rest",
    );
    let err = c.request("x", None, LONG).await.unwrap_err();
    assert!(
        matches!(&err, RpcError::Remote(mcpclient::ErrorObject { code: -32601, message, data: Some(d) }) if message == "no such method" && d["m"] == "x"),
        "{err}"
    );
    let err = c.request("y", None, LONG).await.unwrap_err();
    assert!(
        matches!(err, RpcError::InvalidResponse(ref m) if m == "both result and error"),
        "{err}"
    );
    // `"error": null` beside a result, as some peers write it, is no error.
    let answer = c.request("z", None, LONG).await.unwrap();
    assert_eq!(answer.result_text(), r#"{"n":1}"#);
}

#[tokio::test]
async fn a_peer_that_exits_mid_call_ends_the_call_at_once() {
    let (c, mut events) = peer("read a; exit 0");
    let err = c.request("x", None, LONG).await.unwrap_err();
    assert!(matches!(err, RpcError::Closed), "{err}");
    assert!(matches!(next_event(&mut events).await, Event::Closed));
    // A request made after the close never leaves, and says so: it may be sent elsewhere.
    assert!(c.is_closed());
    assert!(matches!(
        c.request("y", None, LONG).await,
        Err(RpcError::NotSent)
    ));
}

#[tokio::test]
async fn notifications_requests_and_junk_from_the_peer_become_events() {
    let (_c, mut events) = peer(
        "echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}'; \
         echo '{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}'; echo 'not json'; \
         echo '{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}'; read rest",
    );
    assert!(
        matches!(next_event(&mut events).await, Event::Notification(f) if f.text().contains("progress"))
    );
    assert!(
        matches!(next_event(&mut events).await, Event::Request { frame: f, .. } if f.text().contains("\"s1\""))
    );
    assert!(matches!(
        next_event(&mut events).await,
        Event::TransportError(_)
    ));
    assert!(
        matches!(next_event(&mut events).await, Event::Unmatched(f) if f.text().contains("99"))
    );
}

#[tokio::test]
async fn calls_to_a_peer_that_stops_reading_end_with_the_timeout() {
    // It never reads: once its input pipe is full, nothing more can be written to it.
    // One call larger than the pipe holds the writer; the queue to it then fills, and the
    // calls after those wait to be queued: each must still end.
    let (c, _events) = peer("sleep 600");
    let big = json!({"pad": "x".repeat(256 * 1024)});
    let within = Duration::from_millis(500);
    let calls = (0..mcpclient::MAX_QUEUED_FRAMES + 8).map(|i| {
        let params = if i == 0 { big.clone() } else { json!({}) };
        c.request("big", Some(params), within)
    });
    let ended = tokio::time::timeout(LONG, futures_util::future::join_all(calls))
        .await
        .expect("every call ends");
    for result in ended {
        assert!(
            matches!(&result, Err(RpcError::Timeout { method, .. }) if method == "big"),
            "{result:?}"
        );
    }
}
