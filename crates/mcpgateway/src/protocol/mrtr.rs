//! Multi round-trip requests: what a legacy server asks during a modern client's call.
//!
//! A legacy server asks its client (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) in the middle of a call; a 2026-07-28 client cannot be asked, it can only be
//! answered. So each modern request runs as a [`Conversation`]: a session of its own (the
//! question routing of [`crate::sessions::bridge`] finds it like any session, and it is the only one
//! calling with it, so questions never reach another client) whose upstream work runs in a
//! task of its own. When the server asks, the client's request is answered
//! `{"resultType": "input_required", "inputRequests": {...}, "requestState": H}` and the
//! conversation is parked, its upstream call still running and its question still waiting,
//! under `H`: 128 random bits, bound to the method and the tool, prompt or resource named.
//! The client's retry (same params, `inputResponses`, that `requestState`) takes it back:
//! each answer is checked (an elicitation's content against the question's `requestedSchema`,
//! compiled once when the question arrives, exactly as mcpclient checks a legacy client's
//! answer), handed to the waiting question, and the retry waits for the server's next question
//! (another `input_required`) or its result.
//!
//! An invalid answer never reaches the server: the retry gets -32602 with the flat lines, and
//! the conversation stays parked under the same `requestState`, so the client can answer
//! again (an LLM client fixes its answer; starting over would ask the user again). A question
//! the retry leaves unanswered is asked again. A parked conversation lapses after the TTL
//! ([`crate::options::PARKED_TTL`] unless configured): its questions are answered `cancel` (elicitation) or
//! refused, and its upstream call is cancelled. What is parked lives in this replica's memory
//! only: behind a load balancer, a retry reaching another replica finds no such
//! `requestState` and is told to start the call again.

use mcpclient::codes;
use mcpclient::ErrorObject;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::gateway::Hub;
use crate::protocol::conversation::{Conversation, Outcome, Relay, Target};
use crate::protocol::modern::{self, Meta};
use crate::requests::Params;
use crate::sessions::session::Modern;
use crate::sessions::session::Session;
use crate::wire::{lock, made, Answer};
use mcpclient::codes::error;

/// The most calls parked at once; a call that would be one more is ended with an error (its
/// upstream call cancelled) instead of parked.
pub const MAX_PARKED_CALLS: usize = 1_024;

/// The most calls one principal may have parked at once (counted per
/// [`crate::sessions::principal::Principal::quota_key`]): past it, its next call that would park is ended with an
/// error, and the others' calls are not affected. A person answers a handful of questions at
/// a time; an agent running tools in parallel a few dozen.
pub const MAX_PARKED_PER_PRINCIPAL: usize = 32;

/// Bytes of randomness in a `requestState`.
const STATE_BYTES: usize = 16;

impl Hub {
    /// Starts modern request `target.id` that came on `target.parent`: a session of its own
    /// (of the parent's principal) declaring what `meta` says, and its work (`method` with
    /// `params`, as they go upstream) in a task. Aimed at `target` before the work starts: a
    /// server's first message may come before this returns.
    pub(crate) fn converse(
        self: &Arc<Self>,
        target: Target,
        meta: &Meta,
        method: &str,
        params: Params,
        name: String,
    ) -> Conversation {
        let (asked, questions) = mpsc::unbounded_channel();
        let (principal, started_in) = (
            target.parent.principal().clone(),
            target.parent.is_legacy().then_some(target.parent.serial),
        );
        let id = target.id.clone();
        let relay = Arc::new(Mutex::new(Some(target)));
        let modern = Modern {
            log_level: meta.log_level,
            questions: asked,
            listening: None,
        };
        let session = Arc::new(Session::modern(
            Box::new(Relay(relay.clone())),
            principal,
            meta.capabilities.clone(),
            modern,
        ));
        self.registry.register(&session);
        let _ = session.begin(&id, None);
        let (inner, for_task, method_owned) = (self.clone(), session.clone(), method.to_owned());
        // Boxed as the gateway's request tasks are (see `Gateway::request`).
        let work = tokio::spawn(Box::pin(async move {
            inner.handle(&for_task, &id, &method_owned, params).await
        }));
        let hub = Arc::downgrade(self);
        Conversation {
            session,
            relay,
            work,
            questions,
            pending: Vec::new(),
            next_key: 0,
            method: method.to_owned(),
            name,
            started_in,
            upstreams: self.upstreams.clone(),
            on_end: Some(Box::new(move |session: &Arc<Session>| {
                if let Some(hub) = hub.upgrade() {
                    hub.close_session(session);
                }
            })),
        }
    }

    /// Parks `call` under `handle` (a new one when none) until a retry takes it or
    /// [`crate::options::GatewayOptions::input_ttl`] passes; its `input_required` result. Refused (the
    /// call is ended) when [`MAX_PARKED_CALLS`] are parked.
    pub(crate) fn park(self: &Arc<Self>, call: Conversation, handle: Option<String>) -> Answer {
        // A call parked again (its answer refused) was counted when it was first parked.
        let again = handle.is_some();
        let handle = match handle {
            Some(handle) => handle,
            None => new_state()
                .map_err(|e| codes::error(codes::INTERNAL_ERROR, format!("no randomness: {e}")))?,
        };
        let result = call.input_required(&handle);
        let generation = self.parked.next.fetch_add(1, Ordering::Relaxed);
        {
            let mut calls = lock(&self.parked.calls);
            let quota = call.session.principal().quota_key();
            let theirs = calls
                .values()
                .filter(|(_, c)| c.session.principal().quota_key() == quota)
                .count();
            let refused = if again {
                None
            } else if calls.len() >= MAX_PARKED_CALLS {
                Some(format!("the gateway holds {MAX_PARKED_CALLS} calls waiting for input, its most; try again later"))
            } else if theirs >= MAX_PARKED_PER_PRINCIPAL {
                Some(format!("you have {MAX_PARKED_PER_PRINCIPAL} calls waiting for input, the most one client may; answer or let them lapse first"))
            } else {
                None
            };
            if let Some(why) = refused {
                drop(calls);
                drop(call);
                self.refusals
                    .note("a call waiting for input (the parked calls are at their limit)");
                return Err(error(codes::INTERNAL_ERROR, why));
            }
            calls.insert(handle.clone(), (generation, call));
        }
        let gateway = Arc::downgrade(self);
        let ttl = self.options.input_ttl;
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            let Some(gateway) = gateway.upgrade() else {
                return;
            };
            let lapsed = {
                let mut calls = lock(&gateway.parked.calls);
                match calls.get(&handle) {
                    Some((g, _)) if *g == generation => calls.remove(&handle),
                    _ => None,
                }
            };
            if let Some((_, call)) = lapsed {
                tracing::info!(
                    method = call.method,
                    name = call.name,
                    ?ttl,
                    "a call waiting for input lapsed; cancelled"
                );
                drop(call);
            }
        });
        made(&result)
    }

    /// Takes the call parked under `handle` for a retry of `method` on `name` that came on
    /// `parent`. A call of another principal (or another legacy session) is not there for it:
    /// the same answer as an unknown `requestState`, and the call stays parked for its owner.
    pub(crate) fn unpark(
        &self,
        parent: &Session,
        handle: &str,
        method: &str,
        name: &str,
    ) -> Result<Conversation, ErrorObject> {
        let mut calls = lock(&self.parked.calls);
        let bound = calls
            .get(handle)
            .filter(|(_, c)| c.belongs_to(parent))
            .map(|(_, c)| (c.method.clone(), c.name.clone()));
        if bound.is_none() && calls.contains_key(handle) {
            tracing::warn!(principal = %parent.principal(), "a retry named another client's parked call; refused as unknown");
        }
        match bound {
            None => Err(unknown_state()),
            Some((m, n)) if m != method || n != name => Err(error(
                codes::INVALID_PARAMS,
                format!("invalid params: this requestState belongs to {m} of '{n}', not {method} of '{name}'"),
            )),
            Some(_) => calls
                .remove(handle)
                .map(|(_, call)| call)
                .ok_or_else(unknown_state),
        }
    }

    /// The rest of a modern request that may converse: a new conversation, or the parked one
    /// its `requestState` names, resumed with its `inputResponses`; then its result, or the
    /// next `input_required`. `read`: `params` as the checks read them.
    pub(crate) async fn conversation(
        self: &Arc<Self>,
        target: Target,
        meta: &Meta,
        method: &str,
        params: Option<Box<RawValue>>,
        read: modern::Read,
    ) -> Answer {
        let (members, meta_members) = match (read.members, params.as_deref()) {
            (Some(members), _) => (members, read.meta),
            (None, Some(raw)) => (
                mcpclient::RawParams::parse(raw).map_err(|e| {
                    codes::error(codes::INVALID_PARAMS, format!("invalid params: {e}"))
                })?,
                None,
            ),
            (None, None) => (mcpclient::RawParams::default(), None),
        };
        let named = modern::named_member(method);
        let name = named
            .and_then(|member| members.get_str(member))
            .unwrap_or_default();
        let mut call = match members.get_str("requestState") {
            Some(handle) => {
                let mut call = self.unpark(&target.parent, &handle, method, &name)?;
                // Aimed before the answers let its servers go on.
                call.aim(Some(target));
                if let Err(invalid) = call.resume(members.get("inputResponses")) {
                    call.aim(None);
                    self.observe_refused_input(&call, &invalid);
                    // Kept for a corrected answer under the same requestState.
                    self.park(call, Some(handle))?;
                    return Err(invalid);
                }
                call
            }
            None => {
                let upstream = match params {
                    Some(_) => Params::Members(modern::upstream_members(members, meta_members)),
                    None => Params::Text(None),
                };
                self.converse(target, meta, method, upstream, name)
            }
        };
        let outcome = call.drive(named.is_some()).await;
        call.aim(None);
        match outcome {
            Outcome::Done(answer) => {
                drop(call);
                answer
                    .map(|result| modern::complete(method, result))
                    .map_err(modern::modern_error)
            }
            Outcome::Input => self.park(call, None),
        }
    }
}

/// The answer to a retry whose `requestState` names no call of its own.
fn unknown_state() -> ErrorObject {
    error(
        codes::INVALID_PARAMS,
        "invalid params: unknown or expired requestState (it lapsed, was used already, or belongs to another gateway replica); start the call again without requestState",
    )
}

fn new_state() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; STATE_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::Gateway;
    use crate::options::GatewayOptions;
    use crate::protocol::question::ask;
    use serde_json::json;
    use std::time::Duration;
    use tokio::sync::oneshot;

    /// Tells when it is dropped (its task ended or was cancelled).
    struct Dropped(Option<oneshot::Sender<()>>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            if let Some(told) = self.0.take() {
                let _ = told.send(());
            }
        }
    }

    /// A conversation whose work asks one elicitation and then waits forever.
    fn asking(
        gateway: &Gateway,
        principal: crate::sessions::principal::Principal,
    ) -> (Conversation, oneshot::Receiver<()>) {
        let inner = &gateway.hub;
        let (asked, questions) = mpsc::unbounded_channel();
        let (told, ended) = oneshot::channel();
        let work = tokio::spawn(async move {
            let _dropped = Dropped(Some(told));
            let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
            let params = json!({"message": "n?", "requestedSchema": schema});
            let _ = ask(
                &asked,
                "elicitation/create",
                params,
                Duration::from_secs(600),
            )
            .await;
            std::future::pending::<Answer>().await
        });
        let (unused, _) = mpsc::unbounded_channel();
        let session = Arc::new(Session::modern(
            Box::new(Relay(Arc::default())),
            principal,
            json!({"elicitation": {}}),
            Modern {
                log_level: None,
                questions: unused,
                listening: None,
            },
        ));
        let call = Conversation {
            upstreams: inner.upstreams.clone(),
            on_end: None,
            session,
            relay: Arc::default(),
            work,
            questions,
            pending: Vec::new(),
            next_key: 0,
            method: "tools/call".to_owned(),
            name: "t".to_owned(),
            started_in: None,
        };
        (call, ended)
    }

    #[tokio::test]
    async fn a_parked_call_lapses_and_its_state_is_then_unknown() {
        let options = GatewayOptions {
            input_ttl: Duration::from_millis(50),
            ..GatewayOptions::default()
        };
        let gateway = Gateway::start(Vec::new(), options);
        let (mut call, ended) = asking(&gateway, crate::sessions::principal::Principal::local());
        assert!(matches!(call.drive(true).await, Outcome::Input));
        let parked = gateway.hub.park(call, None).unwrap();
        let parked: serde_json::Value = serde_json::from_str(parked.raw().get()).unwrap();
        let state = parked["requestState"].as_str().unwrap().to_owned();
        assert_eq!(
            parked["inputRequests"]["input-1"]["method"],
            "elicitation/create"
        );
        // Bound to its method and name.
        let owner = Session::new(
            Box::new(Relay(Arc::default())),
            crate::sessions::principal::Principal::local(),
        );
        let other = gateway
            .hub
            .unpark(&owner, &state, "prompts/get", "t")
            .err()
            .unwrap();
        assert!(other.message.contains("belongs to tools/call of 't'"));
        // The TTL passes: the call is cancelled (its task dropped) and its state forgotten.
        ended.await.unwrap();
        let gone = gateway
            .hub
            .unpark(&owner, &state, "tools/call", "t")
            .err()
            .unwrap();
        assert_eq!(gone.code, codes::INVALID_PARAMS);
        assert!(gone.message.contains("start the call again"));
    }

    #[tokio::test]
    async fn an_invalid_answer_is_refused_with_the_lines_and_changes_nothing() {
        let gateway = Gateway::start(Vec::new(), GatewayOptions::default());
        let (mut call, _ended) = asking(&gateway, crate::sessions::principal::Principal::local());
        assert!(matches!(call.drive(true).await, Outcome::Input));
        let answer = |text: &str| RawValue::from_string(text.to_owned()).unwrap();
        let refused = call
            .resume(Some(&answer(
                r#"{"input-1":{"action":"accept","content":{"n":"x"}}}"#,
            )))
            .unwrap_err();
        assert_eq!(
            refused.to_value()["data"]["violations"][0],
            "$.n: got string, want integer"
        );
        assert_eq!(call.pending.len(), 1, "still waiting for a valid answer");
        gateway.hub.observe_refused_input(&call, &refused);
        assert!(gateway
            .observe()
            .metrics_text()
            .lines()
            .any(|l| l == r#"mcpx_refused_answers_total{server=""} 1"#));
        call.resume(Some(&answer(
            r#"{"input-1":{"action":"accept","content":{"n":3}}}"#,
        )))
        .unwrap();
        assert!(call.pending.is_empty());
    }

    /// A session of `principal` for a retry to arrive on.
    fn retrying_as(principal: crate::sessions::principal::Principal) -> Session {
        Session::new(Box::new(Relay(Arc::default())), principal)
    }

    /// The `requestState` of a parked answer.
    fn state_of(parked: &Answer) -> String {
        let parked = parked.as_ref().unwrap();
        let parked: serde_json::Value = serde_json::from_str(parked.raw().get()).unwrap();
        parked["requestState"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn another_principals_retry_finds_nothing_and_the_call_stays_its_owners() {
        let gateway = Gateway::start(Vec::new(), GatewayOptions::default());
        let alice = crate::sessions::principal::Principal::anonymous("127.0.0.1".parse().unwrap());
        let bob = crate::sessions::principal::Principal::anonymous("127.0.0.2".parse().unwrap());
        let (mut call, _ended) = asking(&gateway, alice.clone());
        assert!(matches!(call.drive(true).await, Outcome::Input));
        let state = state_of(&gateway.hub.park(call, None));
        let refused = gateway
            .hub
            .unpark(&retrying_as(bob), &state, "tools/call", "t")
            .err()
            .unwrap();
        assert_eq!(refused, unknown_state(), "told exactly as for no such call");
        // Even with the wrong method: nothing about the call is told to another principal.
        let bob = crate::sessions::principal::Principal::anonymous("127.0.0.2".parse().unwrap());
        let refused = gateway
            .hub
            .unpark(&retrying_as(bob), &state, "prompts/get", "x")
            .err()
            .unwrap();
        assert_eq!(refused, unknown_state());
        assert!(gateway
            .hub
            .unpark(&retrying_as(alice), &state, "tools/call", "t")
            .is_ok());
    }

    #[tokio::test]
    async fn a_call_a_legacy_session_started_is_that_sessions_alone() {
        let gateway = Gateway::start(Vec::new(), GatewayOptions::default());
        let started = retrying_as(crate::sessions::principal::Principal::local());
        started.initialized("2025-11-25", json!({}));
        let (mut call, _ended) = asking(&gateway, crate::sessions::principal::Principal::local());
        call.started_in = Some(started.serial);
        assert!(matches!(call.drive(true).await, Outcome::Input));
        let state = state_of(&gateway.hub.park(call, None));
        let other = retrying_as(crate::sessions::principal::Principal::local());
        other.initialized("2025-11-25", json!({}));
        for stranger in [
            other,
            retrying_as(crate::sessions::principal::Principal::local()),
        ] {
            let refused = gateway.hub.unpark(&stranger, &state, "tools/call", "t");
            assert_eq!(refused.err(), Some(unknown_state()));
        }
        assert!(gateway
            .hub
            .unpark(&started, &state, "tools/call", "t")
            .is_ok());
    }

    #[tokio::test]
    async fn one_principal_parks_at_most_its_share() {
        let gateway = Gateway::start(Vec::new(), GatewayOptions::default());
        let greedy = crate::sessions::principal::Principal::anonymous("127.0.0.1".parse().unwrap());
        let mut kept = Vec::new();
        for _ in 0..MAX_PARKED_PER_PRINCIPAL {
            let (mut call, ended) = asking(&gateway, greedy.clone());
            assert!(matches!(call.drive(true).await, Outcome::Input));
            assert!(gateway.hub.park(call, None).is_ok());
            kept.push(ended);
        }
        let (mut call, ended) = asking(&gateway, greedy.clone());
        assert!(matches!(call.drive(true).await, Outcome::Input));
        let refused = gateway.hub.park(call, None).err().unwrap();
        assert!(
            refused.message.contains("the most one client may"),
            "{}",
            refused.message
        );
        // The refused call was ended (its upstream work cancelled).
        ended.await.unwrap();
        // Someone else still parks.
        let other = crate::sessions::principal::Principal::anonymous("127.0.0.9".parse().unwrap());
        let (mut call, _ended) = asking(&gateway, other);
        assert!(matches!(call.drive(true).await, Outcome::Input));
        assert!(gateway.hub.park(call, None).is_ok());
    }
}
