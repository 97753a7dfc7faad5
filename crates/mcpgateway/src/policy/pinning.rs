//! Tool pinning in the gateway: every tool list a server gives is compared with the lock file
//! that `mcpx pin` writes (`mcpx.lock.json`, read with [`toolpin`]), as that server's
//! `pinning` mode says.
//!
//! - `warn`: each classified change (description, annotations, input accepts more/less/both,
//!   output, added, removed) is logged once and counted ([`crate::gateway::Gateway::pin_changes`]); the
//!   tool is offered as listed.
//! - `block`: the same, and a changed or added tool is withheld from clients (not listed, not
//!   callable: it is unknown to them) until `mcpx pin --approve SERVER[/TOOL]` records it.
//!
//! The lock file is read when a catalog is built and whenever its modification time or size
//! changes (looked at every [`LOCK_POLL_INTERVAL`]): an approval reaches a running gateway
//! within that interval, and its clients are told the tools changed. A lock file that cannot
//! be read pins nothing, so under `block` every tool of a pinned server is withheld (fail
//! closed) and the log says why.
//!
//! A change is logged and counted when it first appears in a list, not again at each rebuild
//! while it stays; it counts again if it goes and comes back.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use toolpin::Change;

use crate::options::Pinning;
use crate::options::UpstreamConfig;

/// How often the gateway looks at the lock file's modification time and size, so that an
/// approval (`mcpx pin --approve`) reaches it while it runs.
pub const LOCK_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// What the lock file says and what has been reported of it.
pub(crate) struct Pins {
    path: Option<PathBuf>,
    state: Mutex<LockState>,
    changes: AtomicU64,
}

/// A file's modification time and size; `None` when it cannot be read.
type Stamp = Option<(SystemTime, u64)>;

#[derive(Default)]
struct LockState {
    /// The stamp of the file as last read; `None` before the first read.
    read: Option<Stamp>,
    pins: toolpin::Pins,
    /// Each server's changes as last reported.
    reported: HashMap<String, Vec<(String, Vec<Change>)>>,
}

fn stamp(path: &std::path::Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        meta.len(),
    ))
}

impl Pins {
    /// Pins from the lock file at `path`; none (pinning off for every server) without one.
    pub(crate) fn new(path: Option<PathBuf>) -> Pins {
        Pins {
            path,
            state: Mutex::default(),
            changes: AtomicU64::new(0),
        }
    }

    /// How many classified changes were reported.
    pub(crate) fn changes(&self) -> u64 {
        self.changes.load(Ordering::Relaxed)
    }

    /// Whether the lock file changed since it was read (never before its first read).
    fn stale(&self) -> bool {
        let Some(path) = &self.path else {
            return false;
        };
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.read.is_some_and(|read| read != stamp(path))
    }

    /// The names of `config`'s listed tools to withhold from clients. Changes not reported yet
    /// are logged and counted.
    pub(crate) fn withheld<'a>(
        &self,
        config: &UpstreamConfig,
        listed: impl IntoIterator<Item = &'a Value>,
    ) -> HashSet<String> {
        let Some(path) = &self.path else {
            return HashSet::new();
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = stamp(path);
        if state.read != Some(now) {
            state.pins = read(path);
            state.read = Some(now);
        }
        let pinned = state.pins.get(&config.name);
        let mode = match config.pinning {
            Some(mode) => mode,
            None if pinned.is_some() => Pinning::Warn,
            None => Pinning::Off,
        };
        if mode == Pinning::Off {
            return HashSet::new();
        }
        let empty = BTreeMap::new();
        let found = toolpin::changes(pinned.unwrap_or(&empty), listed);
        let block = mode == Pinning::Block;
        let before = state.reported.get(&config.name);
        for (tool, changes) in &found {
            if before.is_some_and(|b| b.iter().any(|(t, c)| t == tool && c == changes)) {
                continue;
            }
            for change in changes {
                self.changes.fetch_add(1, Ordering::Relaxed);
                let withheld = block && *change != Change::Removed;
                tracing::warn!(
                    server = config.name,
                    tool,
                    %change,
                    withheld,
                    approve = format!("mcpx pin --approve {}/{tool}", config.name),
                    "tool changed since pinned"
                );
            }
        }
        let withheld = match block {
            true => found
                .iter()
                .filter(|(_, c)| !c.contains(&Change::Removed))
                .map(|(t, _)| t.clone())
                .collect(),
            false => HashSet::new(),
        };
        state.reported.insert(config.name.clone(), found);
        withheld
    }
}

/// The lock file's pins; none (logged) when it is absent or cannot be read.
fn read(path: &std::path::Path) -> toolpin::Pins {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            tracing::info!(path = %path.display(), "no lock file: no tool is pinned (`mcpx pin` writes it)");
            return toolpin::Pins::new();
        }
        Err(error) => {
            tracing::error!(path = %path.display(), %error, "cannot read the lock file: no tool is pinned");
            return toolpin::Pins::new();
        }
    };
    toolpin::parse(&text).unwrap_or_else(|error| {
        tracing::error!(path = %path.display(), %error, "lock file unreadable: no tool is pinned");
        toolpin::Pins::new()
    })
}

/// Looks at the lock file every [`LOCK_POLL_INTERVAL`] and calls `changed` when it changed
/// (the gateway rebuilds its catalog, which reads it); stops when `changed` returns false (the
/// gateway is gone).
pub(crate) async fn watch(pins: std::sync::Arc<Pins>, changed: impl Fn() -> bool) {
    if pins.path.is_none() {
        return;
    }
    let mut every = tokio::time::interval(LOCK_POLL_INTERVAL);
    loop {
        every.tick().await;
        if pins.stale() && !changed() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn server(pinning: Option<Pinning>) -> UpstreamConfig {
        UpstreamConfig {
            name: "demo".into(),
            transport: mcpclient::Reach::Stdio(mcpclient::StdioCommand::default()),
            tools: crate::policy::naming::ToolFilter::default(),
            isolation: crate::options::Isolation::Shared,
            prefix: "demo__".into(),
            protocol: mcpclient::Protocol::Auto,
            coerce_arguments: false,
            exposure: None,
            pinning,
            start_timeout: crate::options::START_TIMEOUT,
        }
    }

    #[test]
    fn modes_log_count_and_withhold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(toolpin::LOCK_FILE);
        let echo = json!({"name": "echo", "description": "Echo"});
        let mut pinned = toolpin::Pins::new();
        toolpin::approve(&mut pinned, "demo", None, [&echo]);
        std::fs::write(&path, toolpin::render(&pinned)).unwrap();
        let listed = [
            json!({"name": "echo", "description": "Echo, and more"}),
            json!({"name": "new"}),
        ];

        let pins = Pins::new(Some(path.clone()));
        assert!(pins
            .withheld(&server(Some(Pinning::Off)), &listed)
            .is_empty());
        assert_eq!(pins.changes(), 0);
        // Unset: warn, since the lock file pins the server.
        assert!(pins.withheld(&server(None), &listed).is_empty());
        assert_eq!(pins.changes(), 2, "description, added");
        // Reported once while it stays.
        assert!(pins
            .withheld(&server(Some(Pinning::Warn)), &listed)
            .is_empty());
        assert_eq!(pins.changes(), 2);
        let withheld = pins.withheld(&server(Some(Pinning::Block)), &listed);
        assert_eq!(
            withheld,
            HashSet::from(["echo".to_owned(), "new".to_owned()])
        );
        assert!(!pins.stale());

        // An approval is read at the next look.
        toolpin::approve(&mut pinned, "demo", Some("echo"), &listed);
        std::fs::write(&path, toolpin::render(&pinned)).unwrap();
        assert!(pins.stale());
        let withheld = pins.withheld(&server(Some(Pinning::Block)), &listed);
        assert_eq!(withheld, HashSet::from(["new".to_owned()]));
        assert!(!pins.stale());

        // Unreadable: nothing pinned; blocked all, and unset means off again.
        std::fs::write(&path, "{").unwrap();
        assert_eq!(
            pins.withheld(&server(Some(Pinning::Block)), &listed).len(),
            2
        );
        assert!(pins.withheld(&server(None), &listed).is_empty());
        // No lock file at all: pinning off.
        let none = Pins::new(None);
        assert!(none
            .withheld(&server(Some(Pinning::Block)), &listed)
            .is_empty());
    }
}
