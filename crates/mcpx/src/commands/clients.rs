//! `mcpx import`, `mcpx install` and `mcpx uninstall`: the client's file located from this
//! process's environment, the work done by the `mcpclients` crate, its report printed. Entries
//! are shown only masked; nothing here prints a value from a config file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcpclients::{
    Client, Gateway, ImportReport, InstallReport, Os, Outcome, Places, Request, Target,
    UninstallReport, RECORD_FILE,
};

use crate::cli::ClientChoice;
use crate::output::print;

/// The folders the client files are found from, read from this process's environment.
pub(crate) fn places() -> anyhow::Result<Places> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let os = if cfg!(target_os = "macos") {
        Os::MacOs
    } else if cfg!(windows) {
        Os::Windows
    } else {
        Os::Linux
    };
    let home = var("HOME").or_else(|| var("USERPROFILE")).ok_or_else(|| {
        anyhow::anyhow!("neither HOME nor USERPROFILE is set: cannot find the clients' files")
    })?;
    Ok(Places {
        home,
        cwd: std::env::current_dir()?,
        os,
        appdata: var("APPDATA"),
        xdg_config_home: var("XDG_CONFIG_HOME"),
        codex_home: var("CODEX_HOME"),
    })
}

/// The target of a choice.
pub(crate) fn target(choice: &ClientChoice, places: &Places) -> anyhow::Result<Target> {
    Ok(match choice {
        ClientChoice::Client(client, scope) => Target::locate(*client, *scope, places)?,
        ClientChoice::File(client, file) => Target::file(*client, &std::path::absolute(file)?),
    })
}

/// Locates the chosen file and runs `work` on it: the target and what `work` reported.
/// Imported entries are checked against mcpx's config schema.
fn with_request<R>(
    config: &Path,
    choice: &ClientChoice,
    dry_run: bool,
    work: impl FnOnce(&Request<'_>) -> Result<R, mcpclients::Error>,
) -> anyhow::Result<(Target, R)> {
    let places = places()?;
    let target = target(choice, &places)?;
    let check = |entry: &serde_json::Value| mcpx::config::entry_problems(entry, "$");
    let request = Request {
        target: &target,
        config,
        places: &places,
        dry_run,
        check: Some(&check),
    };
    let report = work(&request)?;
    Ok((target, report))
}

/// Warnings on stderr: the report's, and each variable an imported server needs that is not
/// set here (where the client starts mcpx it may be; say where it must be).
fn warn(report: &ImportReport, client: Client) {
    for warning in &report.warnings {
        anstream::eprintln!("mcpx: warning: {warning}");
    }
    for (server, variable) in &report.variables {
        if std::env::var_os(variable).is_some() {
            continue;
        }
        let passed = if client == Client::Codex {
            " (Codex passes it to mcpx: its entry lists it in env_vars)"
        } else {
            ""
        };
        anstream::eprintln!(
            "mcpx: warning: {variable} is not set here; {server} needs it: set it in the environment {} starts mcpx in{passed}, or {server} will not start",
            client.name()
        );
    }
}

fn backed_up(out: &mut String, target: &Target, backup: Option<&Path>) {
    if let Some(backup) = backup {
        let _ = writeln!(
            out,
            "backed up {} to {}",
            target.file.display(),
            backup.display()
        );
    }
}

/// The first lines of a report: the client's file, and which mcpx config the command uses.
fn describe(target: &Target, config: &Path) -> String {
    let file = match target.client {
        Client::Generic => target.file.display().to_string(),
        client => format!(
            "{} ({}): {}",
            client.name(),
            target.scope.name(),
            target.file.display()
        ),
    };
    format!("{file}\nmcpx config: {}\n", config.display())
}

fn import_lines(out: &mut String, report: &ImportReport, dry_run: bool) {
    let count = report.found.len();
    let _ = writeln!(
        out,
        "{} server{} found in {}{}",
        count,
        if count == 1 { "" } else { "s" },
        report.file.display(),
        if report.skipped_gateway {
            " (besides mcpx's own entry)"
        } else {
            ""
        }
    );
    let mut outcomes = report.outcomes.iter();
    for found in &report.found {
        let outcome = if found.left.is_some() {
            None
        } else {
            outcomes.next()
        };
        let what = match outcome {
            None => format!(
                "left in the client's file: {}",
                found.left.as_deref().unwrap_or_default()
            ),
            Some(Outcome::Added { .. }) => "added".to_owned(),
            Some(Outcome::Same { to, .. }) if *to == found.name => {
                "already in mcpx's config (the same entry)".to_owned()
            }
            Some(Outcome::Same { to, .. }) => format!("already in mcpx's config as {to}"),
            Some(Outcome::Renamed { to, .. }) => {
                format!(
                    "added as {to}: mcpx's config has another server called {}",
                    found.name
                )
            }
            Some(_) => "?".to_owned(),
        };
        let _ = writeln!(out, "  {}: {what}", found.name);
        for note in &found.notes {
            let _ = writeln!(out, "    note: {note}");
        }
        if dry_run {
            let shown = serde_json::to_string(&found.shown).unwrap_or_default();
            let _ = writeln!(out, "    {shown}");
        }
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    if report.written
        || (dry_run
            && report
                .outcomes
                .iter()
                .any(|o| !matches!(o, Outcome::Same { .. })))
    {
        let _ = writeln!(out, "{verb} {}", report.config.display());
    } else {
        let _ = writeln!(out, "{} unchanged", report.config.display());
    }
}

/// `mcpx import`.
pub(crate) fn import(
    config: &Path,
    choice: &ClientChoice,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let (target, report) = with_request(config, choice, dry_run, mcpclients::import)?;
    let mut out = describe(&target, config);
    import_lines(&mut out, &report, dry_run);
    print(&out)?;
    warn(&report, target.client);
    Ok(ExitCode::SUCCESS)
}

/// `--http URL [--token-env VAR]`, checked: a URL beyond this machine needs the token.
#[derive(Debug)]
pub(crate) struct Remote {
    url: String,
    token_env: Option<String>,
}

impl Remote {
    /// The remote gateway asked for, if any.
    pub(crate) fn checked(
        url: Option<&str>,
        token_env: Option<&str>,
    ) -> anyhow::Result<Option<Remote>> {
        let Some(url) = url else { return Ok(None) };
        if token_env.is_none() && !loopback(url) {
            anyhow::bail!(
                "{url} is not on this machine, and mcpx serve --http beyond loopback requires a bearer token: pass --token-env VAR, VAR holding the gateway's token where the client runs"
            );
        }
        Ok(Some(Remote {
            url: url.to_owned(),
            token_env: token_env.map(str::to_owned),
        }))
    }
}

/// Whether an http(s) URL's host is this machine (`127.0.0.0/8`, `localhost`, `[::1]`).
fn loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The program a client's entry starts: this mcpx, by the path of the `mcpx` on PATH when
/// that is this same file (a stable path: `current_exe` may be a versioned one, in a Homebrew
/// Cellar or an npx cache, gone after an upgrade), else by its own path, with a note.
fn program() -> anyhow::Result<(PathBuf, Option<String>)> {
    let exe = std::env::current_exe()?;
    let real = std::fs::canonicalize(&exe).unwrap_or_else(|_| exe.clone());
    let name = exe.file_name().map(|n| n.to_owned()).unwrap_or_default();
    let on_path = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(&name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_file());
    match on_path {
        Some(found) if std::fs::canonicalize(&found).is_ok_and(|f| f == real) => {
            Ok((std::path::absolute(&found)?, None))
        }
        _ => Ok((
            exe.clone(),
            Some(format!(
                "the entry starts {} (this mcpx: no mcpx on PATH is this same program); after moving or upgrading mcpx, run install again",
                exe.display()
            )),
        )),
    }
}

/// `mcpx install`.
pub(crate) fn install(
    config: &Path,
    choice: &ClientChoice,
    dry_run: bool,
    remote: Option<Remote>,
) -> anyhow::Result<ExitCode> {
    let mut note = None;
    let gateway = match remote {
        Some(Remote { url, token_env }) => Gateway::Http { url, token_env },
        None => {
            let (program, why) = program()?;
            note = why;
            Gateway::Stdio {
                program,
                config: config.to_path_buf(),
            }
        }
    };
    let (target, report) = with_request(config, choice, dry_run, |request| {
        mcpclients::install(request, &gateway, std::time::SystemTime::now())
    })?;
    let mut out = install_lines(&target, config, &report, dry_run);
    if let Some(note) = note.filter(|_| !report.already) {
        let _ = writeln!(out, "note: {note}");
    }
    print(&out)?;
    warn(&report.import, target.client);
    Ok(ExitCode::SUCCESS)
}

fn install_lines(target: &Target, config: &Path, report: &InstallReport, dry_run: bool) -> String {
    let mut out = describe(target, config);
    import_lines(&mut out, &report.import, dry_run);
    let entry = serde_json::to_string(&report.entry).unwrap_or_default();
    let name = target.client.name();
    if report.already {
        let _ = writeln!(out, "mcpx is already installed there: nothing changed");
        return out;
    }
    if dry_run {
        let _ = writeln!(
            out,
            "would back up {} and make its only server {} = {entry}",
            target.file.display(),
            mcpclients::GATEWAY_NAME
        );
        return out;
    }
    backed_up(&mut out, target, report.backup.as_deref());
    if report.backup.is_none() && report.created {
        let _ = writeln!(out, "created {}", target.file.display());
    }
    let _ = writeln!(
        out,
        "its only server is now {} = {entry}\nrecorded what it replaced in {}\nrestart {name} to use it; `mcpx uninstall {name}` puts its servers back",
        mcpclients::GATEWAY_NAME,
        report.record.display()
    );
    out
}

/// `mcpx uninstall`.
pub(crate) fn uninstall(
    config: &Path,
    choice: &ClientChoice,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let (target, report) = with_request(config, choice, dry_run, |request| {
        mcpclients::uninstall(request, std::time::SystemTime::now())
    })?;
    print(&uninstall_lines(&target, config, &report, dry_run))?;
    Ok(ExitCode::SUCCESS)
}

fn uninstall_lines(
    target: &Target,
    config: &Path,
    report: &UninstallReport,
    dry_run: bool,
) -> String {
    let mut out = describe(target, config);
    if Some(report.record.as_path()) != config.parent().map(|d| d.join(RECORD_FILE)).as_deref() {
        let _ = writeln!(
            out,
            "the install was recorded in {} (its entry named that config)",
            report.record.display()
        );
    }
    let verb = if dry_run {
        "would put back"
    } else {
        "put back"
    };
    let _ = writeln!(
        out,
        "{verb} {} server{}: {}",
        report.restored.len(),
        if report.restored.len() == 1 { "" } else { "s" },
        report.restored.join(", ")
    );
    for (name, why) in report.kept.iter().chain(&report.not_restored) {
        let _ = writeln!(out, "  {name}: {why}");
    }
    if report.removed_gateway {
        let _ = writeln!(
            out,
            "{} the entry install wrote ({})",
            if dry_run { "would remove" } else { "removed" },
            mcpclients::GATEWAY_NAME
        );
    }
    backed_up(&mut out, target, report.backup.as_deref());
    if !dry_run {
        let _ = writeln!(out, "restart {} to use them", target.client.name());
    }
    out
}
