//! Connecting to a configured server, and the elicitation answers the command line can give.

use std::sync::Mutex;

use anstream::eprintln;
use mcpclient::{
    BoxFuture, Client, ClientOptions, ConnectError, Connected, ElicitationAnswer,
    ElicitationHandler, ElicitationRequest, Handlers, Listing, Spawn, Tool,
};
use serde_json::{json, Value};

use mcpx::config::Server;

/// How elicitation requests are answered during a call.
#[derive(Debug, Clone)]
pub(crate) enum Elicit {
    /// With this content (`--elicit JSON`), once, fields it leaves out filled with the requested
    /// schema's defaults; content that is then invalid is reported and cancelled.
    Answer(Value),
    /// Asked on the terminal, field by field.
    Prompt,
    /// Declined, with a note on stderr.
    Decline,
}

impl Elicit {
    /// `--elicit JSON` when given; else the terminal when there is one; else decline.
    pub(crate) fn choose(answer: Option<&str>) -> anyhow::Result<Elicit> {
        use std::io::IsTerminal;
        Ok(match answer {
            Some(text) => Elicit::Answer(
                serde_json::from_str(text)
                    .map_err(|e| anyhow::anyhow!("--elicit is not JSON: {e}"))?,
            ),
            None if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
                Elicit::Prompt
            }
            None => Elicit::Decline,
        })
    }
}

struct CommandLineUser {
    elicit: Elicit,
    answered: Mutex<bool>,
}

impl ElicitationHandler for CommandLineUser {
    fn elicit<'a>(
        &'a self,
        request: &'a ElicitationRequest,
        problems: &'a [String],
    ) -> BoxFuture<'a, ElicitationAnswer> {
        let answer = match &self.elicit {
            Elicit::Prompt => {
                let (message, schema, problems) = (
                    request.message.clone(),
                    request.requested_schema.clone(),
                    problems.to_vec(),
                );
                return Box::pin(async move {
                    tokio::task::spawn_blocking(move || {
                        crate::prompt::ask(&message, &schema, &problems)
                    })
                    .await
                    .unwrap_or(ElicitationAnswer::Cancel)
                });
            }
            Elicit::Decline => {
                eprintln!(
                    "mcpx: the server asks: {} (declined: give the answer with --elicit JSON)",
                    request.message
                );
                ElicitationAnswer::Decline
            }
            Elicit::Answer(content) => {
                let mut answered = self.answered.lock().unwrap_or_else(|p| p.into_inner());
                if *answered {
                    for line in problems {
                        eprintln!("mcpx: --elicit does not match the requested schema: {line}");
                    }
                    ElicitationAnswer::Cancel
                } else {
                    *answered = true;
                    ElicitationAnswer::Accept(with_defaults(content, &request.requested_schema))
                }
            }
        };
        Box::pin(async move { answer })
    }
}

/// `content` with each field it leaves out that has a `default` in the requested schema set to
/// that default (SEP-1034), as a person at the prompt would see them pre-filled. Content that is
/// not an object is left as it is, for the schema check to report.
fn with_defaults(content: &Value, requested: &Value) -> Value {
    let mut content = content.clone();
    if let (Some(fields), Some(properties)) =
        (content.as_object_mut(), requested["properties"].as_object())
    {
        for (name, field) in properties {
            if let Some(default) = field.get("default") {
                fields
                    .entry(name.clone())
                    .or_insert_with(|| default.clone());
            }
        }
    }
    content
}

/// Most lines of a failed server's stderr shown with its error.
pub(crate) const MAX_SHOWN_STDERR_LINES: usize = 10;

/// Why a server could not be used: the error, and the last lines it wrote to stderr.
#[derive(Debug)]
pub(crate) struct StartFailure {
    pub(crate) error: anyhow::Error,
    /// At most [`MAX_SHOWN_STDERR_LINES`], oldest first.
    pub(crate) stderr: Vec<String>,
    /// It ran out of its `startupTimeout` (rather than failing).
    pub(crate) late: bool,
}

impl std::fmt::Display for StartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.error)?;
        for line in &self.stderr {
            write!(f, "\n  stderr: {line}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StartFailure {}

/// A client connected to `server`, its tools listed and compiled, within the server's
/// `startupTimeout`. The era an earlier run learnt is spoken at once (and forgotten when that
/// start fails); what this start learns, and the tools it listed, are kept for the next
/// ([`crate::remembered`]). What is logged meanwhile names the server (`server{name=…}`): the
/// client library's warnings do not know it.
pub(crate) async fn connect(server: &Server, elicit: Elicit) -> Result<Client, StartFailure> {
    use tracing::Instrument;
    // At error level, so that it shows with every message the filter lets through.
    let span = tracing::error_span!("server", name = %server.name);
    start(server, elicit).instrument(span).await
}

async fn start(server: &Server, elicit: Elicit) -> Result<Client, StartFailure> {
    let eras = crate::remembered::eras();
    let protocol = match &eras {
        Some(memory) => memory.protocol_for(&server.transport, server.protocol),
        None => server.protocol,
    };
    let options = ClientOptions {
        client_info: json!({"name": "mcpx", "version": env!("CARGO_PKG_VERSION")}),
        handlers: Handlers::default().elicitation(CommandLineUser {
            elicit,
            answered: Mutex::new(false),
        }),
        protocol,
        ..ClientOptions::default()
    };
    let context = || format!("server '{}'", server.name);
    let reach = crate::login::reach(server).map_err(|error| StartFailure {
        error: error.context(context()),
        stderr: Vec::new(),
        late: false,
    })?;
    // A login the server asks for happens while connecting, and has time of its own.
    let timeout = server.startup_timeout + crate::login::allowance(server);
    let connected =
        mcpclient::connect_listing(&reach, options, Spawn::Inline, timeout, Listing::Tools).await;
    let late = matches!(connected, Err(ConnectError::Timeout { .. }));
    let (error, stderr) = match connected {
        Ok(Connected { client, .. }) => {
            if let Some(memory) = &eras {
                // A memory that cannot be written is learnt again next time.
                let _ = memory.learn(&server.transport, &client.discovery());
            }
            keep_tools(server, &client);
            return Ok(client);
        }
        Err(ConnectError::Timeout { stderr, .. }) => (
            anyhow::anyhow!(
                "did not start and list its tools within {} s (its startupTimeout)",
                timeout.as_secs_f64()
            ),
            stderr,
        ),
        Err(error) => {
            let stderr = error.stderr().cloned();
            (anyhow::Error::new(error), stderr)
        }
    };
    if let (Some(memory), mcpclient::Protocol::Remembered(_)) = (&eras, protocol) {
        // The era remembered may be what fails now: the next start probes again.
        let _ = memory.forget(&server.transport);
    }
    let stderr = match stderr {
        Some(tail) => tail.settled(MAX_SHOWN_STDERR_LINES).await,
        None => Vec::new(),
    };
    Err(StartFailure {
        error: error.context(context()),
        stderr,
        late,
    })
}

/// Keeps the tools `client` listed for `tools`, `tools --search` and `lint` (best effort: a
/// list that cannot be kept is asked for again next time).
fn keep_tools(server: &Server, client: &Client) {
    let Some(cache) = crate::remembered::tool_cache() else {
        return;
    };
    let list = servercache::CachedList {
        tools: client.tools().iter().map(|t| t.raw().clone()).collect(),
        server: client.server_info().cloned().unwrap_or(Value::Null),
        protocol_version: client.protocol_version().to_owned(),
        listed_at: std::time::SystemTime::now(),
    };
    let key = servercache::ToolCache::key(&server.entry, &server.transport);
    let _ = cache.store(&key, &list);
}

/// The tool called `name` of the client's last list.
pub(crate) fn tool<'t>(tools: &'t [Tool], server: &str, name: &str) -> anyhow::Result<&'t Tool> {
    tools.iter().find(|t| t.name() == name).ok_or_else(|| {
        let known: Vec<_> = tools.iter().map(Tool::name).collect();
        anyhow::anyhow!(
            "server '{server}' has no tool '{name}' (it has: {})",
            known.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitted_fields_take_their_defaults() {
        let requested = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}}});
        assert_eq!(
            with_defaults(&json!({"age": 4}), &requested),
            json!({"age": 4, "name": "John Doe"})
        );
        assert_eq!(with_defaults(&json!([1]), &requested), json!([1]));
    }
}
