//! `subscriptions/listen` (2026-07-28): a modern client's long-lived request that carries the
//! change notifications it opted in to, in place of the legacy session's GET stream and
//! `resources/subscribe`.
//!
//! The request gets a session of its own that takes part in what the gateway already does for
//! sessions: list changes are broadcast to it when its filter has them, and it subscribes to
//! the resources it names like a legacy session would (a server hears the first subscription
//! and the last unsubscription, whoever made them). Everything on its stream carries
//! `_meta["io.modelcontextprotocol/subscriptionId"]`, the listen request's id, starting with
//! the acknowledgement of what is honored. It ends when the client cancels (stdio) or closes
//! the stream (HTTP); then its subscriptions end with its session.

use mcpclient::codes;
use std::sync::{Arc, Weak};

use mcpclient::{Frame, RawParams};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::gateway::Hub;
use crate::protocol::modern::{Meta, SUBSCRIPTION_ID};
use crate::sessions::session::Outbox;
use crate::sessions::session::Session;
use crate::sessions::session::{Filter, Modern};
use crate::wire::Answer;
use mcpclient::codes::error;

/// The most resources one `subscriptions/listen` may subscribe to; the rest are not honored
/// (the acknowledgement lists those that are).
pub const MAX_LISTEN_RESOURCES: usize = 256;

/// A listener's outbox: to its request's stream on its client's connection, every frame
/// tagged with the subscription id.
struct Tagging {
    parent: Arc<Session>,
    /// The listen request's id, as JSON text.
    id: String,
}

impl Outbox for Tagging {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        let Ok(mut value) = frame.value() else { return };
        let id: Value = serde_json::from_str(&self.id).unwrap_or(Value::Null);
        let Some(message) = value.as_object_mut() else {
            return;
        };
        let params = message.entry("params").or_insert_with(|| json!({}));
        let Some(params) = params.as_object_mut() else {
            return;
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        let Some(meta) = meta.as_object_mut() else {
            return;
        };
        meta.insert(SUBSCRIPTION_ID.to_owned(), id);
        self.parent.send(Frame::from_value(&value), Some(&self.id));
    }

    fn finish(&self, _id: &str, _response: Option<Frame>) {}
}

/// Ends a listener's session when its request ends, however it ends.
struct Closing(Weak<Hub>, Arc<Session>);

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(gateway) = self.0.upgrade() {
            gateway.close_session(&self.1);
        }
    }
}

impl Hub {
    /// Serves `subscriptions/listen` request `id` of `parent`'s client until it is cancelled.
    pub(crate) async fn listen(
        self: &Arc<Self>,
        parent: &Arc<Session>,
        id: &str,
        meta: &Meta,
        params: Option<&RawValue>,
    ) -> Answer {
        let wanted: Value = params
            .and_then(|p| RawParams::parse(p).ok())
            .and_then(|p| p.get_as("notifications"))
            .filter(Value::is_object)
            .ok_or_else(|| {
                error(
                    codes::INVALID_PARAMS,
                    "invalid params: subscriptions/listen needs params.notifications, an object",
                )
            })?;
        let flag = |key: &str| wanted.get(key) == Some(&Value::Bool(true));
        let filter = Filter {
            tools: flag("toolsListChanged"),
            prompts: flag("promptsListChanged"),
            resources: flag("resourcesListChanged"),
        };
        // Nobody asks a listener anything: its questions find no one waiting.
        let (questions, _) = mpsc::unbounded_channel();
        let session = Arc::new(Session::modern(
            Box::new(Tagging {
                parent: parent.clone(),
                id: id.to_owned(),
            }),
            parent.principal().clone(),
            meta.capabilities.clone(),
            Modern {
                log_level: None,
                questions,
                listening: Some(filter),
            },
        ));
        self.registry.register(&session);
        let _closing = Closing(Arc::downgrade(self), session.clone());
        let mut honored = serde_json::Map::new();
        for key in [
            "toolsListChanged",
            "promptsListChanged",
            "resourcesListChanged",
        ] {
            if flag(key) {
                honored.insert(key.to_owned(), json!(true));
            }
        }
        if let Some(uris) = wanted
            .get("resourceSubscriptions")
            .and_then(Value::as_array)
        {
            let mut subscribed = Vec::new();
            for uri in uris
                .iter()
                .filter_map(Value::as_str)
                .take(MAX_LISTEN_RESOURCES)
            {
                let mut members = RawParams::default();
                members.set("uri", &json!(uri));
                let done = self
                    .subscription(&session, id, "resources/subscribe", members)
                    .await;
                match done {
                    Ok(_) => subscribed.push(json!(uri)),
                    Err(error) => {
                        tracing::info!(uri, ?error, "a listener's resource not subscribed")
                    }
                }
            }
            honored.insert("resourceSubscriptions".to_owned(), Value::Array(subscribed));
        }
        let acknowledged = json!({"jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": honored}});
        session.send(Frame::from_value(&acknowledged), None);
        std::future::pending().await
    }
}
