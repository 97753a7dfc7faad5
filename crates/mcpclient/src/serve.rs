//! The task beside a client: it answers what the server asks of the client, re-lists tools when
//! they change, and passes every event on to the application.
//!
//! It never waits on the application: each server request is answered in a task of its own (an
//! elicitation may wait for a person), and events go to the application's queue without
//! blocking. When that queue is full, events are dropped and counted, and the count arrives as
//! [`Event::Lagged`] once there is room; what the client itself must do with them is done
//! regardless. A server that cancels its request (`notifications/cancelled`) stops the task
//! answering it: the handler's future is dropped and no answer is sent.

use crate::codes::{self, ErrorObject};
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::{elicitation, Event, Frame, Handlers};

/// What the task needs of the client it runs beside. The client implements it; the task holds
/// it weakly (it must not keep the client alive) and never names it.
pub(crate) trait Served: Send + Sync + 'static {
    /// The application's handlers, to answer the server's requests with.
    fn handlers(&self) -> &Handlers;
    /// Sends an answer to the server.
    fn send(&self, frame: Frame) -> impl std::future::Future<Output = ()> + Send;
    /// Lists the tools again (their list changed); whether that worked.
    fn relist_tools(&self) -> impl std::future::Future<Output = Result<(), String>> + Send;
}

/// Runs beside a client until its connection closes or the client is gone.
pub(crate) async fn serve<C: Served>(
    client: Weak<C>,
    mut events: mpsc::Receiver<Event>,
    to_app: mpsc::Sender<Event>,
) {
    let mut lagged = 0;
    // The tasks answering the server's requests, by the request's id (JSON text).
    let mut answering: HashMap<String, AbortHandle> = HashMap::new();
    while let Some(event) = events.recv().await {
        if matches!(event, Event::Closed) {
            let _ = to_app.send(event).await;
            break;
        }
        if matches!(event, Event::Mark(_)) {
            // Behind what came before it, never dropped for want of room (that would tell
            // its waiter too early), and never waited for here.
            if let Err(mpsc::error::TrySendError::Full(mark)) = to_app.try_send(event) {
                let to_app = to_app.clone();
                tokio::spawn(async move { to_app.send(mark).await });
            }
            continue;
        }
        let Some(inner) = client.upgrade() else { break };
        match &event {
            Event::Request { frame, during } => {
                answering.retain(|_, task| !task.is_finished());
                if let Some((id, task)) = answer(&inner, frame, during.clone()) {
                    answering.insert(id, task);
                }
            }
            Event::Notification(frame) => {
                if let Some(id) = cancelled(frame) {
                    if let Some(task) = answering.remove(&id) {
                        task.abort();
                    }
                }
                notice(&inner, frame, &to_app);
            }
            _ => {}
        }
        drop(inner);
        deliver(&to_app, event, &mut lagged);
    }
}

/// Queues an event for the application without waiting; counts what a full queue drops.
fn deliver(to_app: &mpsc::Sender<Event>, event: Event, lagged: &mut u64) {
    if *lagged > 0 {
        match to_app.try_send(Event::Lagged { dropped: *lagged }) {
            Ok(()) => *lagged = 0,
            Err(mpsc::error::TrySendError::Full(_)) => {
                *lagged += 1;
                return;
            }
            Err(mpsc::error::TrySendError::Closed(_)) => return,
        }
    }
    if let Err(mpsc::error::TrySendError::Full(_)) = to_app.try_send(event) {
        *lagged += 1;
    }
}

/// The id (JSON text) of the request a `notifications/cancelled` cancels.
fn cancelled(frame: &Frame) -> Option<String> {
    let head = frame.head()?;
    if head.method.as_deref() != Some("notifications/cancelled") {
        return None;
    }
    let notification = frame.value().ok()?;
    Some(notification.get("params")?.get("requestId")?.to_string())
}

/// Answers one request from the server, in a task of its own: the request's id (JSON text) and
/// the task. `during` is the tag of the call it came with, for the handler.
fn answer<C: Served>(
    inner: &Arc<C>,
    frame: &Frame,
    during: Option<String>,
) -> Option<(String, AbortHandle)> {
    let request = frame.value().ok()?;
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let key = id.to_string();
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    let handlers = inner.handlers().clone();
    let client = Arc::downgrade(inner);
    let task = tokio::spawn(async move {
        let outcome = fulfil(&handlers, &method, params, during).await;
        let answer = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        if let Some(inner) = client.upgrade() {
            inner.send(Frame::from_value(&answer)).await;
        }
    });
    Some((key, task.abort_handle()))
}

/// What the application's handlers answer to a server's question (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`, `ping`), asked as a request (legacy servers) or as
/// one of the `inputRequests` of an `input_required` result (modern ones): the result, or the
/// JSON-RPC error object.
pub(crate) async fn fulfil(
    handlers: &Handlers,
    method: &str,
    params: Value,
    during: Option<String>,
) -> Result<Value, ErrorObject> {
    match method {
        "ping" => Ok(json!({})),
        "elicitation/create" if handlers.elicitation.is_some() => {
            let handler = handlers.elicitation.as_deref().expect("checked above");
            elicitation::answer(handler, params, during).await
        }
        "sampling/createMessage" if handlers.sampling.is_some() => {
            let handler = handlers.sampling.as_deref().expect("checked above");
            handler.create_message(&params, during.as_deref()).await
        }
        "roots/list" if handlers.roots.is_some() => {
            let handler = handlers.roots.as_deref().expect("checked above");
            handler.list_roots(&params, during.as_deref()).await
        }
        other => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!("method not found: {other} (this client has no handler for it)"),
        )),
    }
}

/// Acts on the notifications the client itself cares about: a changed tool list is listed and
/// compiled again.
fn notice<C: Served>(inner: &Arc<C>, frame: &Frame, to_app: &mpsc::Sender<Event>) {
    let method = frame.head().and_then(|h| h.method.map(|m| m.into_owned()));
    if method.as_deref() != Some("notifications/tools/list_changed") {
        return;
    }
    let relist = inner.clone();
    let to_app = to_app.clone();
    tokio::spawn(async move {
        match relist.relist_tools().await {
            // Lossy like every event; the new list is in the client regardless.
            Ok(()) => drop(to_app.try_send(Event::ToolsRelisted)),
            Err(error) => {
                tracing::warn!(%error, "re-listing tools after list_changed failed");
            }
        }
    });
}
