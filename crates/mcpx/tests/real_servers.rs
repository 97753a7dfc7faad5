//! The command line against real MCP servers installed from npm and PyPI by
//! `scripts/fetch-real-servers` (pinned, all starting without the network): the reference
//! filesystem, memory and sequential-thinking servers (zod schemas) and mcp-server-time,
//! mcp-server-git and mcp-server-fetch (pydantic schemas). `key=value` calls exercise the typing
//! rules on their schemas; `servers`, `tools` and `lint` run over the whole set at once, with a
//! server that dies at start among them. Without the servers the tests skip with a message
//! (they fail when `CI` is set).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

mod common;
use common::run;

/// Where scripts/fetch-real-servers installs the servers.
fn installed() -> Option<PathBuf> {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/real-servers"
    ));
    let needed = [
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        "node_modules/@modelcontextprotocol/server-memory/dist/index.js",
        "node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js",
        "venv/bin/mcp-server-time",
        "venv/bin/mcp-server-git",
        "venv/bin/mcp-server-fetch",
    ];
    if let Some(missing) = needed.iter().find(|path| !root.join(path).exists()) {
        let msg = format!(
            "real MCP server {} not found under {} (run scripts/fetch-real-servers)",
            missing,
            root.display()
        );
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: {msg}");
        }
        return None;
    }
    Some(root)
}

/// A config in `dir` with the six servers; the filesystem server may read `dir/files`, the
/// git server works on `dir/repo` (one commit, `first`), memory keeps its graph in `dir`.
/// `extra` adds servers (JSON members).
fn config(root: &Path, dir: &Path, extra: &str) -> PathBuf {
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "first line\nsecond line\n").unwrap();
    let repo = dir.join("repo");
    git(dir, &["init", "-q", "repo"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=mcpx",
            "-c",
            "user.email=mcpx@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "first",
        ],
    );
    let node = |package: &str, args: Vec<Value>| {
        let script = root.join(format!(
            "node_modules/@modelcontextprotocol/{package}/dist/index.js"
        ));
        let mut all = vec![json!(script)];
        all.extend(args);
        json!({"command": "node", "args": all})
    };
    let python = |name: &str, args: Value| json!({"command": root.join("venv/bin").join(name), "args": args});
    let servers = json!({
        "filesystem": node("server-filesystem", vec![json!(files)]),
        "memory": {
            "command": "node",
            "args": [root.join("node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
            "env": {"MEMORY_FILE_PATH": dir.join("memory.jsonl")}
        },
        "thinking": node("server-sequential-thinking", Vec::new()),
        "time": python("mcp-server-time", json!(["--local-timezone", "UTC"])),
        "git": python("mcp-server-git", json!(["--repository", repo])),
        "fetch": python("mcp-server-fetch", json!([])),
    });
    let text = servers.to_string();
    let members = &text[1..text.len() - 1];
    let path = dir.join("mcpx.json");
    std::fs::write(&path, format!(r#"{{"mcpServers": {{{members}{extra}}}}}"#)).unwrap();
    path
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(dir).args(args).status();
    assert!(status.is_ok_and(|s| s.success()), "git {args:?}");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "needs the real servers from npm and PyPI, which scripts/fetch-real-servers installs for Linux"
)]
fn key_value_calls_on_real_servers_are_typed_by_their_schemas() {
    let Some(root) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(&root, dir.path(), "");
    let files = dir.path().join("files");
    let notes = format!("path={}", files.join("notes.txt").display());
    let repo = format!("repo_path={}", dir.path().join("repo").display());

    // zod: nextThoughtNeeded is boolean-or-string, `false` is sent as the boolean; integers.
    let (out, _) = run(
        &config,
        &[
            "call",
            "thinking",
            "sequentialthinking",
            "thought=typing",
            "nextThoughtNeeded=false",
            "thoughtNumber=1",
            "totalThoughts=1",
            "--json",
        ],
        0,
    );
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["structuredContent"]["nextThoughtNeeded"], false);
    assert_eq!(result["structuredContent"]["thoughtNumber"], 1);

    // zod: an optional number.
    let (out, _) = run(
        &config,
        &["call", "filesystem", "read_text_file", &notes, "head=1"],
        0,
    );
    assert!(out.starts_with("first line\n"), "{out}");

    // pydantic: max_count is an integer, start_timestamp an Optional[str] (anyOf with null).
    let (out, _) = run(
        &config,
        &[
            "call",
            "git",
            "git_log",
            &repo,
            "max_count=1",
            "start_timestamp=null",
        ],
        0,
    );
    assert!(out.contains("Message: first"), "{out}");

    // pydantic: strings stay strings, also where they look like something else.
    let (out, _) = run(
        &config,
        &[
            "call",
            "time",
            "convert_time",
            "source_timezone=UTC",
            "time=12:00",
            "target_timezone=Europe/Paris",
            "--json",
        ],
        0,
    );
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        result["structuredContent"]["target"]["datetime"]
            .as_str()
            .map(|t| &t[10..]),
        Some("T13:00:00+01:00")
    );

    // Rejected before sending, each as what it is (fetch never reaches the network).
    let rejected: [(&[&str], &str); 4] = [
        (
            &["git", "git_log", &repo, "max_count=1.5"],
            "  $.max_count: got number, want integer\n",
        ),
        (
            &[
                "thinking",
                "sequentialthinking",
                "thought=t",
                "nextThoughtNeeded=true",
                "thoughtNumber=one",
                "totalThoughts=1",
            ],
            "  $.thoughtNumber: got string, want integer\n",
        ),
        (
            &["filesystem", "read_text_file", &notes, "head=one"],
            "  $.head: got string, want number\n",
        ),
        (
            &[
                "fetch",
                "fetch",
                "url=http://127.0.0.1:9/",
                "max_length=0",
                "raw=yes",
            ],
            "  $.max_length: minimum: got 0, want 1\n  $.raw: got string, want boolean\n",
        ),
    ];
    for (words, lines) in rejected {
        let mut args = vec!["call"];
        args.extend(words);
        let (out, err) = run(&config, &args, 1);
        assert_eq!(out, "");
        // The lines, without the hints beside them (those depend on the server's version) and
        // the warnings of the start (the Python servers do not answer `server/discover`).
        let err: String = err
            .lines()
            .filter(|l| !l.starts_with("    hint: ") && !l.starts_with("mcpx: warning: server{"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            err.starts_with("mcpx: arguments rejected before sending") && err.ends_with(lines),
            "{words:?}: {err}"
        );
    }

    // key:=JSON for what key=value cannot say: an array of objects.
    let entities =
        r#"entities:=[{"name":"mcpx","entityType":"tool","observations":["types arguments"]}]"#;
    run(&config, &["call", "memory", "create_entities", entities], 0);
    let (out, _) = run(
        &config,
        &["call", "memory", "search_nodes", "query=mcpx", "--json"],
        0,
    );
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        result["structuredContent"]["entities"][0]["observations"],
        json!(["types arguments"])
    );
}

#[test]
#[cfg_attr(
    windows,
    ignore = "needs the real servers from npm and PyPI, which scripts/fetch-real-servers installs for Linux"
)]
fn the_whole_set_at_once_with_a_server_that_dies_among_them() {
    let Some(root) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let python = root.join("venv/bin/python");
    let dying = json!({"command": python, "args": ["-c", "import mcp_server_that_is_not_there"]});
    let clean = config(&root, dir.path(), "");

    let (out, _) = run(&clean, &["servers"], 0);
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        ["filesystem", "memory", "thinking", "time", "git", "fetch"]
    );
    assert!(out.lines().all(|l| l.contains("\tok\t")), "{out}");
    assert_eq!(run(&clean, &["lint"], 0).0, "0 problems\n");

    let sub = dir.path().join("with-dying");
    std::fs::create_dir_all(&sub).unwrap();
    let config = config(&root, &sub, &format!(r#", "dying": {dying}"#));
    let (out, err) = run(&config, &["tools"], 2);
    for server in ["filesystem", "memory", "thinking", "time", "git", "fetch"] {
        assert!(out.contains(&format!("{server}\t")), "{server}: {out}");
    }
    assert!(
        err.contains("mcpx: server 'dying': ")
            && err.contains(
                "  stderr: ModuleNotFoundError: No module named 'mcp_server_that_is_not_there'\n"
            ),
        "{err}"
    );
    let (out, _) = run(&config, &["lint"], 2);
    assert_eq!(out, "0 problems\n");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "needs the real servers from npm and PyPI, which scripts/fetch-real-servers installs for Linux"
)]
fn search_finds_the_real_tool_for_a_task_across_the_six_servers() {
    let Some(root) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(&root, dir.path(), "");
    // SERVER/TOOL of each line `mcpx tools --search QUERY --limit 3` prints.
    let ranked = |query: &str| -> Vec<String> {
        let (out, _) = run(&config, &["tools", "--search", query, "--limit", "3"], 0);
        out.lines()
            .map(|l| {
                let mut fields = l.split('\t');
                let server = fields.next().unwrap_or_default();
                let tool = fields.next().unwrap_or_default();
                format!("{server}/{}", tool.split('(').next().unwrap_or_default())
            })
            .collect()
    };
    assert_eq!(ranked("the current time")[0], "time/get_current_time");
    // Ranked by words and meaning (the word table): the tool that does it first, then the
    // nearest others, up to the limit.
    assert_eq!(ranked("download a web page")[0], "fetch/fetch");
    assert_eq!(
        ranked("think step by step")[0],
        "thinking/sequentialthinking"
    );
    assert_eq!(ranked("list the folder")[0], "filesystem/list_directory");
    let diff = ranked("show the uncommitted changes");
    assert!(
        diff.contains(&"git/git_diff_unstaged".to_owned()),
        "{diff:?}"
    );
    let (out, _) = run(
        &config,
        &["tools", "memory", "--search", "search the knowledge graph"],
        0,
    );
    assert!(out.lines().all(|l| l.starts_with("memory\t")), "{out}");
    assert!(out.starts_with("memory\tsearch_nodes(query)\t"), "{out}");
}
