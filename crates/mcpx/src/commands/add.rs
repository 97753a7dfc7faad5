//! `mcpx add NAME` and `mcpx add --search WORDS`: a server from an MCP registry (the `mcpregistry`
//! crate) added to mcpx's config (as `import` adds, through `mcpclients`). Required inputs are
//! asked for on a terminal; secrets never are, and never printed.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use mcpclients::Outcome;
use mcpregistry::{Prefer, Question, Registry};

use super::mcp::runtime;
use crate::output::print;

/// What `mcpx add NAME` is asked to do.
#[derive(Debug)]
pub(crate) struct Asked<'a> {
    pub(crate) name: &'a str,
    pub(crate) as_name: Option<&'a str>,
    pub(crate) remote: bool,
    pub(crate) dry_run: bool,
}

/// `mcpx add --search WORDS`: one line a server (exit 1 when none); when more match than are
/// shown, a note on stderr says so (stdout stays one line a server).
pub(crate) fn search(registry: &str, words: &str) -> anyhow::Result<ExitCode> {
    let registry = Registry::new(registry)?;
    let found = runtime()?.block_on(registry.search(words))?;
    let mut out = String::new();
    for server in &found.servers {
        let _ = writeln!(
            out,
            "{}\t{}\t{}",
            printable(&server.name),
            printable(&server.version),
            printable(&server.description)
        );
    }
    print(&out)?;
    if found.more {
        anstream::eprintln!(
            "mcpx: the first {} servers are shown; more match {:?}: add words to narrow the search",
            found.servers.len(),
            printable(words)
        );
    }
    Ok(if found.servers.is_empty() {
        ExitCode::from(crate::cli::EXIT_NO)
    } else {
        ExitCode::SUCCESS
    })
}

/// `text` from a registry with its control characters (escape sequences, line breaks) left
/// out: a description must not move the cursor or forge lines on the user's terminal.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// Asks for a required input on the terminal; `None` without one.
fn ask(question: &Question) -> Option<String> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    let theme = dialoguer::theme::ColorfulTheme::default();
    let prompt = match &question.description {
        Some(d) => format!("{} ({d})", question.name),
        None => question.name.clone(),
    };
    if !question.choices.is_empty() {
        let picked = dialoguer::Select::with_theme(&theme)
            .with_prompt(prompt)
            .items(&question.choices)
            .default(0)
            .interact_on_opt(&dialoguer::console::Term::stderr())
            .ok()??;
        return question.choices.get(picked).cloned();
    }
    let mut input = dialoguer::Input::<String>::with_theme(&theme).with_prompt(prompt);
    if let Some(default) = &question.default {
        input = input.default(default.clone());
    }
    input.allow_empty(true).interact_text().ok()
}

/// `mcpx add NAME`.
pub(crate) fn add(config: &Path, registry: &str, asked: &Asked<'_>) -> anyhow::Result<ExitCode> {
    let registry = Registry::new(registry)?;
    let server = runtime()?.block_on(registry.latest(asked.name))?;
    let prefer = if asked.remote {
        Prefer::Remote
    } else {
        Prefer::Package
    };
    let name = asked
        .as_name
        .map_or_else(|| mcpregistry::default_name(&server), str::to_owned);
    let naming = mcpregistry::Naming {
        taken: mcpclients::config_variables(config, &name)?,
        name: Some(name),
    };
    let entry = mcpregistry::to_entry(&server, prefer, &naming, &mut ask)?;
    let servers = [(entry.name.clone(), entry.entry.clone())];
    let (outcomes, _) = mcpclients::add_servers(config, &servers, "registry", true, asked.dry_run)?;
    let mut out = format!(
        "{} {} from {}: {}\n",
        server.name(),
        printable(server.version()),
        registry.base(),
        printable(&entry.source)
    );
    if let Some(command) = entry.entry.get("command").and_then(|c| c.as_str()) {
        // What will run on this machine, before it ever does (arguments masked where secret).
        let shown = mcpclients::masked(&entry.entry);
        let args: Vec<&str> = shown["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str())
            .collect();
        let _ = writeln!(
            out,
            "runs: {} {}",
            printable(command),
            printable(&args.join(" "))
        );
    }
    let verb = if asked.dry_run { "would add" } else { "added" };
    match outcomes.first() {
        Some(Outcome::Same { to, .. }) => {
            let _ = writeln!(out, "already in {} as {to}", config.display());
        }
        Some(Outcome::Renamed { to, .. }) => {
            let _ = writeln!(
                out,
                "{verb} as {to} to {} (it has another server called {})",
                config.display(),
                entry.name
            );
        }
        _ => {
            let _ = writeln!(out, "{verb} {} to {}", entry.name, config.display());
        }
    }
    if asked.dry_run {
        let shown = serde_json::to_string(&mcpclients::masked(&entry.entry))?;
        let _ = writeln!(out, "  {shown}");
    }
    for need in &entry.needs {
        let _ = writeln!(
            out,
            "set {}{} in the environment mcpx runs in{}",
            need.variable,
            if need.secret { " (a secret)" } else { "" },
            need.description
                .as_deref()
                .map(|d| format!(": {}", printable(d)))
                .unwrap_or_default()
        );
    }
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}
