//! One 2026-07-28 request that may converse ([`crate::protocol::mrtr`] has the rules): its own session,
//! its upstream work, the questions its servers ask during it and the client's answers to
//! them, and the table of conversations parked until the client's retry.

use mcpclient::ErrorObject;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use mcpclient::codes::{self, error};
use mcpclient::Frame;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::protocol::modern::{self, SERVER_INFO};
use crate::protocol::question::Question;
use crate::sessions::session::Outbox;
use crate::sessions::session::Session;
use crate::wire::{lock, Answer};

/// How long, after a server's question, the conversation waits for more before it asks the
/// client: the questions of one `input_required` result arrive a few microseconds apart.
pub const GATHER_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);

/// Where what a conversation sends (progress, log messages) goes now: the request being
/// answered, on its client's connection. Nowhere while parked.
pub(crate) struct Target {
    pub(crate) parent: Arc<Session>,
    /// The request's id, as JSON text.
    pub(crate) id: String,
    /// The progress token of the request being answered, if it asked for progress.
    pub(crate) progress_token: Option<Value>,
}

/// The outbox of a conversation's session: to the current [`Target`].
pub(crate) struct Relay(pub(crate) Arc<Mutex<Option<Target>>>);

impl Outbox for Relay {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        let target = lock(&self.0);
        let Some(target) = target.as_ref() else {
            return;
        };
        let progress = frame
            .head()
            .is_some_and(|h| h.method.as_deref() == Some("notifications/progress"));
        if progress {
            // The retry has a token of its own (or none): progress goes under it.
            let (Some(token), Ok(mut value)) = (&target.progress_token, frame.value()) else {
                return;
            };
            let Some(params) = value.get_mut("params").and_then(Value::as_object_mut) else {
                return;
            };
            params.insert("progressToken".to_owned(), token.clone());
            target
                .parent
                .send(Frame::from_value(&value), Some(&target.id));
            return;
        }
        target.parent.send(frame, Some(&target.id));
    }

    fn finish(&self, _id: &str, _response: Option<Frame>) {
        // The request being answered is the parent's: it answers it.
    }
}

pub(crate) struct Pending {
    key: String,
    method: String,
    params: Value,
    /// An elicitation's `requestedSchema`, compiled when the question arrived.
    schema: Option<schemaval::Schema>,
    answer: oneshot::Sender<Result<Value, Value>>,
}

/// What ends a conversation's session with the gateway (given by the layer that registered it).
pub(crate) type OnEnd = Box<dyn FnOnce(&Arc<Session>) + Send + Sync>;

/// One modern request, from its first arrival to its result, across its retries.
pub(crate) struct Conversation {
    /// Its own session, the only one calling with it.
    pub(crate) session: Arc<Session>,
    /// Where what it sends goes now.
    pub(crate) relay: Arc<Mutex<Option<Target>>>,
    /// Its upstream work.
    pub(crate) work: JoinHandle<Answer>,
    /// What the servers ask during its work.
    pub(crate) questions: mpsc::UnboundedReceiver<Question>,
    /// The questions waiting for the client's answers.
    pub(crate) pending: Vec<Pending>,
    /// The key the next question without one gets.
    pub(crate) next_key: u64,
    /// The request's method.
    pub(crate) method: String,
    /// The tool, prompt or resource it acts on.
    pub(crate) name: String,
    /// The legacy session that started it (by serial), when one did: only that session's
    /// retries take it back. A modern request has no session; its principal (its session's)
    /// is what binds it.
    pub(crate) started_in: Option<u64>,
    /// The gateway's servers (what its calls went to is caught up on before its result).
    pub(crate) upstreams: Arc<crate::upstream::roster::Roster>,
    /// Ends its session with the gateway when the conversation ends.
    pub(crate) on_end: Option<OnEnd>,
}

/// How far a conversation got.
pub(crate) enum Outcome {
    Done(Answer),
    /// Questions wait for the client.
    Input,
}

impl Drop for Conversation {
    fn drop(&mut self) {
        // Its upstream call is cancelled with it, and its session ends.
        self.work.abort();
        if let Some(end) = self.on_end.take() {
            end(&self.session);
        }
    }
}

impl Conversation {
    /// Whether a retry from `parent` (the session the retry came on) may take it back: the
    /// same principal, and for a call a legacy session started, that session.
    pub(crate) fn belongs_to(&self, parent: &Session) -> bool {
        self.session.principal().is(parent.principal())
            && self
                .started_in
                .is_none_or(|serial| parent.is_legacy() && parent.serial == serial)
    }

    /// Sends what the conversation sends to `target` (none: nowhere).
    pub(crate) fn aim(&self, target: Option<Target>) {
        *lock(&self.relay) = target;
    }

    /// Runs until the call ends or the server asks; a question on a request that cannot take
    /// input (`ask_allowed` false) is refused on the spot.
    pub(crate) async fn drive(&mut self, ask_allowed: bool) -> Outcome {
        if !self.pending.is_empty() {
            return Outcome::Input;
        }
        loop {
            tokio::select! {
                done = &mut self.work => {
                    self.catch_up().await;
                    return Outcome::Done(done.unwrap_or_else(|e| {
                        Err(codes::error(codes::INTERNAL_ERROR, format!("the request's task ended: {e}")))
                    }));
                }
                Some(question) = self.questions.recv() => {
                    if !ask_allowed {
                        refuse(question);
                        continue;
                    }
                    self.add(question);
                    // A modern server asks several questions at once, and they reach the
                    // conversation one by one: they go out together.
                    while let Ok(Some(more)) =
                        tokio::time::timeout(GATHER_WINDOW, self.questions.recv()).await
                    {
                        self.add(more);
                    }
                    return Outcome::Input;
                }
            }
        }
    }

    /// For a request that asked for log messages: what its servers sent before its result is
    /// acted on (delivered) before the result goes.
    async fn catch_up(&self) {
        if !self.session.asked_for_logs() {
            return;
        }
        for index in self.session.upstreams_called() {
            if let Some(running) = self.upstreams.get(index).and_then(|u| u.running()) {
                running.caught_up().await;
            }
        }
    }

    fn add(&mut self, question: Question) {
        self.next_key += 1;
        let schema = (question.method == "elicitation/create")
            .then(|| question.params.get("requestedSchema"))
            .flatten()
            .and_then(|s| schemaval::Schema::compile(s).ok());
        let taken = |key: &str| self.pending.iter().any(|p| p.key == key);
        let key = match question.key {
            Some(key) if !taken(&key) => key,
            _ => format!("input-{}", self.next_key),
        };
        self.pending.push(Pending {
            key,
            method: question.method,
            params: question.params,
            schema,
            answer: question.answer,
        });
    }

    /// The `input_required` result asking the pending questions, under `handle`.
    pub(crate) fn input_required(&self, handle: &str) -> Value {
        let requests: serde_json::Map<String, Value> = self
            .pending
            .iter()
            .map(|p| {
                (
                    p.key.clone(),
                    json!({"method": p.method, "params": p.params}),
                )
            })
            .collect();
        json!({"resultType": "input_required", "inputRequests": requests,
            "requestState": handle, "_meta": {SERVER_INFO: modern::server_info()}})
    }

    /// Hands the client's `inputResponses` to the questions they answer, all checked first:
    /// one invalid answer and none is handed over (-32602 with the flat lines). Questions left
    /// unanswered stay pending, to be asked again.
    pub(crate) fn resume(&mut self, responses: Option<&RawValue>) -> Result<(), ErrorObject> {
        let responses: serde_json::Map<String, Value> = match responses {
            None => serde_json::Map::new(),
            Some(raw) => serde_json::from_str(raw.get()).map_err(|_| {
                error(
                    codes::INVALID_PARAMS,
                    "invalid params: inputResponses must be an object of answers by key",
                )
            })?,
        };
        for pending in &self.pending {
            if let Some(answer) = responses.get(&pending.key) {
                check_answer(pending, answer)?;
            }
        }
        for pending in std::mem::take(&mut self.pending) {
            match responses.get(&pending.key) {
                Some(answer) => {
                    let _ = pending.answer.send(Ok(answer.clone()));
                }
                None => self.pending.push(pending),
            }
        }
        Ok(())
    }
}

/// A question on a request that cannot carry input requests: an elicitation is declined, the
/// rest refused.
fn refuse(question: Question) {
    let answer = if question.method == "elicitation/create" {
        Ok(json!({"action": "decline"}))
    } else {
        Err(error(
            codes::METHOD_NOT_FOUND,
            format!(
                "{}: the client's request cannot carry input requests",
                question.method
            ),
        )
        .to_value())
    };
    let _ = question.answer.send(answer);
}

/// Whether `answer` may go to the server for `pending`: an object, and for an elicitation an
/// action, and content that matches the requested schema.
fn check_answer(pending: &Pending, answer: &Value) -> Result<(), ErrorObject> {
    let key = &pending.key;
    let invalid = |lines: Vec<String>| {
        let first = lines.first().cloned().unwrap_or_default();
        error(codes::INVALID_PARAMS, format!("invalid params: inputResponses[\"{key}\"] is not a valid answer to {}: {first} (retry with the same requestState and a valid answer)", pending.method))
            .with_data(json!({"violations": lines}))
    };
    if !answer.is_object() {
        return Err(invalid(vec![format!(
            "$: got {}, want object",
            kind(answer)
        )]));
    }
    if pending.method != "elicitation/create" {
        return Ok(());
    }
    match answer.get("action").and_then(Value::as_str) {
        Some("decline" | "cancel") => Ok(()),
        Some("accept") => {
            let content = answer.get("content").cloned().unwrap_or_else(|| json!({}));
            match &pending.schema {
                Some(schema) => schema.validate(&content).map_err(|e| invalid(e.lines())),
                None => Ok(()),
            }
        }
        _ => Err(invalid(vec![
            "$.action: want one of \"accept\", \"decline\", \"cancel\"".to_owned(),
        ])),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The parked conversations, by `requestState`.
#[derive(Default)]
pub(crate) struct Parked {
    /// By `requestState`: the generation it was parked in, and the conversation.
    pub(crate) calls: Mutex<HashMap<String, (u64, Conversation)>>,
    /// The next generation.
    pub(crate) next: AtomicU64,
}
