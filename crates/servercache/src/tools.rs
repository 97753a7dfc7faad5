//! Each server's tool list as it last listed it, so that `mcpx tools`, `tools --search` and
//! `lint` need not start every server every time.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mcpclient::Reach;
use serde_json::{json, Value};

use crate::files::{self, CacheError};
use crate::key::{digest, fingerprint};

/// How long a cached tool list is used instead of asking the server: an hour. Tool lists
/// change when a server is upgraded or its config entry changes, and either makes another key
/// (the entry's text and the [`crate::fingerprint`] of the files it runs from are in it);
/// what no key can see (`npx -y pkg` resolving a newer version, a server whose tools depend on
/// what it finds at start) is seen within the hour, or at once with `--refresh`.
pub const TOOLS_FRESH_FOR: Duration = Duration::from_secs(3600);

/// The largest cached tool list read: the largest real lists seen are under 1 MiB.
pub const MAX_TOOL_LIST_BYTES: u64 = 32 * 1024 * 1024;

/// Where the tool lists are kept: one JSON file per server entry, named by the digest of the
/// entry as written in the config (`${VAR}` unexpanded) and of the files it runs from.
#[derive(Debug, Clone)]
pub struct ToolCache {
    folder: PathBuf,
}

/// A server's tool list as it was cached.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedList {
    /// The tool objects, as the server listed them.
    pub tools: Vec<Value>,
    /// The server's name and version as it gave them (`null` when it gave none).
    pub server: Value,
    /// The protocol version spoken when they were listed.
    pub protocol_version: String,
    /// When they were listed.
    pub listed_at: SystemTime,
}

impl CachedList {
    /// How long ago the list was taken (zero for a time in the future).
    pub fn age(&self) -> Duration {
        SystemTime::now()
            .duration_since(self.listed_at)
            .unwrap_or(Duration::ZERO)
    }

    /// Whether it is young enough to be used ([`TOOLS_FRESH_FOR`]).
    pub fn is_fresh(&self) -> bool {
        self.age() <= TOOLS_FRESH_FOR
    }
}

impl ToolCache {
    /// The cache under the cache folder `cache` (in its `tools` folder).
    pub fn new(cache: &Path) -> ToolCache {
        ToolCache {
            folder: cache.join("tools"),
        }
    }

    /// The key of a server entry: `entry` as written in the config (its `${VAR}`s unexpanded,
    /// so no value of the environment enters it) and the files `reach` runs from.
    pub fn key(entry: &Value, reach: &Reach) -> String {
        digest(&[entry.to_string().as_bytes(), &fingerprint(reach)])
    }

    fn path(&self, key: &str) -> PathBuf {
        self.folder.join(format!("{key}.json"))
    }

    /// The list cached under `key`, fresh or not.
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be read or is not one this crate writes.
    pub fn load(&self, key: &str) -> Result<Option<CachedList>, CacheError> {
        let path = self.path(key);
        let Some(bytes) = files::read(&path, MAX_TOOL_LIST_BYTES)? else {
            return Ok(None);
        };
        let corrupt = |reason: &str| CacheError::Corrupt {
            path: path.clone(),
            reason: reason.to_owned(),
        };
        let mut value: Value =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(&e.to_string()))?;
        let Some(Value::Array(tools)) = value.get_mut("tools").map(Value::take) else {
            return Err(corrupt("no tools"));
        };
        let listed_at = value["listedAt"]
            .as_u64()
            .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s))
            .ok_or_else(|| corrupt("no listedAt"))?;
        Ok(Some(CachedList {
            tools,
            server: value["server"].take(),
            protocol_version: value["protocolVersion"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            listed_at,
        }))
    }

    /// Keeps `list` under `key`, replacing what was there. Of the server's `serverInfo`
    /// only its name and version are kept.
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be written.
    pub fn store(&self, key: &str, list: &CachedList) -> Result<(), CacheError> {
        let listed_at = list
            .listed_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let server =
            json!({"name": list.server.get("name"), "version": list.server.get("version")});
        let entry = json!({
            "listedAt": listed_at,
            "server": server,
            "protocolVersion": list.protocol_version,
            "tools": list.tools,
        });
        files::write(&self.path(key), entry.to_string().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpclient::StdioCommand;

    #[test]
    fn a_list_comes_back_as_it_was_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ToolCache::new(dir.path());
        let reach = Reach::Stdio(StdioCommand::default());
        let key = ToolCache::key(&json!({"command": "srv", "env": {"K": "${TOKEN}"}}), &reach);
        assert_eq!(cache.load(&key).unwrap(), None);
        let list = CachedList {
            tools: vec![serde_json::from_str(
                r#"{"name": "t", "inputSchema": {"type": "object", "x": 1E400}}"#,
            )
            .unwrap()],
            server: json!({"name": "srv", "version": "1.2", "icons": []}),
            protocol_version: "2025-11-25".to_owned(),
            listed_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
        };
        cache.store(&key, &list).unwrap();
        let back = cache.load(&key).unwrap().unwrap();
        assert_eq!(back.tools, list.tools);
        assert_eq!(back.server, json!({"name": "srv", "version": "1.2"}));
        assert_eq!(back.listed_at, list.listed_at);
        assert!(!back.is_fresh());
        // The entry's variables enter the key unexpanded: another variable, another key.
        let other = ToolCache::key(&json!({"command": "srv", "env": {"K": "${OTHER}"}}), &reach);
        assert_ne!(key, other);
    }
}
