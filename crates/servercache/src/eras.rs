//! The protocol era each server was found to speak, so that its next start speaks it at once
//! (the 2026-07-28 specification: clients "MAY persist it across restarts of the same server
//! configuration, re-probing if the cached assumption later fails").

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mcpclient::{Discovery, Era, Protocol, Reach, Why};
use serde_json::{json, Value};

use crate::files::{self, CacheError};
use crate::key::{digest, reach_parts};

/// How long an era learnt stays remembered: past it the server is probed again, so that a
/// server upgraded to the modern era without a change mcpx can see (`npx -y pkg` resolving a
/// newer version) is found. A week: a probe costs a legacy server that ignores it
/// [`mcpclient::DISCOVER_QUIET`] once, and a server that dies on it one extra start.
pub const ERA_MEMORY_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The largest era file read (they are about 200 bytes).
pub const MAX_ERA_BYTES: u64 = 4 * 1024;

/// Where the eras learnt are kept: one small JSON file per server, named by the digest of how
/// it is reached (command, arguments, working directory and the [`crate::fingerprint`] of the
/// files it runs from; or the URL). Never its environment or headers.
#[derive(Debug, Clone)]
pub struct EraMemory {
    folder: PathBuf,
}

/// An era learnt by an earlier start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// The era.
    pub era: Era,
    /// How it was learnt: [`Why::Probed`] or [`Why::FellBack`].
    pub why: Why,
    /// When.
    pub learnt_at: SystemTime,
}

impl EraMemory {
    /// The memory under the cache folder `cache` (in its `eras` folder).
    pub fn new(cache: &Path) -> EraMemory {
        EraMemory {
            folder: cache.join("eras"),
        }
    }

    fn path(&self, reach: &Reach) -> Option<PathBuf> {
        let parts = reach_parts(reach)?;
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        Some(self.folder.join(format!("{}.json", digest(&parts))))
    }

    /// What an earlier start learnt of the server reached by `reach`, if it is not older than
    /// [`ERA_MEMORY_MAX_AGE`].
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be read or is not one this crate writes.
    pub fn recall(&self, reach: &Reach) -> Result<Option<Remembered>, CacheError> {
        let Some(path) = self.path(reach) else {
            return Ok(None);
        };
        let Some(bytes) = files::read(&path, MAX_ERA_BYTES)? else {
            return Ok(None);
        };
        let corrupt = |reason: &str| CacheError::Corrupt {
            path: path.clone(),
            reason: reason.to_owned(),
        };
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| corrupt(&e.to_string()))?;
        let era = match value["era"].as_str() {
            Some("legacy") => Era::Legacy,
            Some("modern") => Era::Modern,
            _ => return Err(corrupt("no era")),
        };
        let why = match value["why"].as_str() {
            Some("fell-back") => Why::FellBack,
            _ => Why::Probed,
        };
        let learnt_at = value["learntAt"]
            .as_u64()
            .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s))
            .ok_or_else(|| corrupt("no learntAt"))?;
        let age = SystemTime::now()
            .duration_since(learnt_at)
            .unwrap_or(Duration::ZERO);
        Ok((age <= ERA_MEMORY_MAX_AGE).then_some(Remembered {
            era,
            why,
            learnt_at,
        }))
    }

    /// The protocol to start the server with: the `configured` one, unless that is
    /// [`Protocol::Auto`] and an era is remembered ([`Protocol::Remembered`]). A memory that
    /// cannot be read is none.
    pub fn protocol_for(&self, reach: &Reach, configured: Protocol) -> Protocol {
        if configured != Protocol::Auto {
            return configured;
        }
        match self.recall(reach) {
            Ok(Some(remembered)) => Protocol::Remembered(remembered.era),
            _ => Protocol::Auto,
        }
    }

    /// Forgets what was learnt of the server reached by `reach` (a start that spoke the era
    /// remembered failed: the next one probes again).
    ///
    /// # Errors
    /// [`CacheError`] when the file exists and cannot be removed.
    pub fn forget(&self, reach: &Reach) -> Result<(), CacheError> {
        let Some(path) = self.path(reach) else {
            return Ok(());
        };
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(CacheError::Io { path, source: e })
            }
            _ => Ok(()),
        }
    }

    /// Keeps what a start learnt, when it learnt something ([`Why::Probed`] or
    /// [`Why::FellBack`]); true when it was written.
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be written.
    pub fn learn(&self, reach: &Reach, discovery: &Discovery) -> Result<bool, CacheError> {
        if !matches!(discovery.why, Why::Probed | Why::FellBack) {
            return Ok(false);
        }
        let Some(path) = self.path(reach) else {
            return Ok(false);
        };
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let entry = json!({
            "era": discovery.era.name(),
            "why": discovery.why.name(),
            "learntAt": now,
        });
        files::write(&path, entry.to_string().as_bytes())?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpclient::StdioCommand;

    fn reach(args: &[&str]) -> Reach {
        Reach::Stdio(StdioCommand {
            program: "srv".to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..StdioCommand::default()
        })
    }

    fn found(era: Era, why: Why) -> Discovery {
        Discovery {
            era,
            why,
            evidence: "a test".to_owned(),
        }
    }

    #[test]
    fn what_a_probe_learnt_is_the_next_start_s_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let memory = EraMemory::new(dir.path());
        let (one, other) = (reach(&["a"]), reach(&["b"]));
        assert_eq!(memory.protocol_for(&one, Protocol::Auto), Protocol::Auto);
        assert!(memory
            .learn(&one, &found(Era::Legacy, Why::FellBack))
            .unwrap());
        assert!(memory
            .learn(&other, &found(Era::Modern, Why::Probed))
            .unwrap());
        assert_eq!(
            memory.protocol_for(&one, Protocol::Auto),
            Protocol::Remembered(Era::Legacy)
        );
        assert_eq!(memory.recall(&one).unwrap().unwrap().why, Why::FellBack);
        memory.forget(&one).unwrap();
        memory.forget(&one).unwrap();
        assert_eq!(memory.protocol_for(&one, Protocol::Auto), Protocol::Auto);
        assert!(memory
            .learn(&one, &found(Era::Legacy, Why::FellBack))
            .unwrap());
        assert_eq!(
            memory.protocol_for(&other, Protocol::Auto),
            Protocol::Remembered(Era::Modern)
        );
        // The config wins; nothing configured or remembered is written again.
        assert_eq!(
            memory.protocol_for(&one, Protocol::Modern),
            Protocol::Modern
        );
        assert!(!memory
            .learn(&one, &found(Era::Modern, Why::Configured))
            .unwrap());
        assert!(!memory
            .learn(&one, &found(Era::Modern, Why::Remembered))
            .unwrap());
    }

    #[test]
    fn an_old_or_broken_memory_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let memory = EraMemory::new(dir.path());
        let server = reach(&["old"]);
        let path = memory.path(&server).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"era": "legacy", "why": "probed", "learntAt": 1}"#,
        )
        .unwrap();
        assert_eq!(memory.recall(&server).unwrap(), None);
        std::fs::write(&path, "not json").unwrap();
        assert!(memory.recall(&server).is_err());
        assert_eq!(memory.protocol_for(&server, Protocol::Auto), Protocol::Auto);
    }
}
