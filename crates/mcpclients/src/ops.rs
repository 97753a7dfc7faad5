//! `import`, `install` and `uninstall`: the three changes, each reading everything first and
//! writing nothing when anything is wrong.
//!
//! Install writes in this order: mcpx's config (the imported servers), the backup of the
//! client's file, the record, and last the client's file; so a crash at any point leaves every
//! server either still in the client's file or in the record (and in mcpx's config).
//!
//! Uninstall merges rather than overwrites: the servers recorded come back in their order, the
//! gateway's entry goes if it is still the one install wrote, and every server the client (or
//! its user) added or changed since is kept, the newer entry winning, with a note. Nothing else
//! in the file is touched; mcpx's config keeps the servers it imported.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::client::{Format, Places, Target};
use crate::entry::{self, Folders, Gateway, GATEWAY_NAME};
use crate::error::Error;
use crate::file::{self, ClientFile, Servers};
use crate::mcpx_config::{self, Outcome};
use crate::record::{self, Install, Record};
use crate::secret;

/// What a command is asked to do.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The client file.
    pub target: &'a Target,
    /// mcpx's config file (absolute; created when missing).
    pub config: &'a Path,
    /// The folders the client's variables name (`${workspaceFolder}`, `${userHome}`).
    pub places: &'a Places,
    /// Only say what would change.
    pub dry_run: bool,
}

/// One server found in the client's file, as import turned it.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its name in the client.
    pub name: String,
    /// Its mcpx entry with secrets masked, for showing.
    pub shown: Value,
    /// What could not be carried over as it was (names only).
    pub notes: Vec<String>,
    /// Not imported: it names no command and no URL (a Zed extension's settings, say), so it
    /// stays in the client's file, and no outcome is reported for it.
    pub left_in_client: bool,
}

/// What import did (or would do).
#[derive(Debug, Clone)]
pub struct ImportReport {
    /// The client's file read.
    pub file: PathBuf,
    /// mcpx's config.
    pub config: PathBuf,
    /// Each server found, in the file's order.
    pub found: Vec<Found>,
    /// What became of each, in the same order.
    pub outcomes: Vec<Outcome>,
    /// The file held the gateway's own entry, which was not imported.
    pub skipped_gateway: bool,
    /// Whether mcpx's config was written.
    pub written: bool,
}

/// What install did (or would do).
#[derive(Debug, Clone)]
pub struct InstallReport {
    /// The import it did first.
    pub import: ImportReport,
    /// The entry it wrote, masked.
    pub entry: Value,
    /// The backup of the client's file (none when install created the file).
    pub backup: Option<PathBuf>,
    /// The file was already as install would leave it: nothing written.
    pub already: bool,
    /// Install created the client's file.
    pub created: bool,
    /// The record of the install.
    pub record: PathBuf,
}

/// What uninstall did (or would do).
#[derive(Debug, Clone)]
pub struct UninstallReport {
    /// The client's file.
    pub file: PathBuf,
    /// The servers put back, in order.
    pub restored: Vec<String>,
    /// Servers found that install had not written, kept, each with why.
    pub kept: Vec<(String, String)>,
    /// The gateway's entry was removed.
    pub removed_gateway: bool,
    /// The backup made before this change.
    pub backup: Option<PathBuf>,
    /// The record it read.
    pub record: PathBuf,
}

fn folders(req: &Request<'_>) -> Folders {
    Folders {
        home: req.places.home.clone(),
        project: req.places.cwd.clone(),
    }
}

/// The client's servers other than the gateway: each as an mcpx entry, and as shown.
struct Collected {
    imported: Servers,
    /// Entries mcpx cannot start or reach, left in the client's file.
    left: Servers,
    found: Vec<Found>,
    skipped_gateway: bool,
}

fn collect(req: &Request<'_>, servers: &Servers) -> Collected {
    let folders = folders(req);
    let mut imported = Vec::new();
    let mut left = Vec::new();
    let mut found = Vec::new();
    let mut skipped_gateway = false;
    for (name, value) in servers {
        if entry::is_gateway(value) {
            skipped_gateway = true;
            continue;
        }
        let Some(members) = value.as_object() else {
            continue;
        };
        let (mcpx_entry, notes) = entry::to_mcpx(req.target.client, members, &folders);
        let runnable = mcpx_entry.get("command").is_some() || mcpx_entry.get("url").is_some();
        found.push(Found {
            name: name.clone(),
            shown: secret::masked(&mcpx_entry),
            notes,
            left_in_client: !runnable,
        });
        if runnable {
            imported.push((name.clone(), mcpx_entry));
        } else {
            left.push((name.clone(), value.clone()));
        }
    }
    Collected {
        imported,
        left,
        found,
        skipped_gateway,
    }
}

/// Adds `imported` to mcpx's config (unless a dry run): what became of each.
fn add_to_config(
    req: &Request<'_>,
    imported: &[(String, Value)],
    create: bool,
) -> Result<(Vec<Outcome>, bool), Error> {
    add_servers(
        req.config,
        imported,
        req.target.client.name(),
        create,
        req.dry_run,
    )
}

/// Adds `servers` to mcpx's config at `config` as import does: the same entry under its name
/// is merged, another is renamed `NAME-SOURCE`. With `create`, a missing config is written even
/// when nothing is added. What became of each, and whether the file was written (never on a
/// dry run).
pub fn add_servers(
    config: &Path,
    servers: &[(String, Value)],
    source: &str,
    create: bool,
    dry_run: bool,
) -> Result<(Vec<Outcome>, bool), Error> {
    let text = file::read_text(config, crate::MAX_FILE_BYTES)?;
    let (new_text, outcomes) = mcpx_config::merge(config, text.as_deref(), servers, source)?;
    let changed = text.as_deref() != Some(new_text.as_str()) && (create || !servers.is_empty());
    if changed && !dry_run {
        if let Some(dir) = config.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        file::write_atomic(config, &new_text, Some(0o600))?;
    }
    Ok((outcomes, changed && !dry_run))
}

/// Copies the client's servers into mcpx's config.
pub fn import(req: &Request<'_>) -> Result<ImportReport, Error> {
    let client_file = ClientFile::read(req.target)?;
    if client_file.text.is_none() {
        return Err(Error::Missing {
            path: req.target.file.clone(),
            what: format!(
                "{}'s {} config",
                req.target.client.name(),
                req.target.scope.name()
            ),
        });
    }
    let servers = client_file.servers()?.unwrap_or_default();
    let Collected {
        imported,
        found,
        skipped_gateway,
        ..
    } = collect(req, &servers);
    let (outcomes, written) = add_to_config(req, &imported, false)?;
    Ok(ImportReport {
        file: req.target.file.clone(),
        config: req.config.to_path_buf(),
        found,
        outcomes,
        skipped_gateway,
        written,
    })
}

/// Imports the client's servers, then makes the gateway the client's only server.
pub fn install(
    req: &Request<'_>,
    gateway: &Gateway,
    now: SystemTime,
) -> Result<InstallReport, Error> {
    let target = req.target;
    let gateway_entry = entry::gateway_entry(target.client, gateway)?;
    let client_file = ClientFile::read(target)?;
    let created = client_file.text.is_none();
    if created {
        let parent = target.file.parent().unwrap_or(Path::new("."));
        if target.scope == crate::Scope::Project {
            if !req.dry_run {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
        } else if !parent.is_dir() {
            return Err(Error::Missing {
                path: target.file.clone(),
                what: format!(
                    "{} does not seem to be installed: {} is not there",
                    target.client.name(),
                    parent.display()
                ),
            });
        }
    }
    let servers = client_file.servers()?;
    let current = servers.clone().unwrap_or_default();
    let mut record = Record::load(req.config)?;
    let recorded = record.find(&target.file, &target.at);
    // The servers to import and to remember: all but the gateway's own entry.
    let theirs: Servers = current
        .iter()
        .filter(|(name, value)| {
            let ours = recorded.is_some_and(|i| {
                record.installs[i]
                    .added
                    .iter()
                    .any(|(n, v)| n == name && v == value)
            });
            !(ours || entry::is_gateway(value) || (name == GATEWAY_NAME && *value == gateway_entry))
        })
        .cloned()
        .collect();
    let Collected {
        imported,
        left,
        found,
        ..
    } = collect(req, &theirs);
    let skipped_gateway = theirs.len() < current.len();
    // The gateway, then what mcpx cannot run, which stays where the client reads it.
    let mut target_servers: Servers = vec![(GATEWAY_NAME.to_owned(), gateway_entry.clone())];
    target_servers.extend(left.iter().cloned());
    let already = recorded.is_some() && current == target_servers;
    let (outcomes, written) = add_to_config(req, &imported, true)?;
    let import = ImportReport {
        file: target.file.clone(),
        config: req.config.to_path_buf(),
        found,
        outcomes,
        skipped_gateway,
        written,
    };
    let mut report = InstallReport {
        import,
        entry: secret::masked(&gateway_entry),
        backup: None,
        already,
        created,
        record: record.path.clone(),
    };
    if already || req.dry_run {
        return Ok(report);
    }
    let new_text = client_file.with_servers(Some(&target_servers))?;
    let (stamp, iso) = record::stamps(now);
    if !created {
        report.backup = Some(file::backup(&target.file, &stamp)?);
    }
    match recorded {
        Some(i) => {
            // Servers added to the client since the last install are remembered too.
            let install = &mut record.installs[i];
            if !theirs.is_empty() {
                install.before_text = None;
            }
            let before = install.before.get_or_insert_with(Vec::new);
            for (name, value) in theirs {
                match before.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = value,
                    None => before.push((name, value)),
                }
            }
            install.added = target_servers[..1].to_vec();
            install.backup = report.backup.clone().or(install.backup.take());
        }
        None => record.installs.push(Install {
            client: target.client.name().to_owned(),
            scope: target.scope.name().to_owned(),
            file: target.file.clone(),
            at: target.at.clone(),
            installed_at: iso,
            // The text comes back only when it holds exactly the servers kept.
            before_text: if skipped_gateway {
                None
            } else {
                client_file.servers_text()
            },
            backup: report.backup.clone(),
            created,
            before: servers.map(|_| theirs),
            added: target_servers[..1].to_vec(),
        }),
    }
    record.save()?;
    file::write_atomic(&target.file, &new_text, Some(0o600))?;
    Ok(report)
}

/// The record of an install into the target: beside `config`, else beside the config the
/// gateway's entry in the client's file names.
fn find_record(req: &Request<'_>, current: &Servers) -> Result<(Record, Option<usize>), Error> {
    let record = Record::load(req.config)?;
    if let Some(i) = record.find(&req.target.file, &req.target.at) {
        return Ok((record, Some(i)));
    }
    let named = current
        .iter()
        .filter(|(_, v)| entry::is_gateway(v))
        .filter_map(|(_, v)| {
            let args = v.get("args")?.as_array()?;
            let at = args.iter().position(|a| a.as_str() == Some("--config"))?;
            args.get(at + 1)?.as_str().map(PathBuf::from)
        })
        .find(|c| c != req.config);
    if let Some(config) = named {
        let other = Record::load(&config)?;
        if let Some(i) = other.find(&req.target.file, &req.target.at) {
            return Ok((other, Some(i)));
        }
    }
    Ok((record, None))
}

/// Puts back the servers install replaced, keeping what changed in the file since.
pub fn uninstall(req: &Request<'_>, now: SystemTime) -> Result<UninstallReport, Error> {
    let target = req.target;
    let client_file = ClientFile::read(target)?;
    let current = client_file.servers()?.unwrap_or_default();
    let (mut record, index) = find_record(req, &current)?;
    let Some(index) = index else {
        return Err(Error::NotInstalled {
            path: target.file.clone(),
            record: record.path.clone(),
        });
    };
    let install = record.installs[index].clone();
    let mut result: Servers = install.before.clone().unwrap_or_default();
    let restored: Vec<String> = result.iter().map(|(n, _)| n.clone()).collect();
    let mut kept = Vec::new();
    let mut removed_gateway = false;
    for (name, value) in &current {
        let added = install.added.iter().any(|(n, v)| n == name && v == value);
        if added || (name == GATEWAY_NAME && entry::is_gateway(value)) {
            removed_gateway = true;
            continue;
        }
        match result.iter_mut().find(|(n, _)| n == name) {
            Some(slot) if slot.1 == *value => {}
            Some(slot) => {
                slot.1 = value.clone();
                kept.push((name.clone(), "changed in the client since install: its current entry kept (the one before is in the backup)".to_owned()));
            }
            None => {
                result.push((name.clone(), value.clone()));
                kept.push((
                    name.clone(),
                    "added to the client since install: kept".to_owned(),
                ));
            }
        }
    }
    let mut report = UninstallReport {
        file: target.file.clone(),
        restored,
        kept,
        removed_gateway,
        backup: None,
        record: record.path.clone(),
    };
    if req.dry_run {
        return Ok(report);
    }
    let servers = if install.before.is_none() && result.is_empty() {
        None
    } else {
        Some(result.as_slice())
    };
    let unchanged = install.before.as_ref() == Some(&result);
    let new_text = match (&install.before_text, servers) {
        (Some(raw), Some(list)) if unchanged => client_file.with_servers_text(raw, list)?,
        _ => client_file.with_servers(servers)?,
    };
    if client_file.text.is_some() {
        let (stamp, _) = record::stamps(now);
        report.backup = Some(file::backup(&target.file, &stamp)?);
    }
    let empty = match target.client.format() {
        Format::Toml => new_text.trim().is_empty(),
        _ => serde_json::from_str::<Value>(&new_text)
            .is_ok_and(|v| v.as_object().is_some_and(|m| m.is_empty())),
    };
    if install.created && empty && client_file.text.is_some() {
        std::fs::remove_file(&target.file).map_err(|e| Error::io(&target.file, e))?;
    } else if client_file.text.is_some() || servers.is_some() {
        file::write_atomic(&target.file, &new_text, Some(0o600))?;
    }
    record.installs.remove(index);
    record.save()?;
    Ok(report)
}

/// The target's file as JSON (TOML tables as objects); `None` when there is no file.
pub fn document(target: &Target) -> Result<Option<Value>, Error> {
    let client_file = ClientFile::read(target)?;
    Ok(client_file.text.is_some().then(|| client_file.value()))
}

/// The servers of the target's file, in its order; `None` when it has no servers member.
pub fn servers(target: &Target) -> Result<Option<Vec<(String, Value)>>, Error> {
    ClientFile::read(target)?.servers()
}

/// Whether mcpx is installed in the target, for `mcpx doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The file is not there.
    NoFile,
    /// The file has servers and no gateway entry.
    NotInstalled {
        /// How many servers it has.
        servers: usize,
    },
    /// The gateway's entry is there.
    Installed {
        /// Whether it is the only server.
        alone: bool,
    },
}

/// Whether mcpx is installed in the target's file.
pub fn status(target: &Target) -> Result<Status, Error> {
    let client_file = ClientFile::read(target)?;
    if client_file.text.is_none() {
        return Ok(Status::NoFile);
    }
    let servers = client_file.servers()?.unwrap_or_default();
    let gateways = servers
        .iter()
        .filter(|(n, v)| entry::is_gateway(v) || n == GATEWAY_NAME)
        .count();
    Ok(if gateways > 0 {
        Status::Installed {
            alone: servers.len() == gateways,
        }
    } else {
        Status::NotInstalled {
            servers: servers.len(),
        }
    })
}
