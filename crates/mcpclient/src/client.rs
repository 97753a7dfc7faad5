//! The MCP client: handshake, the tool list compiled once, calls whose arguments are enforced
//! and whose outputs are checked warn-only, and raw pass-through for everything else.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use schemaval::CompileError;
use serde_json::{json, Value};
use thiserror::Error;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::codes::{self, ErrorObject};
use crate::discovery::{handshake, Discovery};
use crate::headers::{header_params, ToolHeaders};
use crate::modern::{self, Identity, Protocol, MAX_INPUT_ROUNDS, META_SERVER_INFO, MODERN_VERSION};
use crate::params::count_values;
use crate::serve::{fulfil, serve, Served};
use crate::tools::HEADER_WARNING;
use crate::tools::{list_warnings, output_warnings};
use crate::{
    CallOutcome, Connection, Event, Frame, Handlers, RawParams, Response, RpcError, Tool,
    Transport, Warning,
};
use serde_json::value::RawValue;

/// The protocol version the client offers in `initialize` (to a legacy server).
pub const OFFERED_VERSION: &str = "2025-11-25";

/// The versions the client accepts in answer to `initialize`, newest first.
pub const ACCEPTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Every version the client speaks, newest first: the modern one, then the legacy ones.
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    MODERN_VERSION,
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The longest a modern server's `ttlMs` keeps the tool list fresh (a larger hint counts as
/// this).
pub const MAX_TOOLS_TTL: Duration = Duration::from_secs(24 * 3600);

/// The shortest: a server that says its list is stale at once (`ttlMs` 0, rmcp's default) is
/// listed again at most once a second, not before every call.
pub const MIN_TOOLS_TTL: Duration = Duration::from_secs(1);

/// How long a `subscriptions/listen` request may stay open: it is meant to stay open for as
/// long as the connection (the server ends it, or the client cancels it).
pub const LISTEN_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// How long to wait before opening a `subscriptions/listen` stream again after the server
/// ended one or it failed (the connection still open).
pub const LISTEN_RETRY: Duration = Duration::from_secs(5);

/// How long a request waits for its answer unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Most pages of one list followed before giving up on a server that never stops paginating.
pub const MAX_LIST_PAGES: usize = 1_000;

/// Progress notifications waiting for a caller that has not read them; more are dropped
/// (progress is a hint: the next one says more).
pub const MAX_QUEUED_PROGRESS: usize = 64;

/// The most JSON values a call's arguments may hold: they are parsed for validation, and a
/// parsed value takes about 100 bytes however short its text (`0,` is two), so a long array of
/// small values would cost some 50 times its size. Past it the call is refused unsent, before
/// anything is parsed. Real tool arguments hold a few to a few thousand values.
pub const MAX_ARGUMENT_VALUES: usize = 100_000;

/// Methods [`Client::request`] refuses: they have methods of their own, so that the handshake
/// stays the client's and no tool call escapes argument enforcement.
pub const RESERVED_METHODS: [&str; 2] = ["initialize", "tools/call"];

/// Why the client could not do what was asked.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The JSON-RPC call failed.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The server speaks no version the client does (its answer to `initialize`, or the
    /// versions it named to `server/discover`).
    #[error("the server speaks protocol {got}, not one of {}", SUPPORTED_VERSIONS.join(", "))]
    UnsupportedVersion {
        /// What the server said.
        got: String,
    },
    /// The server closed the connection after it was probed with `server/discover` (a legacy
    /// server that dies on a request it does not know). [`crate::connect`] starts it again
    /// without the probe; with `"protocol": "legacy"` it is never probed.
    #[error("the server closed the connection after the server/discover probe; with \"protocol\": \"legacy\" it is not probed")]
    ClosedByProbe,
    /// Asked to speak the modern protocol only, to a server that does not.
    #[error("the server does not speak protocol {MODERN_VERSION} ({why})")]
    NotModern {
        /// What its answer to `server/discover` was.
        why: String,
    },
    /// The arguments violate the tool's `inputSchema`; nothing was sent.
    #[error("invalid arguments for tool '{tool}': {}", violations.first().map(String::as_str).unwrap_or_default())]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// One flat line per problem.
        violations: Vec<String>,
        /// What would be right beside each line, where that is certain (`None` elsewhere); as
        /// long as `violations`.
        hints: Vec<Option<String>>,
    },
    /// The tool's `inputSchema` does not compile under the policy, so no call can be checked:
    /// refused (inputs are enforced, fail closed).
    #[error("tool '{tool}' cannot be called: its inputSchema does not compile: {error}")]
    UnusableInputSchema {
        /// The tool.
        tool: String,
        /// Why the schema does not compile.
        error: CompileError,
    },
    /// The server has no tool of that name in its last list.
    #[error("unknown tool '{0}'")]
    UnknownTool(String),
    /// A method [`Client::request`] does not pass through (see [`RESERVED_METHODS`]).
    #[error("{0} is not passed through: use the client's own method for it")]
    Reserved(String),
    /// The server's answer is not what the protocol says.
    #[error("malformed answer to {method}: {reason}")]
    Malformed {
        /// The method answered.
        method: String,
        /// What is wrong.
        reason: String,
    },
}

impl ClientError {
    /// The JSON-RPC error a gateway answers with: -32602 with `data.violations` for rejected
    /// arguments, the server's own error as it sent it, -32603 otherwise.
    pub fn to_jsonrpc_error(&self) -> ErrorObject {
        let error = |code| ErrorObject::new(code, self.to_string());
        match self {
            ClientError::InvalidArguments {
                violations, hints, ..
            } => {
                let mut data = json!({"violations": violations});
                if hints.iter().any(Option::is_some) {
                    data["hints"] = json!(hints);
                }
                error(codes::INVALID_PARAMS).with_data(data)
            }
            ClientError::UnusableInputSchema { error: why, .. } => {
                error(codes::INVALID_PARAMS).with_data(json!({"violations": [why.to_string()]}))
            }
            ClientError::UnknownTool(_) => error(codes::INVALID_PARAMS),
            ClientError::Reserved(_) => error(codes::METHOD_NOT_FOUND),
            ClientError::Rpc(RpcError::Remote(remote)) => remote.clone(),
            _ => error(codes::INTERNAL_ERROR),
        }
    }
}

/// How a client introduces itself and what it answers for the application.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The `clientInfo` of `initialize`.
    pub client_info: Value,
    /// Handlers for what the server asks of the client; each declares its capability.
    pub handlers: Handlers,
    /// How long each request waits for its answer.
    pub timeout: Duration,
    /// Which protocol era to speak: probe (the default), legacy only, modern only, or the era
    /// an earlier connection learnt ([`Protocol::Remembered`]).
    pub protocol: Protocol,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            client_info: json!({"name": "mcpx", "version": env!("CARGO_PKG_VERSION")}),
            handlers: Handlers::default(),
            timeout: DEFAULT_TIMEOUT,
            protocol: Protocol::Auto,
        }
    }
}

/// Options for one call.
#[derive(Debug, Default, Clone)]
pub struct CallOptions {
    /// Overrides the client's timeout for this call.
    pub timeout: Option<Duration>,
    /// Receives the `params` of each `notifications/progress` for this call (the call asks
    /// for progress with a token of its own). Lossy past [`MAX_QUEUED_PROGRESS`] unread.
    pub progress: Option<mpsc::Sender<Value>>,
    /// A tag of the caller's: a request the server sends during this call, when the transport
    /// tells which call it belongs to, reaches the handlers with it (`during`). A modern
    /// server's questions (`input_required`) reach the handlers with it too.
    pub tag: Option<String>,
    /// For a modern server: the log level this request asks for
    /// (`io.modelcontextprotocol/logLevel`), unless the params carry one; else the level last
    /// set with `logging/setLevel`.
    pub log_level: Option<String>,
    /// For a modern server: the client capabilities this request declares
    /// (`io.modelcontextprotocol/clientCapabilities`) in place of the handlers' (a gateway
    /// passing on what its own client can answer).
    pub capabilities: Option<Value>,
    /// Arguments that violate the `inputSchema` but for the one unambiguous fix
    /// [`schemaval::Schema::coerce`] finds are sent fixed, the changes in
    /// [`crate::CallOutcome::coerced`] (`"coerceArguments": "safe"`); off by default.
    pub coerce_arguments: bool,
}

impl CallOptions {
    /// A channel for this call's progress notifications, and the options that use it.
    pub fn with_progress() -> (CallOptions, mpsc::Receiver<Value>) {
        let (sender, receiver) = mpsc::channel(MAX_QUEUED_PROGRESS);
        let options = CallOptions {
            progress: Some(sender),
            ..CallOptions::default()
        };
        (options, receiver)
    }
}

/// A connected, initialized MCP client.
///
/// A task beside it answers what the server asks of the client (`ping`, and the application's
/// handlers) and routes progress to the calls it belongs to; everything the server sends also
/// reaches the application's event receiver, which is lossy when not read (see
/// [`Event::Lagged`]).
pub struct Client {
    inner: Arc<Inner>,
}

/// The tools kept for calls, and which listing they came from.
#[derive(Default)]
struct Listed {
    /// How long compiling the schemas of this listing took.
    compiled_in: Duration,
    listing: u64,
    tools: Arc<Vec<Tool>>,
    /// Until when a modern server said the list stays fresh (`ttlMs` of its first page).
    fresh_until: Option<tokio::time::Instant>,
}

pub(crate) struct Inner {
    /// Itself, for the tasks it starts (they must not keep it alive).
    this: Weak<Inner>,
    pub(crate) connection: Connection,
    /// Set for a modern server: what each request says of the client.
    modern: Option<Identity>,
    /// Held while the tools are listed again because their `ttlMs` ran out.
    relisting: tokio::sync::Mutex<()>,
    /// The application's events, for a list that changed when it was listed again.
    events: mpsc::Sender<Event>,
    /// For a modern server over HTTP: the listed tools' `x-mcp-header` arguments, which the
    /// transport sends as headers.
    tool_headers: Option<ToolHeaders>,
    /// A modern server's log level, as `logging/setLevel` set it: sent in each request.
    log_level: RwLock<Option<String>>,
    /// A modern server's `subscriptions/listen` stream and the resources it asks updates for.
    listen: Mutex<Listen>,
    protocol_version: String,
    /// Which era, why, and what decided it (relabelled once by [`crate::connect`] when it
    /// started the server again without the probe).
    discovery: Mutex<Discovery>,
    initialize_result: Value,
    /// Whether the server announced `tools.listChanged` (read once from `initialize_result`:
    /// every call asks).
    announces_tool_changes: bool,
    tools: RwLock<Listed>,
    /// Numbers each listing in the order they start, so that a slow one never replaces a
    /// newer one (a `list_changed` can arrive while a listing is compiling).
    next_listing: AtomicU64,
    timeout: Duration,
    pub(crate) handlers: Handlers,
    next_token: AtomicU64,
}

/// The `subscriptions/listen` stream of a modern server.
#[derive(Default)]
struct Listen {
    /// The resources `resources/subscribe` asked for, in order.
    uris: BTreeSet<String>,
    /// The task holding the stream open.
    task: Option<AbortHandle>,
}

tokio::task_local! {
    /// The key of the `inputRequests` entry a handler is answering.
    static INPUT_KEY: String;
}

/// While a handler answers one of a modern server's `inputRequests`: that entry's key (a
/// gateway passing the question on keeps it). `None` elsewhere.
pub fn input_key() -> Option<String> {
    INPUT_KEY.try_with(Clone::clone).ok()
}

/// What a request to a modern server says beyond the client's defaults.
#[derive(Default)]
struct Stamp<'a> {
    log_level: Option<&'a str>,
    capabilities: Option<Value>,
}

impl Client {
    /// Connects over `transport` with `client_info` and no handlers.
    ///
    /// # Errors
    /// [`ClientError`] when the handshake fails or the server's version is not accepted.
    pub async fn connect<T: Transport + 'static>(
        transport: T,
        client_info: Value,
    ) -> Result<(Client, mpsc::Receiver<Event>), ClientError> {
        let options = ClientOptions {
            client_info,
            ..ClientOptions::default()
        };
        Client::connect_with(transport, options).await
    }

    /// Connects over `transport`: `initialize` (declaring the capabilities of the handlers
    /// given), then `notifications/initialized`.
    ///
    /// # Errors
    /// [`ClientError`] when the handshake fails or the server's version is not accepted.
    pub async fn connect_with<T: Transport + 'static>(
        transport: T,
        options: ClientOptions,
    ) -> Result<(Client, mpsc::Receiver<Event>), ClientError> {
        let tool_headers = transport.tool_headers();
        let (to_app, app_events) = mpsc::channel(crate::MAX_QUEUED_EVENTS);
        let (connection, events) = Connection::start(transport);
        let handshake = handshake(&connection, &options).await?;
        let found = &handshake.discovery;
        tracing::debug!(
            protocol = %handshake.version,
            era = found.era.name(),
            why = found.why.name(),
            evidence = %found.evidence,
            "protocol chosen"
        );
        let listening = handshake.modern.is_some();
        let inner = Arc::new_cyclic(|this| Inner {
            this: this.clone(),
            connection,
            tool_headers: tool_headers.filter(|_| handshake.modern.is_some()),
            modern: handshake.modern,
            relisting: tokio::sync::Mutex::new(()),
            events: to_app.clone(),
            log_level: RwLock::default(),
            listen: Mutex::default(),
            protocol_version: handshake.version,
            discovery: Mutex::new(handshake.discovery),
            announces_tool_changes: handshake
                .answer
                .pointer("/capabilities/tools/listChanged")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            initialize_result: handshake.answer,
            tools: RwLock::default(),
            next_listing: AtomicU64::new(1),
            timeout: options.timeout,
            handlers: options.handlers,
            next_token: AtomicU64::new(1),
        });
        tokio::spawn(serve(Arc::downgrade(&inner), events, to_app));
        if listening {
            inner.listen();
        }
        Ok((Client { inner }, app_events))
    }

    /// Pings the server.
    ///
    /// # Errors
    /// [`ClientError::Rpc`] when the server does not answer in time.
    pub async fn ping(&self) -> Result<(), ClientError> {
        // 2026-07-28 has no ping: a modern server is asked what it speaks instead.
        let method = if self.inner.modern.is_some() {
            "server/discover"
        } else {
            "ping"
        };
        self.inner
            .send(method, None, self.inner.timeout, None, Stamp::default())
            .await?;
        Ok(())
    }

    /// Whether the server is spoken to in the modern protocol (2026-07-28: no session,
    /// `_meta` in every request, questions in results).
    pub fn is_modern(&self) -> bool {
        self.inner.modern.is_some()
    }

    /// The server's name and version as it gave them (`serverInfo` of `initialize`, or
    /// `_meta.io.modelcontextprotocol/serverInfo` of `server/discover`).
    pub fn server_info(&self) -> Option<&Value> {
        let answer = &self.inner.initialize_result;
        answer
            .get("serverInfo")
            .or_else(|| answer.get("_meta").and_then(|m| m.get(META_SERVER_INFO)))
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.inner.protocol_version
    }

    /// Which protocol era the server is spoken to in, why, and what decided it.
    pub fn discovery(&self) -> Discovery {
        self.inner
            .discovery
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Marks the era as learnt by starting the server again without the probe after `first`
    /// failed ([`Why::FellBack`](crate::Why::FellBack)).
    pub(crate) fn fell_back(&self, first: &str) {
        let mut discovery = self
            .inner
            .discovery
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        discovery.why = crate::Why::FellBack;
        discovery.evidence = format!("the start with the probe failed: {first}");
    }

    /// The server's answer to `initialize` (or, for a modern server, to `server/discover`), as
    /// it sent it (`serverInfo`, `instructions`, …).
    pub fn initialize_result(&self) -> &Value {
        &self.inner.initialize_result
    }

    /// The server's `capabilities`, as it declared them.
    pub fn server_capabilities(&self) -> &Value {
        self.inner
            .initialize_result
            .get("capabilities")
            .unwrap_or(&Value::Null)
    }

    /// The tools of the last list (re-listed by itself when the server says they changed).
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.inner.kept_tools()
    }

    /// The number of the tool list kept (listings are numbered from 1 as they start; 0 before
    /// the first) and how long compiling its schemas took, yields to other tasks left out.
    pub fn tools_compiled(&self) -> (u64, Duration) {
        let kept = self.inner.tools.read().unwrap_or_else(|p| p.into_inner());
        (kept.listing, kept.compiled_in)
    }

    /// Lists every tool (all pages), compiles their schemas once and keeps them for calls.
    /// Returns the tools and a warning for each `outputSchema` that does not compile.
    ///
    /// # Errors
    /// [`ClientError`] when a page cannot be fetched or is malformed.
    pub async fn list_tools(&self) -> Result<(Arc<Vec<Tool>>, Vec<Warning>), ClientError> {
        self.inner.list_tools().await
    }

    /// Calls a tool from the last list. Arguments are validated first: invalid ones are never
    /// sent. The result is delivered unchanged; an `outputSchema` mismatch only adds a warning.
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`], [`ClientError::UnusableInputSchema`],
    /// [`ClientError::UnknownTool`], or the call's own failure.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallOutcome, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`Client::call_tool`] with a timeout of its own or a receiver for its progress.
    ///
    /// # Errors
    /// As [`Client::call_tool`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallOutcome, ClientError> {
        let mut params = RawParams::default();
        params.set("name", &json!(name));
        params.set("arguments", &arguments);
        self.inner.call_tool(&params, options).await
    }

    /// Calls a tool with `params` as a client of a gateway sent them: `name` (the tool's name
    /// in the last list) and `arguments` are read, the arguments validated, and everything is
    /// forwarded as written (unknown members, `_meta`, the arguments' number text); only the
    /// progress token is the client's own when `options` asks for progress.
    ///
    /// # Errors
    /// As [`Client::call_tool`]; [`ClientError::Malformed`] without a string `name`.
    pub async fn call_tool_params(
        &self,
        params: &RawParams,
        options: CallOptions,
    ) -> Result<CallOutcome, ClientError> {
        self.inner.call_tool(params, options).await
    }

    /// Calls a tool the server did not list, with `params` as they are (a gateway passing a
    /// name on to the one server that answers for it): with no schema to check them against,
    /// the arguments are sent unchecked, and the server's answer is the answer.
    ///
    /// # Errors
    /// The call's own failure.
    pub async fn call_unlisted_tool(
        &self,
        params: &RawParams,
        options: CallOptions,
    ) -> Result<CallOutcome, ClientError> {
        let response = self
            .inner
            .request_raw("tools/call", Some(params.to_raw()), options)
            .await?;
        Ok(CallOutcome {
            is_error: crate::tools::tool_error(&response),
            response,
            warnings: Vec::new(),
            coerced: Vec::new(),
        })
    }

    /// Sends any other request as it is and returns the answer unchanged: resources, prompts,
    /// completion, logging. `initialize` and `tools/call` are refused ([`RESERVED_METHODS`]).
    ///
    /// # Errors
    /// [`ClientError::Reserved`], or the call's own failure.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<Response, ClientError> {
        if RESERVED_METHODS.contains(&method) {
            return Err(ClientError::Reserved(method.to_owned()));
        }
        self.inner.request(method, params, options).await
    }

    /// [`Client::request`] with `params` as raw JSON, sent as they are (a gateway's
    /// pass-through: nothing the client wrote is re-serialized).
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
    ) -> Result<Response, ClientError> {
        if RESERVED_METHODS.contains(&method) {
            return Err(ClientError::Reserved(method.to_owned()));
        }
        self.inner.request_raw(method, params, options).await
    }

    /// Every item of a paginated list (`resources/list` with key `resources`,
    /// `resources/templates/list` with `resourceTemplates`, `prompts/list` with `prompts`),
    /// all pages followed, items unchanged.
    ///
    /// # Errors
    /// [`ClientError`] when a page cannot be fetched or has no array under `key`.
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        if RESERVED_METHODS.contains(&method) {
            return Err(ClientError::Reserved(method.to_owned()));
        }
        self.inner.list_all(method, key).await
    }

    /// Whether the connection has closed (the server exited, or [`Client::close`]) or is
    /// closing: a request made now is refused unsent ([`RpcError::NotSent`]).
    pub fn is_closed(&self) -> bool {
        self.inner.connection.is_closed()
    }

    /// Waits until the application has acted on every event the server sent before now (see
    /// [`Connection::caught_up`]: an [`Event::Mark`] reaches the application's queue behind
    /// them): a call's response overtakes the notifications sent before it. Bound it with a
    /// timeout; an application that does not read its events never gets there.
    pub async fn caught_up(&self) {
        self.inner.connection.caught_up().await;
    }

    /// Closes the connection and waits until it is closed (for stdio: the server stopped and
    /// reaped). Calls still waiting end with an error.
    pub async fn close(&self) {
        self.inner.stop_listening();
        self.inner.connection.close().await;
    }

    /// Sends a notification to the server (`notifications/roots/list_changed`, say).
    ///
    /// # Errors
    /// [`ClientError::Reserved`] for `notifications/initialized`, which the handshake sends;
    /// [`ClientError::Rpc`] when the connection is closed.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        if method == "notifications/initialized" {
            return Err(ClientError::Reserved(method.to_owned()));
        }
        if self.inner.modern.is_some() && method == "notifications/roots/list_changed" {
            // 2026-07-28 removed it: the server asks for roots with each request it needs them
            // for.
            return Ok(());
        }
        Ok(self.inner.connection.notify(method, params).await?)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.inner.stop_listening();
    }
}

impl Served for Inner {
    fn handlers(&self) -> &Handlers {
        &self.handlers
    }

    async fn send(&self, frame: Frame) {
        // A closed connection is reported by its own event.
        let _ = self.connection.send(frame).await;
    }

    async fn relist_tools(&self) -> Result<(), String> {
        self.list_tools().await.map(drop).map_err(|e| e.to_string())
    }
}

impl Inner {
    /// The `subscriptions/listen` filter for what the server announces and what is
    /// subscribed; `None` when there is nothing to listen for.
    fn listen_filter(&self) -> Option<Value> {
        let declared = |capability: &str, flag: &str| {
            self.initialize_result
                .pointer(&format!("/capabilities/{capability}/{flag}"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let mut filter = serde_json::Map::new();
        for (capability, key) in [
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ] {
            if declared(capability, "listChanged") {
                filter.insert(key.to_owned(), json!(true));
            }
        }
        let uris = &self.listen.lock().unwrap_or_else(|p| p.into_inner()).uris;
        if !uris.is_empty() {
            filter.insert("resourceSubscriptions".to_owned(), json!(uris));
        }
        (!filter.is_empty()).then_some(Value::Object(filter))
    }

    /// Opens a modern server's `subscriptions/listen` stream in a task of its own, which opens
    /// it again [`LISTEN_RETRY`] after it ends while the connection lasts. Its notifications
    /// arrive as every other event (a changed tool list is listed again).
    fn listen(self: &Arc<Inner>) {
        if self.listen_filter().is_none() {
            return;
        }
        let weak = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let Some(filter) = inner.listen_filter() else {
                    return;
                };
                let params = serde_json::value::to_raw_value(&json!({ "notifications": filter }))
                    .expect("a Value serializes");
                let ended = inner
                    .send(
                        "subscriptions/listen",
                        Some(params),
                        LISTEN_TIMEOUT,
                        None,
                        Stamp::default(),
                    )
                    .await;
                drop(inner);
                match ended {
                    Err(ClientError::Rpc(RpcError::Closed | RpcError::NotSent)) => return,
                    Err(error) => tracing::debug!(%error, "subscriptions/listen ended"),
                    Ok(_) => tracing::debug!("the server ended subscriptions/listen"),
                }
                tokio::time::sleep(LISTEN_RETRY).await;
            }
        });
        let mut listen = self.listen.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = listen.task.replace(task.abort_handle()) {
            old.abort();
        }
    }

    /// Ends the `subscriptions/listen` stream (the client is going).
    fn stop_listening(&self) {
        if let Some(task) = self
            .listen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .task
            .take()
        {
            task.abort();
        }
    }

    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        Ok(self.list_pages(method, key).await?.0)
    }

    /// Every item of a paginated list, and the `ttlMs` of its first page.
    async fn list_pages(
        &self,
        method: &str,
        key: &str,
    ) -> Result<(Vec<Value>, Option<u64>), ClientError> {
        let mut items = Vec::new();
        let mut ttl = None;
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor
                .take()
                .map(|c| serde_json::value::to_raw_value(&json!({ "cursor": c })))
                .transpose()
                .map_err(|e| malformed(method, e.to_string()))?;
            let page = self
                .send(method, params, self.timeout, None, Stamp::default())
                .await?
                .result()
                .map_err(|e| malformed(method, e.to_string()))?;
            let Some(Value::Array(listed)) = page.get(key) else {
                return Err(malformed(method, format!("no {key} array")));
            };
            if items.is_empty() && ttl.is_none() {
                ttl = page.get("ttlMs").and_then(Value::as_u64);
            }
            items.extend(listed.iter().cloned());
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok((items, ttl)),
            }
        }
        tracing::warn!(
            method,
            pages = MAX_LIST_PAGES,
            "the server kept paginating; list cut"
        );
        Ok((items, ttl))
    }

    /// Lists the tools again before a call when a modern server's `ttlMs` for the last list
    /// has run out and the server sends no `list_changed` (which keeps the list fresh instead).
    /// A failed listing leaves the old list in use.
    async fn refresh_if_stale(&self) {
        if self.announces_tool_changes {
            return;
        }
        let stale = || {
            let kept = self.tools.read().unwrap_or_else(|p| p.into_inner());
            kept.fresh_until
                .is_some_and(|until| tokio::time::Instant::now() >= until)
        };
        if !stale() {
            return;
        }
        // Calls that find the list stale together wait for one listing.
        let _one = self.relisting.lock().await;
        if stale() {
            let before = self.kept_tools();
            // Boxed: a listing is rare and its future large; unboxed, every call's future
            // would carry its size.
            match Box::pin(self.list_tools()).await {
                Ok((after, _)) => {
                    let same = before.len() == after.len()
                        && before
                            .iter()
                            .zip(after.iter())
                            .all(|(b, a)| b.raw() == a.raw());
                    if !same {
                        // Lossy like every event; the new list is in the client regardless.
                        drop(self.events.try_send(Event::ToolsRelisted));
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "listing tools again after their ttlMs failed")
                }
            }
        }
    }

    /// The tools of the newest listing.
    fn kept_tools(&self) -> Arc<Vec<Tool>> {
        self.tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .tools
            .clone()
    }

    pub(crate) async fn list_tools(&self) -> Result<(Arc<Vec<Tool>>, Vec<Warning>), ClientError> {
        let listing = self.next_listing.fetch_add(1, Ordering::Relaxed);
        let started = tokio::time::Instant::now();
        let (listed, ttl) = self.list_pages("tools/list", "tools").await?;
        // Freshness counts from when the list was asked for; a hint past a day is a day.
        let fresh_until = ttl
            .filter(|_| self.modern.is_some())
            .map(|ms| started + Duration::from_millis(ms).clamp(MIN_TOOLS_TTL, MAX_TOOLS_TTL));
        // Compiling a long list takes a while (about 0.2 ms a tool): the task yields after each
        // tool, so that a runtime with one thread (mcpx serve) goes on serving meanwhile. (On the
        // blocking pool instead, the compiled schemas took about a third more memory: another
        // allocator arena.)
        let mut tools = Vec::with_capacity(listed.len());
        let mut compiled_in = Duration::ZERO;
        for raw in listed {
            let compiling = std::time::Instant::now();
            tools.extend(Tool::new(raw));
            compiled_in += compiling.elapsed();
            tokio::task::yield_now().await;
        }
        for tool in &tools {
            if let Some(error) = tool.input_error() {
                tracing::warn!(target: crate::SCHEMA_LOG_TARGET, tool = tool.name(), %error, "inputSchema does not compile; calls to it are refused");
            }
        }
        let mut warnings = list_warnings(&tools);
        if let Some(table) = &self.tool_headers {
            let mut declared = std::collections::HashMap::new();
            tools.retain(|tool| {
                let schema = tool.raw().get("inputSchema").unwrap_or(&Value::Null);
                match header_params(schema) {
                    Ok(found) => {
                        if !found.is_empty() {
                            declared.insert(tool.name.clone(), found);
                        }
                        true
                    }
                    Err(why) => {
                        warnings.push(Warning {
                            message: HEADER_WARNING.to_owned(),
                            tool: tool.name.clone(),
                            lines: vec![why],
                        });
                        false
                    }
                }
            });
            *table.write().unwrap_or_else(|p| p.into_inner()) = declared;
        }
        for warning in &warnings {
            tracing::warn!(target: crate::SCHEMA_LOG_TARGET, tool = %warning.tool, lines = ?warning.lines, "{}", warning.message);
        }
        let tools = Arc::new(tools);
        let mut kept = self.tools.write().unwrap_or_else(|p| p.into_inner());
        if listing > kept.listing {
            *kept = Listed {
                listing,
                tools: tools.clone(),
                fresh_until,
                compiled_in,
            };
        }
        Ok((tools, warnings))
    }

    async fn call_tool(
        &self,
        params: &RawParams,
        options: CallOptions,
    ) -> Result<CallOutcome, ClientError> {
        let name = params
            .get_str("name")
            .ok_or_else(|| malformed("tools/call", "params need the tool's name".to_owned()))?;
        let name = name.as_str();
        let mut coerced = Vec::new();
        // The params as sent when the arguments were coerced (copied only then).
        let mut sent: Option<RawParams> = None;
        if let Some(raw) = params.get("arguments") {
            let values = count_values(raw.get());
            if values > MAX_ARGUMENT_VALUES {
                return Err(ClientError::InvalidArguments {
                    tool: name.to_owned(),
                    violations: vec![format!(
                        "$: the arguments hold about {values} JSON values, over the {MAX_ARGUMENT_VALUES} mcpx checks"
                    )],
                    hints: vec![None],
                });
            }
        }
        let arguments: Value = match params.get("arguments") {
            // Valid JSON already; what can fail is the parser's nesting limit.
            Some(raw) => {
                let refused = |line: String| ClientError::InvalidArguments {
                    tool: name.to_owned(),
                    violations: vec![line],
                    hints: vec![None],
                };
                let value = serde_json::from_str(raw.get())
                    .map_err(|e| refused(format!("$: the arguments cannot be read: {e}")))?;
                // The text goes to the server as it is: a name given twice would be checked in
                // one reading and acted on in another.
                if let Some(duplicate) = schemaval::duplicate_member(raw.get()) {
                    return Err(refused(duplicate.to_string()));
                }
                value
            }
            None => json!({}),
        };
        self.refresh_if_stale().await;
        let tools = self.kept_tools();
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| ClientError::UnknownTool(name.to_owned()))?;
        match &tool.input {
            Err(error) => {
                return Err(ClientError::UnusableInputSchema {
                    tool: name.to_owned(),
                    error: error.clone(),
                })
            }
            Ok(schema) => {
                if let Err(err) = schema.validate(&arguments) {
                    let fixed = options
                        .coerce_arguments
                        .then(|| schema.coerce(&arguments))
                        .flatten();
                    let Some(fixed) = fixed else {
                        return Err(ClientError::InvalidArguments {
                            tool: name.to_owned(),
                            violations: err.lines(),
                            hints: err.hints(),
                        });
                    };
                    tracing::info!(tool = name, changes = ?fixed.changes, "arguments coerced (coerceArguments: safe)");
                    let mut fixed_params = params.clone();
                    fixed_params.set("arguments", &fixed.value);
                    sent = Some(fixed_params);
                    coerced = fixed.changes;
                }
            }
        }
        let response = self
            .request_raw(
                "tools/call",
                Some(sent.as_ref().unwrap_or(params).to_raw()),
                options,
            )
            .await?;
        let (is_error, warnings) = match &tool.output {
            Some(Ok(schema)) => output_warnings(name, schema, &response),
            _ => (crate::tools::tool_error(&response), Vec::new()),
        };
        // The caller gets them in the outcome and reports them (the command line prints them,
        // the gateway logs them with the server's name): logged here only for debugging.
        for warning in &warnings {
            tracing::debug!(tool = name, lines = ?warning.lines, "{}", warning.message);
        }
        Ok(CallOutcome {
            response,
            warnings,
            coerced,
            is_error,
        })
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<Response, ClientError> {
        let params =
            params.map(|p| serde_json::value::to_raw_value(&p).expect("a Value serializes"));
        self.request_raw(method, params, options).await
    }

    /// Sends `params` as they are, but for the progress token when `options` asks for progress
    /// (set in `_meta`, the rest of `_meta` kept).
    pub(crate) async fn request_raw(
        &self,
        method: &str,
        mut params: Option<Box<RawValue>>,
        options: CallOptions,
    ) -> Result<Response, ClientError> {
        let timeout = options.timeout.unwrap_or(self.timeout);
        let _registered = match options.progress {
            Some(sender) => {
                let token = format!(
                    "mcpx-progress-{}",
                    self.next_token.fetch_add(1, Ordering::Relaxed)
                );
                let mut members = match params.as_deref() {
                    Some(raw) => {
                        RawParams::parse(raw).map_err(|e| malformed(method, e.to_string()))?
                    }
                    None => RawParams::default(),
                };
                members.set_within("_meta", "progressToken", &json!(token));
                params = Some(members.to_raw());
                self.connection
                    .watch_progress(json!(token).to_string(), sender);
                Some(Unregister {
                    inner: self,
                    token: json!(token).to_string(),
                })
            }
            None => None,
        };
        if self.modern.is_some() {
            if let Some(answered) = self.answer_locally(method, params.as_deref())? {
                return Ok(answered);
            }
        }
        self.send(
            method,
            params,
            timeout,
            options.tag,
            Stamp {
                log_level: options.log_level.as_deref(),
                capabilities: options.capabilities,
            },
        )
        .await
    }

    /// Sends a request in the server's era: for a modern server with the request fields in
    /// `_meta`, and its `input_required` answers fulfilled by the handlers and retried until
    /// the result is complete; for a legacy one without them.
    async fn send(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        timeout: Duration,
        tag: Option<String>,
        stamp: Stamp<'_>,
    ) -> Result<Response, ClientError> {
        let Some(identity) = &self.modern else {
            let params = modern::unstamp(params);
            return Ok(self
                .connection
                .request_tagged(method, params, timeout, tag)
                .await?);
        };
        let own;
        let identity = match stamp.capabilities {
            Some(capabilities) => {
                own = Identity {
                    capabilities,
                    client_info: identity.client_info.clone(),
                };
                &own
            }
            None => identity,
        };
        let level = match stamp.log_level {
            Some(level) => Some(level.to_owned()),
            None => self
                .log_level
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        };
        let first = modern::stamp(params.as_deref(), identity, level.as_deref())
            .map_err(|e| malformed(method, e.to_string()))?;
        if !modern::INPUT_METHODS.contains(&method) {
            return Ok(self
                .connection
                .request_tagged(method, Some(first), timeout, tag)
                .await?);
        }
        let mut sent = first.clone();
        for _ in 0..MAX_INPUT_ROUNDS {
            let response = self
                .connection
                .request_tagged(method, Some(sent), timeout, tag.clone())
                .await?;
            let Some(input) = modern::input_required(&response) else {
                return Ok(response);
            };
            let responses = if input.requests.is_empty() {
                None
            } else {
                Some(self.fulfil_all(input.requests, tag.clone()).await?)
            };
            sent = modern::retry_params(Some(&first), responses, input.state)
                .map_err(|e| malformed(method, e.to_string()))?;
        }
        Err(malformed(
            method,
            format!("the server asked for input {MAX_INPUT_ROUNDS} times without finishing"),
        ))
    }

    /// Answers a modern server's `inputRequests` with the handlers, all at once: the
    /// `inputResponses` object. A handler's refusal fails the request with its error.
    async fn fulfil_all(
        &self,
        requests: Vec<(String, Value)>,
        tag: Option<String>,
    ) -> Result<Box<RawValue>, ClientError> {
        let asked = requests.into_iter().map(|(key, request)| {
            let tag = tag.clone();
            async move {
                let method = request
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
                let answer = INPUT_KEY
                    .scope(key.clone(), fulfil(&self.handlers, &method, params, tag))
                    .await;
                (key, answer)
            }
        });
        let mut responses = serde_json::Map::new();
        for (key, answer) in futures_util::future::join_all(asked).await {
            match answer {
                Ok(result) => {
                    responses.insert(key, result);
                }
                Err(error) => {
                    return Err(ClientError::Rpc(RpcError::Remote(error)));
                }
            }
        }
        serde_json::value::to_raw_value(&responses).map_err(|e| malformed("input", e.to_string()))
    }

    /// What a modern server has no method for and the client answers itself: the log level
    /// (sent in each request from now on) and resource subscriptions (kept on the
    /// `subscriptions/listen` stream). `None` for everything else.
    fn answer_locally(
        self: &Inner,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Option<Response>, ClientError> {
        let members = || match params {
            Some(raw) => RawParams::parse(raw).map_err(|e| malformed(method, e.to_string())),
            None => Ok(RawParams::default()),
        };
        match method {
            "logging/setLevel" => {
                let level = members()?
                    .get_str("level")
                    .ok_or_else(|| malformed(method, "params need a level".to_owned()))?;
                *self.log_level.write().unwrap_or_else(|p| p.into_inner()) = Some(level);
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let uri = members()?
                    .get_str("uri")
                    .ok_or_else(|| malformed(method, "params need a uri".to_owned()))?;
                let mut listen = self.listen.lock().unwrap_or_else(|p| p.into_inner());
                let changed = if method == "resources/subscribe" {
                    listen.uris.insert(uri)
                } else {
                    listen.uris.remove(&uri)
                };
                drop(listen);
                if changed {
                    self.relisten();
                }
            }
            _ => return Ok(None),
        }
        let empty = json!({"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete"}});
        Ok(Some(Response::from_frame(Frame::from_value(&empty))?))
    }

    /// Opens the `subscriptions/listen` stream again with what it should carry now.
    fn relisten(&self) {
        self.stop_listening();
        if let Some(this) = self.this.upgrade() {
            this.listen();
        }
    }
}

/// Stops routing a call's progress when the call ends, however it ends.
struct Unregister<'a> {
    inner: &'a Inner,
    token: String,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        self.inner.connection.unwatch_progress(&self.token);
    }
}

fn malformed(method: &str, reason: String) -> ClientError {
    ClientError::Malformed {
        method: method.to_owned(),
        reason,
    }
}
