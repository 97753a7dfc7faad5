//! The MCP client: handshake, the tool list compiled once, calls whose arguments are enforced
//! and whose outputs are checked warn-only, and raw pass-through for everything else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use schemaval::CompileError;
use serde_json::{json, Value};
use thiserror::Error;
use tokio::sync::mpsc;

use crate::params::count_values;
use crate::serve::serve;
use crate::tools::{list_warnings, output_warnings};
use crate::{
    CallOutcome, Connection, Event, Handlers, RawParams, Response, RpcError, Tool, Transport,
    Warning,
};
use serde_json::value::RawValue;

/// The protocol version the client offers.
pub const OFFERED_VERSION: &str = "2025-11-25";

/// The versions the client accepts from a server, newest first.
pub const ACCEPTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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
    /// The server answered `initialize` with a version the client does not speak.
    #[error("the server speaks protocol {got}, not one of {}", ACCEPTED_VERSIONS.join(", "))]
    UnsupportedVersion {
        /// What the server said.
        got: String,
    },
    /// The arguments violate the tool's `inputSchema`; nothing was sent.
    #[error("invalid arguments for tool '{tool}': {}", violations.first().map(String::as_str).unwrap_or_default())]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// One flat line per problem.
        violations: Vec<String>,
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
    /// The JSON-RPC error object a gateway answers with: -32602 with `data.violations` for
    /// rejected arguments, the server's own error as it sent it, -32603 otherwise.
    pub fn to_jsonrpc_error(&self) -> Value {
        match self {
            ClientError::InvalidArguments { violations, .. } => {
                json!({"code": -32602, "message": self.to_string(), "data": {"violations": violations}})
            }
            ClientError::UnusableInputSchema { error, .. } => {
                json!({"code": -32602, "message": self.to_string(), "data": {"violations": [error.to_string()]}})
            }
            ClientError::UnknownTool(_) => json!({"code": -32602, "message": self.to_string()}),
            ClientError::Reserved(_) => json!({"code": -32601, "message": self.to_string()}),
            ClientError::Rpc(RpcError::Remote {
                code,
                message,
                data,
            }) => {
                let mut e = json!({"code": code, "message": message});
                if let Some(data) = data {
                    e["data"] = data.clone();
                }
                e
            }
            other => json!({"code": -32603, "message": other.to_string()}),
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
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            client_info: json!({"name": "mcpx", "version": env!("CARGO_PKG_VERSION")}),
            handlers: Handlers::default(),
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Options for one call.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Overrides the client's timeout for this call.
    pub timeout: Option<Duration>,
    /// Receives the `params` of each `notifications/progress` for this call (the call asks
    /// for progress with a token of its own). Lossy past [`MAX_QUEUED_PROGRESS`] unread.
    pub progress: Option<mpsc::Sender<Value>>,
    /// A tag of the caller's: a request the server sends during this call, when the transport
    /// tells which call it belongs to, reaches the handlers with it (`during`).
    pub tag: Option<String>,
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
    listing: u64,
    tools: Arc<Vec<Tool>>,
}

pub(crate) struct Inner {
    pub(crate) connection: Connection,
    protocol_version: String,
    initialize_result: Value,
    tools: RwLock<Listed>,
    /// Numbers each listing in the order they start, so that a slow one never replaces a
    /// newer one (a `list_changed` can arrive while a listing is compiling).
    next_listing: AtomicU64,
    timeout: Duration,
    pub(crate) handlers: Handlers,
    next_token: AtomicU64,
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
        let (connection, events) = Connection::start(transport);
        let params = json!({
            "protocolVersion": OFFERED_VERSION,
            "capabilities": options.handlers.capabilities(),
            "clientInfo": options.client_info,
        });
        let answer = connection
            .request("initialize", Some(params), options.timeout)
            .await?
            .result()
            .map_err(|e| malformed("initialize", e.to_string()))?;
        let version = answer
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("initialize", "no protocolVersion".to_owned()))?
            .to_owned();
        if !ACCEPTED_VERSIONS.contains(&version.as_str()) {
            return Err(ClientError::UnsupportedVersion { got: version });
        }
        connection.notify("notifications/initialized", None).await?;
        let inner = Arc::new(Inner {
            connection,
            protocol_version: version,
            initialize_result: answer,
            tools: RwLock::default(),
            next_listing: AtomicU64::new(1),
            timeout: options.timeout,
            handlers: options.handlers,
            next_token: AtomicU64::new(1),
        });
        let (to_app, app_events) = mpsc::channel(crate::MAX_QUEUED_EVENTS);
        tokio::spawn(serve(Arc::downgrade(&inner), events, to_app));
        Ok((Client { inner }, app_events))
    }

    /// Pings the server.
    ///
    /// # Errors
    /// [`ClientError::Rpc`] when the server does not answer in time.
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.inner
            .connection
            .request("ping", None, self.inner.timeout)
            .await?;
        Ok(())
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.inner.protocol_version
    }

    /// The server's answer to `initialize`, as it sent it (`serverInfo`, `instructions`, …).
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
        self.inner.call_tool(params, options).await
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
        params: RawParams,
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
        params: RawParams,
        options: CallOptions,
    ) -> Result<CallOutcome, ClientError> {
        let response = self
            .inner
            .request_raw("tools/call", Some(params.to_raw()), options)
            .await?;
        Ok(CallOutcome {
            response,
            warnings: Vec::new(),
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

    /// Closes the connection and waits until it is closed (for stdio: the server stopped and
    /// reaped). Calls still waiting end with an error.
    pub async fn close(&self) {
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
        Ok(self.inner.connection.notify(method, params).await?)
    }
}

impl Inner {
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let page = self
                .connection
                .request(method, params, self.timeout)
                .await?
                .result()
                .map_err(|e| malformed(method, e.to_string()))?;
            let Some(Value::Array(listed)) = page.get(key) else {
                return Err(malformed(method, format!("no {key} array")));
            };
            items.extend(listed.iter().cloned());
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(items),
            }
        }
        tracing::warn!(
            method,
            pages = MAX_LIST_PAGES,
            "the server kept paginating; list cut"
        );
        Ok(items)
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
        let listed = self.list_all("tools/list", "tools").await?;
        // Compiling a long list takes a while (about 0.2 ms a tool): the task yields after each
        // tool, so that a runtime with one thread (mcpx serve) goes on serving meanwhile. (On the
        // blocking pool instead, the compiled schemas took about a third more memory: another
        // allocator arena.)
        let mut tools = Vec::with_capacity(listed.len());
        for raw in listed {
            tools.extend(Tool::new(raw));
            tokio::task::yield_now().await;
        }
        for tool in &tools {
            if let Some(error) = tool.input_error() {
                tracing::warn!(tool = tool.name(), %error, "inputSchema does not compile; calls to it are refused");
            }
        }
        let warnings = list_warnings(&tools);
        for warning in &warnings {
            tracing::warn!(tool = %warning.tool, lines = ?warning.lines, "{}", warning.message);
        }
        let tools = Arc::new(tools);
        let mut kept = self.tools.write().unwrap_or_else(|p| p.into_inner());
        if listing > kept.listing {
            *kept = Listed {
                listing,
                tools: tools.clone(),
            };
        }
        Ok((tools, warnings))
    }

    async fn call_tool(
        &self,
        params: RawParams,
        options: CallOptions,
    ) -> Result<CallOutcome, ClientError> {
        let name = params
            .get_str("name")
            .ok_or_else(|| malformed("tools/call", "params need the tool's name".to_owned()))?;
        let name = name.as_str();
        if let Some(raw) = params.get("arguments") {
            let values = count_values(raw.get());
            if values > MAX_ARGUMENT_VALUES {
                return Err(ClientError::InvalidArguments {
                    tool: name.to_owned(),
                    violations: vec![format!(
                        "$: the arguments hold about {values} JSON values, over the {MAX_ARGUMENT_VALUES} mcpx checks"
                    )],
                });
            }
        }
        let arguments: Value = match params.get("arguments") {
            // Valid JSON already; what can fail is the parser's nesting limit.
            Some(raw) => {
                serde_json::from_str(raw.get()).map_err(|e| ClientError::InvalidArguments {
                    tool: name.to_owned(),
                    violations: vec![format!("$: the arguments cannot be read: {e}")],
                })?
            }
            None => json!({}),
        };
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
                    return Err(ClientError::InvalidArguments {
                        tool: name.to_owned(),
                        violations: err.lines(),
                    });
                }
            }
        }
        let response = self
            .request_raw("tools/call", Some(params.to_raw()), options)
            .await?;
        let warnings = match &tool.output {
            Some(Ok(schema)) => output_warnings(name, schema, &response),
            _ => Vec::new(),
        };
        for warning in &warnings {
            tracing::warn!(tool = name, lines = ?warning.lines, "{}", warning.message);
        }
        Ok(CallOutcome { response, warnings })
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
        Ok(self
            .connection
            .request_tagged(method, params, timeout, options.tag)
            .await?)
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
