//! A server's question to a 2026-07-28 client, and asking it: the session of a modern request
//! hands its questions to the request's conversation ([`crate::protocol::mrtr`]) through this channel.

use std::time::Duration;

use mcpclient::codes::{self, error};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

/// A server's question to a modern request's client, on its way to becoming an input request.
pub(crate) struct Question {
    /// The key a modern server gave the question in its `inputRequests`, passed on as it is.
    pub(crate) key: Option<String>,
    pub(crate) method: String,
    pub(crate) params: Value,
    /// Where the client's answer goes: its result, or an error to refuse the question with.
    pub(crate) answer: oneshot::Sender<Result<Value, Value>>,
}

/// Asks a modern request's client through its conversation and waits at most `timeout`; an
/// elicitation nobody answers is `cancel`, anything else refused.
pub(crate) async fn ask(
    questions: &mpsc::UnboundedSender<Question>,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, Value> {
    let (answer, answered) = oneshot::channel();
    let question = Question {
        key: mcpclient::input_key(),
        method: method.to_owned(),
        params,
        answer,
    };
    let unanswered = || {
        if method == "elicitation/create" {
            Ok(json!({"action": "cancel"}))
        } else {
            Err(error(
                codes::INTERNAL_ERROR,
                format!("the client did not answer {method}: its request ended or lapsed"),
            )
            .to_value())
        }
    };
    if questions.send(question).is_err() {
        return unanswered();
    }
    match tokio::time::timeout(timeout, answered).await {
        Ok(Ok(answer)) => answer,
        _ => unanswered(),
    }
}
