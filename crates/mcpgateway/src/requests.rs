//! What the gateway answers its clients, method by method.
//!
//! Each request arrives decoded once (id, method, raw params) and is forwarded with only what
//! the gateway owns changed: an exposed name mapped back to the server's, and the progress token
//! replaced by the gateway's own (and mapped back on the way to the client). Every other member
//! of `params` and `_meta`, and the arguments' text, reach the server as the client wrote them.
//!
//! Session-scoped state lives with the session and is combined here: a server is subscribed to
//! a resource while any session is (the first subscription goes upstream, the last
//! unsubscription too, and updates reach only subscribed sessions), and is asked for the most
//! verbose log level any session wants (each session then gets the messages at its own level
//! or above). Both are applied again to a server that restarts.

use mcpclient::codes;
use mcpclient::ErrorObject;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use mcpclient::{
    CallOptions, ClientError, Frame, RawParams, RpcError, ACCEPTED_VERSIONS, OFFERED_VERSION,
};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::gateway::Hub;
use crate::options::InvalidArguments;
use crate::options::MAX_RESENDS;
use crate::policy::catalog::Route;
use crate::sessions::principal::Principal;
use crate::sessions::session::Session;
use crate::sessions::session::{level_index, LOG_LEVELS};
use crate::upstream::{Running, State};
use crate::wire::{lock, made, raw, Answer, Reply};
use mcpclient::codes::error;

/// The level a session that never chose one gets once another session has chosen: what servers
/// send by default would otherwise change under it.
const DEFAULT_LEVEL: &str = "info";

/// The members of a 2026-07-28 retry (multi round-trip), which the gateway alone may send a
/// server: it answers its clients' questions itself and checks every answer first.
const INPUT_MEMBERS: [&str; 2] = ["requestState", "inputResponses"];

/// Refuses a legacy session's request carrying [`INPUT_MEMBERS`]: forwarded as written, they
/// would reach a modern server as answers nobody checked, to a question it never asked this
/// client.
fn refuse_input_members(params: &Params) -> Result<(), ErrorObject> {
    let read;
    let members = match params {
        Params::Text(None) => return Ok(()),
        Params::Text(Some(text)) => {
            // Most requests name neither: the text is looked at before anything is parsed. A
            // name may be written with escapes (`request\u0053tate`), which every later reader
            // decodes; its letters can only be escaped as `\uXXXX`: text with one is read.
            let text_of = text.get();
            if !text_of.contains("\\u") && !INPUT_MEMBERS.iter().any(|m| text_of.contains(m)) {
                return Ok(());
            }
            read = members(Some(text))?;
            &read
        }
        Params::Members(members) => members,
    };
    refuse_input_members_of(members)
}

/// [`refuse_input_members`] for members read already.
fn refuse_input_members_of(members: &RawParams) -> Result<(), ErrorObject> {
    match INPUT_MEMBERS.iter().find(|m| members.get(m).is_some()) {
        Some(member) => Err(error(
            codes::INVALID_PARAMS,
            format!("invalid params: {member} belongs to MCP 2026-07-28 requests, whose questions the gateway answers; a session opened with initialize may not send it"),
        )),
        None => Ok(()),
    }
}

/// Whose a shared server's log line can be: the principal of every session `calling` the
/// server, or, when none is, of every initialized session of `sessions`; `None` when they are
/// two or more (or there is no session).
fn log_owner(sessions: &[Arc<Session>], calling: &[&Arc<Session>]) -> Option<Principal> {
    let candidates: Vec<&Arc<Session>> = if calling.is_empty() {
        sessions
            .iter()
            .filter(|s| s.protocol_version().is_some())
            .collect()
    } else {
        calling.to_vec()
    };
    let (first, rest) = candidates.split_first()?;
    let owner = first.principal();
    rest.iter()
        .all(|s| s.principal().is(owner))
        .then(|| owner.clone())
}

/// A request's `params` as they reach [`Hub::handle`]: the text a client sent, or its members
/// as a front read (and changed) them already, which are not written out to be read again.
pub(crate) enum Params {
    /// The text, as sent; `None` when the request had no `params`.
    Text(Option<Box<RawValue>>),
    /// The members, read already.
    Members(RawParams),
}

impl Params {
    /// The text, written from the members when they were read already.
    fn into_text(self) -> Option<Box<RawValue>> {
        match self {
            Params::Text(text) => text,
            Params::Members(members) => Some(members.to_raw()),
        }
    }

    /// The members, read from the text when they were not (`{}` when absent).
    fn into_members(self) -> Result<RawParams, ErrorObject> {
        match self {
            Params::Text(text) => members(text.as_deref()),
            Params::Members(members) => Ok(members),
        }
    }
}

/// `params` as members; `{}` when absent.
fn members(params: Option<&RawValue>) -> Result<RawParams, ErrorObject> {
    match params {
        None => Ok(RawParams::default()),
        Some(raw) => RawParams::parse(raw)
            .map_err(|e| codes::error(codes::INVALID_PARAMS, format!("invalid params: {e}"))),
    }
}

impl Hub {
    /// A notification from the client of `session`.
    pub(crate) fn notice(
        self: &Arc<Self>,
        session: &Arc<Session>,
        method: &str,
        params: Option<&RawValue>,
    ) {
        match method {
            "notifications/cancelled" => {
                let id = members(params)
                    .ok()
                    .and_then(|p| p.get("requestId").map(|id| id.get().to_owned()));
                if let Some(id) = id {
                    session.cancel(&id);
                }
            }
            "notifications/roots/list_changed" => {
                for upstream in self.upstreams.iter() {
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

    /// Answers request `id` of `session`.
    pub(crate) async fn handle(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        method: &str,
        params: Params,
    ) -> Answer {
        // A call takes the members (as the front read them, when it did; checked once read,
        // names decoded); the rest the text.
        if method == "tools/call" {
            let members = params.into_members()?;
            if !session.is_modern() {
                refuse_input_members_of(&members)?;
            }
            return self.call_tool(session, id, members).await;
        }
        if !session.is_modern() {
            refuse_input_members(&params)?;
        }
        let params = params.into_text();
        match method {
            "initialize" => {
                let params: Value = params
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or_else(|| json!({}));
                made(&self.initialize(session, &params).await)
            }
            "ping" => made(&json!({})),
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                self.settle().await;
                let catalog = self.catalog();
                let tools;
                let (key, items) = match method {
                    "tools/list" => {
                        tools = self.listed_tools(session, &catalog);
                        ("tools", &tools)
                    }
                    "prompts/list" => ("prompts", &catalog.prompts),
                    "resources/list" => ("resources", &catalog.resources),
                    _ => ("resourceTemplates", &catalog.templates),
                };
                made(&json!({ key: items }))
            }
            "prompts/get" => {
                let mut members = members(params.as_deref())?;
                let route = self.route_prompt(members.get_str("name")).await?;
                members.set("name", &json!(route.name));
                self.pass(session, id, route.upstream, method, members.to_raw())
                    .await
            }
            "resources/read" => {
                let uri = members(params.as_deref())?
                    .get_str("uri")
                    .unwrap_or_default();
                let upstream = self.route_resource(&uri).await?;
                let params = params.unwrap_or_else(|| raw(&json!({})));
                self.pass(session, id, upstream, method, params).await
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let members = members(params.as_deref())?;
                self.subscription(session, id, method, members).await
            }
            "completion/complete" => {
                let mut members = members(params.as_deref())?;
                let mut reference = members
                    .get("ref")
                    .map(RawParams::parse)
                    .transpose()
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                let upstream = match reference.get_str("type").as_deref() {
                    Some("ref/prompt") => {
                        let route = self.route_prompt(reference.get_str("name")).await?;
                        reference.set("name", &json!(route.name));
                        members.set_raw("ref", reference.to_raw());
                        route.upstream
                    }
                    _ => {
                        let uri = reference.get_str("uri").unwrap_or_default();
                        self.route_resource(&uri).await?
                    }
                };
                self.pass(session, id, upstream, method, members.to_raw())
                    .await
            }
            "logging/setLevel" => {
                let level = members(params.as_deref())?
                    .get_str("level")
                    .unwrap_or_default();
                let Some(index) = level_index(&level) else {
                    return Err(error(
                        codes::INVALID_PARAMS,
                        format!(
                            "invalid params: unknown log level '{level}' (one of {})",
                            LOG_LEVELS.join(", ")
                        ),
                    ));
                };
                session.set_log_level(index);
                self.apply_log_level().await;
                for (upstream, running) in self.instances.of(session) {
                    if running
                        .client
                        .server_capabilities()
                        .get("logging")
                        .is_some()
                    {
                        let params = json!({"level": level});
                        if let Err(error) = running
                            .client
                            .request(method, Some(params), CallOptions::default())
                            .await
                        {
                            tracing::warn!(server = self.upstream_name(upstream), %error, "logging/setLevel failed");
                        }
                    }
                }
                made(&json!({}))
            }
            other => Err(codes::error(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }

    async fn route_prompt(self: &Arc<Self>, name: Option<String>) -> Result<Route, ErrorObject> {
        let name = name.unwrap_or_default();
        if let Some(route) = self.catalog().prompt_routes.get(&name) {
            return Ok(route.clone());
        }
        self.settle().await;
        self.catalog()
            .prompt_routes
            .get(&name)
            .cloned()
            .ok_or_else(|| codes::error(codes::INVALID_PARAMS, format!("unknown prompt '{name}'")))
    }

    /// The server of resource `uri`: the one that listed it or a template that matches it;
    /// else, when exactly one running server offers resources, that one (a server may serve
    /// URIs it does not list), which then answers for itself.
    async fn route_resource(self: &Arc<Self>, uri: &str) -> Result<usize, ErrorObject> {
        if let Some(upstream) = self.catalog().resource_server(uri) {
            return Ok(upstream);
        }
        self.settle().await;
        if let Some(upstream) = self.catalog().resource_server(uri) {
            return Ok(upstream);
        }
        let mut offering = self.upstreams.iter().filter(|u| {
            u.running()
                .is_some_and(|r| r.client.server_capabilities().get("resources").is_some())
        });
        match (offering.next(), offering.next()) {
            (Some(only), None) => Ok(only.index),
            _ => Err(codes::error(
                codes::LEGACY_RESOURCE_NOT_FOUND,
                format!("resource not found: no server offers {uri}"),
            )
            .with_data(json!({"uri": uri}))),
        }
    }

    /// Sends `session`'s request `id` to server `index` with `params` as they are; its
    /// result's exact text comes back.
    async fn pass(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        index: usize,
        method: &str,
        params: Box<RawValue>,
    ) -> Answer {
        let running = self.connection_for(session, index).await?;
        let turn = self.turn(session, index).await;
        session.calls(id, index, turn);
        let tagged = self.registry.tag(session, id);
        let options = CallOptions {
            timeout: Some(self.options.timeout),
            progress: None,
            tag: Some(tagged.tag.clone()),
            log_level: session.log_level_name(),
            capabilities: Some(session.relayed_capabilities()),
            ..CallOptions::default()
        };
        let answer = self
            .resending(session, index, running, |running| {
                let (params, options) = (params.clone(), options.clone());
                async move {
                    running
                        .client
                        .request_raw(method, Some(params), options)
                        .await
                }
            })
            .await?;
        match answer {
            Ok(response) => Ok(Reply::Forwarded(response)),
            Err(e) => Err(self.failed(index, &e)),
        }
    }

    /// `send` on `running`, server `index`'s connection for `session`. When the connection
    /// refuses the request unsent because it had closed (the server exited, and its
    /// supervisor has not marked it down yet), the request waits for the restart as one that
    /// arrives while the server is down does, and is sent on the new connection (at most
    /// [`MAX_RESENDS`] times). A request the connection took may have reached the server: its
    /// failure is the answer, never a second send. The outer error: the server did not come
    /// back in time.
    pub(crate) async fn resending<T, F, Fut>(
        self: &Arc<Self>,
        session: &Arc<Session>,
        index: usize,
        running: Arc<Running>,
        send: F,
    ) -> Result<Result<T, ClientError>, ErrorObject>
    where
        F: Fn(Arc<Running>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ClientError>>,
    {
        let mut sent = send(running).await;
        for _ in 0..MAX_RESENDS {
            if !matches!(sent, Err(ClientError::Rpc(RpcError::NotSent))) {
                break;
            }
            tracing::info!(
                server = self.upstream_name(index),
                "the server's connection had closed before the request left; it goes on the next one"
            );
            let running = self.connection_for(session, index).await?;
            sent = send(running).await;
        }
        Ok(sent)
    }

    /// A place in flight to shared server `index` for a request of `session`, in turn with
    /// the other clients; none is needed for a connection of the session's own.
    async fn turn(
        &self,
        session: &Arc<Session>,
        index: usize,
    ) -> Option<crate::upstream::fair::Slot> {
        if !self.upstreams[index].is_shared() {
            return None;
        }
        Some(
            self.upstreams[index]
                .admission
                .admit(|| session.turn_key())
                .await,
        )
    }

    /// Where tool `exposed` is: in the catalog; else, for a tool whose server is restarting,
    /// once the server is back (bounded: the error then names the server and its state); else
    /// after the servers still starting have listed.
    async fn route_tool(self: &Arc<Self>, exposed: &str) -> Result<Route, ErrorObject> {
        if let Some(route) = self.catalog().tool_routes.get(exposed) {
            return Ok(route.clone());
        }
        let known = lock(&self.known_tools).get(exposed).copied();
        match known {
            Some(index) => {
                self.running(index).await?;
            }
            None => self.settle().await,
        }
        if let Some(route) = self.catalog().tool_routes.get(exposed) {
            return Ok(route.clone());
        }
        self.unlisted_route(exposed)
            .ok_or_else(|| codes::error(codes::INVALID_PARAMS, self.unknown_tool(exposed)))
    }

    /// A name no server listed goes, as it is, to the one server whose names are exposed
    /// unprefixed, when its `allowTools`/`denyTools` admit it and it did not list that name:
    /// such a gateway is transparent, and the server answers for a tool it did not list. A tool
    /// it listed and the filter hides is never reached this way.
    fn unlisted_route(&self, exposed: &str) -> Option<Route> {
        let mut unprefixed = self.upstreams.iter().filter(|u| u.config.prefix.is_empty());
        let (Some(only), None) = (unprefixed.next(), unprefixed.next()) else {
            return None;
        };
        let running = only.running()?;
        let listed = running.client.tools().iter().any(|t| t.name() == exposed);
        (!listed && only.config.tools.admits(exposed)).then(|| Route {
            upstream: only.index,
            name: exposed.to_owned(),
            unlisted: true,
        })
    }

    /// Why `exposed` names no tool: with the state of the server its name points to, when that
    /// server is not running (its tools are not known then).
    fn unknown_tool(&self, exposed: &str) -> String {
        let owner = self
            .upstreams
            .iter()
            .find(|u| !u.config.prefix.is_empty() && exposed.starts_with(&u.config.prefix));
        match owner {
            Some(upstream) if upstream.running().is_none() => {
                let why = upstream.unavailable();
                format!(
                    "unknown tool '{exposed}': {}",
                    self.options.redactor.redact(&why)
                )
            }
            _ => format!("unknown tool '{exposed}'"),
        }
    }

    async fn call_tool(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        mut params: RawParams,
    ) -> Answer {
        let Some(exposed) = params.get_str("name") else {
            return Err(error(
                codes::INVALID_PARAMS,
                "invalid params: tools/call needs the tool's name, a string",
            ));
        };
        let exposed = match self.gateway_tool(session, id, &exposed, &mut params).await {
            crate::policy::search_tools::Meta::NotOurs => exposed,
            crate::policy::search_tools::Meta::Forward(name) => name,
            crate::policy::search_tools::Meta::Answered(answer) => return answer,
        };
        // However the tool was named (directly, through the call tool, on any front), one
        // its principal lacks the scope for is not called.
        if let Some(scope) = session.principal().missing_scope(&exposed) {
            return Err(error(
                codes::INVALID_PARAMS,
                format!("invalid params: tool '{exposed}' needs the scope '{scope}', which the caller's access token lacks"),
            ));
        }
        let mut seen = self.options.observe.call(session.serial, &exposed, &params);
        let route = self
            .route_tool(&exposed)
            .await
            .inspect_err(|_| seen.unrouted())?;
        seen.routed(self.upstreams[route.upstream].name(), &route.name);
        let running = self
            .connection_for(session, route.upstream)
            .await
            .inspect_err(|_| seen.unreachable())?;
        let turn = self.turn(session, route.upstream).await;
        session.calls(id, route.upstream, turn);
        let tagged = self.registry.tag(session, id);
        let token: Option<Value> = params
            .get("_meta")
            .and_then(|meta| RawParams::parse(meta).ok())
            .and_then(|meta| meta.get_as("progressToken"));
        let (mut options, mut progress) = match token {
            Some(_) => {
                let (options, receiver) = CallOptions::with_progress();
                (options, Some(receiver))
            }
            None => (CallOptions::default(), None),
        };
        options.timeout = Some(self.options.timeout);
        options.tag = Some(tagged.tag.clone());
        // Only a modern server reads these (a legacy one has the session's from initialize and
        // logging/setLevel).
        if running.client.is_modern() {
            options.log_level = session.log_level_name();
            options.capabilities = Some(session.relayed_capabilities());
        }
        options.coerce_arguments = self.upstreams[route.upstream].config.coerce_arguments;
        params.set("name", &json!(route.name));
        let forward = |mut step: Value| {
            if let Some(token) = &token {
                step["progressToken"] = token.clone();
                let note =
                    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": step});
                session.send(Frame::from_value(&note), Some(id));
            }
        };
        let unlisted = route.unlisted;
        let params = &params;
        let call = self.resending(session, route.upstream, running, |running| {
            let options = options.clone();
            async move {
                if unlisted {
                    running.client.call_unlisted_tool(params, options).await
                } else {
                    running.client.call_tool_params(params, options).await
                }
            }
        });
        tokio::pin!(call);
        seen.sending();
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
        let outcome = outcome.inspect_err(|_| seen.unreachable())?;
        seen.returned(&outcome);
        let server = self.upstreams[route.upstream].name();
        match outcome {
            Ok(outcome) => {
                for warning in &outcome.warnings {
                    self.output_warnings.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(server, tool = route.name, exposed, lines = ?warning.lines, "{}", warning.message);
                }
                if outcome.coerced.is_empty() {
                    Ok(Reply::Forwarded(outcome.response))
                } else {
                    tracing::info!(server, tool = route.name, exposed, changes = ?outcome.coerced, "arguments coerced");
                    Ok(
                        mcpclient::mark_coerced(outcome.response.result_raw(), &outcome.coerced)
                            .into(),
                    )
                }
            }
            Err(ClientError::InvalidArguments {
                violations, hints, ..
            }) => self.rejected(&exposed, violations, hints),
            Err(ClientError::UnusableInputSchema { error, .. }) => self.rejected(
                &exposed,
                vec![format!(
                    "$: the tool's inputSchema does not compile: {error}"
                )],
                vec![None],
            ),
            Err(other) => Err(self.failed(route.upstream, &other)),
        }
    }

    /// The error for a request to server `index` that failed; a failure of the transport
    /// (a refused connection, no answer in time) makes the supervisor probe the server.
    fn failed(&self, index: usize, error: &ClientError) -> ErrorObject {
        if matches!(
            error,
            ClientError::Rpc(
                RpcError::Transport(_)
                    | RpcError::Timeout { .. }
                    | RpcError::Closed
                    | RpcError::NotSent
            )
        ) {
            self.upstreams[index].failed.notify_one();
        }
        let mut answer = error.to_jsonrpc_error();
        // The server's own error goes on as it sent it; what the gateway says of the server
        // (its transport's failure) is kept clear of the config's secrets.
        if !matches!(error, ClientError::Rpc(RpcError::Remote(_))) {
            answer.message = self.options.redactor.redact(&answer.message).into_owned();
        }
        answer
    }

    /// The answer to a call with invalid arguments: the flat lines as they are, each line's
    /// hint in `data.hints` (same order, `null` for none; absent when there is none) or, in a
    /// tool result, on the line after it.
    pub(crate) fn rejected(
        &self,
        tool: &str,
        violations: Vec<String>,
        hints: Vec<Option<String>>,
    ) -> Answer {
        self.rejected_calls.fetch_add(1, Ordering::Relaxed);
        let first = violations.first().cloned().unwrap_or_default();
        match self.options.invalid_arguments {
            InvalidArguments::Error => {
                let mut data = json!({"violations": violations});
                if hints.iter().any(Option::is_some) {
                    data["hints"] = json!(hints);
                }
                Err(codes::error(
                    codes::INVALID_PARAMS,
                    format!("invalid arguments for tool '{tool}': {first}"),
                )
                .with_data(data))
            }
            InvalidArguments::ToolResult => made(&json!({
                "content": [{"type": "text",
                    "text": format!("invalid arguments for tool '{tool}':\n{}", schemaval::with_hints(&violations, &hints))}],
                "isError": true
            })),
        }
    }

    /// `resources/subscribe` and `resources/unsubscribe`, per session: the server hears the
    /// first subscription to a resource and the last unsubscription.
    pub(crate) async fn subscription(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        method: &str,
        params: RawParams,
    ) -> Answer {
        let Some(uri) = params.get_str("uri") else {
            return Err(error(
                codes::INVALID_PARAMS,
                format!("invalid params: {method} needs the resource's uri"),
            ));
        };
        let upstream = self.route_resource(&uri).await?;
        let _in_order = self.scoped.lock().await;
        // A per-session server's connection is this session's alone: nobody else to count.
        let shared = self.upstreams[upstream].is_shared();
        let others = shared
            && self
                .registry
                .sessions()
                .iter()
                .any(|s| !Arc::ptr_eq(s, session) && s.subscribed(upstream, &uri));
        let subscribing = method == "resources/subscribe";
        let mine = session.subscribed(upstream, &uri);
        if subscribing && !mine && !others {
            self.pass(session, id, upstream, method, params.to_raw())
                .await?;
        }
        if !subscribing && mine && !others {
            self.pass(session, id, upstream, method, params.to_raw())
                .await?;
        }
        session.set_subscribed(upstream, &uri, subscribing);
        made(&json!({}))
    }

    /// A session ended: the subscriptions only it had end upstream, and the log level is
    /// worked out again without it.
    pub(crate) async fn release(self: &Arc<Self>, gone: Vec<(usize, String)>) {
        let in_order = self.scoped.lock().await;
        for (upstream, uri) in gone {
            let still = self
                .registry
                .sessions()
                .iter()
                .any(|s| s.subscribed(upstream, &uri));
            if still || !self.upstreams[upstream].is_shared() {
                continue;
            }
            if let Some(running) = self.upstreams[upstream].running() {
                let params = json!({ "uri": uri });
                if let Err(error) = running
                    .client
                    .request(
                        "resources/unsubscribe",
                        Some(params),
                        CallOptions::default(),
                    )
                    .await
                {
                    tracing::warn!(server = self.upstream_name(upstream), uri, %error, "unsubscribing after the last session left failed");
                }
            }
        }
        drop(in_order);
        // The most verbose level may have been the ended session's.
        self.apply_log_level().await;
    }

    /// The most verbose level any session asked for, sent to every running server that logs
    /// when it changed (or to `only`, a server that just started, whatever it was).
    pub(crate) async fn apply_log_level(self: &Arc<Self>) {
        self.send_log_level(None).await;
    }

    async fn send_log_level(self: &Arc<Self>, only: Option<usize>) {
        let _in_order = self.scoped.lock().await;
        let wanted = self
            .registry
            .sessions()
            .iter()
            .filter_map(|s| s.log_level())
            .min();
        let Some(wanted) = wanted else { return };
        let changed = lock(&self.applied_level).replace(wanted) != Some(wanted);
        if !changed && only.is_none() {
            return;
        }
        for upstream in self.upstreams.iter() {
            if only.is_some_and(|i| i != upstream.index) || !upstream.is_shared() {
                continue;
            }
            let Some(running) = upstream.running() else {
                continue;
            };
            if running
                .client
                .server_capabilities()
                .get("logging")
                .is_none()
            {
                continue;
            }
            let params = json!({"level": LOG_LEVELS[wanted]});
            if let Err(error) = running
                .client
                .request("logging/setLevel", Some(params), CallOptions::default())
                .await
            {
                tracing::warn!(server = upstream.name(), %error, "logging/setLevel failed");
            }
        }
    }

    /// A server (re)started: what the sessions asked of it before is asked again.
    pub(crate) async fn reapply(self: &Arc<Self>, index: usize) {
        if !self.upstreams[index].is_shared() {
            return;
        }
        let subscribed: std::collections::BTreeSet<String> = self
            .registry
            .sessions()
            .iter()
            .flat_map(|s| s.subscriptions_to(index))
            .collect();
        if let Some(running) = self.upstreams[index].running() {
            for uri in subscribed {
                let params = json!({ "uri": uri });
                if let Err(error) = running
                    .client
                    .request("resources/subscribe", Some(params), CallOptions::default())
                    .await
                {
                    tracing::warn!(server = self.upstream_name(index), uri, %error, "subscribing again after a restart failed");
                }
            }
        }
        self.send_log_level(Some(index)).await;
    }

    /// `notifications/resources/updated` from server `upstream`: to the sessions subscribed.
    pub(crate) fn deliver_update(&self, upstream: usize, frame: &Frame) {
        let uri = frame
            .value()
            .ok()
            .and_then(|v| {
                v.pointer("/params/uri")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        for session in self.registry.sessions() {
            if session.subscribed(upstream, &uri) {
                session.send(frame.clone(), None);
            }
        }
    }

    /// `notifications/message` from server `upstream`: to each initialized session whose
    /// level it meets. A session that never chose a level gets everything while no session has
    /// chosen one, and [`DEFAULT_LEVEL`] and above once one has (the servers then log at the
    /// level that session chose). A modern request gets it on its own stream when its `_meta`
    /// asked for a level the message meets, and when it is the only one calling that server
    /// (a server's log line names no call: with several calling it is nobody's for sure).
    ///
    /// A log line may tell what a call did (a file it read, a query it ran), and it names
    /// neither call nor client: it reaches only sessions of the one principal it can be
    /// [`log_owner`] of; with two principals in question it is nobody's for sure, and reaches
    /// no client. With one principal (the stdio front, a static token, a single user) nothing
    /// is held back.
    pub(crate) fn deliver_log(&self, upstream: usize, frame: &Frame) {
        let level = frame
            .value()
            .ok()
            .and_then(|v| {
                v.pointer("/params/level")
                    .and_then(Value::as_str)
                    .and_then(level_index)
            })
            .unwrap_or(0);
        let sessions = self.registry.sessions();
        let calling: Vec<&Arc<Session>> = sessions
            .iter()
            .filter(|s| s.newest_call_to(upstream).is_some())
            .collect();
        let Some(owner) = log_owner(&sessions, &calling) else {
            return;
        };
        let anyone_chose = sessions.iter().any(|s| s.log_level().is_some());
        let default = if anyone_chose {
            level_index(DEFAULT_LEVEL).unwrap_or(0)
        } else {
            0
        };
        if let [only] = calling.as_slice() {
            if only.is_modern() && only.wants_log(level) {
                only.send(frame.clone(), None);
            }
        }
        for session in &sessions {
            if session.protocol_version().is_none() || !session.principal().is(&owner) {
                continue;
            }
            if level >= session.log_level().unwrap_or(default) {
                session.send(frame.clone(), None);
            }
        }
    }

    /// The answer to `initialize`: the client's version when the gateway speaks it, else the
    /// newest; what the gateway offers in that version.
    async fn initialize(self: &Arc<Self>, session: &Session, params: &Value) -> Value {
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
        json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(version).await,
            "serverInfo": {"name": "mcpx", "version": env!("CARGO_PKG_VERSION")},
            "instructions": INSTRUCTIONS
        })
    }

    /// What the gateway offers in `version`, the union of its running servers. Optional
    /// capabilities (resource subscriptions, logging, completions) are offered when a server
    /// has them, after a bounded wait for the servers that are starting.
    pub(crate) async fn capabilities(self: &Arc<Self>, version: &str) -> Value {
        let starting = self
            .upstreams
            .iter()
            .filter(|u| matches!(u.state(), State::Starting));
        futures_util::future::join_all(starting.map(|u| u.settled(crate::options::SETTLE_TIMEOUT)))
            .await;
        let has = |pointer: &str| {
            self.upstreams.iter().any(|u| {
                u.running().is_some_and(|r| {
                    r.client
                        .server_capabilities()
                        .pointer(pointer)
                        .is_some_and(|c| c != &Value::Bool(false) && !c.is_null())
                })
            })
        };
        let mut capabilities = json!({
            "tools": {"listChanged": true},
            "resources": {"listChanged": true},
            "prompts": {"listChanged": true},
        });
        if has("/resources/subscribe") {
            capabilities["resources"]["subscribe"] = json!(true);
        }
        if has("/logging") {
            capabilities["logging"] = json!({});
        }
        if version != "2024-11-05" && has("/completions") {
            capabilities["completions"] = json!({});
        }
        capabilities
    }
}

/// What the gateway tells its clients about itself (`instructions`).
pub(crate) const INSTRUCTIONS: &str = "mcpx gateway: the tools of several MCP servers, named SERVER__TOOL; arguments are checked against each tool's inputSchema before they are sent.";

/// The next progress step, or never when the call asked for none.
async fn next(progress: &mut Option<mpsc::Receiver<Value>>) -> Option<Value> {
    match progress {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}
