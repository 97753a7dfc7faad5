//! `mcpx import`, `install`, `uninstall` and `doctor` as a user runs them: what they print
//! (never a secret, `--dry-run` masked), their exit codes and errors for bad input.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

const MCPX: &str = env!("CARGO_BIN_EXE_mcpx");

/// The secret every fixture holds, which no output may show.
const SECRET: &str = "sk-FIXTURE0secret0value0123456789";

struct Home {
    dir: tempfile::TempDir,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `mcpx ARGS` in the home folder, with only it in the environment.
    fn mcpx(&self, args: &[&str]) -> Run {
        let out = std::process::Command::new(MCPX)
            .args(args)
            .current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(
            !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
            "a secret was printed:\n{}{}",
            run.stdout,
            run.stderr
        );
        run
    }
}

fn cursor_file() -> String {
    json!({"mcpServers": {
        "demo": {"command": MCPX, "args": ["demo-server"], "env": {"API_KEY": SECRET}},
        "remote": {"url": "https://mcp.example.com/mcp?key=abc", "headers": {"Authorization": format!("Bearer {SECRET}")}}
    }})
    .to_string()
}

fn replace_home(text: &str, home: &Path) -> String {
    text.replace(&home.display().to_string(), "HOME")
        .replace(MCPX, "MCPX")
}

#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn import_shows_what_it_would_do_with_secrets_masked() {
    let home = Home::new();
    home.write(".cursor/mcp.json", &cursor_file());
    let run = home.mcpx(&["import", "cursor", "--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        replace_home(&run.stdout, &home.path()),
        "cursor (user): HOME/.cursor/mcp.json\n\
         mcpx config: HOME/.config/mcpx/config.json\n\
         2 servers found in HOME/.cursor/mcp.json\n  \
           demo: added\n    \
             {\"command\":\"MCPX\",\"args\":[\"demo-server\"],\"env\":{\"API_KEY\":\"•••\"}}\n  \
           remote: added\n    \
             {\"url\":\"https://mcp.example.com/mcp?key=•••\",\"headers\":{\"Authorization\":\"•••\"}}\n\
         would write HOME/.config/mcpx/config.json\n"
    );
    assert!(!home.path().join(".config/mcpx/config.json").exists());
    // For real: the config keeps the values as the client's file had them.
    let run = home.mcpx(&["import", "cursor"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".config/mcpx/config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(config["mcpServers"]["demo"]["env"]["API_KEY"], SECRET);
}

#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn install_then_uninstall_through_the_command_line() {
    let home = Home::new();
    let file = home.write(".cursor/mcp.json", &cursor_file());
    let before = std::fs::read_to_string(&file).unwrap();
    let run = home.mcpx(&["--config", "mcpx.json", "install", "cursor"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shown = replace_home(&run.stdout, &home.path());
    assert!(shown.contains("its only server is now mcpx = {\"command\":\"MCPX\",\"args\":[\"serve\",\"--config\",\"HOME/mcpx.json\"]}"), "{shown}");
    assert!(
        shown.contains("restart cursor to use it; `mcpx uninstall cursor` puts its servers back"),
        "{shown}"
    );
    let run = home.mcpx(&["--config", "mcpx.json", "install", "cursor"]);
    assert!(
        run.stdout
            .contains("mcpx is already installed there: nothing changed"),
        "{}",
        run.stdout
    );
    // doctor sees it.
    let run = home.mcpx(&["--config", "mcpx.json", "doctor", "--http", "127.0.0.1:0"]);
    assert!(
        run.stdout.contains("ok    cursor (user): mcpx installed"),
        "{}",
        run.stdout
    );
    let run = home.mcpx(&["--config", "mcpx.json", "uninstall", "cursor"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("put back 2 servers: demo, remote"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn bad_input_is_a_clear_error() {
    let home = Home::new();
    let run = home.mcpx(&["install", "notepad"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "mcpx: unknown client 'notepad': want one of claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, zed\n"
    );
    let run = home.mcpx(&["import", "gemini"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(".gemini/settings.json: no such file (gemini's user config)"),
        "{}",
        run.stderr
    );
    let bad = format!("{{\"mcpServers\": {{\"a\": {{\"env\": {{\"K\": \"{SECRET}\"}}}}");
    let file = home.write(".gemini/settings.json", &bad);
    let run = home.mcpx(&["install", "gemini"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("is not valid JSON, so it was left as it is (line 1 column"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(file).unwrap(), bad);
    let run = home.mcpx(&["uninstall", "cursor", "--scope", "project"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("mcpx has not been installed here"),
        "{}",
        run.stderr
    );
    let run = home.mcpx(&["install", "windsurf", "--scope", "project"]);
    assert!(
        run.stderr
            .contains("windsurf has no project scope: it has user"),
        "{}",
        run.stderr
    );
    let run = home.mcpx(&[
        "install",
        "claude-desktop",
        "--http",
        "http://127.0.0.1:8787/mcp",
    ]);
    assert!(
        run.stderr
            .contains("claude-desktop cannot reach a server over HTTP from its config file"),
        "{}",
        run.stderr
    );
}

#[test]
fn install_with_http_writes_each_clients_remote_form() {
    let home = Home::new();
    home.write(".gemini/settings.json", "{}");
    let run = home.mcpx(&[
        "--config",
        "mcpx.json",
        "install",
        "gemini",
        "--http",
        "http://127.0.0.1:8787/mcp",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".gemini/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file,
        json!({"mcpServers": {"mcpx": {"httpUrl": "http://127.0.0.1:8787/mcp"}}})
    );
}

#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn doctor_says_what_is_wrong_and_how_to_fix_it() {
    let home = Home::new();
    let config = json!({"mcpServers": {
        "demo": {"command": MCPX, "args": ["demo-server"]},
        "missing": {"command": "uvx", "args": ["mcp-server-nothing"]},
        "dies": {"command": "sh", "args": ["-c", "echo cannot open the database >&2; exit 3"]}
    }});
    home.write("mcpx.json", &config.to_string());
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = std::process::Command::new(MCPX)
        .args(["--config", "mcpx.json", "doctor", "--http", &addr])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for want in [
        "ok    config mcpx.json parses: 3 servers",
        "FAIL  missing: command uvx is not on PATH\n      fix: install uv (it brings uvx)",
        "ok    demo: starts and lists 6 tools",
        "FAIL  dies: does not start: ",
        "      stderr: cannot open the database",
        &format!("FAIL  {addr} cannot be listened on: "),
        "--    no config file: claude-desktop (user)",
    ] {
        assert!(stdout.contains(want), "{want}:\n{stdout}");
    }
}

/// What import writes is a config mcpx reads: every fixture of every client imported into one
/// config (collisions renamed), read with no variable set. Every server is usable, but for
/// those needing a variable, which fail alone, naming it (the others are served).
#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn imported_configs_load() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../mcpclients/tests/fixtures");
    let home = Home::new();
    let cases = [
        (
            "claude-desktop",
            "claude-desktop.json",
            ".config/Claude/claude_desktop_config.json",
        ),
        ("claude-code", "claude-code.json", ".claude.json"),
        ("cursor", "cursor.json", ".cursor/mcp.json"),
        ("vscode", "vscode.jsonc", ".config/Code/User/mcp.json"),
        (
            "windsurf",
            "windsurf.json",
            ".codeium/windsurf/mcp_config.json",
        ),
        ("codex", "codex.toml", ".codex/config.toml"),
        ("gemini", "gemini.json", ".gemini/settings.json"),
        ("zed", "zed.jsonc", ".config/zed/settings.json"),
    ];
    let mut warned = String::new();
    for (client, fixture, place) in cases {
        let text = std::fs::read_to_string(Path::new(fixtures).join(fixture)).unwrap();
        home.write(place, &text);
        let run = home.mcpx(&["--config", "mcpx.json", "import", client]);
        assert_eq!(run.code, 0, "{client}: {}", run.stderr);
        warned.push_str(&run.stderr);
    }
    let text = std::fs::read_to_string(home.path().join("mcpx.json")).unwrap();
    let (servers, _) =
        mcpx::config::parse(&text, &|_| None).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
    // Cursor's local-python (${workspaceFolder}) and VS Code's Perplexity (an input) stay in
    // their clients.
    assert_eq!(servers.len(), 21, "{text}");
    let mut unset = Vec::new();
    for server in &servers {
        if let mcpclient::Reach::Unusable { problem, .. } = &server.transport {
            let variable = problem
                .split("environment variable ")
                .nth(1)
                .and_then(|rest| rest.strip_suffix(" is not set"))
                .unwrap_or_else(|| panic!("{}: {problem}", server.name));
            unset.push(format!("{} {variable}", server.name));
        }
    }
    assert_eq!(
        unset,
        [
            "context7 CONTEXT7_API_KEY",
            "docs DOCS_TOKEN",
            "figma-codex FIGMA_OAUTH_TOKEN",
            "pythonTools DB_CONNECTION_STRING",
        ],
        "{text}"
    );
    // Import said so for each, naming the server.
    for pair in &unset {
        let (server, variable) = pair.split_once(' ').unwrap();
        let line = format!("mcpx: warning: {variable} is not set here; {server} needs it");
        assert!(warned.contains(&line), "{line}:\n{warned}");
    }
}

/// A user-scope install from a folder that holds a project's mcpx.json still uses the global
/// config (the client's file serves every folder), and says which; an entry mcpx's config
/// would not take stays in the client with the reason; a variable an imported server needs
/// that is not set is named; and the installed entry serves the other servers all the same.
#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn install_uses_the_global_config_warns_and_keeps_what_mcpx_cannot_take() {
    let home = Home::new();
    home.write("mcpx.json", r#"{"mcpServers": {}}"#);
    let file = json!({"mcpServers": {
        "demo": {"command": MCPX, "args": ["demo-server"]},
        "empty": {"command": "", "args": []},
        "keyed": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${MCPX_TEST_KEYED_TOKEN}"}}
    }});
    home.write(".claude.json", &file.to_string());
    let run = home.mcpx(&["install", "claude-code"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shown = replace_home(&run.stdout, &home.path());
    assert!(
        shown.contains("mcpx config: HOME/.config/mcpx/config.json\n"),
        "{shown}"
    );
    assert!(
        shown.contains("  empty: left in the client's file: mcpx's config would not take it ($.command: minLength"),
        "{shown}"
    );
    assert!(
        run.stderr.contains("mcpx: warning: MCPX_TEST_KEYED_TOKEN is not set here; keyed needs it: set it in the environment claude-code starts mcpx in, or keyed will not start"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("mcpx.json")).unwrap(),
        r#"{"mcpServers": {}}"#
    );
    let client: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    let names: Vec<&String> = client["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["mcpx", "empty"]);
    // The config the entry names: keyed fails alone, naming its variable; demo is served.
    let config = home.path().join(".config/mcpx/config.json");
    let run = home.mcpx(&["--config", config.to_str().unwrap(), "servers"]);
    assert!(
        run.stdout.contains("keyed\thttp\tfailed\tserver 'keyed': invalid transport configuration: $.mcpServers.keyed.headers.Authorization: environment variable MCPX_TEST_KEYED_TOKEN is not set"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("demo\tstdio\tok\t"), "{}", run.stdout);
    // Uninstall from the same folder finds the install and puts everything back.
    let run = home.mcpx(&["uninstall", "claude-code"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let client: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(client, file);
}

/// doctor never prints a secret: not the key in an unreachable server's URL (expanded from
/// the environment), not a token a failing server echoes on its stderr.
#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn doctor_prints_no_secret() {
    let home = Home::new();
    let key = "doctor-url-key-0123456789";
    let token = "doctor-env-token-0123456789";
    let config = json!({"mcpServers": {
        "remote": {"url": "http://127.0.0.1:1/mcp/doctor-path-token-0123456789abcdef?key=${DOCTOR_KEY}"},
        "echoes": {"command": "sh", "args": ["-c", "echo my token is $TOKEN >&2; exit 3"], "env": {"TOKEN": token}}
    }});
    home.write("mcpx.json", &config.to_string());
    let out = std::process::Command::new(MCPX)
        .args(["--config", "mcpx.json", "doctor", "--http", "127.0.0.1:0"])
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("DOCTOR_KEY", key)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("FAIL  remote: does not start"), "{stdout}");
    assert!(stdout.contains("FAIL  echoes: does not start"), "{stdout}");
    assert!(stdout.contains("stderr: my token is"), "{stdout}");
    for secret in [key, token, "doctor-path-token-0123456789abcdef"] {
        assert!(!stdout.contains(secret), "{secret}:\n{stdout}");
    }
}

/// `--http` beyond this machine needs the gateway's token: refused without `--token-env`,
/// written in the client's own form with it (a reference, never the token).
#[test]
#[cfg_attr(
    windows,
    ignore = "a Unix home (HOME) and `sh` servers; Windows paths: mcpclients' unit tests"
)]
fn install_with_http_beyond_loopback_needs_a_token_variable() {
    let home = Home::new();
    home.write(".claude.json", "{}");
    let url = "https://gateway.example.com/mcp";
    let install = |client: &str, token: &[&str]| {
        let mut args = vec!["--config", "mcpx.json", "install", client, "--http", url];
        args.extend(token);
        home.mcpx(&args)
    };
    let run = install("claude-code", &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("is not on this machine, and mcpx serve --http beyond loopback requires a bearer token: pass --token-env VAR"),
        "{}",
        run.stderr
    );
    let run = install("claude-code", &["--token-env", "GW_TOKEN"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        file["mcpServers"]["mcpx"],
        json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${GW_TOKEN}"}})
    );
    home.write(".config/zed/settings.json", "{}");
    let run = install("zed", &["--token-env", "GW_TOKEN"]);
    assert!(
        run.stderr
            .contains("zed reads no variable in its config file"),
        "{}",
        run.stderr
    );
}

/// The entry starts mcpx by the path of the `mcpx` on PATH when that is the same program (a
/// stable path, not a versioned one), else by its own path with a note.
#[cfg(unix)]
#[test]
fn the_entry_starts_the_mcpx_on_path_when_it_is_this_one() {
    let home = Home::new();
    home.write(".cursor/mcp.json", r#"{"mcpServers": {}}"#);
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(MCPX, bin.join("mcpx")).unwrap();
    let out = std::process::Command::new(MCPX)
        .args(["--config", "mcpx.json", "install", "cursor"])
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!stdout.contains("note: the entry starts"), "{stdout}");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".cursor/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file["mcpServers"]["mcpx"]["command"],
        bin.join("mcpx").display().to_string()
    );
    let home = Home::new();
    home.write(".cursor/mcp.json", r#"{"mcpServers": {}}"#);
    let run = home.mcpx(&["--config", "mcpx.json", "install", "cursor"]);
    assert!(
        run.stdout.contains(&format!(
            "note: the entry starts {MCPX} (this mcpx: no mcpx on PATH is this same program)"
        )),
        "{}",
        run.stdout
    );
}
