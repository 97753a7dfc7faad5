//! What a server asks of its client (elicitation, sampling, roots) passed on to the gateway's
//! client whose call it belongs to: the client with the newest call in flight to that server.
//!
//! Elicitation is checked on both sides by mcpclient: a `requestedSchema` that is not the flat
//! object MCP allows never reaches the client, and content that does not match it never reaches
//! the server, which gets error -32602 with the flat lines instead. With no client that
//! declared the capability, an elicitation is declined, and sampling or roots get
//! method-not-found.

use std::sync::{Arc, Weak};

use mcpclient::{
    BoxFuture, ElicitationAnswer, ElicitationHandler, ElicitationRequest, HandlerError,
    RootsHandler, SamplingHandler,
};
use serde_json::{json, Value};

use crate::gateway::Inner;

#[derive(Clone)]
pub(crate) struct Bridge {
    gateway: Weak<Inner>,
    upstream: usize,
}

impl Bridge {
    pub(crate) fn new(gateway: Weak<Inner>, upstream: usize) -> Bridge {
        Bridge { gateway, upstream }
    }

    /// Asks the right client `method` with `params`; `None` when no client can be asked.
    async fn ask(
        &self,
        capability: &str,
        method: &str,
        params: &Value,
    ) -> Option<Result<Value, Value>> {
        let gateway = self.gateway.upgrade()?;
        let (session, related) = gateway.asker(self.upstream, capability)?;
        let timeout = gateway.options.timeout;
        drop(gateway);
        Some(
            session
                .ask(method, params.clone(), related.as_deref(), timeout)
                .await,
        )
    }

    async fn forward(
        &self,
        capability: &str,
        method: &str,
        params: &Value,
    ) -> Result<Value, HandlerError> {
        match self.ask(capability, method, params).await {
            Some(Ok(result)) => Ok(result),
            Some(Err(error)) => Err(handler_error(&error)),
            None => Err(HandlerError {
                code: -32601,
                message: format!("{method}: no client of this gateway declared {capability}"),
                data: None,
            }),
        }
    }
}

fn handler_error(error: &Value) -> HandlerError {
    HandlerError {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the client refused")
            .to_owned(),
        data: error.get("data").cloned(),
    }
}

impl ElicitationHandler for Bridge {
    fn elicit<'a>(
        &'a self,
        request: &'a ElicitationRequest,
        problems: &'a [String],
    ) -> BoxFuture<'a, ElicitationAnswer> {
        Box::pin(async move {
            if let Some(first) = problems.first() {
                // The client's answer did not match: it is not forwarded, and the client is
                // not asked twice (it already gave its answer).
                return ElicitationAnswer::Refuse(HandlerError {
                    code: -32602,
                    message: format!("the client's answer violates requestedSchema: {first}"),
                    data: Some(json!({ "violations": problems })),
                });
            }
            match self
                .ask("elicitation", "elicitation/create", &request.params)
                .await
            {
                None => ElicitationAnswer::Decline,
                Some(Err(error)) => ElicitationAnswer::Refuse(handler_error(&error)),
                Some(Ok(result)) => match result.get("action").and_then(Value::as_str) {
                    Some("accept") => ElicitationAnswer::Accept(
                        result.get("content").cloned().unwrap_or_else(|| json!({})),
                    ),
                    Some("decline") => ElicitationAnswer::Decline,
                    _ => ElicitationAnswer::Cancel,
                },
            }
        })
    }
}

impl SamplingHandler for Bridge {
    fn create_message<'a>(
        &'a self,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(self.forward("sampling", "sampling/createMessage", params))
    }
}

impl RootsHandler for Bridge {
    fn list_roots<'a>(&'a self, params: &'a Value) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(self.forward("roots", "roots/list", params))
    }
}

/// Used where a session is picked for a question.
pub(crate) type Asked = (Arc<crate::Session>, Option<String>);
