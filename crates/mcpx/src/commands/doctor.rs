//! `mcpx doctor`: one line per check, each failure with its fix. The checks are the config
//! (it parses), each stdio server's command (on PATH), each server (starts and lists its
//! tools, else its error and the end of its stderr), each stored login (valid, expiring or
//! expired), the address `mcpx serve --http` would listen on (free), and which clients have
//! mcpx installed. Exit 1 when a check fails. Nothing printed holds a secret from the config:
//! errors and servers' stderr can quote one (a URL with its key, a server echoing its token),
//! so every line goes through a [`mcpgateway::Redactor`] of the config's secrets and every
//! literal `env` and header value, and URLs are shown masked ([`Shield`]).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use mcpclient::Reach;
use mcpclients::{Scope, Status, Target, CLIENTS};
use mcpx::config::{Config, Server};

use super::mcp::runtime;
use crate::fleet::{start_all, Started};
use crate::output::print;

/// What doctor keeps out of what it prints.
struct Shield {
    redactor: mcpgateway::Redactor,
    /// Each server's URL, expanded, and as it may be shown.
    urls: Vec<(String, String)>,
}

impl Shield {
    fn new(config: &Config) -> Shield {
        let mut secrets = config.secrets();
        let mut urls = Vec::new();
        for server in &config.servers {
            match &server.transport {
                Reach::Stdio(command) => secrets.extend(command.env.values().cloned()),
                Reach::Http(http) => {
                    secrets.extend(http.headers.iter().map(|(_, v)| v.clone()));
                    let shown = mcpclients::masked(&serde_json::json!({"url": http.url}));
                    let shown = shown["url"].as_str().unwrap_or_default().to_owned();
                    if shown != http.url {
                        urls.push((http.url.clone(), shown));
                    }
                }
                _ => {}
            }
        }
        // The longest first, so that a URL holding another is masked whole.
        urls.sort_by_key(|(url, _)| std::cmp::Reverse(url.len()));
        Shield {
            redactor: mcpgateway::Redactor::new(secrets),
            urls,
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (url, shown) in &self.urls {
            text = text.replace(url.as_str(), shown);
        }
        self.redactor.redact(&text).into_owned()
    }
}

/// A token that expires within this long is reported as expiring.
const EXPIRING: Duration = Duration::from_secs(24 * 3600);

#[derive(Default)]
struct Report {
    text: String,
    failed: bool,
}

impl Report {
    fn ok(&mut self, what: &str) {
        let _ = writeln!(self.text, "ok    {what}");
    }

    fn warn(&mut self, what: &str) {
        let _ = writeln!(self.text, "warn  {what}");
    }

    fn fail(&mut self, what: &str, fix: &str) {
        self.failed = true;
        let _ = writeln!(self.text, "FAIL  {what}\n      fix: {fix}");
    }
}

/// What to install for a missing command.
fn install_hint(program: &str) -> &'static str {
    match program {
        "npx" | "node" | "npm" => "install Node.js (it brings npx)",
        "uvx" | "uv" => "install uv (it brings uvx)",
        "docker" => "install Docker, and start its engine",
        "dnx" | "dotnet" => "install the .NET 10 SDK (it brings dnx)",
        "python" | "python3" => "install Python",
        _ => "install it, or give its full path in the config",
    }
}

/// Checks each stdio server's command: the servers whose command is there (and HTTP ones).
fn commands<'c>(report: &mut Report, config: &'c Config) -> Vec<&'c Server> {
    let mut startable = Vec::new();
    for server in &config.servers {
        let Reach::Stdio(command) = &server.transport else {
            startable.push(server);
            continue;
        };
        // Found as it will be started: the server's own PATH, PATHEXT on Windows.
        match mcpclient::locate(command) {
            Some(found) => {
                report.ok(&format!("{}: command {}", server.name, found.display()));
                startable.push(server);
            }
            None => report.fail(
                &format!(
                    "{}: command {} is not on PATH",
                    server.name, command.program
                ),
                install_hint(&command.program),
            ),
        }
    }
    startable
}

fn starts(report: &mut Report, started: &[Started<'_>]) {
    for Started { server, outcome } in started {
        match outcome {
            Ok(client) => report.ok(&format!(
                "{}: starts and lists {} tools",
                server.name,
                client.tools().len()
            )),
            Err(failure) if crate::login::needs_login(&server.name) => report.fail(
                &format!("{}: needs a login", server.name),
                &format!("mcpx auth login {}", server.name),
            ),
            Err(failure) => {
                let mut what = format!("{}: does not start: {:#}", server.name, failure.error);
                for line in &failure.stderr {
                    let _ = write!(what, "\n      stderr: {line}");
                }
                report.fail(
                    &what,
                    &format!(
                        "run `mcpx tools {}` to see it start, and fix what its stderr says",
                        server.name
                    ),
                );
            }
        }
    }
}

fn logins(report: &mut Report, servers: &[&Server]) {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for server in servers {
        let status = crate::login::authorizer(server, mcpauth::Interaction::Never)
            .ok()
            .flatten()
            .and_then(|a| a.status().ok().flatten());
        let Some(status) = status else { continue };
        let name = &server.name;
        match status.expires_at {
            Some(at) if at <= now && !status.refreshable => report.fail(
                &format!("{name}: its login expired"),
                &format!("mcpx auth login {name}"),
            ),
            Some(at) if at <= now => report.ok(&format!(
                "{name}: access token expired, refreshed at its next use"
            )),
            Some(at) if at - now < EXPIRING.as_secs() && !status.refreshable => {
                report.warn(&format!(
                    "{name}: login expires in {} min; then `mcpx auth login {name}`",
                    (at - now) / 60
                ))
            }
            _ => report.ok(&format!("{name}: logged in at {}", status.issuer)),
        }
    }
}

fn address(report: &mut Report, addr: std::net::SocketAddr) {
    match std::net::TcpListener::bind(addr) {
        Ok(_) => report.ok(&format!("{addr} is free for mcpx serve --http")),
        Err(e) => report.fail(
            &format!("{addr} cannot be listened on: {e}"),
            "stop what listens there, or pass another address: mcpx serve --http 127.0.0.1:PORT",
        ),
    }
}

fn clients(report: &mut Report) {
    let Ok(places) = super::clients::places() else {
        report.warn("cannot tell where the clients' files are: HOME is not set");
        return;
    };
    let mut absent = Vec::new();
    let mut seen = Vec::new();
    for client in CLIENTS {
        for &scope in client.scopes().iter().filter(|s| **s != Scope::Local) {
            let Ok(target) = Target::locate(client, scope, &places) else {
                continue;
            };
            // In the home folder a project file may be the user's own.
            if seen.contains(&target.file) {
                continue;
            }
            seen.push(target.file.clone());
            let label = format!("{} ({})", client.name(), scope.name());
            match mcpclients::status(&target) {
                Ok(Status::NoFile) => absent.push(label),
                Ok(Status::Installed { alone: true }) => {
                    report.ok(&format!("{label}: mcpx installed ({})", target.file.display()))
                }
                Ok(Status::Installed { alone: false }) => report.warn(&format!(
                    "{label}: mcpx installed beside other servers ({}); `mcpx install {}` moves them behind it",
                    target.file.display(),
                    client.name()
                )),
                Ok(Status::NotInstalled { servers }) => report.warn(&format!(
                    "{label}: mcpx not installed, {servers} servers of its own ({}); `mcpx install {}{}` puts mcpx in front",
                    target.file.display(),
                    client.name(),
                    if scope == Scope::Project { " --scope project" } else { "" }
                )),
                Err(e) => report.fail(&format!("{label}: {e}"), "fix the file, or ignore it"),
            }
        }
    }
    if !absent.is_empty() {
        let _ = writeln!(report.text, "--    no config file: {}", absent.join(", "));
    }
}

/// `mcpx doctor`.
pub(crate) fn run(
    config: anyhow::Result<Config>,
    http: std::net::SocketAddr,
) -> anyhow::Result<ExitCode> {
    let mut report = Report::default();
    let mut shield = None;
    match config {
        Ok(config) => {
            shield = Some(Shield::new(&config));
            report.ok(&format!(
                "config {} parses: {} servers",
                config.path.display(),
                config.servers.len()
            ));
            let startable = commands(&mut report, &config);
            let started = runtime()?.block_on(start_all(&startable));
            starts(&mut report, &started);
            let remote: Vec<&Server> = startable
                .iter()
                .copied()
                .filter(|s| matches!(s.transport, Reach::Http(_)))
                .collect();
            logins(&mut report, &remote);
        }
        Err(err) => report.fail(
            &format!("{err:#}"),
            "fix the config file, or create one: mcpx import CLIENT",
        ),
    }
    address(&mut report, http);
    clients(&mut report);
    let text = match &shield {
        Some(shield) => shield.apply(&report.text),
        None => report.text.clone(),
    };
    print(&text)?;
    Ok(if report.failed {
        ExitCode::from(crate::cli::EXIT_NO)
    } else {
        ExitCode::SUCCESS
    })
}
