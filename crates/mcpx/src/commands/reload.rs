//! Config reload for `mcpx serve`: on SIGHUP (Unix), and with `--watch` when the config file
//! changes, the file is read and checked again; its servers go to [`Gateway::reload`] (added,
//! removed and changed ones started, stopped and restarted; the others and every session
//! untouched). Windows has no SIGHUP: `--watch` is the reload there.
//!
//! A file with a mistake is refused with the message `mcpx serve` gives at start (the file, the
//! JSON path, the problem) and the config in force stays. The `gateway` section is what the
//! fronts were built with: a change there is logged as needing a restart. The file is polled
//! (its size, time and identity every [`WATCH_INTERVAL`]: its inode, on Windows its volume and
//! file index) rather than watched through inotify: polling sees an editor's rename-over and a
//! Kubernetes ConfigMap's symlink swap alike, costs one `stat` a second, and needs no
//! dependency.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mcpgateway::{Gateway, UpstreamConfig};
use mcpx::config::{Config, GatewaySection, Server};

use crate::platform::{self, FileId};

/// How often `--watch` looks at the config file.
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_secs(1);

/// How long after seeing the file change `--watch` reads it: an editor or a deploy tool writing
/// it in steps has finished by then (a half-written file is refused, and its last write seen as
/// a change again).
pub(crate) const WATCH_SETTLE: Duration = Duration::from_millis(200);

/// The config in force: its servers as the gateway took them.
pub(crate) struct Applied {
    servers: Vec<Server>,
    upstreams: Vec<UpstreamConfig>,
    /// The `gateway` section the gateway started with (never reloaded).
    started: GatewaySection,
}

impl Applied {
    /// The servers of `config` as the gateway takes them (each OAuth client with its stored
    /// tokens, refreshed, never a login).
    pub(crate) fn new(config: &Config) -> anyhow::Result<Applied> {
        Ok(Applied {
            servers: config.servers.clone(),
            upstreams: fresh(&config.servers, &[])?,
            started: config.gateway.clone(),
        })
    }

    /// What the gateway is given at start.
    pub(crate) fn upstreams(&self) -> Vec<UpstreamConfig> {
        self.upstreams.clone()
    }

    /// The config after a reload to `config`: an unchanged server keeps its entry as it is
    /// (its OAuth client too, so that it reads as unchanged).
    fn next(&self, config: &Config) -> anyhow::Result<Applied> {
        let kept: Vec<(&Server, &UpstreamConfig)> =
            self.servers.iter().zip(&self.upstreams).collect();
        Ok(Applied {
            servers: config.servers.clone(),
            upstreams: fresh(&config.servers, &kept)?,
            started: self.started.clone(),
        })
    }
}

/// `servers` as the gateway takes them, reusing the entry of a server `kept` unchanged.
fn fresh(
    servers: &[Server],
    kept: &[(&Server, &UpstreamConfig)],
) -> anyhow::Result<Vec<UpstreamConfig>> {
    servers
        .iter()
        .map(|s| {
            let same = kept.iter().find(|(old, _)| {
                old.name == s.name && old.upstream() == s.upstream() && old.auth == s.auth
            });
            if let Some((_, upstream)) = same {
                return Ok((*upstream).clone());
            }
            Ok(UpstreamConfig {
                transport: crate::login::upstream_reach(s)?,
                ..s.upstream()
            })
        })
        .collect()
}

/// Reloads the config at `path` on each SIGHUP and, when `watch`, each change of the file,
/// until the gateway stops (the caller drops this future). The signal is listened for and the
/// file's stamp taken when this is called, before the caller serves anyone: a change (or a
/// SIGHUP) that comes once clients can connect is never missed by a task not yet started.
pub(crate) fn reloads(
    gateway: Gateway,
    path: PathBuf,
    mut applied: Applied,
    watch: bool,
    redactor: mcpgateway::Redactor,
) -> impl std::future::Future<Output = ()> {
    let mut hangups = platform::Hangups::listen();
    let mut seen = stamp(&path);
    async move {
        let mut poll = tokio::time::interval(WATCH_INTERVAL);
        loop {
            tokio::select! {
                name = hangups.next() => tracing::info!("{name}: reloading the config"),
                _ = poll.tick(), if watch => {
                    if stamp(&path) == seen {
                        continue;
                    }
                    tokio::time::sleep(WATCH_SETTLE).await;
                    seen = stamp(&path);
                    tracing::info!("the config file changed: reloading it");
                }
            }
            applied = reload(&gateway, &path, applied, &redactor);
        }
    }
}

/// What tells that the file changed: its size, modification time and identity (a new file
/// renamed over it, a symlink pointed elsewhere); `None` while it cannot be read.
fn stamp(path: &Path) -> Option<(u64, SystemTime, FileId)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((
        metadata.len(),
        metadata.modified().ok()?,
        platform::file_id(path)?,
    ))
}

/// Reads and applies the config at `path`; on a mistake, logs it and keeps `applied`. Its
/// secrets (the values of its `${VAR}`s) are kept out of the logs before anything of it runs.
fn reload(
    gateway: &Gateway,
    path: &Path,
    applied: Applied,
    redactor: &mcpgateway::Redactor,
) -> Applied {
    let next = Config::load(Some(path)).and_then(|config| {
        redactor.add(config.secrets());
        let next = applied.next(&config)?;
        Ok((next, config.gateway))
    });
    let (next, section) = match next {
        Ok(next) => next,
        Err(error) => {
            tracing::error!("{error:#} (the config was not reloaded: the one in force stays)");
            return applied;
        }
    };
    let restart = applied.started.changed_keys(&section);
    if !restart.is_empty() {
        tracing::warn!(
            keys = ?restart,
            "the config's gateway section changed: these keys take effect when mcpx restarts (the servers are reloaded now)"
        );
    }
    let reloaded = gateway.reload(next.upstreams());
    tracing::info!(
        added = ?reloaded.added,
        removed = ?reloaded.removed,
        changed = ?reloaded.changed,
        unchanged = reloaded.unchanged,
        "config reloaded"
    );
    next
}
