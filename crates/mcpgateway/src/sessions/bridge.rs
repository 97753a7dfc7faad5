//! What a server asks of its client (elicitation, sampling, roots) passed on to the gateway's
//! client whose call it belongs to, and never to another: the session whose call's response
//! stream it arrived on (Streamable HTTP servers), else the one session with calls in flight to
//! that server. When several sessions have calls in flight to it and the transport cannot tell
//! which call asked (stdio), the question is ambiguous: it is declined (elicitation) or refused
//! (sampling, roots), and logged. (See [`crate::gateway`] for the rules.)
//!
//! Elicitation is checked on both sides by mcpclient: a `requestedSchema` that is not the flat
//! object MCP allows never reaches the client, and content that does not match it never reaches
//! the server, which gets error -32602 with the flat lines instead. With no client that
//! declared the capability, an elicitation is declined, and sampling or roots get
//! method-not-found.

use mcpclient::codes;
use std::sync::{Arc, Weak};
use std::time::Duration;

use mcpclient::{
    BoxFuture, ElicitationAnswer, ElicitationHandler, ElicitationRequest, ErrorObject,
    RootsHandler, SamplingHandler,
};
use serde_json::{json, Value};

use crate::sessions::registry::{NoAsker, Registry};
use crate::sessions::session::Session;

/// One server connection's way to the gateway's clients.
#[derive(Clone)]
pub(crate) struct Bridge {
    /// Whom to ask: the gateway's sessions and their calls.
    pub(crate) registry: Arc<Registry>,
    /// The server's index.
    pub(crate) upstream: usize,
    /// The server's name, for logs.
    pub(crate) name: String,
    /// How long a client has to answer.
    pub(crate) timeout: Duration,
    /// Where a refused answer is counted and audited.
    pub(crate) observe: crate::observe::Observe,
    /// The one session a per-session connection belongs to: everything it asks is that
    /// session's.
    pub(crate) session: Option<Weak<Session>>,
}

impl Bridge {
    /// The handlers the server's client gets.
    pub(crate) fn handlers(self) -> mcpclient::Handlers {
        mcpclient::Handlers::default()
            .elicitation(self.clone())
            .sampling(self.clone())
            .roots(self)
    }

    /// Asks the right client `method` with `params`; why nobody was asked, when no client
    /// can be.
    async fn ask(
        &self,
        capability: &str,
        method: &str,
        params: &Value,
        during: Option<&str>,
    ) -> Result<Result<Value, Value>, NoAsker> {
        let asked = match &self.session {
            Some(own) => match own.upgrade() {
                Some(session) if session.declares(capability) => {
                    let related = session.newest_call_to(self.upstream).map(|(_, id)| id);
                    Ok((session, related))
                }
                _ => Err(NoAsker::Undeclared),
            },
            None => self.registry.asker(self.upstream, capability, during),
        };
        let (session, related) = match asked {
            Ok(asked) => asked,
            Err(why) => {
                tracing::warn!(server = self.name, method, %why, "a server's request not passed on");
                return Err(why);
            }
        };
        Ok(session
            .ask(method, params.clone(), related.as_deref(), self.timeout)
            .await)
    }

    async fn forward(
        &self,
        capability: &str,
        method: &str,
        params: &Value,
        during: Option<&str>,
    ) -> Result<Value, ErrorObject> {
        match self.ask(capability, method, params, during).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(handler_error(&error)),
            Err(why) => Err(ErrorObject {
                code: why.code(),
                message: format!("{method}: {why}"),
                data: None,
            }),
        }
    }
}

fn handler_error(error: &Value) -> ErrorObject {
    ErrorObject {
        code: error
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or(codes::INTERNAL_ERROR),
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
                self.refused(request, problems);
                // The client's answer did not match: it is not forwarded, and the client is
                // not asked twice (it already gave its answer).
                return ElicitationAnswer::Refuse(ErrorObject {
                    code: codes::INVALID_PARAMS,
                    message: format!("the client's answer violates requestedSchema: {first}"),
                    data: Some(json!({ "violations": problems })),
                });
            }
            let during = request.during.as_deref();
            match self
                .ask("elicitation", "elicitation/create", &request.params, during)
                .await
            {
                Err(_) => ElicitationAnswer::Decline,
                Ok(Err(error)) => ElicitationAnswer::Refuse(handler_error(&error)),
                Ok(Ok(result)) => match result.get("action").and_then(Value::as_str) {
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
        during: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>> {
        Box::pin(self.forward("sampling", "sampling/createMessage", params, during))
    }
}

impl RootsHandler for Bridge {
    fn list_roots<'a>(
        &'a self,
        params: &'a Value,
        during: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>> {
        Box::pin(self.forward("roots", "roots/list", params, during))
    }
}
