//! Install then uninstall on each client's file, shaped as that client documents it (comments
//! and trailing commas where its format allows them): import finds every server, install
//! leaves the gateway as the only server and every other member and comment as it was, a
//! second install changes nothing, and uninstall brings the servers back JSON-equal and in
//! their order. And the bad inputs: a missing file, a malformed one, a file the client changed
//! between install and uninstall.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mcpclients::{
    Client, Error, Gateway, Os, Outcome, Places, Request, Scope, Target, GATEWAY_NAME,
};
use serde_json::{json, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// A home folder with a project in it; the clients' files are put there.
struct Home {
    _dir: tempfile::TempDir,
    places: Places,
    config: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        let cwd = home.join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        Home {
            config: home.join(".config/mcpx/config.json"),
            places: Places {
                home: home.clone(),
                cwd,
                os: Os::Linux,
                appdata: None,
                xdg_config_home: None,
                codex_home: None,
            },
            _dir: dir,
        }
    }

    /// Puts `fixture` where `client` keeps its `scope` file; the target.
    fn place(&self, client: Client, scope: Scope, fixture: &str) -> Target {
        let target = Target::locate(client, scope, &self.places).unwrap();
        let text = std::fs::read_to_string(Path::new(FIXTURES).join(fixture))
            .unwrap()
            .replace("PROJECT_DIR", &self.places.cwd.display().to_string());
        std::fs::create_dir_all(target.file.parent().unwrap()).unwrap();
        std::fs::write(&target.file, text).unwrap();
        target
    }

    fn write_json(&self, relative: &str, value: &Value) {
        let path = self.places.home.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    }

    fn request<'a>(&'a self, target: &'a Target) -> Request<'a> {
        Request {
            target,
            config: &self.config,
            places: &self.places,
            dry_run: false,
            check: None,
        }
    }

    fn gateway(&self) -> Gateway {
        Gateway::Stdio {
            program: "/usr/local/bin/mcpx".into(),
            config: self.config.clone(),
        }
    }
}

fn at(n: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_529_312 + n)
}

/// How many files beside `file` have `part` in their names.
fn files_named(file: &Path, part: &str) -> usize {
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(part)
        })
        .count()
}

/// The servers install found and left in the client (what mcpx cannot run).
fn left_in_client(report: &mcpclients::InstallReport) -> Vec<&str> {
    report
        .import
        .found
        .iter()
        .filter(|f| f.left.is_some())
        .map(|f| f.name.as_str())
        .collect()
}

fn names(servers: &[(String, Value)]) -> Vec<&str> {
    servers.iter().map(|(n, _)| n.as_str()).collect()
}

/// The document without the servers member.
fn without_servers(mut doc: Value, target: &Target) -> Value {
    let (last, parents) = target.at.split_last().unwrap();
    let mut object = &mut doc;
    for name in parents {
        object = object.get_mut(name).unwrap();
    }
    object.as_object_mut().unwrap().shift_remove(last);
    doc
}

/// The comments outside the servers member of each fixture, which install must keep.
fn comments_outside(fixture: &str) -> &'static [&'static str] {
    match fixture {
        "vscode.jsonc" => &["// Inputs are asked for the first time a server starts, and kept by VS Code."],
        "zed.jsonc" => &[
            "// Zed settings\n//\n// For information on how to configure Zed, see the Zed\n// documentation: https://zed.dev/docs/configuring-zed\n{",
            "\"vim_mode\": true, // trailing commas are allowed\n}",
        ],
        "codex.toml" => &["# Codex reads ~/.codex/config.toml.\nmodel", "model = \"gpt-5-mini\" # quicker"],
        _ => &[],
    }
}

/// The whole round trip on one client's file: import finds `want`, the servers of `left` stay
/// in the client's file beside the gateway (mcpx cannot read them as the client does), the
/// others go to mcpx's config.
fn round_trip(client: Client, scope: Scope, fixture: &str, want: &[&str], left: &[&str]) {
    let home = Home::new();
    let target = home.place(client, scope, fixture);
    let original_text = std::fs::read_to_string(&target.file).unwrap();
    let original = mcpclients::document(&target).unwrap().unwrap();
    let original_servers = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(names(&original_servers), want, "{fixture}: servers read");

    // Install: the servers go to mcpx's config, the gateway becomes the only server.
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    let found: Vec<&str> = report
        .import
        .found
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(found, want, "{fixture}: import finds every server");
    assert_eq!(
        left_in_client(&report),
        left,
        "{fixture}: left in the client"
    );
    assert!(report
        .import
        .outcomes
        .iter()
        .all(|o| matches!(o, Outcome::Added { .. })));
    let imported: Vec<&str> = want.iter().copied().filter(|n| !left.contains(n)).collect();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&home.config).unwrap()).unwrap();
    let in_config: Vec<&String> = config["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(in_config, imported, "{fixture}: mcpx's config");
    let installed = mcpclients::servers(&target).unwrap().unwrap();
    let mut entry = mcpclients::gateway_entry(client, &home.gateway()).unwrap();
    if client == Client::Codex {
        // Codex passes mcpx only the variables its entry lists.
        entry["env_vars"] = json!(["DOCS_TOKEN", "FIGMA_OAUTH_TOKEN"]);
    }
    let mut expected = vec![(GATEWAY_NAME.to_owned(), entry)];
    expected.extend(
        original_servers
            .iter()
            .filter(|(n, _)| left.contains(&n.as_str()))
            .cloned(),
    );
    assert_eq!(installed, expected, "{fixture}: installed");
    let after = mcpclients::document(&target).unwrap().unwrap();
    assert_eq!(
        without_servers(after, &target),
        without_servers(original.clone(), &target),
        "{fixture}: the rest of the file"
    );
    let installed_text = std::fs::read_to_string(&target.file).unwrap();
    for comment in comments_outside(fixture) {
        assert!(
            installed_text.contains(comment),
            "{fixture}: {comment} kept:\n{installed_text}"
        );
    }
    let backup = report.backup.clone().unwrap();
    assert_eq!(
        std::fs::read_to_string(&backup).unwrap(),
        original_text,
        "{fixture}: backup"
    );

    // Again: nothing changes, no second backup.
    let again = mcpclients::install(&home.request(&target), &home.gateway(), at(1)).unwrap();
    assert!(again.already, "{fixture}: idempotent");
    assert_eq!(
        std::fs::read_to_string(&target.file).unwrap(),
        installed_text
    );
    let backups = files_named(&target.file, ".mcpx-backup-");
    assert_eq!(backups, 1, "{fixture}: one backup");

    // Uninstall: the servers come back, equal and in order; the rest as it was.
    let report = mcpclients::uninstall(&home.request(&target), at(2)).unwrap();
    assert_eq!(report.restored, want);
    assert!(report.kept.is_empty() && report.removed_gateway);
    let restored = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(restored, original_servers, "{fixture}: restored");
    assert_eq!(
        mcpclients::document(&target).unwrap().unwrap(),
        original,
        "{fixture}: document"
    );
    let restored_text = std::fs::read_to_string(&target.file).unwrap();
    // Nothing changed since install: the servers member's own text comes back, comments and
    // all, where it was (for Codex, its tables between the others, as they were).
    assert_eq!(restored_text, original_text, "{fixture}: byte for byte");
    assert!(!home.config.with_file_name(mcpclients::RECORD_FILE).exists());
}

#[test]
fn claude_desktop() {
    round_trip(
        Client::ClaudeDesktop,
        Scope::User,
        "claude-desktop.json",
        &["filesystem", "github"],
        &[],
    );
}

#[test]
fn claude_code_user() {
    round_trip(
        Client::ClaudeCode,
        Scope::User,
        "claude-code.json",
        &["airtable", "notion", "asana", "secure-api"],
        &[],
    );
}

#[test]
fn claude_code_local() {
    round_trip(
        Client::ClaudeCode,
        Scope::Local,
        "claude-code.json",
        &["stripe"],
        &[],
    );
}

#[test]
fn claude_code_project() {
    round_trip(
        Client::ClaudeCode,
        Scope::Project,
        "claude-code-project.json",
        &["shared-server", "api-server"],
        &[],
    );
}

#[test]
fn cursor() {
    round_trip(
        Client::Cursor,
        Scope::User,
        "cursor.json",
        &["playwright", "context7", "local-python"],
        &["local-python"],
    );
}

#[test]
fn vscode_project_with_comments() {
    round_trip(
        Client::Vscode,
        Scope::Project,
        "vscode.jsonc",
        &["Perplexity", "github", "fetch"],
        &["Perplexity"],
    );
}

#[test]
fn vscode_user() {
    round_trip(
        Client::Vscode,
        Scope::User,
        "vscode.jsonc",
        &["Perplexity", "github", "fetch"],
        &["Perplexity"],
    );
}

#[test]
fn windsurf() {
    round_trip(
        Client::Windsurf,
        Scope::User,
        "windsurf.json",
        &["github", "figma", "paused"],
        &[],
    );
}

#[test]
fn codex() {
    round_trip(
        Client::Codex,
        Scope::User,
        "codex.toml",
        &["docs", "figma"],
        &[],
    );
}

#[test]
fn gemini() {
    round_trip(
        Client::Gemini,
        Scope::User,
        "gemini.json",
        &["pythonTools", "httpServer", "sseServer"],
        &[],
    );
}

#[test]
fn zed_with_comments() {
    round_trip(
        Client::Zed,
        Scope::User,
        "zed.jsonc",
        &["local-mcp-server", "remote-mcp-server", "legacy-server"],
        &[],
    );
}

/// What import makes of each client's forms, in mcpx's config.
#[test]
fn imported_entries_are_mcpx_entries() {
    let home = Home::new();
    let cases = [
        (Client::Gemini, "gemini.json"),
        (Client::Codex, "codex.toml"),
        (Client::Vscode, "vscode.jsonc"),
        (Client::Zed, "zed.jsonc"),
        (Client::Windsurf, "windsurf.json"),
    ];
    let mut notes = Vec::new();
    let mut left = Vec::new();
    for (client, fixture) in cases {
        let target = home.place(client, Scope::User, fixture);
        let report = mcpclients::import(&home.request(&target)).unwrap();
        for found in report.found {
            for note in found.notes {
                notes.push(format!("{} {}: {note}", client.name(), found.name));
            }
            if let Some(why) = found.left {
                left.push(format!("{} {}: {why}", client.name(), found.name));
            }
        }
    }
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&home.config).unwrap()).unwrap();
    let servers = &config["mcpServers"];
    let project = home.places.cwd.display().to_string();
    assert_eq!(
        servers["pythonTools"],
        json!({"command": "python", "args": ["-m", "my_mcp_server", "--port", "8080"],
        "env": {"DATABASE_URL": "${DB_CONNECTION_STRING}", "API_KEY": "${EXTERNAL_API_KEY}"}, "cwd": "./mcp-servers/python"})
    );
    assert_eq!(
        servers["httpServer"],
        json!({"url": "http://localhost:3000/mcp", "headers": {"Authorization": "Bearer FIXTURE0secret0value0123456789"}})
    );
    assert_eq!(
        servers["sseServer"],
        json!({"url": "http://localhost:8080/sse"})
    );
    assert_eq!(
        servers["docs"],
        json!({"command": "npx", "args": ["-y", "mcp-server-docs"],
        "env": {"API_KEY": "FIXTURE0secret0value0123456789", "DOCS_TOKEN": "${DOCS_TOKEN}"}, "startupTimeout": 20})
    );
    assert_eq!(
        servers["figma"],
        json!({"url": "https://mcp.figma.com/mcp",
        "headers": {"Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}", "X-Figma-Region": "us-east-1"}})
    );
    // VS Code asks for an input when it starts the server; mcpx cannot.
    assert!(servers.get("Perplexity").is_none());
    assert_eq!(
        left,
        ["vscode Perplexity: vscode asks for input 'perplexity-key' when it starts the server; mcpx cannot ask: left in vscode"]
    );
    assert_eq!(
        servers["legacy-server"],
        json!({"command": "legacy-server", "args": ["--stdio"], "env": {"LEGACY_KEY": "value"}})
    );
    // Windsurf's figma collides with Codex's: renamed, the same input again merges.
    assert_eq!(
        servers["figma-windsurf"],
        json!({"url": "https://example.com/figma/mcp",
        "headers": {"Authorization": "Bearer FIXTURE0secret0value0123456789"}})
    );
    assert!(!project.is_empty());
    assert_eq!(notes, [
        "gemini pythonTools: not read by mcpx, left out: timeout, trust",
        "gemini httpServer: not read by mcpx, left out: timeout",
        "gemini sseServer: an SSE server: mcpx speaks Streamable HTTP to it, which SSE-only servers do not answer",
        "vscode fetch: not read by mcpx, left out: envFile",
        "zed legacy-server: not read by mcpx, left out: settings, source",
        "windsurf paused: disabled in windsurf: mcpx starts it",
    ]);
}

#[test]
fn a_missing_file_is_reported_and_nothing_written() {
    let home = Home::new();
    let target = Target::locate(Client::Cursor, Scope::User, &home.places).unwrap();
    let err = mcpclients::import(&home.request(&target)).unwrap_err();
    assert!(matches!(err, Error::Missing { .. }), "{err}");
    // Cursor is not installed (no ~/.cursor): install says so.
    let err = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: no such file (cursor does not seem to be installed: {} is not there)",
            target.file.display(),
            home.places.home.join(".cursor").display()
        )
    );
    let err = mcpclients::uninstall(&home.request(&target), at(0)).unwrap_err();
    assert!(matches!(err, Error::NotInstalled { .. }), "{err}");
    assert!(!home.config.exists());
}

#[test]
fn a_new_project_file_is_created_and_removed_again() {
    let home = Home::new();
    let target = Target::locate(Client::Cursor, Scope::Project, &home.places).unwrap();
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert!(report.created && report.backup.is_none());
    assert_eq!(mcpclients::servers(&target).unwrap().unwrap().len(), 1);
    mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert!(!target.file.exists());
}

#[test]
fn a_malformed_file_is_left_as_it_is() {
    let home = Home::new();
    for (client, text, want) in [
        (
            Client::ClaudeCode,
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"T\": \"sk-abc\"}},}}\n",
            "line 1 column 62: a trailing comma",
        ),
        (
            Client::Gemini,
            "{\"mcpServers\": {\"a\": {\"command\": \"x\" \"args\": []}}}",
            "line 1 column 38: expected ',' or '}'",
        ),
        (
            Client::Codex,
            "[mcp_servers.a]\ncommand = \"x\nenv = { T = \"sk-abc\" }\n",
            "line 2 column 13: invalid basic string",
        ),
        (
            Client::Zed,
            "{\"context_servers\": {/* never closed }",
            "line 1 column 22: a comment that never ends",
        ),
    ] {
        let target = Target::locate(client, Scope::User, &home.places).unwrap();
        std::fs::create_dir_all(target.file.parent().unwrap()).unwrap();
        std::fs::write(&target.file, text).unwrap();
        let err = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, Error::Malformed { .. }), "{message}");
        assert!(message.contains(want), "{message}");
        assert!(message.contains("left as it is"), "{message}");
        assert!(!message.contains("sk-abc"), "{message}");
        assert_eq!(std::fs::read_to_string(&target.file).unwrap(), text);
        let ours = files_named(&target.file, "mcpx");
        assert_eq!(ours, 0, "no backup, no temporary file");
    }
    assert!(!home.config.exists(), "mcpx's config untouched");
}

/// Claude Code rewrites its file all the time; a user adds a server after install and changes
/// one install had put away. Uninstall keeps both and everything else Claude Code wrote.
#[test]
fn changes_made_between_install_and_uninstall_are_kept() {
    let home = Home::new();
    let target = home.place(Client::ClaudeCode, Scope::User, "claude-code.json");
    let original = mcpclients::servers(&target).unwrap().unwrap();
    mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    let text = std::fs::read_to_string(&target.file).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["numStartups"] = json!(13);
    doc["tipsHistory"] = json!({"new-key": 1});
    doc["mcpServers"]["added-later"] = json!({"type": "stdio", "command": "later"});
    doc["mcpServers"]["notion"] = json!({"type": "http", "url": "https://mcp.notion.com/v2/mcp"});
    std::fs::write(&target.file, serde_json::to_string(&doc).unwrap()).unwrap();

    let report = mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert_eq!(
        report
            .kept
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["added-later", "notion"]
    );
    let now = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(
        names(&now),
        ["airtable", "notion", "asana", "secure-api", "added-later"]
    );
    assert_eq!(now[1].1["url"], "https://mcp.notion.com/v2/mcp");
    assert_eq!(now[0], original[0]);
    let after = mcpclients::document(&target).unwrap().unwrap();
    assert_eq!(after["numStartups"], 13);
    assert_eq!(after["tipsHistory"], json!({"new-key": 1}));
}

/// A server added to the client after install is imported by the next install and comes back
/// at uninstall with the others.
#[test]
fn installing_again_picks_up_servers_added_since() {
    let home = Home::new();
    let target = home.place(Client::Cursor, Scope::User, "cursor.json");
    mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    let text = std::fs::read_to_string(&target.file).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["mcpServers"]["new-one"] = json!({"command": "new-one"});
    std::fs::write(&target.file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(1)).unwrap();
    assert!(!report.already);
    // local-python stays in Cursor (its ${workspaceFolder} is Cursor's); new-one is imported.
    let found: Vec<(&str, bool)> = report
        .import
        .found
        .iter()
        .map(|f| (f.name.as_str(), f.left.is_some()))
        .collect();
    assert_eq!(found, [("local-python", true), ("new-one", false)]);
    assert!(report.import.skipped_gateway);
    let now = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(names(&now), ["mcpx", "local-python"]);
    mcpclients::uninstall(&home.request(&target), at(2)).unwrap();
    let now = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(
        names(&now),
        ["playwright", "context7", "local-python", "new-one"]
    );
}

#[test]
fn dry_runs_write_nothing_and_show_no_secret() {
    let home = Home::new();
    let target = home.place(Client::ClaudeDesktop, Scope::User, "claude-desktop.json");
    let before = std::fs::read_to_string(&target.file).unwrap();
    let mut request = home.request(&target);
    request.dry_run = true;
    let report = mcpclients::install(&request, &home.gateway(), at(0)).unwrap();
    assert_eq!(std::fs::read_to_string(&target.file).unwrap(), before);
    assert!(!home.config.exists());
    let shown = serde_json::to_string(
        &report
            .import
            .found
            .iter()
            .map(|f| &f.shown)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(!shown.contains("FIXTURE0secret"), "{shown}");
    assert!(shown.contains(mcpclients::MASK));
}

#[test]
fn unknown_clients_and_scopes_are_named() {
    assert_eq!(
        Client::from_name("notepad").unwrap_err().to_string(),
        "unknown client 'notepad': want one of claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, zed"
    );
    let home = Home::new();
    let err = Target::locate(Client::ClaudeDesktop, Scope::Project, &home.places).unwrap_err();
    assert_eq!(
        err.to_string(),
        "claude-desktop has no project scope: it has user"
    );
}

/// A file that already starts mcpx (its record lost, or written by hand): the gateway is never
/// imported into its own config, but it is recorded, and uninstall brings it back with the
/// rest: the client's file is as it was.
#[test]
fn a_gateway_entry_already_there_is_not_imported_but_comes_back() {
    let home = Home::new();
    let old =
        json!({"command": "/opt/old/mcpx", "args": ["serve", "--config", "/elsewhere/mcpx.json"]});
    let file = json!({"mcpServers": {"mcpx": old, "other": {"command": "other"}}});
    home.write_json(".cursor/mcp.json", &file);
    let target = Target::locate(Client::Cursor, Scope::User, &home.places).unwrap();
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert!(report.import.skipped_gateway);
    assert_eq!(report.import.found.len(), 1);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&home.config).unwrap()).unwrap();
    assert_eq!(config["mcpServers"], json!({"other": {"command": "other"}}));
    let report = mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert_eq!(report.restored, ["mcpx", "other"]);
    assert_eq!(mcpclients::document(&target).unwrap().unwrap(), file);
}

/// A Zed extension's entry holds only its settings: there is nothing for mcpx to start, so it
/// stays in Zed's file beside mcpx, and uninstall leaves the servers as they were.
#[test]
fn entries_mcpx_cannot_run_stay_in_the_client() {
    let home = Home::new();
    let extension =
        json!({"source": "extension", "enabled": true, "settings": {"token": "FIXTURE0secret"}});
    let file =
        json!({"context_servers": {"github": extension, "local": {"command": "srv", "args": []}}});
    home.write_json(".config/zed/settings.json", &file);
    let target = Target::locate(Client::Zed, Scope::User, &home.places).unwrap();
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert_eq!(report.import.found.len(), 2);
    assert!(report.import.found[0].left.is_some());
    assert_eq!(report.import.outcomes.len(), 1);
    let now = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(names(&now), ["mcpx", "github"]);
    let again = mcpclients::install(&home.request(&target), &home.gateway(), at(1)).unwrap();
    assert!(again.already);
    mcpclients::uninstall(&home.request(&target), at(2)).unwrap();
    assert_eq!(mcpclients::document(&target).unwrap().unwrap(), file);
}

/// A client file that is a symlink (dotfiles kept in a repository): install and uninstall
/// write through the link, which stays a link.
#[cfg(unix)]
#[test]
fn a_symlinked_file_is_written_through_its_link() {
    let home = Home::new();
    let real = home.places.home.join("dotfiles/cursor-mcp.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(Path::new(FIXTURES).join("claude-desktop.json")).unwrap();
    std::fs::write(&real, &text).unwrap();
    let target = Target::locate(Client::Cursor, Scope::User, &home.places).unwrap();
    std::fs::create_dir_all(target.file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &target.file).unwrap();
    mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    let is_link = |p: &Path| {
        std::fs::symlink_metadata(p)
            .unwrap()
            .file_type()
            .is_symlink()
    };
    assert!(is_link(&target.file), "still a link after install");
    let servers = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(names(&servers), [GATEWAY_NAME]);
    assert!(std::fs::read_to_string(&real).unwrap().contains("\"mcpx\""));
    mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert!(is_link(&target.file), "still a link after uninstall");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), text);
}

/// A file written on Windows (CRLF line ends) with a byte order mark: both survive install,
/// and uninstall gives back the same bytes.
#[test]
fn crlf_and_a_byte_order_mark_come_back_as_they_were() {
    let home = Home::new();
    let target = Target::locate(Client::ClaudeDesktop, Scope::User, &home.places).unwrap();
    let text = std::fs::read_to_string(Path::new(FIXTURES).join("claude-desktop.json")).unwrap();
    let original = format!("\u{feff}{}", text.replace('\n', "\r\n"));
    std::fs::create_dir_all(target.file.parent().unwrap()).unwrap();
    std::fs::write(&target.file, &original).unwrap();
    mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    let installed = std::fs::read_to_string(&target.file).unwrap();
    assert!(installed.starts_with('\u{feff}'), "{installed:?}");
    assert!(installed.ends_with("\r\n}\r\n"), "{installed:?}");
    assert_eq!(
        names(&mcpclients::servers(&target).unwrap().unwrap()),
        [GATEWAY_NAME]
    );
    mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert_eq!(std::fs::read_to_string(&target.file).unwrap(), original);
}

/// The record and a new mcpx config hold the client's secrets: readable by their owner only.
/// A config others can read while the client's file is private is reported.
#[cfg(unix)]
#[test]
fn the_record_and_a_new_config_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let home = Home::new();
    let target = home.place(Client::ClaudeDesktop, Scope::User, "claude-desktop.json");
    std::fs::set_permissions(&target.file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert!(
        report.import.warnings.is_empty(),
        "{:?}",
        report.import.warnings
    );
    assert_eq!(mode(&home.config), 0o600);
    assert_eq!(mode(&report.record), 0o600);
    assert_eq!(
        mode(&target.file),
        0o600,
        "the client's file keeps its mode"
    );
    assert_eq!(
        files_named(&target.file, ".tmp"),
        0,
        "no temporary file left"
    );
    mcpclients::uninstall(&home.request(&target), at(1)).unwrap();

    std::fs::set_permissions(&home.config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cursor = home.place(Client::Cursor, Scope::User, "cursor.json");
    std::fs::set_permissions(&cursor.file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let report = mcpclients::import(&home.request(&cursor)).unwrap();
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0].contains("can be read by others (mode 644) while cursor's file cannot"),
        "{:?}",
        report.warnings
    );
}

/// Each variable an imported server needs without a default is reported, for the caller to
/// say which are not set; Codex's entry lists every variable of mcpx's servers in `env_vars`.
#[test]
fn the_variables_imported_servers_need_are_reported() {
    let home = Home::new();
    let target = home.place(Client::Codex, Scope::User, "codex.toml");
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert_eq!(
        report.import.variables,
        [
            ("docs".to_owned(), "DOCS_TOKEN".to_owned()),
            ("figma".to_owned(), "FIGMA_OAUTH_TOKEN".to_owned())
        ]
    );
    let servers = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(
        servers[0].1["env_vars"],
        json!(["DOCS_TOKEN", "FIGMA_OAUTH_TOKEN"])
    );
    let code = home.place(Client::ClaudeCode, Scope::User, "claude-code.json");
    let report = mcpclients::import(&home.request(&code)).unwrap();
    // secure-api's ${API_TOKEN:-none} has a default: nothing to set.
    assert!(report.variables.is_empty(), "{:?}", report.variables);
}

/// An install recorded beside another config (its entry names it): installing with this
/// config is refused with the one to use; uninstall finds that record by itself.
#[test]
fn an_install_with_another_config_is_continued_by_uninstall_and_named_by_install() {
    let home = Home::new();
    let target = home.place(Client::Cursor, Scope::User, "cursor.json");
    let project_config = home.places.cwd.join("mcpx.json");
    let project_gateway = Gateway::Stdio {
        program: "/usr/local/bin/mcpx".into(),
        config: project_config.clone(),
    };
    let mut request = home.request(&target);
    request.config = &project_config;
    mcpclients::install(&request, &project_gateway, at(0)).unwrap();
    let err = mcpclients::install(&home.request(&target), &home.gateway(), at(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: mcpx is installed here with the config {}: pass --config {} (or uninstall it first)",
            target.file.display(),
            project_config.display(),
            project_config.display()
        )
    );
    let report = mcpclients::uninstall(&home.request(&target), at(2)).unwrap();
    assert_eq!(report.restored, ["playwright", "context7", "local-python"]);
}

/// The user edits the gateway's entry (adds an `env`), then installs again: uninstall still
/// takes the gateway out and gives the file back as it was before the first install.
#[test]
fn an_edited_gateway_entry_installed_again_still_goes_at_uninstall() {
    let home = Home::new();
    let target = home.place(Client::Cursor, Scope::User, "cursor.json");
    let original_text = std::fs::read_to_string(&target.file).unwrap();
    mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(&target.file).unwrap()).unwrap();
    file["mcpServers"][GATEWAY_NAME]["env"] = json!({"RUST_LOG": "debug"});
    std::fs::write(&target.file, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    mcpclients::install(&home.request(&target), &home.gateway(), at(1)).unwrap();
    let report = mcpclients::uninstall(&home.request(&target), at(2)).unwrap();
    assert!(report.removed_gateway);
    let servers = mcpclients::servers(&target).unwrap().unwrap();
    assert!(
        servers.iter().all(|(name, _)| name != GATEWAY_NAME),
        "{servers:?}"
    );
    let original: Value = serde_json::from_str(&original_text).unwrap();
    let restored: Value =
        serde_json::from_str(&std::fs::read_to_string(&target.file).unwrap()).unwrap();
    assert_eq!(restored, original);
}

/// A server install left in the client (Cursor's `local-python`, which mcpx cannot run) and
/// the user deleted while installed stays deleted at uninstall; the others come back.
#[test]
fn a_server_left_in_the_client_and_deleted_since_is_not_put_back() {
    let home = Home::new();
    let target = home.place(Client::Cursor, Scope::User, "cursor.json");
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert_eq!(left_in_client(&report), ["local-python"]);
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(&target.file).unwrap()).unwrap();
    file["mcpServers"]
        .as_object_mut()
        .unwrap()
        .shift_remove("local-python");
    std::fs::write(&target.file, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let report = mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert_eq!(report.restored, ["playwright", "context7"]);
    assert_eq!(report.not_restored.len(), 1);
    assert_eq!(report.not_restored[0].0, "local-python");
    let servers = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(names(&servers), ["playwright", "context7"]);
}

/// Installed again with another mcpx (a new path), a server still left in the client as it
/// was: uninstall still gives the file back byte for byte, comments and all.
#[test]
fn installed_again_the_file_still_comes_back_byte_for_byte() {
    let home = Home::new();
    let target = home.place(Client::Vscode, Scope::Project, "vscode.jsonc");
    let original_text = std::fs::read_to_string(&target.file).unwrap();
    let first = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert!(!left_in_client(&first).is_empty(), "the fixture leaves one");
    let moved = Gateway::Stdio {
        program: "/opt/mcpx/bin/mcpx".into(),
        config: home.config.clone(),
    };
    let again = mcpclients::install(&home.request(&target), &moved, at(1)).unwrap();
    assert!(!again.already);
    mcpclients::uninstall(&home.request(&target), at(2)).unwrap();
    assert_eq!(
        std::fs::read_to_string(&target.file).unwrap(),
        original_text
    );
}

/// The client's file is a link to a file not made yet (a dotfiles folder): install creates the
/// file the link names and the link stays; uninstall removes that file, and the link is still
/// there, as it was.
#[cfg(unix)]
#[test]
fn a_link_to_a_file_not_made_yet_stays_a_link() {
    let home = Home::new();
    let target = mcpclients::Target::locate(Client::Cursor, Scope::User, &home.places).unwrap();
    let dotfiles = home.places.home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(target.file.parent().unwrap()).unwrap();
    let real = dotfiles.join("cursor-mcp.json");
    std::os::unix::fs::symlink(&real, &target.file).unwrap();
    let is_link = || {
        std::fs::symlink_metadata(&target.file)
            .unwrap()
            .file_type()
            .is_symlink()
    };
    let report = mcpclients::install(&home.request(&target), &home.gateway(), at(0)).unwrap();
    assert!(report.created);
    assert!(is_link(), "the link was replaced");
    let servers = mcpclients::servers(&target).unwrap().unwrap();
    assert_eq!(names(&servers), [GATEWAY_NAME]);
    assert!(real.is_file());
    mcpclients::uninstall(&home.request(&target), at(1)).unwrap();
    assert!(is_link(), "the link was removed");
    assert!(!real.exists(), "the file install made is gone");
}
