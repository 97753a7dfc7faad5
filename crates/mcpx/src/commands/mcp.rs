//! `mcpx servers`, `mcpx tools`, `mcpx call` and `mcpx lint`: the configured servers, their
//! tools, calls with enforced arguments, and the policy's verdict on every tool schema.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anstream::eprintln;
use anyhow::Context;
use base64::Engine;
use mcpclient::{CallOptions, Client, ClientError, RpcError, Tool};
use mcpgateway::DownstreamDialect;
use serde_json::{json, Value};

use crate::cli::{verdict, EXIT_NO, EXIT_TROUBLE};
use crate::connect::{connect, tool, Elicit};
use crate::fleet::{start_all, Started};
use crate::input::call_arguments;
use crate::output::{print, style};
use mcpx::config::{Config, Server};
use mcpx::shape::Shape;

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn one_line(text: Option<&str>) -> String {
    text.unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// `mcpx servers`: each server, whether it starts, its version and tools.
pub(crate) fn servers(config: &Config, json_out: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let chosen: Vec<&Server> = config.servers.iter().collect();
    let started = rt.block_on(start_all(&chosen));
    let mut report = Vec::new();
    for Started { server, outcome } in &started {
        let row = match outcome {
            Ok(client) => {
                let tools = client.tools();
                let failing = tools
                    .iter()
                    .filter(|t| t.input_error().is_some() || t.output_error().is_some())
                    .count();
                let found = client.discovery();
                json!({"name": server.name, "transport": server.transport.kind(), "started": true,
                    "protocolVersion": client.protocol_version(), "era": found.era.name(),
                    "eraChosen": found.why.name(), "eraEvidence": found.evidence,
                    "tools": tools.len(), "failingSchemas": failing})
            }
            Err(failure) => {
                json!({"name": server.name, "transport": server.transport.kind(), "started": false,
                "needsLogin": crate::login::needs_login(&server.name),
                "error": format!("{:#}", failure.error), "stderr": failure.stderr})
            }
        };
        report.push(row);
    }
    let failed = started.iter().any(|s| s.outcome.is_err());
    if json_out {
        let text = format!("{}\n", serde_json::to_string_pretty(&report)?);
        print(&crate::log::shown(&text))?;
    } else {
        let mut out = String::new();
        for (row, Started { outcome, .. }) in report.iter().zip(&started) {
            let name = row["name"].as_str().unwrap_or_default();
            let kind = row["transport"].as_str().unwrap_or_default();
            match outcome {
                Ok(client) => out.push_str(&format!(
                    "{name}\t{kind}\tok\t{} ({})\t{} tools\t{} failing the policy\n",
                    row["protocolVersion"].as_str().unwrap_or_default(),
                    client.discovery().why.describe(),
                    row["tools"],
                    row["failingSchemas"]
                )),
                Err(failure) => {
                    let state = if row["needsLogin"] == true {
                        "needs login"
                    } else {
                        "failed"
                    };
                    out.push_str(&format!("{name}\t{kind}\t{state}\t{:#}\n", failure.error));
                    for line in &failure.stderr {
                        out.push_str(&format!("  stderr: {line}\n"));
                    }
                }
            }
        }
        print(&crate::log::shown(&out))?;
    }
    Ok(if failed {
        ExitCode::from(EXIT_TROUBLE)
    } else {
        ExitCode::SUCCESS
    })
}

/// A server's tools, as it listed them now or as the cache kept them.
pub(crate) struct Listed<'c> {
    pub(crate) server: &'c Server,
    pub(crate) tools: Arc<Vec<Tool>>,
    /// How long ago the list was taken, when it came from the cache.
    pub(crate) cached: Option<Duration>,
    /// The running server the list came from (kept until the command is done).
    _client: Option<Client>,
}

/// The tools of the servers a command names (one, or all of the config): from the cache when
/// it holds a fresh list (see [`servercache::TOOLS_FRESH_FOR`]) and `refresh` is not asked,
/// else from the server, started (and its list cached). Servers that failed to start are
/// reported on stderr, and so is the use of the cache and its age; with one server named, its
/// failure is the command's error.
pub(crate) fn list_chosen<'c>(
    rt: &tokio::runtime::Runtime,
    config: &'c Config,
    named: Option<&str>,
    refresh: bool,
) -> anyhow::Result<(Vec<Listed<'c>>, bool)> {
    let chosen: Vec<&Server> = match named {
        Some(name) => vec![config.server(name)?],
        None => config.servers.iter().collect(),
    };
    let cache = crate::remembered::tool_cache().filter(|_| !refresh);
    let mut cached: Vec<Option<servercache::CachedList>> = chosen
        .iter()
        .map(|server| {
            let cache = cache.as_ref()?;
            let key = servercache::ToolCache::key(&server.entry, &server.transport);
            // A list that cannot be read is asked for again.
            cache.load(&key).ok().flatten().filter(|l| l.is_fresh())
        })
        .collect();
    let to_start: Vec<&Server> = chosen
        .iter()
        .zip(&cached)
        .filter(|(_, list)| list.is_none())
        .map(|(server, _)| *server)
        .collect();
    let mut started = rt.block_on(start_all(&to_start)).into_iter();
    let mut listed = Vec::new();
    let mut failed = false;
    for (server, list) in chosen.iter().zip(cached.iter_mut()) {
        if let Some(list) = list.take() {
            let age = list.age();
            let tools = list.tools.into_iter().filter_map(Tool::from_listed);
            listed.push(Listed {
                server,
                tools: Arc::new(tools.collect()),
                cached: Some(age),
                _client: None,
            });
            continue;
        }
        let Some(Started { outcome, .. }) = started.next() else {
            continue;
        };
        match outcome {
            Ok(client) => listed.push(Listed {
                server,
                tools: client.tools(),
                cached: None,
                _client: Some(client),
            }),
            Err(failure) if named.is_some() => return Err(failure.into()),
            Err(failure) => {
                failed = true;
                let text = failure.to_string();
                eprintln!("{}: {}", style::error("mcpx"), crate::log::shown(&text));
            }
        }
    }
    say_cached(&listed);
    Ok((listed, failed))
}

/// One line on stderr when lists came from the cache: how many, and how old.
fn say_cached(listed: &[Listed<'_>]) {
    let ages: Vec<Duration> = listed.iter().filter_map(|l| l.cached).collect();
    let (Some(youngest), Some(oldest)) = (ages.iter().min(), ages.iter().max()) else {
        return;
    };
    let when = if youngest == oldest {
        crate::remembered::ago(*oldest)
    } else {
        format!(
            "{} to {}",
            crate::remembered::ago(*youngest),
            crate::remembered::ago(*oldest)
        )
    };
    let servers = match ages.len() {
        1 => "1 server".to_owned(),
        n => format!("{n} servers"),
    };
    eprintln!(
        "mcpx: the tools of {servers} are from the cache (listed {when} ago; --refresh asks the servers)"
    );
}

/// How `mcpx tools` prints: lines or JSON, schemas in which dialect (JSON only); and whether
/// the servers are asked even when the cache holds their lists.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listing {
    pub(crate) json: bool,
    pub(crate) dialect: DownstreamDialect,
    pub(crate) refresh: bool,
}

/// A tool object as `dialect` presents it.
fn presented(tool: &Tool, dialect: DownstreamDialect) -> Value {
    match dialect {
        DownstreamDialect::Draft202012 => tool.upgraded().tool.clone(),
        DownstreamDialect::Original => tool.raw().clone(),
    }
}

/// `mcpx tools [SERVER [TOOL]]`; without SERVER, exit 2 when a server failed to start (after
/// listing the others).
pub(crate) fn tools(
    config: &Config,
    server: Option<&str>,
    tool_name: Option<&str>,
    listing: Listing,
) -> anyhow::Result<ExitCode> {
    let json_out = listing.json;
    let rt = runtime()?;
    let (listed, failed) = list_chosen(&rt, config, server, listing.refresh)?;
    let mut out = String::new();
    let mut raw = Vec::new();
    for Listed { server, tools, .. } in &listed {
        if let Some(name) = tool_name {
            let tool = tool(tools, &server.name, name)?;
            if json_out {
                raw.push(presented(tool, listing.dialect));
            } else {
                out.push_str(&describe(tool));
            }
            continue;
        }
        for tool in tools.iter() {
            if json_out {
                raw.push(presented(tool, listing.dialect));
            } else {
                let mark = if tool.input_error().is_some() {
                    "  (inputSchema fails the policy: calls refused)"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "{}\t{}\t{}{mark}\n",
                    server.name,
                    tool.name(),
                    one_line(tool.raw()["description"].as_str())
                ));
            }
        }
    }
    if json_out {
        out = format!("{}\n", serde_json::to_string_pretty(&raw)?);
    }
    print(&out)?;
    Ok(if failed {
        ExitCode::from(EXIT_TROUBLE)
    } else {
        ExitCode::SUCCESS
    })
}

/// `mcpx tools [SERVER] --search QUERY`; exit 1 when no tool matches, 2 when a server failed to
/// start (after ranking the others').
pub(crate) fn search(
    config: &Config,
    server: Option<&str>,
    asked: &super::search::Asked<'_>,
) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let (listed, failed) = list_chosen(&rt, config, server, asked.refresh)?;
    let hits = super::search::search(&listed, asked.query, asked.limit);
    if asked.json {
        let value = super::search::json(&hits, &listed);
        print(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
    } else {
        print(&super::search::lines(&hits))?;
    }
    Ok(verdict(failed, hits.is_empty()))
}

/// One tool's arguments as a table, and its output schema.
fn describe(tool: &Tool) -> String {
    let raw = tool.raw();
    let mut out = format!(
        "{}: {}\n\n",
        tool.name(),
        one_line(raw["description"].as_str())
    );
    let input = &raw["inputSchema"];
    let required: Vec<&str> = input["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut rows = vec![[
        "ARGUMENT".to_owned(),
        "TYPE".to_owned(),
        "REQUIRED".to_owned(),
        "DEFAULT".to_owned(),
        "DESCRIPTION".to_owned(),
    ]];
    if let Some(properties) = input["properties"].as_object() {
        for (name, property) in properties {
            let kind = Shape::of(input, Some(property)).label(input);
            let default = property
                .get("default")
                .map(Value::to_string)
                .unwrap_or_default();
            let yes = if required.contains(&name.as_str()) {
                "yes"
            } else {
                "no"
            };
            rows.push([
                name.clone(),
                kind,
                yes.to_owned(),
                default,
                one_line(property["description"].as_str()),
            ]);
        }
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    if let Some(error) = tool.input_error() {
        out.push_str(&format!(
            "\ninputSchema fails the policy (calls are refused): {error}\n"
        ));
    }
    if let Some(output) = raw.get("outputSchema") {
        out.push_str(&format!(
            "\noutputSchema:\n{}\n",
            serde_json::to_string_pretty(output).unwrap_or_default()
        ));
    }
    out
}

/// `mcpx call SERVER TOOL [ARGS]`.
pub(crate) fn call(
    config: &Config,
    server: &str,
    tool_name: &str,
    words: &[String],
    json_out: bool,
    elicit: Elicit,
    save_dir: &Path,
) -> anyhow::Result<ExitCode> {
    let server = config.server(server)?;
    let rt = runtime()?;
    rt.block_on(async {
        let client = connect(server, elicit).await?;
        let tools = client.tools();
        let tool = tool(&tools, &server.name, tool_name)?;
        let args = call_arguments(words, &tool.raw()["inputSchema"])?;
        let (options, progress) = CallOptions::with_progress();
        let bar = std::io::stderr()
            .is_terminal()
            .then(|| tokio::spawn(show_progress(progress)));
        let outcome = client.call_tool_with(tool_name, args, options).await;
        if let Some(bar) = bar {
            bar.abort();
            let _ = bar.await;
        }
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(
                err @ (ClientError::InvalidArguments { .. }
                | ClientError::UnusableInputSchema { .. }),
            ) => {
                let (lines, hints) = match &err {
                    ClientError::InvalidArguments {
                        violations, hints, ..
                    } => (violations.clone(), hints.clone()),
                    ClientError::UnusableInputSchema { error, .. } => {
                        (vec![error.to_string()], vec![None])
                    }
                    _ => (Vec::new(), Vec::new()),
                };
                eprintln!(
                    "mcpx: arguments rejected before sending ({} problem{}):",
                    lines.len(),
                    if lines.len() == 1 { "" } else { "s" }
                );
                for line in schemaval::with_hints(&lines, &hints).lines() {
                    eprintln!("  {line}");
                }
                return Ok(ExitCode::from(EXIT_NO));
            }
            Err(ClientError::Rpc(RpcError::Remote(error))) => {
                let text = error.to_string();
                eprintln!(
                    "{}: the server answered {}",
                    style::error("mcpx"),
                    crate::log::shown(&text)
                );
                return Ok(ExitCode::from(EXIT_NO));
            }
            Err(err) => return Err(err.into()),
        };
        for warning in &outcome.warnings {
            eprintln!(
                "mcpx: {}: {}: {}",
                style::warning("warning"),
                warning.tool,
                warning.message
            );
            for line in &warning.lines {
                eprintln!("  {line}");
            }
        }
        let result = outcome.response.result()?;
        if json_out {
            print(&format!("{}\n", outcome.response.result_text()))?;
        } else {
            print(&render(&result, tool_name, save_dir)?)?;
        }
        Ok(if result["isError"] == true {
            ExitCode::from(EXIT_NO)
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// Shows the call's progress as a bar on the terminal until the task is stopped.
async fn show_progress(mut progress: tokio::sync::mpsc::Receiver<Value>) {
    let bar = indicatif::ProgressBar::hidden();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    while let Some(step) = progress.recv().await {
        if let Some(total) = step["total"].as_f64() {
            bar.set_length(total as u64);
        }
        bar.set_position(step["progress"].as_f64().unwrap_or(0.0) as u64);
        if let Some(message) = step["message"].as_str() {
            bar.set_message(message.to_owned());
        }
    }
    bar.finish_and_clear();
}

/// A result for people: text plainly, structuredContent pretty-printed, images and audio saved
/// to files in `save_dir` with their paths printed, other content named.
fn render(result: &Value, tool: &str, save_dir: &Path) -> anyhow::Result<String> {
    let mut out = String::new();
    for (index, block) in result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        match block["type"].as_str() {
            Some("text") => {
                out.push_str(block["text"].as_str().unwrap_or_default());
                out.push('\n');
            }
            Some(kind @ ("image" | "audio")) => {
                let mime = block["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(block["data"].as_str().unwrap_or_default())
                    .with_context(|| format!("{kind} content {index} is not base64"))?;
                let path = save(save_dir, tool, index, mime, &bytes)?;
                out.push_str(&format!(
                    "[{kind} {mime}, {} bytes, saved to {}]\n",
                    bytes.len(),
                    path.display()
                ));
            }
            Some(kind) => out.push_str(&format!(
                "[{kind} {}]\n",
                block["uri"]
                    .as_str()
                    .or(block["resource"]["uri"].as_str())
                    .unwrap_or_default()
            )),
            None => {}
        }
    }
    if let Some(structured) = result.get("structuredContent") {
        out.push_str(&format!(
            "{}\n",
            serde_json::to_string_pretty(structured).unwrap_or_default()
        ));
    }
    Ok(out)
}

/// Files tried for one saved content before giving up (`tool-0.png`, `tool-0-1.png`, …).
const MAX_SAVE_ATTEMPTS: usize = 1_000;

/// Writes `bytes` to a new file named for the tool and the content's place; never overwrites.
fn save(dir: &Path, tool: &str, index: usize, mime: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let extension = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        _ => "bin",
    };
    let stem: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    for attempt in 0..MAX_SAVE_ATTEMPTS {
        let suffix = if attempt == 0 {
            String::new()
        } else {
            format!("-{attempt}")
        };
        let path = dir.join(format!("{stem}-{index}{suffix}.{extension}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(bytes)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    anyhow::bail!(
        "{MAX_SAVE_ATTEMPTS} files named {stem}-{index}* exist already in {}",
        dir.display()
    )
}

/// `mcpx lint [SERVER]`: every tool schema compiled under the policy; exit 1 on any problem,
/// 2 when a server failed to start (after linting the others). Schemas with no exact 2020-12
/// form are listed too, as notes that do not change the exit code.
pub(crate) fn lint(
    config: &Config,
    server: Option<&str>,
    targets: &[toolcompat::Target],
    refresh: bool,
) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let (listed, failed) = list_chosen(&rt, config, server, refresh)?;
    let mut out = String::new();
    let mut problems = 0;
    let mut notes = 0;
    let mut strict_only = 0;
    for Listed { server, tools, .. } in &listed {
        for tool in tools.iter() {
            let exposed = mcpgateway::exposed_name(&server.prefix, tool.name());
            let schema = tool
                .raw()
                .get("inputSchema")
                .unwrap_or(&serde_json::Value::Null);
            for target in targets {
                for finding in toolcompat::check(*target, &exposed, schema) {
                    match finding.effect {
                        toolcompat::Effect::Rejected => problems += 1,
                        _ => strict_only += 1,
                    }
                    out.push_str(&format!("{}: {}: {finding}\n", server.name, tool.name()));
                }
            }
            for (which, error) in [
                ("inputSchema", tool.input_error()),
                ("outputSchema", tool.output_error()),
            ] {
                if let Some(error) = error {
                    problems += 1;
                    out.push_str(&format!(
                        "{}: {}: {which}: {} ({})\n",
                        server.name,
                        tool.name(),
                        error,
                        error.kind()
                    ));
                }
            }
            for (which, reason) in &tool.upgraded().not_upgradable {
                notes += 1;
                out.push_str(&format!(
                    "{}: {}: {which}: {reason} (presented as listed with \"downstreamDialect\": \"2020-12\"; calls are checked either way)\n",
                    server.name,
                    tool.name(),
                ));
            }
        }
    }
    out.push_str(&format!(
        "{problems} problem{}\n",
        if problems == 1 { "" } else { "s" }
    ));
    if notes > 0 {
        out.push_str(&format!(
            "{notes} schema{} not upgradable to 2020-12 (not a problem: mcpx validates them as listed)\n",
            if notes == 1 { "" } else { "s" }
        ));
    }
    if strict_only > 0 {
        out.push_str(&format!(
            "{strict_only} finding{} only for strict tools (not a problem unless the client sends strict: true)\n",
            if strict_only == 1 { "" } else { "s" }
        ));
    }
    print(&out)?;
    Ok(verdict(failed, problems > 0))
}
