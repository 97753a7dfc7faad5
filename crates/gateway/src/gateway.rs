//! The gateway: one MCP server in front of many, whatever front its clients come through.
//!
//! A front (stdio, Streamable HTTP) opens a [`Session`] per client with an [`Outbox`] for what
//! goes back, and hands every frame the client sends to [`Gateway::receive`]. Each request is
//! answered in a task of its own, so a slow server holds up no other request, and a
//! `notifications/cancelled` stops that task, which cancels its upstream call too.
//!
//! `tools/call` is where the schemas are enforced: arguments that violate the tool's
//! `inputSchema` never leave (error -32602 with the flat lines, or an `isError` result), and
//! results are forwarded as the exact JSON text the server sent, an `outputSchema` mismatch
//! being only logged and counted.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use mcpclient::{
    CallOptions, ClientError, ClientOptions, Frame, ACCEPTED_VERSIONS, OFFERED_VERSION,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::bridge::{Asked, NoAsker};
use crate::catalog::{changes, Catalog, Route};
use crate::upstream::{self, State, Upstream};
use crate::{
    GatewayOptions, InvalidArguments, Outbox, Session, UpstreamConfig, SETTLE_TIMEOUT,
    START_TIMEOUT,
};

/// The gateway. Cloning it gives another handle to the same gateway.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) options: GatewayOptions,
    upstreams: Vec<Arc<Upstream>>,
    catalog: RwLock<Arc<Catalog>>,
    sessions: Mutex<Vec<Weak<Session>>>,
    supervisors: Mutex<Vec<AbortHandle>>,
    /// The calls in flight upstream, by the tag they carry: whose call a server's question
    /// came with (the session, and its request's id).
    calls: Mutex<HashMap<String, (Weak<Session>, String)>>,
    next_call: AtomicU64,
    output_warnings: AtomicU64,
    rejected_calls: AtomicU64,
}

/// A call registered under its tag while it is in flight upstream.
struct Tagged<'a> {
    calls: &'a Mutex<HashMap<String, (Weak<Session>, String)>>,
    tag: String,
}

impl Drop for Tagged<'_> {
    fn drop(&mut self) {
        lock(self.calls).remove(&self.tag);
    }
}

/// A request's result as JSON, or its error.
type Answer = Result<Box<RawValue>, Value>;

/// `value` as JSON text for an answer.
fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a Value serializes without error")
}

/// What a request frame's `params` are (the rest of the frame is not built).
#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    params: Option<Value>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn error(code: i64, message: impl Into<String>) -> Value {
    json!({"code": code, "message": message.into()})
}

impl Gateway {
    /// A gateway in front of `upstreams`; servers start at once (stdio ones on first use when
    /// `options.lazy`). Must be called inside a Tokio runtime.
    pub fn start(upstreams: Vec<UpstreamConfig>, options: GatewayOptions) -> Gateway {
        let inner = Arc::new(Inner {
            upstreams: upstreams
                .into_iter()
                .enumerate()
                .map(|(i, c)| Arc::new(Upstream::new(i, c)))
                .collect(),
            options,
            catalog: RwLock::default(),
            sessions: Mutex::default(),
            supervisors: Mutex::default(),
            calls: Mutex::default(),
            next_call: AtomicU64::new(1),
            output_warnings: AtomicU64::new(0),
            rejected_calls: AtomicU64::new(0),
        });
        for upstream in &inner.upstreams {
            if upstream.starts_eagerly(inner.options.lazy) {
                inner.supervise(upstream);
            }
        }
        Gateway { inner }
    }

    /// A new client session whose frames go to `outbox`.
    pub fn open_session(&self, outbox: impl Outbox) -> Arc<Session> {
        let session = Arc::new(Session::new(Box::new(outbox)));
        let mut sessions = lock(&self.inner.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(&session));
        session
    }

    /// The client of `session` went away: its requests in flight stop.
    pub fn close_session(&self, session: &Arc<Session>) {
        session.close();
        lock(&self.inner.sessions)
            .retain(|s| s.strong_count() > 0 && !s.ptr_eq(&Arc::downgrade(session)));
    }

    /// Takes one frame from the client of `session`. Requests are answered through the
    /// session's outbox, in tasks of their own.
    pub fn receive(&self, session: &Arc<Session>, frame: Frame) {
        let Some(head) = frame.head() else {
            // A batch (2025-03-26) or not an object: not answered member by member.
            let answer = json!({"jsonrpc": "2.0", "id": null,
                "error": error(-32600, "this gateway takes one JSON-RPC message per frame, not batches")});
            session.send(Frame::from_value(&answer), None);
            return;
        };
        let method = head.method.as_deref().map(str::to_owned);
        match (method, head.id()) {
            (Some(method), Some(id)) => {
                let id = id.to_owned();
                let params = serde_json::from_str::<Request>(frame.text())
                    .ok()
                    .and_then(|request| request.params)
                    .unwrap_or_else(|| json!({}));
                if let Err(reason) = session.begin(id.get()) {
                    tracing::warn!(reason, "a request refused");
                    session.refuse(id.get(), response(&id, Err(error(-32600, reason))));
                    return;
                }
                let inner = self.inner.clone();
                let for_task = session.clone();
                let request_id = id.clone();
                let task = tokio::spawn(async move {
                    let answer = inner
                        .handle(&for_task, request_id.get(), &method, params)
                        .await;
                    for_task.respond(request_id.get(), response(&request_id, answer));
                });
                session.abortable(id.get(), task.abort_handle());
            }
            (Some(method), None) => self.inner.notice(session, &method, &frame),
            (None, Some(id)) => {
                let id = id.get().to_owned();
                if !session.answered(&id, frame) {
                    tracing::debug!(id, "an answer from the client that nothing waits for");
                }
            }
            (None, None) => {
                tracing::debug!(%frame, "a frame from the client that is neither request, notification nor response")
            }
        }
    }

    /// Results whose `structuredContent` did not match the tool's `outputSchema` (delivered
    /// unchanged) so far.
    pub fn output_warnings(&self) -> u64 {
        self.inner.output_warnings.load(Ordering::Relaxed)
    }

    /// Calls refused so far because their arguments violated the tool's `inputSchema`.
    pub fn rejected_calls(&self) -> u64 {
        self.inner.rejected_calls.load(Ordering::Relaxed)
    }

    /// The gateway is stopping: every session's requests in flight are answered at once with
    /// an error saying so (and their upstream calls cancelled).
    pub fn end_sessions(&self) {
        for session in self.inner.sessions() {
            session.stop("mcpx is shutting down; the request was not completed");
        }
    }

    /// Stops supervising and closes every server at once (stdio children are stopped and
    /// reaped, each within [`mcpclient::STOP_GRACE`] twice).
    pub async fn shutdown(&self) {
        for supervisor in lock(&self.inner.supervisors).drain(..) {
            supervisor.abort();
        }
        let running: Vec<_> = self
            .inner
            .upstreams
            .iter()
            .filter_map(|u| u.take_running())
            .collect();
        futures_util::future::join_all(running.iter().map(|r| r.client.close())).await;
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        for supervisor in lock(&self.supervisors).drain(..) {
            supervisor.abort();
        }
    }
}

/// The response frame for request `id`: the result's exact text, or the error.
fn response(id: &RawValue, answer: Answer) -> Frame {
    match answer {
        Ok(result) => Frame::response(id, Ok(&result)),
        Err(error) => Frame::response(id, Err(&raw(&error))),
    }
}

impl Inner {
    fn supervise(self: &Arc<Self>, upstream: &Arc<Upstream>) {
        if upstream.claim() {
            let task = tokio::spawn(upstream::supervise(upstream.clone(), Arc::downgrade(self)));
            lock(&self.supervisors).push(task.abort_handle());
        }
    }

    pub(crate) fn upstream_options(self: &Arc<Self>, index: usize) -> ClientOptions {
        ClientOptions {
            client_info: json!({"name": "mcpx-gateway", "version": env!("CARGO_PKG_VERSION")}),
            handlers: upstream::handlers(Arc::downgrade(self), index),
            timeout: self.options.timeout,
        }
    }

    fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A server changed a list: rebuild the catalog and tell the clients which lists changed.
    pub(crate) fn changed(&self) {
        self.rebuild(None);
    }

    /// A server started or stopped. Its new state and the catalog that follows from it are
    /// published together: whoever sees the state sees the catalog.
    pub(crate) fn transition(&self, upstream: &Upstream, state: State) {
        self.rebuild(Some((upstream, state)));
    }

    fn rebuild(&self, transition: Option<(&Upstream, State)>) {
        let (old, new) = {
            let mut catalog = self.catalog.write().unwrap_or_else(|p| p.into_inner());
            if let Some((upstream, state)) = transition {
                upstream.set(state);
            }
            let new = Arc::new(Catalog::build(&self.upstreams));
            (std::mem::replace(&mut *catalog, new.clone()), new)
        };
        for method in changes(&old, &new) {
            self.broadcast(&Frame::from_value(
                &json!({"jsonrpc": "2.0", "method": method}),
            ));
        }
    }

    fn sessions(&self) -> Vec<Arc<Session>> {
        lock(&self.sessions)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Sends `frame` to every client that has initialized.
    pub(crate) fn broadcast(&self, frame: &Frame) {
        for session in self.sessions() {
            if session.protocol_version().is_some() {
                session.send(frame.clone(), None);
            }
        }
    }

    /// The name of server `index`, for logs.
    pub(crate) fn upstream_name(&self, index: usize) -> &str {
        self.upstreams[index].name()
    }

    /// Registers a call of `session`'s request `id` going upstream; its tag goes with it, and
    /// it is forgotten when the returned guard drops.
    fn tag(&self, session: &Arc<Session>, id: &str) -> Tagged<'_> {
        let tag = format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed));
        lock(&self.calls).insert(tag.clone(), (Arc::downgrade(session), id.to_owned()));
        Tagged {
            calls: &self.calls,
            tag,
        }
    }

    /// The client to ask what server `upstream` wants to know, never a guess:
    /// - the session whose call the question came with (`during`: the transport said);
    /// - else the one session with calls in flight to the server (its newest call);
    /// - for `roots` with no call in flight, the one session that declared roots.
    ///
    /// Several candidates make the question ambiguous; a candidate that did not declare
    /// `capability` is not asked.
    pub(crate) fn asker(
        &self,
        upstream: usize,
        capability: &str,
        during: Option<&str>,
    ) -> Result<Asked, NoAsker> {
        let declared = |session: Arc<Session>, id: Option<String>| {
            if session.declares(capability) {
                Ok((session, id))
            } else {
                Err(NoAsker::Undeclared)
            }
        };
        let tagged = during.and_then(|tag| {
            let calls = lock(&self.calls);
            let (session, id) = calls.get(tag)?;
            Some((session.upgrade()?, id.clone()))
        });
        if let Some((session, id)) = tagged {
            return declared(session, Some(id));
        }
        let sessions = self.sessions();
        let mut calling: Vec<(Arc<Session>, String)> = sessions
            .iter()
            .filter_map(|s| s.newest_call_to(upstream).map(|(_, id)| (s.clone(), id)))
            .collect();
        match calling.len() {
            1 => {
                let (session, id) = calling.remove(0);
                declared(session, Some(id))
            }
            0 if capability == "roots" => {
                let mut declaring: Vec<Arc<Session>> = sessions
                    .into_iter()
                    .filter(|s| s.declares(capability))
                    .collect();
                match declaring.len() {
                    0 => Err(NoAsker::Undeclared),
                    1 => Ok((declaring.remove(0), None)),
                    n => Err(NoAsker::Ambiguous { sessions: n }),
                }
            }
            0 => Err(NoAsker::Undeclared),
            n => Err(NoAsker::Ambiguous { sessions: n }),
        }
    }

    /// Starts what is not started yet and waits, at most [`SETTLE_TIMEOUT`], for every server
    /// that is starting.
    async fn settle(self: &Arc<Self>) {
        for upstream in &self.upstreams {
            self.supervise(upstream);
        }
        let starting = self
            .upstreams
            .iter()
            .filter(|u| matches!(u.state(), State::Idle | State::Starting));
        futures_util::future::join_all(starting.map(|u| u.settled(SETTLE_TIMEOUT))).await;
    }

    /// The running server `index`, waiting for it if it is starting.
    async fn running(&self, index: usize) -> Result<Arc<upstream::Running>, Value> {
        let upstream = &self.upstreams[index];
        if let Some(running) = upstream.running() {
            return Ok(running);
        }
        match upstream.settled(START_TIMEOUT).await {
            State::Ready(running) => Ok(running),
            _ => Err(error(-32603, upstream.unavailable())),
        }
    }

    fn notice(&self, session: &Arc<Session>, method: &str, frame: &Frame) {
        match method {
            "notifications/cancelled" => {
                let params = frame.value().ok().and_then(|v| v.get("params").cloned());
                if let Some(id) = params.as_ref().and_then(|p| p.get("requestId")) {
                    session.cancel(&id.to_string());
                }
            }
            "notifications/roots/list_changed" => {
                for upstream in &self.upstreams {
                    if let Some(running) = upstream.running() {
                        tokio::spawn(async move {
                            let _ = running
                                .client
                                .notify("notifications/roots/list_changed", None)
                                .await;
                        });
                    }
                }
            }
            _ => {}
        }
    }

    async fn handle(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        method: &str,
        params: Value,
    ) -> Answer {
        match method {
            "initialize" => Ok(raw(&initialize(session, &params))),
            "ping" => Ok(raw(&json!({}))),
            "tools/call" => self.call_tool(session, id, params).await,
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                self.settle().await;
                let catalog = self.catalog();
                let (key, items) = match method {
                    "tools/list" => ("tools", &catalog.tools),
                    "prompts/list" => ("prompts", &catalog.prompts),
                    "resources/list" => ("resources", &catalog.resources),
                    _ => ("resourceTemplates", &catalog.templates),
                };
                Ok(raw(&json!({ key: items })))
            }
            "prompts/get" => {
                let route = self.route_prompt(params.get("name")).await?;
                let mut params = params;
                params["name"] = json!(route.name);
                self.pass(session, id, route.upstream, method, params).await
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let upstream = self.route_resource(uri).await?;
                self.pass(session, id, upstream, method, params).await
            }
            "completion/complete" => {
                let mut params = params;
                let reference = params.get("ref").cloned().unwrap_or(Value::Null);
                let upstream = match reference.get("type").and_then(Value::as_str) {
                    Some("ref/prompt") => {
                        let route = self.route_prompt(reference.get("name")).await?;
                        params["ref"]["name"] = json!(route.name);
                        route.upstream
                    }
                    _ => {
                        let uri = reference
                            .get("uri")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        self.route_resource(uri).await?
                    }
                };
                self.pass(session, id, upstream, method, params).await
            }
            "logging/setLevel" => {
                for upstream in &self.upstreams {
                    let Some(running) = upstream.running() else {
                        continue;
                    };
                    if running
                        .client
                        .server_capabilities()
                        .get("logging")
                        .is_some()
                    {
                        let _ = running
                            .client
                            .request(method, Some(params.clone()), CallOptions::default())
                            .await;
                    }
                }
                Ok(raw(&json!({})))
            }
            other => Err(error(-32601, format!("method not found: {other}"))),
        }
    }

    async fn route_prompt(self: &Arc<Self>, name: Option<&Value>) -> Result<Route, Value> {
        let name = name.and_then(Value::as_str).unwrap_or_default();
        if let Some(route) = self.catalog().prompt_routes.get(name) {
            return Ok(route.clone());
        }
        self.settle().await;
        self.catalog()
            .prompt_routes
            .get(name)
            .cloned()
            .ok_or_else(|| error(-32602, format!("unknown prompt '{name}'")))
    }

    async fn route_resource(self: &Arc<Self>, uri: &str) -> Result<usize, Value> {
        if let Some(upstream) = self.catalog().resource_server(uri) {
            return Ok(upstream);
        }
        self.settle().await;
        self.catalog().resource_server(uri).ok_or_else(|| {
            json!({"code": -32002, "message": format!("resource not found: no server offers {uri}"),
                "data": {"uri": uri}})
        })
    }

    /// Sends `session`'s request `id` to server `index` as it is; its result's exact text
    /// comes back.
    async fn pass(
        &self,
        session: &Arc<Session>,
        id: &str,
        index: usize,
        method: &str,
        params: Value,
    ) -> Answer {
        let running = self.running(index).await?;
        session.calls(id, index);
        let tagged = self.tag(session, id);
        let options = CallOptions {
            timeout: Some(self.options.timeout),
            progress: None,
            tag: Some(tagged.tag.clone()),
        };
        match running.client.request(method, Some(params), options).await {
            Ok(response) => Ok(response.result_raw().to_owned()),
            Err(e) => Err(e.to_jsonrpc_error()),
        }
    }

    /// Why `exposed` names no tool: with the reason when it names a server that is not running.
    fn unknown_tool(&self, exposed: &str) -> String {
        let owner = self.upstreams.iter().find(|u| {
            exposed
                .strip_prefix(u.name())
                .is_some_and(|rest| rest.starts_with(crate::naming::SEPARATOR))
        });
        match owner {
            Some(upstream) if upstream.running().is_none() => {
                format!("unknown tool '{exposed}': {}", upstream.unavailable())
            }
            _ => format!("unknown tool '{exposed}'"),
        }
    }

    async fn call_tool(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        mut params: Value,
    ) -> Answer {
        let arguments = params
            .get_mut("arguments")
            .map(Value::take)
            .unwrap_or_else(|| json!({}));
        let Some(exposed) = params.get("name").and_then(Value::as_str) else {
            return Err(error(-32602, "tools/call needs the tool's name"));
        };
        let route = match self.catalog().tool_routes.get(exposed) {
            Some(route) => route.clone(),
            None => {
                self.settle().await;
                self.catalog()
                    .tool_routes
                    .get(exposed)
                    .cloned()
                    .ok_or_else(|| error(-32602, self.unknown_tool(exposed)))?
            }
        };
        let running = self.running(route.upstream).await?;
        session.calls(id, route.upstream);
        let tagged = self.tag(session, id);
        let token = params.pointer("/_meta/progressToken").cloned();
        let (mut options, mut progress) = match token {
            Some(_) => {
                let (options, receiver) = CallOptions::with_progress();
                (options, Some(receiver))
            }
            None => (CallOptions::default(), None),
        };
        options.timeout = Some(self.options.timeout);
        options.tag = Some(tagged.tag.clone());
        let forward = |mut step: Value| {
            if let Some(token) = &token {
                step["progressToken"] = token.clone();
                let note =
                    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": step});
                session.send(Frame::from_value(&note), Some(id));
            }
        };
        let call = running
            .client
            .call_tool_with(&route.name, arguments, options);
        tokio::pin!(call);
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                Some(step) = next(&mut progress) => forward(step),
            }
        };
        if let Some(receiver) = progress.as_mut() {
            while let Ok(step) = receiver.try_recv() {
                forward(step);
            }
        }
        let server = self.upstreams[route.upstream].name();
        match outcome {
            Ok(outcome) => {
                for warning in &outcome.warnings {
                    self.output_warnings.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(server, tool = route.name, exposed, lines = ?warning.lines, "{}", warning.message);
                }
                Ok(outcome.response.result_raw().to_owned())
            }
            Err(ClientError::InvalidArguments { violations, .. }) => {
                self.rejected(exposed, violations)
            }
            Err(ClientError::UnusableInputSchema { error, .. }) => self.rejected(
                exposed,
                vec![format!(
                    "$: the tool's inputSchema does not compile: {error}"
                )],
            ),
            Err(other) => Err(other.to_jsonrpc_error()),
        }
    }

    fn rejected(&self, tool: &str, violations: Vec<String>) -> Answer {
        self.rejected_calls.fetch_add(1, Ordering::Relaxed);
        let first = violations.first().cloned().unwrap_or_default();
        match self.options.invalid_arguments {
            InvalidArguments::Error => Err(json!({"code": -32602,
                "message": format!("invalid arguments for tool '{tool}': {first}"),
                "data": {"violations": violations}})),
            InvalidArguments::ToolResult => Ok(raw(&json!({
                "content": [{"type": "text",
                    "text": format!("invalid arguments for tool '{tool}':\n{}", violations.join("\n"))}],
                "isError": true
            }))),
        }
    }
}

/// The next progress step, or never when the call asked for none.
async fn next(progress: &mut Option<mpsc::Receiver<Value>>) -> Option<Value> {
    match progress {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// The answer to `initialize`: the client's version when the gateway speaks it, else the
/// newest; what the gateway offers in that version.
fn initialize(session: &Session, params: &Value) -> Value {
    let asked = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let version = ACCEPTED_VERSIONS
        .iter()
        .find(|v| **v == asked)
        .copied()
        .unwrap_or(OFFERED_VERSION);
    session.initialized(
        version,
        params.get("capabilities").cloned().unwrap_or(Value::Null),
    );
    let mut capabilities = json!({
        "tools": {"listChanged": true},
        "resources": {"listChanged": true, "subscribe": true},
        "prompts": {"listChanged": true},
        "logging": {}
    });
    if version != "2024-11-05" {
        capabilities["completions"] = json!({});
    }
    json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": {"name": "mcpx", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "mcpx gateway: the tools of several MCP servers, named SERVER__TOOL; arguments are checked against each tool's inputSchema before they are sent."
    })
}
