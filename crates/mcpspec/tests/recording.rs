//! The recording wrapper around a real stdio child.

use mcpclient::{Frame, StdioCommand, StdioTransport, Transport};
use mcpspec::{spec_or_skip, Recording, Side};

/// A child that answers the first line it reads with `answer`.
fn answering(answer: &str) -> StdioTransport {
    StdioTransport::spawn(&StdioCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            format!("read line; echo '{answer}'; read rest"),
        ],
        ..StdioCommand::default()
    })
    .unwrap()
}

#[tokio::test]
async fn valid_traffic_passes_and_is_kept_in_order() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    let mut t = Recording::new(&spec, answering(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    t.send(&Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap())
        .await
        .unwrap();
    let answer = t.receive().await.unwrap().unwrap();
    assert_eq!(answer.text(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let sides: Vec<Side> = t.frames().iter().map(|(s, _)| *s).collect();
    assert_eq!(sides, [Side::Client, Side::Server]);
    t.close().await.unwrap();
}

#[tokio::test]
async fn an_invalid_server_frame_fails_the_test_with_its_lines() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    // The checked call runs on its own task so its panic can be caught: it needs 'static.
    let spec: &'static mcpspec::Spec = Box::leak(Box::new(spec));
    let mut t = Recording::new(spec, answering(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
    t.send(&Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap())
        .await
        .unwrap();
    let outcome = tokio::spawn(async move { t.receive().await.map(|r| r.is_ok()) }).await;
    let panic = outcome.unwrap_err().into_panic();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(msg.contains("$.result: missing property 'tools'"), "{msg}");
}

#[tokio::test]
async fn an_invalid_client_frame_fails_before_it_is_sent() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    // The checked call runs on its own task so its panic can be caught: it needs 'static.
    let spec: &'static mcpspec::Spec = Box::leak(Box::new(spec));
    let mut t = Recording::new(spec, answering("{}"));
    let outcome = tokio::spawn(async move {
        t.send(
            &Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#).unwrap(),
        )
        .await
        .is_ok()
    })
    .await;
    let panic = outcome.unwrap_err().into_panic();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(msg.contains("$.params: missing property 'name'"), "{msg}");
}
