//! What the embedding application answers when the server asks the client something:
//! elicitation (a question for the user), sampling (an LLM completion) and roots.
//!
//! A capability is declared only for the handlers that are set; a request no handler takes is
//! answered with method-not-found.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::ErrorObject;

/// A boxed future, as the handler traits return them (they are used as trait objects).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A server's `elicitation/create` in form mode, after its `requestedSchema` has been checked
/// against the restricted shape MCP allows and compiled.
#[derive(Debug, Clone)]
pub struct ElicitationRequest {
    /// What the server says to the user.
    pub message: String,
    /// The flat object schema the answer must match, as the server sent it.
    pub requested_schema: Value,
    /// The request's whole `params`, unknown fields included.
    pub params: Value,
    /// The tag of the call the request came with ([`crate::CallOptions::tag`]), where the
    /// transport tells (Streamable HTTP: it arrived on that call's response stream).
    pub during: Option<String>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Submitted this content (an object matching the requested schema).
    Accept(Value),
    /// Said no.
    Decline,
    /// Dismissed the question without choosing.
    Cancel,
    /// No answer: the server gets this JSON-RPC error instead (a gateway whose own client
    /// failed, say).
    Refuse(ErrorObject),
}

/// Asks the user what a server wants to know.
pub trait ElicitationHandler: Send + Sync {
    /// Asks the user. `problems` is empty the first time; after an answer whose content did
    /// not match the requested schema (it was not sent), it holds the flat lines saying why,
    /// and the user may answer again, decline or cancel.
    fn elicit<'a>(
        &'a self,
        request: &'a ElicitationRequest,
        problems: &'a [String],
    ) -> BoxFuture<'a, ElicitationAnswer>;
}

/// Answers `sampling/createMessage`: the server asks for an LLM completion.
pub trait SamplingHandler: Send + Sync {
    /// The `CreateMessageResult` for the request's `params`; `during` as in
    /// [`ElicitationRequest::during`].
    fn create_message<'a>(
        &'a self,
        params: &'a Value,
        during: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>>;
}

/// Answers `roots/list`: the folders the server may work in.
pub trait RootsHandler: Send + Sync {
    /// The `ListRootsResult` (`{"roots": [...]}`) for the request's `params`; `during` as in
    /// [`ElicitationRequest::during`].
    fn list_roots<'a>(
        &'a self,
        params: &'a Value,
        during: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Value, ErrorObject>>;
}

/// The handlers an application gives the client; each one set declares its capability.
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
}

impl Handlers {
    /// Answers elicitation requests (declares `elicitation`, form mode).
    #[must_use]
    pub fn elicitation(mut self, handler: impl ElicitationHandler + 'static) -> Handlers {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Answers sampling requests (declares `sampling`).
    #[must_use]
    pub fn sampling(mut self, handler: impl SamplingHandler + 'static) -> Handlers {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers `roots/list` (declares `roots` with `listChanged`).
    #[must_use]
    pub fn roots(mut self, handler: impl RootsHandler + 'static) -> Handlers {
        self.roots = Some(Arc::new(handler));
        self
    }

    /// The client capabilities these handlers declare.
    pub(crate) fn capabilities(&self) -> Value {
        let mut capabilities = serde_json::Map::new();
        if self.elicitation.is_some() {
            capabilities.insert("elicitation".into(), serde_json::json!({"form": {}}));
        }
        if self.sampling.is_some() {
            capabilities.insert("sampling".into(), serde_json::json!({}));
        }
        if self.roots.is_some() {
            capabilities.insert("roots".into(), serde_json::json!({"listChanged": true}));
        }
        Value::Object(capabilities)
    }
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}
