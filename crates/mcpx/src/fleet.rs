//! Starting every chosen server at once for `servers`, `tools` and `lint`: at most
//! [`MAX_CONCURRENT_STARTS`] at a time, each bounded by its own `startupTimeout`, so the whole
//! takes about as long as the slowest server instead of the sum. One that fails never stops the
//! others: each outcome is kept, in the config's order, for the command to report.
//!
//! A server that ran out of its `startupTimeout` while others were starting is started once more
//! when all the others are done (with a `startupTimeout` of its own again), as `mcpx serve`
//! restarts a server that failed to start: on a loaded machine the first start of two dozen
//! servers shares the CPU among them, and a slow one that misses its time in the crowd starts
//! when it has the machine less the crowd. A server that never answers is reported after the
//! second time runs out.
//!
//! On a terminal (standard error), a line per server shows it starting, then how it went; the
//! lines are cleared once all are done, before the report is printed (a log line meanwhile is
//! written above them, [`crate::log::status_lines`]). Without a terminal nothing is drawn.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcpclient::Client;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::connect::{connect, Elicit, StartFailure};
use mcpx::config::Server;

/// Most servers started at the same time (each is a process, often a Node or Python runtime).
pub(crate) const MAX_CONCURRENT_STARTS: usize = 8;

/// How often a terminal's status lines are redrawn while servers start.
const STATUS_TICK: Duration = Duration::from_millis(120);

/// One server's outcome.
pub(crate) struct Started<'c> {
    pub(crate) server: &'c Server,
    pub(crate) outcome: Result<Client, StartFailure>,
}

/// Starts `servers` concurrently and waits for all, those that ran out of time once more at
/// the end; the outcomes are in the order given.
pub(crate) async fn start_all<'c>(servers: &[&'c Server]) -> Vec<Started<'c>> {
    let status = Status::new(servers);
    let mut outcomes = start_each(servers, &status, (0..servers.len()).collect()).await;
    let late: Vec<usize> = (0..servers.len())
        .filter(|i| matches!(&outcomes[*i], Some(Err(failure)) if failure.late))
        .collect();
    if !late.is_empty() {
        for (index, again) in start_each(servers, &status, late)
            .await
            .into_iter()
            .enumerate()
        {
            if again.is_some() {
                outcomes[index] = again;
            }
        }
    }
    status.clear();
    servers
        .iter()
        .zip(outcomes)
        .map(|(server, outcome)| Started {
            server,
            outcome: outcome.unwrap_or_else(|| {
                Err(StartFailure {
                    error: anyhow::anyhow!("server '{}': its start failed in mcpx", server.name),
                    stderr: Vec::new(),
                    late: false,
                })
            }),
        })
        .collect()
}

/// Starts the servers at `chosen` (indexes into `servers`) concurrently: their outcomes, by
/// index into `servers` (`None` for the others, and for a start that panicked).
async fn start_each(
    servers: &[&Server],
    status: &Status,
    chosen: Vec<usize>,
) -> Vec<Option<Result<Client, StartFailure>>> {
    let permits = Arc::new(Semaphore::new(MAX_CONCURRENT_STARTS));
    let mut tasks = JoinSet::new();
    for index in chosen {
        let server = servers[index].clone();
        let permits = permits.clone();
        let line = status.line(index);
        tasks.spawn(async move {
            // The semaphore is never closed, so a permit always comes.
            let _permit = permits.acquire_owned().await;
            if let Some(line) = &line {
                line.reset();
                line.set_message("starting");
            }
            let began = Instant::now();
            let outcome = connect(&server, Elicit::Decline).await;
            if let Some(line) = &line {
                line.finish_with_message(match &outcome {
                    Ok(client) => format!(
                        "ok, {} ({}), {} tools ({:.1} s)",
                        client.protocol_version(),
                        client.discovery().why.describe(),
                        client.tools().len(),
                        began.elapsed().as_secs_f64()
                    ),
                    Err(failure) if failure.late => "out of time: once more at the end".to_owned(),
                    Err(_) => "failed".to_owned(),
                });
            }
            (index, outcome)
        });
    }
    let mut outcomes: Vec<Option<Result<Client, StartFailure>>> =
        servers.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, outcome)) => outcomes[index] = Some(outcome),
            // A start that panicked: its slot says so.
            Err(error) => tracing::debug!(%error, "a server's start did not finish"),
        }
    }
    outcomes
}

/// The live status lines, only on a terminal.
struct Status {
    lines: Option<(MultiProgress, Vec<ProgressBar>)>,
}

impl Status {
    fn new(servers: &[&Server]) -> Status {
        if !std::io::stderr().is_terminal() {
            return Status { lines: None };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let width = servers.iter().map(|s| s.name.chars().count()).max();
        let template = format!("{{spinner}} {{prefix:{}}}  {{msg}}", width.unwrap_or(0));
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let lines = servers
            .iter()
            .map(|server| {
                let line = multi.add(ProgressBar::new_spinner());
                line.set_style(style.clone());
                line.set_prefix(server.name.clone());
                line.set_message("waiting");
                line.enable_steady_tick(STATUS_TICK);
                line
            })
            .collect();
        crate::log::status_lines(Some(multi.clone()));
        Status {
            lines: Some((multi, lines)),
        }
    }

    fn line(&self, index: usize) -> Option<ProgressBar> {
        self.lines
            .as_ref()
            .and_then(|(_, lines)| lines.get(index).cloned())
    }

    fn clear(&self) {
        if let Some((multi, _)) = &self.lines {
            crate::log::status_lines(None);
            // Nothing to do when the terminal went away.
            let _ = multi.clear();
        }
    }
}
