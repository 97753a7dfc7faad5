//! Where credentials are kept: the OS keyring ([`KeyringStore`]) or a JSON file only its owner
//! can read ([`FileStore`], replaced whole by a rename so a crash leaves the old or the new
//! file, never half of one). On Unix the file is mode 0600. On Windows it takes the access list
//! of its folder, which in the user's profile (`%APPDATA%`, where mcpx keeps it) grants the
//! user, SYSTEM and the Administrators alone.
//!
//! Keys: `client <issuer>` for a registered client, `tokens <resource>` for the tokens of an
//! MCP server (with the issuer that granted them inside).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{AuthError, Secret};

/// The largest credentials file read.
const MAX_STORE_BYTES: u64 = 4 * 1024 * 1024;

/// The keyring service name entries are kept under.
const KEYRING_SERVICE: &str = "mcpx";

/// The tokens of one MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The authorization server that granted them.
    pub issuer: String,
    /// The client they were granted to.
    pub client_id: String,
    /// The access token.
    pub access_token: Secret,
    /// The refresh token, when one was given.
    #[serde(default)]
    pub refresh_token: Option<Secret>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default)]
    pub expires_at: Option<u64>,
    /// The scopes asked for (granted, or wanted since a step-up was refused).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The DPoP key the tokens are bound to (RFC 9449), when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

/// A string-to-string store of secrets.
pub trait Store: Send + Sync {
    /// The value at `key`.
    ///
    /// # Errors
    /// [`AuthError::Store`] when the store cannot be read.
    fn get(&self, key: &str) -> Result<Option<String>, AuthError>;
    /// Sets `key` to `value`.
    ///
    /// # Errors
    /// [`AuthError::Store`] when the store cannot be written.
    fn set(&self, key: &str, value: &str) -> Result<(), AuthError>;
    /// Removes `key`; removing what is not there is not an error.
    ///
    /// # Errors
    /// [`AuthError::Store`] when the store cannot be written.
    fn delete(&self, key: &str) -> Result<(), AuthError>;
}

pub(crate) fn client_key(issuer: &str) -> String {
    format!("client {issuer}")
}

pub(crate) fn tokens_key(resource: &str) -> String {
    format!("tokens {resource}")
}

/// A typed read of `key`; a value that does not parse is taken as absent.
pub(crate) fn load<T: for<'de> Deserialize<'de>>(
    store: &dyn Store,
    key: &str,
) -> Result<Option<T>, AuthError> {
    Ok(store
        .get(key)?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

pub(crate) fn save<T: Serialize>(store: &dyn Store, key: &str, value: &T) -> Result<(), AuthError> {
    let text = serde_json::to_string(value).map_err(|e| AuthError::Store(e.to_string()))?;
    store.set(key, &text)
}

/// Credentials in one JSON file readable and writable by its owner only.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// The store in `path` (created on the first write, with its folder).
    pub fn new(path: impl Into<PathBuf>) -> FileStore {
        FileStore { path: path.into() }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<BTreeMap<String, String>, AuthError> {
        let failed =
            |e: &dyn std::fmt::Display| AuthError::Store(format!("{}: {e}", self.path.display()));
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(failed(&e)),
        };
        let size = file.metadata().map_err(|e| failed(&e))?.len();
        if size > MAX_STORE_BYTES {
            return Err(failed(&format!("over {MAX_STORE_BYTES} bytes")));
        }
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| failed(&e))
    }

    fn write(&self, entries: &BTreeMap<String, String>) -> Result<(), AuthError> {
        let failed =
            |e: &dyn std::fmt::Display| AuthError::Store(format!("{}: {e}", self.path.display()));
        let folder = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(folder).map_err(|e| failed(&e))?;
        let text = serde_json::to_vec_pretty(entries).map_err(|e| failed(&e))?;
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temporary = folder.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&temporary).map_err(|e| failed(&e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| failed(&e))?;
        }
        file.write_all(&text)
            .and_then(|()| file.sync_all())
            .map_err(|e| failed(&e))?;
        std::fs::rename(&temporary, &self.path).map_err(|e| failed(&e))
    }
}

impl Store for FileStore {
    fn get(&self, key: &str) -> Result<Option<String>, AuthError> {
        Ok(self.read()?.remove(key))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), AuthError> {
        let mut entries = self.read()?;
        entries.insert(key.to_owned(), value.to_owned());
        self.write(&entries)
    }

    fn delete(&self, key: &str) -> Result<(), AuthError> {
        let mut entries = self.read()?;
        if entries.remove(key).is_some() {
            self.write(&entries)?;
        }
        Ok(())
    }
}

/// Credentials in the OS keyring (Secret Service, macOS Keychain, Windows Credential Manager).
#[derive(Debug, Clone, Default)]
pub struct KeyringStore {
    _private: (),
}

impl KeyringStore {
    /// The keyring, when this machine has one that answers; `None` when it has none (no
    /// Secret Service on a headless Linux, say).
    pub fn available() -> Option<KeyringStore> {
        let entry = keyring::Entry::new(KEYRING_SERVICE, "mcpx probe").ok()?;
        match entry.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => Some(KeyringStore { _private: () }),
            Err(_) => None,
        }
    }

    fn entry(key: &str) -> Result<keyring::Entry, AuthError> {
        keyring::Entry::new(KEYRING_SERVICE, key).map_err(|e| AuthError::Store(e.to_string()))
    }
}

impl Store for KeyringStore {
    fn get(&self, key: &str) -> Result<Option<String>, AuthError> {
        match KeyringStore::entry(key)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(AuthError::Store(e.to_string())),
        }
    }

    fn set(&self, key: &str, value: &str) -> Result<(), AuthError> {
        KeyringStore::entry(key)?
            .set_password(value)
            .map_err(|e| AuthError::Store(e.to_string()))
    }

    fn delete(&self, key: &str) -> Result<(), AuthError> {
        match KeyringStore::entry(key)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(AuthError::Store(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_store_round_trip_owner_only() {
        let folder = tempfile::tempdir().unwrap();
        let store = FileStore::new(folder.path().join("sub/credentials.json"));
        assert_eq!(store.get("a").unwrap(), None);
        store.set("a", "1").unwrap();
        store.set("b", "2").unwrap();
        assert_eq!(store.get("a").unwrap().as_deref(), Some("1"));
        store.delete("a").unwrap();
        store.delete("missing").unwrap();
        assert_eq!(store.get("a").unwrap(), None);
        assert_eq!(store.get("b").unwrap().as_deref(), Some("2"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = std::fs::read_dir(folder.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }

    #[test]
    fn file_store_refuses_a_corrupt_file_and_records_round_trip() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("c.json");
        std::fs::write(&path, "not json").unwrap();
        let store = FileStore::new(&path);
        assert!(store.get("a").unwrap_err().to_string().contains("c.json"));
        std::fs::remove_file(&path).unwrap();
        let record = TokenRecord {
            issuer: "https://as".to_owned(),
            client_id: "c".to_owned(),
            access_token: Secret::new("at-secret"),
            refresh_token: Some(Secret::new("rt-secret")),
            expires_at: Some(10),
            scopes: vec!["a".to_owned()],
            dpop_key: None,
        };
        save(&store, &tokens_key("https://rs/mcp"), &record).unwrap();
        let back: TokenRecord = load(&store, &tokens_key("https://rs/mcp"))
            .unwrap()
            .unwrap();
        assert_eq!(back, record);
        assert!(!format!("{back:?}").contains("secret\""));
        assert!(!format!("{back:?}").contains("at-secret"));
    }
}
