//! The MCP client: handshake, the tool list compiled once, and calls whose arguments are
//! enforced and whose outputs are checked warn-only.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use schemaval::{CompileError, Schema};
use serde_json::{json, Value};
use thiserror::Error;
use tokio::sync::mpsc;

use crate::{Connection, Event, Response, RpcError, Transport};

/// The protocol version the client offers.
pub const OFFERED_VERSION: &str = "2025-11-25";

/// The versions the client accepts from a server, newest first.
pub const ACCEPTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How long a request waits for its answer unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Most pages of one list followed before giving up on a server that never stops paginating.
pub const MAX_LIST_PAGES: usize = 1_000;

/// The warning recorded when `structuredContent` does not match the tool's `outputSchema`.
pub const OUTPUT_WARNING: &str = "structuredContent violates outputSchema (delivered unchanged)";

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
    /// rejected arguments, -32603 otherwise.
    pub fn to_jsonrpc_error(&self) -> Value {
        match self {
            ClientError::InvalidArguments { violations, .. } => {
                json!({"code": -32602, "message": self.to_string(), "data": {"violations": violations}})
            }
            ClientError::UnusableInputSchema { error, .. } => {
                json!({"code": -32602, "message": self.to_string(), "data": {"violations": [error.to_string()]}})
            }
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

/// Something delivered unchanged that did not match what the server declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What happened, e.g. [`OUTPUT_WARNING`].
    pub message: String,
    /// The tool it concerns.
    pub tool: String,
    /// The flat lines, one per problem.
    pub lines: Vec<String>,
}

/// One tool as listed, with its schemas compiled once.
#[derive(Debug)]
pub struct Tool {
    raw: Value,
    name: String,
    input: Result<Schema, CompileError>,
    output: Option<Result<Schema, CompileError>>,
}

impl Tool {
    fn new(raw: Value) -> Option<Tool> {
        let name = raw.get("name")?.as_str()?.to_owned();
        let input = Schema::compile(raw.get("inputSchema").unwrap_or(&json!({"type": "object"})));
        let output = raw.get("outputSchema").map(Schema::compile);
        Some(Tool {
            raw,
            name,
            input,
            output,
        })
    }

    /// The tool object exactly as listed (unknown fields kept).
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why the `inputSchema` does not compile, if it does not.
    pub fn input_error(&self) -> Option<&CompileError> {
        self.input.as_ref().err()
    }

    /// Why the `outputSchema` does not compile, if there is one and it does not.
    pub fn output_error(&self) -> Option<&CompileError> {
        self.output.as_ref().and_then(|o| o.as_ref().err())
    }
}

/// The result of a call, delivered unchanged, with what did not match the declared schema.
#[derive(Debug)]
pub struct CallOutcome {
    /// The response, exactly as received.
    pub response: Response,
    /// Output warnings (never a reason to change the result).
    pub warnings: Vec<Warning>,
}

/// A connected, initialized MCP client.
///
/// A task beside it answers what the server asks of the client: `ping`, and method-not-found
/// for requests no handler takes; everything the server sends reaches the application's event
/// receiver too.
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    connection: Connection,
    protocol_version: String,
    initialize_result: Value,
    tools: RwLock<Arc<Vec<Tool>>>,
    timeout: Duration,
}

impl Client {
    /// Connects over `transport`: `initialize`, then `notifications/initialized`.
    ///
    /// # Errors
    /// [`ClientError`] when the handshake fails or the server's version is not accepted.
    pub async fn connect<T: Transport + 'static>(
        transport: T,
        client_info: Value,
    ) -> Result<(Client, mpsc::UnboundedReceiver<Event>), ClientError> {
        let (connection, events) = Connection::start(transport);
        let params = json!({
            "protocolVersion": OFFERED_VERSION,
            "capabilities": {},
            "clientInfo": client_info,
        });
        let answer = connection
            .request("initialize", Some(params), DEFAULT_TIMEOUT)
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
            tools: RwLock::new(Arc::new(Vec::new())),
            timeout: DEFAULT_TIMEOUT,
        });
        let (to_app, app_events) = mpsc::unbounded_channel();
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

    /// The server's `capabilities`, as it declared them.
    pub fn server_capabilities(&self) -> &Value {
        self.inner
            .initialize_result
            .get("capabilities")
            .unwrap_or(&Value::Null)
    }

    /// The tools of the last list (re-listed by itself when the server says they changed).
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.inner
            .tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
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
        self.inner.call_tool(name, arguments).await
    }
}

impl Inner {
    async fn list_tools(&self) -> Result<(Arc<Vec<Tool>>, Vec<Warning>), ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let page = self
                .connection
                .request("tools/list", params, self.timeout)
                .await?
                .result()
                .map_err(|e| malformed("tools/list", e.to_string()))?;
            let Some(Value::Array(listed)) = page.get("tools") else {
                return Err(malformed("tools/list", "no tools array".to_owned()));
            };
            tools.extend(listed.iter().cloned().filter_map(Tool::new));
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => break,
            }
        }
        let warnings = tools
            .iter()
            .filter_map(|t| {
                t.output_error().map(|e| Warning {
                    message: "outputSchema does not compile; results are delivered unchecked"
                        .to_owned(),
                    tool: t.name.clone(),
                    lines: vec![e.to_string()],
                })
            })
            .collect();
        let tools = Arc::new(tools);
        *self.tools.write().unwrap_or_else(|p| p.into_inner()) = tools.clone();
        Ok((tools, warnings))
    }

    async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallOutcome, ClientError> {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner()).clone();
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
        let params = json!({"name": name, "arguments": arguments});
        let response = self
            .connection
            .request("tools/call", Some(params), self.timeout)
            .await?;
        let warnings = match &tool.output {
            Some(Ok(schema)) => output_warnings(name, schema, &response),
            _ => Vec::new(),
        };
        Ok(CallOutcome { response, warnings })
    }
}

/// Answers the server's requests to the client, re-lists tools when they change, and passes
/// every event on to the application.
async fn serve(
    client: std::sync::Weak<Inner>,
    mut events: mpsc::UnboundedReceiver<Event>,
    to_app: mpsc::UnboundedSender<Event>,
) {
    while let Some(event) = events.recv().await {
        let Some(inner) = client.upgrade() else { break };
        match &event {
            Event::Request(frame) => {
                if let Ok(request) = frame.value() {
                    let id = request.get("id").cloned().unwrap_or(Value::Null);
                    let method = request
                        .get("method")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let answer = match method {
                        "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                        other => json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": -32601,
                            "message": format!("method not found: {other} (this client has no handler for it)")
                        }}),
                    };
                    let _ = inner
                        .connection
                        .send(crate::Frame::from_value(&answer))
                        .await;
                }
            }
            Event::Notification(frame)
                if frame.text().contains("notifications/tools/list_changed") =>
            {
                let is_list_changed = frame
                    .value()
                    .ok()
                    .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
                    .is_some_and(|m| m == "notifications/tools/list_changed");
                if is_list_changed {
                    let relist = inner.clone();
                    tokio::spawn(async move {
                        let _ = relist.list_tools().await;
                    });
                }
            }
            _ => {}
        }
        let _ = to_app.send(event);
    }
}

fn output_warnings(tool: &str, schema: &Schema, response: &Response) -> Vec<Warning> {
    let Ok(result) = response.result() else {
        return Vec::new();
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Vec::new();
    }
    let lines = match result.get("structuredContent") {
        None => vec!["$: no structuredContent, but the tool declares an outputSchema".to_owned()],
        Some(content) => match schema.validate(content) {
            Ok(()) => return Vec::new(),
            Err(err) => err.lines(),
        },
    };
    vec![Warning {
        message: OUTPUT_WARNING.to_owned(),
        tool: tool.to_owned(),
        lines,
    }]
}

fn malformed(method: &str, reason: String) -> ClientError {
    ClientError::Malformed {
        method: method.to_owned(),
        reason,
    }
}
