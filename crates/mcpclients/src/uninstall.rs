//! `uninstall`: the servers install replaced put back, merged with what the client changed
//! since (the module doc of `ops` says how), retried when the client writes its file meanwhile.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::client::Format;
use crate::entry::{self, GATEWAY_NAME};
use crate::error::Error;
use crate::file::{self, ClientFile, Servers};
use crate::ops::{recorded_elsewhere, retried, Request};
use crate::record::{self, Lock, Record};

/// What uninstall did (or would do).
#[derive(Debug, Clone)]
pub struct UninstallReport {
    /// The client's file.
    pub file: PathBuf,
    /// The servers put back, in order.
    pub restored: Vec<String>,
    /// Servers found that install had not written, kept, each with why.
    pub kept: Vec<(String, String)>,
    /// Servers install had left in the client that the client deleted since: not put back,
    /// each with why.
    pub not_restored: Vec<(String, String)>,
    /// The gateway's entry was removed.
    pub removed_gateway: bool,
    /// The backup made before this change.
    pub backup: Option<PathBuf>,
    /// The record it read.
    pub record: PathBuf,
}

/// The record of an install into the target: beside `config`, else beside the config the
/// gateway's entry in the client's file names.
fn find_record(req: &Request<'_>, current: &Servers) -> Result<(Record, Option<usize>), Error> {
    let record = Record::load(req.config)?;
    if let Some(i) = record.find(&req.target.file, &req.target.at) {
        return Ok((record, Some(i)));
    }
    Ok(match recorded_elsewhere(req, current)? {
        Some((other, i)) => (other, Some(i)),
        None => (record, None),
    })
}

/// Puts back the servers install replaced, keeping what changed in the file since.
pub fn uninstall(req: &Request<'_>, now: SystemTime) -> Result<UninstallReport, Error> {
    uninstall_with(req, now, &mut |_| {})
}

/// [`uninstall`], calling `before_write` just before the client's file is replaced.
fn uninstall_with(
    req: &Request<'_>,
    now: SystemTime,
    before_write: &mut dyn FnMut(&Path),
) -> Result<UninstallReport, Error> {
    let _lock = (!req.dry_run).then(|| Lock::take(req.config)).transpose()?;
    retried(|| uninstall_once(req, now, before_write))
}

fn uninstall_once(
    req: &Request<'_>,
    now: SystemTime,
    before_write: &mut dyn FnMut(&Path),
) -> Result<UninstallReport, Error> {
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
    // A server install left in the client's file and the client deleted since stays deleted
    // (the user saw it there and took it out).
    let mut not_restored = Vec::new();
    result.retain(|(name, _)| {
        let deleted = install.left.contains(name) && !current.iter().any(|(n, _)| n == name);
        if deleted {
            not_restored.push((
                name.clone(),
                "deleted in the client since install (install had left it there): not put back"
                    .to_owned(),
            ));
        }
        !deleted
    });
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
        not_restored,
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
    before_write(&target.file);
    if install.created && empty && client_file.text.is_some() {
        let now = file::read_text(&target.file, crate::MAX_FILE_BYTES)?;
        if now != client_file.text {
            return Err(Error::Changed {
                path: target.file.clone(),
            });
        }
        // The file install created; a link to it (made before it) stays.
        let created = file::real_path(&target.file);
        std::fs::remove_file(&created).map_err(|e| Error::io(&target.file, e))?;
    } else if client_file.text.is_some() || servers.is_some() {
        let expected = Some(client_file.text.as_deref());
        file::replace(&target.file, expected, &new_text, Some(0o600))?;
    }
    record.installs.remove(index);
    record.save()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::install;
    use crate::ops::tests::{client_adds, gateway, request, setup};
    use serde_json::json;

    /// The same during uninstall: the server the client added meanwhile is kept.
    #[test]
    fn a_file_changed_during_uninstall_is_read_again() {
        let setup = setup();
        install(&request(&setup), &gateway(&setup), SystemTime::UNIX_EPOCH).unwrap();
        let mut calls = 0;
        let report = uninstall_with(&request(&setup), SystemTime::UNIX_EPOCH, &mut |file| {
            calls += 1;
            if calls == 1 {
                client_adds(file, "late");
            }
        })
        .unwrap();
        assert_eq!(report.kept.len(), 1);
        let doc = ClientFile::read(&setup.target).unwrap().value();
        assert_eq!(
            doc["mcpServers"],
            json!({"a": {"command": "a"}, "late": {"command": "late"}})
        );
    }
}
