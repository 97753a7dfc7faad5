//! `import`, `install` and `uninstall`: the three changes, each reading everything first and
//! writing nothing when anything is wrong.
//!
//! Install writes in this order: mcpx's config (the imported servers), the backup of the
//! client's file, the record, and last the client's file; so a crash at any point leaves every
//! server either still in the client's file or in the record (and in mcpx's config). It
//! records every entry of the client's servers but the ones an earlier install wrote, the
//! entries it does not import too (another gateway entry, one left in the client), so that
//! uninstall can put back exactly what was there.
//!
//! The client may write its file while mcpx changes it (Claude Code rewrites `~/.claude.json`
//! as it runs): the file is read again just before it is replaced, and when it changed, the
//! record goes back to what it was and the whole change starts over from the new text, up to
//! [`MAX_TRIES`] times. Two installs at once wait for each other on the record's lock.
//!
//! Uninstall merges rather than overwrites: the servers recorded come back in their order, the
//! gateway's entry goes if it is still the one install wrote, and every server the client (or
//! its user) added or changed since is kept, the newer entry winning, with a note. Nothing else
//! in the file is touched; mcpx's config keeps the servers it imported.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::client::{Places, Scope, Target};
use crate::entry::{self, Gateway, Translated, GATEWAY_NAME};
use crate::error::Error;
use crate::file::{self, ClientFile, Servers};
use crate::mcpx_config::{self, Outcome};
use crate::record::{self, Install, Lock, Record};
use crate::{jsonc, secret, variables};

/// How many times install and uninstall start over when the client writes its file while
/// they change it.
pub(crate) const MAX_TRIES: usize = 3;

/// Checks an mcpx entry against mcpx's config schema: its problems, one line each.
pub type EntryCheck = dyn Fn(&Value) -> Vec<String>;

/// What a command is asked to do.
#[derive(Clone)]
pub struct Request<'a> {
    /// The client file.
    pub target: &'a Target,
    /// mcpx's config file (absolute; created when missing).
    pub config: &'a Path,
    /// The folders the client's variables name (`${workspaceFolder}`, `${userHome}`).
    pub places: &'a Places,
    /// Only say what would change.
    pub dry_run: bool,
    /// Checks an imported entry against mcpx's config schema: its problems, one line each
    /// (`$.command: …`). An entry with any stays in the client's file. `None`: not checked.
    pub check: Option<&'a EntryCheck>,
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("target", self.target)
            .field("config", &self.config)
            .field("places", self.places)
            .field("dry_run", &self.dry_run)
            .field("check", &self.check.is_some())
            .finish()
    }
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
    /// Why it was not imported and stays in the client's file (a VS Code input mcpx cannot
    /// ask for, an entry that names nothing to start, …); no outcome is reported for it.
    pub left: Option<String>,
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
    /// What became of each imported one, in the same order.
    pub outcomes: Vec<Outcome>,
    /// The file held a gateway entry (mcpx's own), which was not imported.
    pub skipped_gateway: bool,
    /// Whether mcpx's config was written.
    pub written: bool,
    /// The variables the imported servers need set where mcpx runs, having no default:
    /// `(server, variable)`, in order; the caller tells which are not set.
    pub variables: Vec<(String, String)>,
    /// What the user should know, one line each (mcpx's config readable by others while the
    /// client's file is not).
    pub warnings: Vec<String>,
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

/// The client's servers other than gateway entries: each as an mcpx entry, and as shown.
struct Collected {
    imported: Servers,
    /// Entries mcpx cannot start, reach or read as the client does, left in the client's file.
    left: Servers,
    found: Vec<Found>,
    skipped_gateway: bool,
    variables: Vec<(String, String)>,
}

fn collect(req: &Request<'_>, servers: &Servers) -> Collected {
    let client = req.target.client;
    let context = variables::Context {
        client,
        project: (req.target.scope == Scope::Project).then(|| req.places.cwd.clone()),
        home: req.places.home.clone(),
        os: req.places.os,
    };
    let mut collected = Collected {
        imported: Vec::new(),
        left: Vec::new(),
        found: Vec::new(),
        skipped_gateway: false,
        variables: Vec::new(),
    };
    for (name, value) in servers {
        if entry::is_gateway(value) {
            collected.skipped_gateway = true;
            continue;
        }
        let Some(members) = value.as_object() else {
            continue;
        };
        let Translated {
            entry: mcpx_entry,
            notes,
            leave,
        } = entry::to_mcpx(client, members, &context);
        let runnable = mcpx_entry.get("command").is_some() || mcpx_entry.get("url").is_some();
        let left = leave
            .or_else(|| (!runnable).then(|| "it names no command or URL mcpx could run".to_owned()))
            .or_else(|| {
                let problems = req
                    .check
                    .map(|check| check(&mcpx_entry))
                    .unwrap_or_default();
                (!problems.is_empty()).then(|| {
                    format!(
                        "mcpx's config would not take it ({}): left in {}",
                        problems.join("; "),
                        client.name()
                    )
                })
            });
        collected.found.push(Found {
            name: name.clone(),
            shown: secret::masked(&mcpx_entry),
            notes,
            left: left.clone(),
        });
        if left.is_some() {
            collected.left.push((name.clone(), value.clone()));
        } else {
            for (variable, default) in entry_variables(&mcpx_entry) {
                if !default {
                    collected.variables.push((name.clone(), variable));
                }
            }
            collected.imported.push((name.clone(), mcpx_entry));
        }
    }
    collected
}

/// The variables an mcpx entry refers to (every string of it), each once: `(name, has a
/// default)`. `${MCPX_EXE}` is mcpx's own and never counted.
fn entry_variables(entry: &Value) -> Vec<(String, bool)> {
    fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
        match value {
            Value::String(text) => out.push(text),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(map) => map.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    strings(entry, &mut texts);
    let mut names: Vec<(String, bool)> = Vec::new();
    for text in texts {
        for (name, default) in variables::references(text) {
            if name != "MCPX_EXE" && !names.iter().any(|(n, _)| *n == name) {
                names.push((name, default));
            }
        }
    }
    names
}

/// The variables the servers of mcpx's config at `config` refer to, but for the server called
/// `except`, each once, in order (none when there is no config).
pub fn config_variables(config: &Path, except: &str) -> Result<Vec<String>, Error> {
    let text = file::read_text(config, crate::MAX_FILE_BYTES)?;
    Ok(text
        .map(|t| text_variables(&t, Some(except)))
        .unwrap_or_default())
}

/// The variables the servers of mcpx's config text refer to (but `except`), each once.
fn text_variables(text: &str, except: Option<&str>) -> Vec<String> {
    let Ok(doc) = jsonc::parse(text, false) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for key in ["mcpServers", "servers"] {
        for (_, entry) in doc
            .value
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(name, _)| Some(name.as_str()) != except)
        {
            for (name, _) in entry_variables(entry) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

/// mcpx's config text before (`None`: no file) and with `servers` added as import adds them,
/// and what became of each.
fn merged(
    config: &Path,
    servers: &[(String, Value)],
    source: &str,
) -> Result<(Option<String>, String, Vec<Outcome>), Error> {
    let text = file::read_text(config, crate::MAX_FILE_BYTES)?;
    let (new_text, outcomes) = mcpx_config::merge(config, text.as_deref(), servers, source)?;
    Ok((text, new_text, outcomes))
}

/// Writes mcpx's config (readable by its owner only when new), its folder made if needed.
fn write_config(config: &Path, text: &str) -> Result<(), Error> {
    if let Some(dir) = config.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    file::write_atomic(config, text, Some(0o600))
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
    let (text, new_text, outcomes) = merged(config, servers, source)?;
    let changed = text.as_deref() != Some(new_text.as_str()) && (create || !servers.is_empty());
    if changed && !dry_run {
        write_config(config, &new_text)?;
    }
    Ok((outcomes, changed && !dry_run))
}

/// A warning when mcpx's config lets others read it while the client's file does not: the
/// values copied from one to the other are exposed.
fn permission_warnings(req: &Request<'_>) -> Vec<String> {
    let client_private =
        req.target.file.exists() && file::readable_by_others(&req.target.file).is_none();
    match file::readable_by_others(req.config) {
        Some(mode) if client_private => vec![format!(
            "{} can be read by others (mode {mode:o}) while {}'s file cannot: the values copied into it are exposed; chmod 600 {}",
            req.config.display(),
            req.target.client.name(),
            req.config.display()
        )],
        _ => Vec::new(),
    }
}

/// `(server, variable)` pairs with each server under its name in mcpx's config.
fn config_names(variables: Vec<(String, String)>, outcomes: &[Outcome]) -> Vec<(String, String)> {
    variables
        .into_iter()
        .map(|(server, variable)| {
            let to = outcomes.iter().find_map(|o| match o {
                Outcome::Renamed { name, to } | Outcome::Same { name, to } if *name == server => {
                    Some(to.clone())
                }
                _ => None,
            });
            (to.unwrap_or(server), variable)
        })
        .collect()
}

/// Runs `once` again while it finds the client's file changed under it, up to [`MAX_TRIES`].
pub(crate) fn retried<T>(mut once: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {
    for _ in 1..MAX_TRIES {
        match once() {
            Err(Error::Changed { .. }) => continue,
            other => return other,
        }
    }
    once()
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
        variables,
        ..
    } = collect(req, &servers);
    let (outcomes, written) = add_servers(
        req.config,
        &imported,
        req.target.client.name(),
        false,
        req.dry_run,
    )?;
    Ok(ImportReport {
        file: req.target.file.clone(),
        config: req.config.to_path_buf(),
        found,
        variables: config_names(variables, &outcomes),
        outcomes,
        skipped_gateway,
        written,
        warnings: if written {
            permission_warnings(req)
        } else {
            Vec::new()
        },
    })
}

/// Imports the client's servers, then makes the gateway the client's only server.
pub fn install(
    req: &Request<'_>,
    gateway: &Gateway,
    now: SystemTime,
) -> Result<InstallReport, Error> {
    install_with(req, gateway, now, &mut |_| {})
}

/// [`install`], calling `before_write` just before the client's file is replaced (for tests:
/// the client writing its file at the worst moment).
fn install_with(
    req: &Request<'_>,
    gateway: &Gateway,
    now: SystemTime,
    before_write: &mut dyn FnMut(&Path),
) -> Result<InstallReport, Error> {
    let _lock = (!req.dry_run).then(|| Lock::take(req.config)).transpose()?;
    retried(|| install_once(req, gateway, now, before_write))
}

/// The configs the gateway entries of `servers` name with `--config`, other than `config`.
fn other_configs<'s>(servers: &'s Servers, config: &'s Path) -> impl Iterator<Item = PathBuf> + 's {
    servers
        .iter()
        .filter(|(_, v)| entry::is_gateway(v))
        .filter_map(|(_, v)| {
            let args = v.get("args")?.as_array()?;
            let at = args.iter().position(|a| a.as_str() == Some("--config"))?;
            args.get(at + 1)?.as_str().map(PathBuf::from)
        })
        .filter(move |c| c != config)
}

/// The record of an install into the target beside another config that a gateway entry in
/// the file names, and that install's place in it.
pub(crate) fn recorded_elsewhere(
    req: &Request<'_>,
    current: &Servers,
) -> Result<Option<(Record, usize)>, Error> {
    for config in other_configs(current, req.config) {
        let other = Record::load(&config)?;
        if let Some(i) = other.find(&req.target.file, &req.target.at) {
            return Ok(Some((other, i)));
        }
    }
    Ok(None)
}

fn install_once(
    req: &Request<'_>,
    gateway: &Gateway,
    now: SystemTime,
    before_write: &mut dyn FnMut(&Path),
) -> Result<InstallReport, Error> {
    let target = req.target;
    let mut gateway_entry = entry::gateway_entry(target.client, gateway)?;
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
    let previous = Record::load(req.config)?;
    let mut record = previous.clone();
    let recorded = record.find(&target.file, &target.at);
    if recorded.is_none() {
        if let Some(config) = other_configs(&current, req.config)
            .find(|c| Record::load(c).is_ok_and(|r| r.find(&target.file, &target.at).is_some()))
        {
            return Err(Error::InstalledElsewhere {
                path: target.file.clone(),
                config,
            });
        }
    }
    // Every entry but those an earlier install wrote is remembered, to come back at uninstall;
    // after an install, the gateway's entry is its own even when the user edited it since (it
    // is written anew now, and goes at uninstall).
    let remembered: Servers = current
        .iter()
        .filter(|(name, value)| {
            !recorded.is_some_and(|i| {
                record.installs[i]
                    .added
                    .iter()
                    .any(|(n, v)| n == name && v == value)
                    || (name == GATEWAY_NAME && entry::is_gateway(value))
            })
        })
        .cloned()
        .collect();
    let Collected {
        imported,
        left,
        found,
        skipped_gateway,
        variables,
    } = collect(req, &remembered);
    let skipped_gateway = skipped_gateway || remembered.len() < current.len();
    let (config_text, new_config, outcomes) = merged(req.config, &imported, target.client.name())?;
    entry::pass_variables(
        target.client,
        &mut gateway_entry,
        &text_variables(&new_config, None),
    );
    // The gateway, then what mcpx cannot run, which stays where the client reads it.
    let mut target_servers: Servers = vec![(GATEWAY_NAME.to_owned(), gateway_entry.clone())];
    target_servers.extend(left.iter().cloned());
    let already = recorded.is_some() && current == target_servers;
    let config_changed = config_text.as_deref() != Some(new_config.as_str());
    let written = config_changed && !req.dry_run;
    let import = ImportReport {
        file: target.file.clone(),
        config: req.config.to_path_buf(),
        found,
        variables: config_names(variables, &outcomes),
        outcomes,
        skipped_gateway,
        written,
        warnings: Vec::new(),
    };
    let mut report = InstallReport {
        import,
        entry: secret::masked(&gateway_entry),
        backup: None,
        already,
        created,
        record: record.path.clone(),
    };
    if written {
        write_config(req.config, &new_config)?;
        report.import.warnings = permission_warnings(req);
    }
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
            // The exact text is put back only when nothing was added or changed since: a server
            // left in the client, as it was, changes nothing.
            let known = |name: &String, value: &Value| {
                install
                    .before
                    .as_ref()
                    .is_some_and(|b| b.iter().any(|(n, v)| n == name && v == value))
            };
            if remembered.iter().any(|(name, value)| !known(name, value)) {
                install.before_text = None;
            }
            let before = install.before.get_or_insert_with(Vec::new);
            for (name, value) in remembered {
                match before.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = value,
                    None => before.push((name, value)),
                }
            }
            install.added = target_servers[..1].to_vec();
            install.left = target_servers[1..].iter().map(|(n, _)| n.clone()).collect();
            install.backup = report.backup.clone().or(install.backup.take());
        }
        None => record.installs.push(Install {
            client: target.client.name().to_owned(),
            scope: target.scope.name().to_owned(),
            file: target.file.clone(),
            at: target.at.clone(),
            installed_at: iso,
            // Put back as it was (comments and all) when nothing changed by uninstall.
            before_text: client_file.servers_text(),
            backup: report.backup.clone(),
            created,
            before: servers.map(|_| remembered),
            added: target_servers[..1].to_vec(),
            left: target_servers[1..].iter().map(|(n, _)| n.clone()).collect(),
        }),
    }
    record.save()?;
    before_write(&target.file);
    let expected = Some(client_file.text.as_deref());
    match file::replace(&target.file, expected, &new_text, Some(0o600)) {
        Err(changed @ Error::Changed { .. }) => {
            previous.save()?;
            Err(changed)
        }
        other => other.map(|()| report),
    }
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::client::{Client, Os};
    use serde_json::json;

    pub(crate) struct Setup {
        _dir: tempfile::TempDir,
        pub(crate) target: Target,
        places: Places,
        pub(crate) config: PathBuf,
    }

    pub(crate) fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let places = Places {
            home: home.clone(),
            cwd: home.clone(),
            os: Os::Linux,
            appdata: None,
            xdg_config_home: None,
            codex_home: None,
        };
        let target = Target::locate(Client::Cursor, Scope::User, &places).unwrap();
        std::fs::create_dir_all(target.file.parent().unwrap()).unwrap();
        let file = json!({"mcpServers": {"a": {"command": "a"}}, "theme": "dark"});
        std::fs::write(&target.file, file.to_string()).unwrap();
        Setup {
            target,
            places,
            config: home.join("mcpx.json"),
            _dir: dir,
        }
    }

    pub(crate) fn request(setup: &Setup) -> Request<'_> {
        Request {
            target: &setup.target,
            config: &setup.config,
            places: &setup.places,
            dry_run: false,
            check: None,
        }
    }

    pub(crate) fn gateway(setup: &Setup) -> Gateway {
        Gateway::Stdio {
            program: "/bin/mcpx".into(),
            config: setup.config.clone(),
        }
    }

    /// The client adding a server to its file, as it does at any time.
    pub(crate) fn client_adds(file: &Path, name: &str) {
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        doc["mcpServers"][name] = json!({"command": name});
        std::fs::write(file, doc.to_string()).unwrap();
    }

    /// The client writes its file between install's read and its write: install starts over
    /// from the new text, and the server the client added is imported, not lost.
    #[test]
    fn a_file_changed_during_install_is_read_again() {
        let setup = setup();
        let mut calls = 0;
        let report = install_with(
            &request(&setup),
            &gateway(&setup),
            SystemTime::UNIX_EPOCH,
            &mut |file| {
                calls += 1;
                if calls == 1 {
                    client_adds(file, "b");
                }
            },
        )
        .unwrap();
        assert_eq!(calls, 2);
        let names: Vec<&str> = report
            .import
            .found
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let doc = ClientFile::read(&setup.target).unwrap().value();
        assert_eq!(doc["mcpServers"].as_object().unwrap().len(), 1);
        assert_eq!(doc["theme"], "dark");
        crate::uninstall::uninstall(&request(&setup), SystemTime::UNIX_EPOCH).unwrap();
        let doc = ClientFile::read(&setup.target).unwrap().value();
        assert_eq!(
            doc["mcpServers"],
            json!({"a": {"command": "a"}, "b": {"command": "b"}})
        );
    }

    /// A file that changes on every try: install gives up with a clear error, the client's
    /// last text stays, and the record is as it was (no install recorded).
    #[test]
    fn a_file_that_keeps_changing_is_left_to_the_client() {
        let setup = setup();
        let mut n = 0;
        let err = install_with(
            &request(&setup),
            &gateway(&setup),
            SystemTime::UNIX_EPOCH,
            &mut |file| {
                n += 1;
                client_adds(file, &format!("s{n}"));
            },
        )
        .unwrap_err();
        assert!(matches!(err, Error::Changed { .. }), "{err}");
        assert_eq!(n, MAX_TRIES);
        let doc = ClientFile::read(&setup.target).unwrap().value();
        assert!(doc["mcpServers"].get(format!("s{MAX_TRIES}")).is_some());
        assert!(doc["mcpServers"].get(GATEWAY_NAME).is_none());
        assert!(Record::load(&setup.config).unwrap().installs.is_empty());
        assert!(!setup
            .config
            .with_file_name("mcpx.installs.json.lock")
            .exists());
    }
}
