//! `mcpx auth login|status|logout`.

use std::process::ExitCode;

use anstream::println;
use serde_json::json;

use mcpclient::Reach;
use mcpx::config::Config;

use crate::cli::AuthCommand;
use crate::login;

/// Runs one `mcpx auth` command.
pub(crate) fn run(config: &Config, command: AuthCommand) -> anyhow::Result<ExitCode> {
    match command {
        AuthCommand::Login { server } => {
            let server = config.server(&server)?;
            let authorizer = login::authorizer(server, login::browser())?.ok_or_else(|| {
                anyhow::anyhow!(
                    "server '{}' is not an HTTP server without an Authorization header: it has nothing to log in to",
                    server.name
                )
            })?;
            let logged_in = super::mcp::runtime()?.block_on(authorizer.login())?;
            match (logged_in, authorizer.status()?) {
                (true, Some(status)) => println!(
                    "logged in to {} (authorization server {})",
                    server.name, status.issuer
                ),
                _ => println!("{} asks for no login", server.name),
            }
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Logout { server } => {
            let server = config.server(&server)?;
            match login::authorizer(server, mcpauth::Interaction::Never)? {
                Some(authorizer) if authorizer.logout()? => {
                    println!("logged out of {}", server.name)
                }
                _ => println!("{} had no stored tokens", server.name),
            }
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Status { server, json } => {
            let servers: Vec<_> = match &server {
                Some(name) => vec![config.server(name)?],
                None => config
                    .servers
                    .iter()
                    .filter(|s| matches!(s.transport, Reach::Http(_)))
                    .collect(),
            };
            let mut rows = Vec::new();
            for server in servers {
                let status = match login::authorizer(server, mcpauth::Interaction::Never)? {
                    Some(authorizer) => authorizer.status()?,
                    None => None,
                };
                rows.push((server.name.clone(), status));
            }
            if json {
                let out: Vec<_> = rows
                    .iter()
                    .map(|(name, status)| match status {
                        Some(s) => json!({"server": name, "loggedIn": true, "issuer": s.issuer,
                            "scopes": s.scopes, "expiresAt": s.expires_at, "refreshable": s.refreshable}),
                        None => json!({"server": name, "loggedIn": false}),
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                for (name, status) in rows {
                    match status {
                        Some(s) => println!(
                            "{name}\tlogged in at {}{}{}{}",
                            s.issuer,
                            if s.scopes.is_empty() {
                                String::new()
                            } else {
                                format!(", scopes {}", s.scopes.join(" "))
                            },
                            match s.expires_at {
                                Some(at) => format!(", expires at {at} (Unix time)"),
                                None => String::new(),
                            },
                            if s.refreshable { ", refreshable" } else { "" }
                        ),
                        None => println!("{name}\tnot logged in"),
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
