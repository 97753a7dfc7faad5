//! A modern (2026-07-28) request, front to back: its `_meta` checked, then `server/discover`
//! answered by the gateway, `subscriptions/listen` held open, and every other method served
//! as a conversation ([`crate::protocol::mrtr`]) whose result gains what a modern result has.

use mcpclient::codes;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::gateway::Hub;
use crate::protocol::conversation::Target;
use crate::protocol::modern::{self, CACHE_SCOPE, DISCOVER_TTL_MS, MODERN_METHODS};
use crate::sessions::session::Session;
use crate::wire::{made, Answer};
use mcpclient::codes::error;

impl Hub {
    /// Answers modern request `id` of the client on `parent`'s connection; `read` is its
    /// `params` as [`modern::era`] read them.
    pub(crate) async fn serve_modern(
        self: &Arc<Self>,
        parent: &Arc<Session>,
        id: &str,
        method: &str,
        params: Option<Box<RawValue>>,
        mut read: modern::Read,
    ) -> Answer {
        // As the front checked it, when it did (HTTP): not read again.
        let meta = read.take_checked()?;
        if !MODERN_METHODS.contains(&method) {
            return Err(error(
                codes::METHOD_NOT_FOUND,
                format!(
                    "method not found: {method} (not part of MCP {})",
                    meta.version
                ),
            ));
        }
        match method {
            "server/discover" => return made(&self.discover().await),
            "subscriptions/listen" => {
                return self.listen(parent, id, &meta, params.as_deref()).await
            }
            _ => {}
        }
        let target = Target {
            parent: parent.clone(),
            id: id.to_owned(),
            progress_token: meta.progress_token.clone(),
        };
        self.conversation(target, &meta, method, params, read).await
    }

    /// The answer to `server/discover`: the versions served ([`modern::supported_versions`]),
    /// the capabilities `initialize` would offer, who the gateway is.
    async fn discover(self: &Arc<Self>) -> Value {
        let capabilities = self.capabilities(modern::MODERN_VERSIONS[0]).await;
        json!({
            "resultType": "complete",
            "supportedVersions": modern::supported_versions(),
            "capabilities": capabilities,
            "instructions": crate::requests::INSTRUCTIONS,
            "ttlMs": DISCOVER_TTL_MS,
            "cacheScope": CACHE_SCOPE,
            "_meta": {modern::SERVER_INFO: modern::server_info()},
        })
    }
}
