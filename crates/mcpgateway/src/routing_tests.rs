//! The gateway's session rules in memory, with two or more sessions and no server process:
//! whom a server's question goes to, and which session gets a log message or a resource update.

use std::sync::Arc;

use mcpclient::Frame;
use serde_json::{json, Value};

use crate::gateway::Gateway;
use crate::options::GatewayOptions;
use crate::sessions::principal::Principal;
use crate::sessions::registry::NoAsker;
use crate::sessions::session::Session;
use crate::testing::Kept;

impl Kept {
    fn methods(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
    }
}

/// A gateway with no servers, and sessions declaring `capabilities`, initialized.
fn gateway_with(sessions: &[Value]) -> (Gateway, Vec<(Arc<Session>, Kept)>) {
    let principals: Vec<(Principal, Value)> = sessions
        .iter()
        .map(|capabilities| (Principal::local(), capabilities.clone()))
        .collect();
    gateway_of(&principals)
}

/// A gateway with no servers, and sessions of each principal declaring its capabilities,
/// initialized.
fn gateway_of(sessions: &[(Principal, Value)]) -> (Gateway, Vec<(Arc<Session>, Kept)>) {
    let gateway = Gateway::start(Vec::new(), GatewayOptions::default());
    let sessions = sessions
        .iter()
        .map(|(principal, capabilities)| {
            let kept = Kept::default();
            let session = gateway.open_session(kept.clone(), principal.clone());
            session.initialized("2025-11-25", capabilities.clone());
            (session, kept)
        })
        .collect();
    (gateway, sessions)
}

/// Session `s` has request `id` in flight to server 0.
fn calling(s: &Session, id: &str) {
    s.begin(id, None).unwrap();
    s.calls(id, 0, None);
}

fn asked(gateway: &Gateway, capability: &str, during: Option<&str>) -> Result<usize, NoAsker> {
    let sessions = gateway.hub.registry.sessions();
    gateway
        .hub
        .registry
        .asker(0, capability, during)
        .map(|(session, _)| {
            sessions
                .iter()
                .position(|s| Arc::ptr_eq(s, &session))
                .unwrap()
        })
}

#[tokio::test]
async fn a_question_goes_to_the_one_session_calling_and_is_never_guessed() {
    let elicits = json!({"elicitation": {"form": {}}, "roots": {}});
    let (gateway, sessions) = gateway_with(&[elicits.clone(), elicits.clone(), json!({})]);
    // The third session declared nothing: never a candidate.
    let (a, b) = (&sessions[0].0, &sessions[1].0);
    // Nobody calling: nobody asked.
    assert_eq!(
        asked(&gateway, "elicitation", None),
        Err(NoAsker::Undeclared)
    );
    calling(a, "1");
    assert_eq!(asked(&gateway, "elicitation", None), Ok(0));
    calling(b, "1");
    assert_eq!(
        asked(&gateway, "elicitation", None),
        Err(NoAsker::Ambiguous { sessions: 2 })
    );
    // The transport said whose call it was: that session, whoever else is calling.
    let tagged = gateway.hub.registry.tag(b, "1");
    assert_eq!(asked(&gateway, "elicitation", Some(&tagged.tag)), Ok(1));
    drop(tagged);
    // A session that did not declare the capability is not asked, even when it is the caller.
    let (gateway, sessions) = gateway_with(&[json!({}), elicits]);
    calling(&sessions[0].0, "7");
    assert_eq!(
        asked(&gateway, "elicitation", None),
        Err(NoAsker::Undeclared)
    );
}

#[tokio::test]
async fn roots_with_no_call_in_flight_go_to_the_one_session_that_declared_them() {
    let roots = json!({"roots": {"listChanged": true}});
    let (gateway, _sessions) = gateway_with(&[json!({}), roots.clone()]);
    assert_eq!(asked(&gateway, "roots", None), Ok(1));
    let (gateway, _sessions) = gateway_with(&[roots.clone(), roots.clone()]);
    assert_eq!(
        asked(&gateway, "roots", None),
        Err(NoAsker::Ambiguous { sessions: 2 })
    );
    // The one declaring session's principal has another session: still its roots. A session
    // of another principal connected: not given (they would be the shared server's for both).
    let alice = Principal::anonymous([10, 0, 0, 1].into());
    let bob = Principal::anonymous([10, 0, 0, 2].into());
    let (gateway, _sessions) =
        gateway_of(&[(alice.clone(), roots.clone()), (alice.clone(), json!({}))]);
    assert_eq!(asked(&gateway, "roots", None), Ok(0));
    let (gateway, sessions) = gateway_of(&[(alice, roots), (bob, json!({}))]);
    assert_eq!(
        asked(&gateway, "roots", None),
        Err(NoAsker::Others { sessions: 1 })
    );
    // With a call in flight, the caller's, as ever.
    calling(&sessions[0].0, "1");
    assert_eq!(asked(&gateway, "roots", None), Ok(0));
}

#[tokio::test]
async fn log_messages_and_updates_reach_only_the_sessions_that_want_them() {
    let (gateway, sessions) = gateway_with(&[json!({}), json!({}), json!({})]);
    let message = |level: &str| {
        Frame::from_value(&json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": level, "data": level}}))
    };
    // Nobody chose a level: everyone gets everything.
    gateway.hub.deliver_log(0, &message("debug"));
    assert!(sessions.iter().all(|(_, kept)| kept.methods().len() == 1));
    // One chose debug, one error; the third gets info and above once anyone has chosen.
    sessions[0].0.set_log_level(0);
    sessions[1].0.set_log_level(4);
    for level in ["debug", "info", "error"] {
        gateway.hub.deliver_log(0, &message(level));
    }
    let counts: Vec<usize> = sessions.iter().map(|(_, k)| k.methods().len()).collect();
    assert_eq!(counts, [1 + 3, 1 + 1, 1 + 2]);

    sessions[1].0.set_subscribed(0, "demo://a", true);
    let updated = Frame::from_value(&json!({"jsonrpc": "2.0",
        "method": "notifications/resources/updated", "params": {"uri": "demo://a"}}));
    gateway.hub.deliver_update(0, &updated);
    let updates: Vec<usize> = sessions
        .iter()
        .map(|(_, k)| {
            k.methods()
                .iter()
                .filter(|m| *m == "notifications/resources/updated")
                .count()
        })
        .collect();
    assert_eq!(updates, [0, 1, 0]);
}

#[tokio::test]
async fn the_servers_log_level_follows_the_sessions_that_remain() {
    let (gateway, sessions) = gateway_with(&[json!({}), json!({})]);
    sessions[0].0.set_log_level(0);
    sessions[1].0.set_log_level(4);
    gateway.hub.apply_log_level().await;
    assert_eq!(*gateway.hub.applied_level.lock().unwrap(), Some(0));
    // The session that wanted debug ends: error is the most verbose level left.
    gateway.close_session(&sessions[0].0);
    gateway.hub.release(Vec::new()).await;
    assert_eq!(*gateway.hub.applied_level.lock().unwrap(), Some(4));
}

/// A shared server's log line names no call and no client: with two principals, it reaches the
/// sessions of the one principal calling that server (both of its sessions), never the other's;
/// with both calling, or neither calling, it is nobody's for sure and reaches no client.
#[tokio::test]
async fn a_log_line_reaches_only_the_principal_it_can_belong_to() {
    let alice = Principal::anonymous([10, 0, 0, 1].into());
    let bob = Principal::anonymous([10, 0, 0, 2].into());
    let (gateway, sessions) = gateway_of(&[
        (alice.clone(), json!({})),
        (alice, json!({})),
        (bob, json!({})),
    ]);
    let line = Frame::from_value(&json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "read /home/alice/notes.txt"}}));
    let logs = || -> Vec<usize> { sessions.iter().map(|(_, k)| k.methods().len()).collect() };

    // Nobody calling, two principals: nobody's.
    gateway.hub.deliver_log(0, &line);
    assert_eq!(logs(), [0, 0, 0]);
    // Alice calling (from her first session): both of hers get it, Bob does not.
    calling(&sessions[0].0, "1");
    gateway.hub.deliver_log(0, &line);
    assert_eq!(logs(), [1, 1, 0]);
    // Bob calling as well: nobody's for sure.
    calling(&sessions[2].0, "1");
    gateway.hub.deliver_log(0, &line);
    assert_eq!(logs(), [1, 1, 0]);
    // A call to another server makes nobody the owner of this one's lines.
    let (gateway, sessions) = gateway_of(&[
        (Principal::anonymous([10, 0, 0, 1].into()), json!({})),
        (Principal::anonymous([10, 0, 0, 2].into()), json!({})),
    ]);
    sessions[1].0.begin("9", None).unwrap();
    sessions[1].0.calls("9", 1, None);
    gateway.hub.deliver_log(0, &line);
    let counts: Vec<usize> = sessions.iter().map(|(_, k)| k.methods().len()).collect();
    assert_eq!(counts, [0, 0]);
}
