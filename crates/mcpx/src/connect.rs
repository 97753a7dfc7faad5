//! Connecting to a configured server, and the elicitation answers the command line can give.

use std::sync::Mutex;

use anstream::eprintln;
use anyhow::Context;
use mcpclient::{
    BoxFuture, Client, ClientOptions, ElicitationAnswer, ElicitationHandler, ElicitationRequest,
    Handlers, HttpTransport, StdioTransport, Tool,
};
use serde_json::{json, Value};

use mcpx::config::{Server, Transport};

/// How elicitation requests are answered during a call.
#[derive(Debug, Clone)]
pub(crate) enum Elicit {
    /// With this content (`--elicit JSON`), once; invalid content is reported and cancelled.
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
                    ElicitationAnswer::Accept(content.clone())
                }
            }
        };
        Box::pin(async move { answer })
    }
}

/// A client connected to `server`, its tools listed and compiled.
pub(crate) async fn connect(server: &Server, elicit: Elicit) -> anyhow::Result<Client> {
    let options = ClientOptions {
        client_info: json!({"name": "mcpx", "version": env!("CARGO_PKG_VERSION")}),
        handlers: Handlers::default().elicitation(CommandLineUser {
            elicit,
            answered: Mutex::new(false),
        }),
        ..ClientOptions::default()
    };
    let context = || format!("server '{}'", server.name);
    let client = match &server.transport {
        Transport::Stdio(command) => {
            let transport = StdioTransport::spawn(command).with_context(context)?;
            Client::connect_with(transport, options)
                .await
                .with_context(context)?
                .0
        }
        Transport::Http(config) => {
            let transport = HttpTransport::new(config).with_context(context)?;
            Client::connect_with(transport, options)
                .await
                .with_context(context)?
                .0
        }
    };
    client.list_tools().await.with_context(context)?;
    Ok(client)
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
