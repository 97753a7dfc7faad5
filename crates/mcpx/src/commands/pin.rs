//! `mcpx pin [SERVER] [--check]`: write each tool's definition to the lock file beside the
//! config, or compare what the servers list now against it.

use std::process::ExitCode;

use anyhow::Context;
use mcpx::config::Config;
use mcpx::pin::{self, Pins, LOCK_FILE};

use super::mcp::{runtime, start_chosen};
use crate::cli::verdict;
use crate::output::print;

/// Pins the chosen servers' tools, or with `check` prints what changed since (exit 1 if any).
pub(crate) fn run(config: &Config, server: Option<&str>, check: bool) -> anyhow::Result<ExitCode> {
    let path = config.path.with_file_name(LOCK_FILE);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => {
            Some(pin::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if check && existing.is_none() {
        anyhow::bail!("{} does not exist: run `mcpx pin` first", path.display());
    }
    let rt = runtime()?;
    let (started, failed) = start_chosen(&rt, config, server)?;
    let mut pins: Pins = existing.clone().unwrap_or_default();
    let mut out = String::new();
    let mut changed = 0;
    let mut tools = 0;
    for (server, client) in &started {
        let listed: Vec<serde_json::Value> =
            client.tools().iter().map(|t| t.raw().clone()).collect();
        if check {
            let empty = Default::default();
            let pinned = pins.get(&server.name).unwrap_or(&empty);
            for (tool, found) in pin::changes(pinned, &listed) {
                changed += 1;
                let found: Vec<String> = found.iter().map(ToString::to_string).collect();
                out.push_str(&format!("{}: {tool}: {}\n", server.name, found.join("; ")));
            }
        } else {
            tools += listed.len();
            pins.insert(
                server.name.clone(),
                listed.iter().filter_map(pin::pin_of).collect(),
            );
        }
    }
    if check {
        out.push_str(&format!(
            "{changed} tool{} changed since pinned\n",
            if changed == 1 { "" } else { "s" }
        ));
    } else {
        std::fs::write(&path, pin::render(&pins))
            .with_context(|| format!("cannot write {}", path.display()))?;
        out.push_str(&format!(
            "pinned {tools} tool{} of {} server{} in {}\n",
            if tools == 1 { "" } else { "s" },
            started.len(),
            if started.len() == 1 { "" } else { "s" },
            path.display()
        ));
    }
    print(&out)?;
    Ok(verdict(failed, changed > 0))
}
