//! Per-session connections: a server configured with `"isolation": "per-session"` gets a
//! connection (for stdio, a process) of its own for each client session, started on that
//! session's first call to it and stopped when the session ends. What such a connection asks,
//! logs or updates reaches that session alone. A connection that closes is forgotten, and the
//! session's next call starts another.
//!
//! They are bounded: at most [`crate::options::MAX_SESSION_SERVERS`] at once, and
//! [`crate::options::MAX_SESSION_SERVERS_PER_CLIENT`] for one client's sessions (each configurable); a call that
//! would start one more is refused with an error that says so, and nothing is started. (A
//! 2026-07-28 request is a session of its own: without the bound, a client's burst of requests
//! would start a process each.)

use mcpclient::codes;
use std::sync::{Arc, Weak};

use mcpclient::{CallOptions, ErrorObject, Event};
use serde_json::json;
use tokio::sync::mpsc;

use crate::gateway::Hub;
use crate::sessions::instances::Full;
use crate::sessions::session::Session;
use crate::sessions::session::{level_index, LOG_LEVELS};
use crate::upstream::{self, Running};
use mcpclient::codes::error;

impl Hub {
    /// The connection `session`'s request goes through to server `index`: the shared one, or
    /// for a per-session server the session's own (started now if it has none, or if its own
    /// has closed and is not forgotten yet).
    pub(crate) async fn connection_for(
        self: &Arc<Self>,
        session: &Arc<Session>,
        index: usize,
    ) -> Result<Arc<Running>, ErrorObject> {
        if self.upstreams[index].is_shared() {
            return self.running(index).await;
        }
        let options = &self.options;
        let mut replaced = false;
        loop {
            let cell = self
                .instances
                .cell(
                    session,
                    index,
                    options.max_session_servers,
                    options.max_session_servers_per_client,
                )
                .map_err(|full| self.refused_instance(index, full))?;
            // Boxed: starting a server is rare and its future large; unboxed, every call's
            // future (and task) would carry its size.
            let running = match Box::pin(
                cell.get_or_try_init(|| self.start_instance(session, index)),
            )
            .await
            {
                Ok(running) => running.clone(),
                Err(error) => {
                    self.instances.forget_unstarted(session, index);
                    return Err(error);
                }
            };
            // The session ended while it started (and its connections were taken before this
            // one was in them): closed, not left running for nobody.
            if session.is_closed() {
                let owner = Arc::as_ptr(session) as usize;
                self.instances.forget((owner, index), &running);
                running.client.close().await;
                return Err(self.refused_instance(index, Full::Ended));
            }
            // One that closed as soon as it started is the request's failure, not a reason to
            // start another.
            if !running.client.is_closed() || replaced {
                return Ok(running);
            }
            // As its watcher will once it sees the close: forgotten, and another started.
            let owner = Arc::as_ptr(session) as usize;
            self.instances.forget((owner, index), &running);
            replaced = true;
        }
    }

    /// The error for a per-session connection to server `index` refused for `full` (counted).
    fn refused_instance(&self, index: usize, full: Full) -> ErrorObject {
        let name = self.upstreams[index].name();
        let why = match full {
            Full::Ended => {
                return error(
                    codes::INTERNAL_ERROR,
                    format!("server '{name}' is started per session, and this session has ended"),
                );
            }
            Full::All(n) => {
                format!("the gateway runs {n} per-session server connections, its most")
            }
            Full::Client(n) => {
                format!("this client's sessions run {n} per-session server connections, their most")
            }
        };
        self.options
            .observe
            .limited(crate::observe::Limit::SessionServers);
        error(
            codes::INTERNAL_ERROR,
            format!("server '{name}' is started per session, and {why}; end a session or try again later"),
        )
    }

    async fn start_instance(
        self: &Arc<Self>,
        session: &Arc<Session>,
        index: usize,
    ) -> Result<Arc<Running>, ErrorObject> {
        let upstream = &self.upstreams[index];
        let mut options = self.upstream_options(index);
        options.handlers = self.bridge(index, Some(Arc::downgrade(session))).handlers();
        let name = upstream.name();
        let started = upstream::start(&upstream.config, options).await;
        let (running, events) = started.map_err(|failure| {
            error(
                codes::INTERNAL_ERROR,
                format!(
                    "server '{name}' (this session's own connection) did not start: {}",
                    self.options.redactor.redact(&failure.reason)
                ),
            )
        })?;
        let running = Arc::new(running);
        tracing::info!(server = name, "a per-session connection started");
        if let Some(level) = session.log_level() {
            let params = json!({"level": LOG_LEVELS[level]});
            if let Err(error) = running
                .client
                .request("logging/setLevel", Some(params), CallOptions::default())
                .await
            {
                tracing::warn!(server = name, %error, "logging/setLevel failed");
            }
        }
        tokio::spawn(watch(
            Arc::downgrade(self),
            Arc::downgrade(session),
            index,
            Arc::downgrade(&running),
            events,
        ));
        Ok(running)
    }

    /// `session` ended: its own connections are closed.
    pub(crate) fn close_instances(&self, session: &Arc<Session>) {
        for running in self.instances.take(session) {
            tokio::spawn(async move { running.client.close().await });
        }
    }
}

/// What a per-session connection sends goes to its session alone; when it closes, it is
/// forgotten.
async fn watch(
    gateway: Weak<Hub>,
    session: Weak<Session>,
    index: usize,
    running: Weak<Running>,
    mut events: mpsc::Receiver<Event>,
) {
    let owner = session.as_ptr() as usize;
    while let Some(event) = events.recv().await {
        match event {
            Event::Notification(frame) => {
                let Some(session) = session.upgrade() else {
                    continue;
                };
                let Ok(value) = frame.value() else { continue };
                match value["method"].as_str() {
                    Some("notifications/message") => {
                        let level = value["params"]["level"]
                            .as_str()
                            .and_then(level_index)
                            .unwrap_or(0);
                        if session.wants_log(level) {
                            session.send(frame, None);
                        }
                    }
                    Some("notifications/resources/updated") => {
                        let uri = value["params"]["uri"].as_str().unwrap_or_default();
                        if session.subscribed(index, uri) {
                            session.send(frame, None);
                        }
                    }
                    _ => {}
                }
            }
            Event::Closed => break,
            _ => {}
        }
    }
    if let (Some(gateway), Some(running)) = (gateway.upgrade(), running.upgrade()) {
        tracing::info!(
            server = gateway.upstream_name(index),
            "a per-session connection closed"
        );
        gateway.instances.forget((owner, index), &running);
    }
}
