//! `mcpx pin [SERVER] [--check | --approve SERVER[/TOOL]]`: write each tool's definition to
//! the lock file beside the config, compare what the servers list now against it, or approve
//! one server's (or tool's) changes after showing them.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mcpx::config::Config;
use serde_json::Value;
use toolpin::{Change, Pins, LOCK_FILE};

use super::mcp::{list_chosen, runtime, Listed};
use crate::cli::verdict;
use crate::output::print;

/// What `mcpx pin` is asked to do.
#[derive(Debug)]
pub(crate) enum Pin<'a> {
    /// Pin the tools of every server, or of this one.
    Write(Option<&'a str>),
    /// Print what changed since pinned (exit 1 when anything did).
    Check(Option<&'a str>),
    /// Show, then record, what changed in this server (or in this one of its tools).
    Approve {
        server: &'a str,
        tool: Option<&'a str>,
    },
}

impl<'a> Pin<'a> {
    /// The request from the command line: `--approve` takes `SERVER` or `SERVER/TOOL` (a tool's
    /// name may itself hold `/`: only the first one splits).
    pub(crate) fn from_args(
        server: Option<&'a str>,
        check: bool,
        approve: Option<&'a str>,
    ) -> Pin<'a> {
        match approve {
            Some(target) => match target.split_once('/') {
                Some((server, tool)) => Pin::Approve {
                    server,
                    tool: Some(tool),
                },
                None => Pin::Approve {
                    server: target,
                    tool: None,
                },
            },
            None if check => Pin::Check(server),
            None => Pin::Write(server),
        }
    }
}

fn read_lock(path: &Path) -> anyhow::Result<Option<Pins>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(
            toolpin::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// One tool's classified changes on a line, and for a changed description the text before and
/// after (what a "rug pull" rewrites).
fn describe(
    out: &mut String,
    server: &str,
    tool: &str,
    found: &[Change],
    was: Option<&Value>,
    now: Option<&Value>,
) {
    let classes: Vec<String> = found.iter().map(ToString::to_string).collect();
    out.push_str(&format!("{server}: {tool}: {}\n", classes.join("; ")));
    if found.contains(&Change::Description) {
        let text = |t: Option<&Value>| {
            t.and_then(|t| t.get("description"))
                .map_or_else(|| "(none)".to_owned(), ToString::to_string)
        };
        out.push_str(&format!("  description was: {}\n", text(was)));
        out.push_str(&format!("  description now: {}\n", text(now)));
    }
}

/// Runs `mcpx pin` as asked: see [`Pin`].
pub(crate) fn run(config: &Config, asked: Pin<'_>) -> anyhow::Result<ExitCode> {
    let path = config.path.with_file_name(LOCK_FILE);
    let existing = read_lock(&path)?;
    let server = match asked {
        Pin::Write(server) | Pin::Check(server) => server,
        Pin::Approve { server, .. } => Some(server),
    };
    if !matches!(asked, Pin::Write(_)) && existing.is_none() {
        anyhow::bail!("{} does not exist: run `mcpx pin` first", path.display());
    }
    let rt = runtime()?;
    // Pinning compares what the servers list now: never the cache.
    let (started, failed) = list_chosen(&rt, config, server, true)?;
    let mut pins: Pins = existing.unwrap_or_default();
    let mut out = String::new();
    let mut changed = 0;
    let mut tools = 0;
    for Listed {
        server,
        tools: offered,
        ..
    } in &started
    {
        let listed: Vec<Value> = offered.iter().map(|t| t.raw().clone()).collect();
        let by_name = |name: &str| {
            listed
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        };
        match asked {
            Pin::Check(_) => {
                let empty = Default::default();
                let pinned = pins.get(&server.name).unwrap_or(&empty);
                for (tool, found) in toolpin::changes(pinned, &listed) {
                    changed += 1;
                    describe(
                        &mut out,
                        &server.name,
                        &tool,
                        &found,
                        pinned.get(&tool),
                        by_name(&tool),
                    );
                }
            }
            Pin::Approve { tool, .. } => {
                let before = pins.get(&server.name).cloned().unwrap_or_default();
                for (name, found) in toolpin::approve(&mut pins, &server.name, tool, &listed) {
                    changed += 1;
                    describe(
                        &mut out,
                        &server.name,
                        &name,
                        &found,
                        before.get(&name),
                        by_name(&name),
                    );
                }
            }
            Pin::Write(_) => {
                tools += listed.len();
                pins.insert(
                    server.name.clone(),
                    listed.iter().filter_map(toolpin::pin_of).collect(),
                );
            }
        }
    }
    match asked {
        Pin::Check(_) => {
            out.push_str(&format!(
                "{changed} tool{} changed since pinned\n",
                plural(changed)
            ));
            print(&out)?;
            return Ok(verdict(failed, changed > 0));
        }
        Pin::Approve { server, tool } if changed == 0 => {
            let what = tool.map_or_else(|| server.to_owned(), |t| format!("{server}/{t}"));
            out.push_str(&format!(
                "{what}: nothing changed since pinned; nothing to approve\n"
            ));
        }
        Pin::Approve { .. } => out.push_str(&format!(
            "approved {changed} changed tool{} in {}\n",
            plural(changed),
            path.display()
        )),
        Pin::Write(_) => out.push_str(&format!(
            "pinned {tools} tool{} of {} server{} in {}\n",
            plural(tools),
            started.len(),
            plural(started.len()),
            path.display()
        )),
    }
    if changed > 0 || matches!(asked, Pin::Write(_)) {
        std::fs::write(&path, toolpin::render(&pins))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    print(&out)?;
    Ok(verdict(failed, false))
}
