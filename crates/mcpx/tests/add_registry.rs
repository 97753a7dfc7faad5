//! `mcpx add` against a registry on 127.0.0.1 started by the test, speaking the MCP Registry's
//! API v0.1 and serving server.json documents written from the registry's own examples
//! (`tests/registry/`): npm, PyPI and OCI packages and a Streamable HTTP remote become config
//! entries, secrets `${VAR}` references, and what is invalid, unusable, missing or too large
//! is refused with a clear message. No network beyond loopback.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const MCPX: &str = env!("CARGO_BIN_EXE_mcpx");
const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/registry");

/// The most connections one test's registry answers.
const MAX_CONNECTIONS: usize = 32;
/// How long a test's registry lives.
const REGISTRY_LIFETIME: Duration = Duration::from_secs(60);
/// The size of the answer that is too large (over mcpregistry's 4 MiB).
const HUGE: usize = 5 * 1024 * 1024;

/// The documents, by the name the registry knows them by.
fn documents() -> Vec<(String, Value)> {
    let read = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(Path::new(DOCS).join(file)).unwrap()).unwrap()
    };
    vec![
        ("io.github.user/local-weather", read("local-weather.json")),
        ("io.github.user/remote-weather", read("remote-weather.json")),
        ("io.github.modelcontextprotocol/time", read("time.json")),
        ("io.github.github/github-mcp-server", read("github.json")),
        ("com.example/invalid", read("invalid.json")),
        ("com.example/sse-only", read("sse-only.json")),
        // Hostile or odd documents: another runtime, an option for an identifier, an
        // answer for another name, a deprecated server, a terminal escape in a description,
        // an optional secret.
        (
            "com.example/other-runtime",
            npm_package(json!({"runtimeHint": "sh"}), "other-runtime"),
        ),
        (
            "com.example/option",
            npm_package(json!({"identifier": "--registry=http://evil"}), "option"),
        ),
        ("com.example/asked", npm_package(json!({}), "answered")),
        (
            "com.example/deprecated",
            npm_package(json!({}), "deprecated"),
        ),
        ("com.example/escape", {
            let mut doc = npm_package(json!({}), "escape");
            doc["description"] = json!("odd \u{1b}[2J\u{1b}[31mred\nforged line");
            doc
        }),
        (
            "com.example/optional",
            npm_package(
                json!({"environmentVariables": [
                    {"name": "TOKEN", "isSecret": true},
                    {"name": "KEY", "isSecret": true, "isRequired": true}
                ]}),
                "optional",
            ),
        ),
    ]
    .into_iter()
    .map(|(name, doc)| (name.to_owned(), doc))
    .chain((0..BULK).map(|n| {
        let mut doc = npm_package(json!({}), &format!("bulk-{n:02}"));
        doc["description"] = json!("One of many alike.");
        (format!("com.example/bulk-{n:02}"), doc)
    }))
    .collect()
}

/// How many servers match "many alike": more than one page of a search.
const BULK: usize = mcpregistry::MAX_SEARCH_RESULTS + 5;

/// A server.json of one npm package, `package` merged into it, named `com.example/NAME`.
fn npm_package(package: Value, name: &str) -> Value {
    let mut p = json!({"registryType": "npm", "identifier": "pkg", "version": "1.0.0", "transport": {"type": "stdio"}});
    for (k, v) in package.as_object().unwrap() {
        p[k] = v.clone();
    }
    json!({"name": format!("com.example/{name}"), "description": "An odd one.", "version": "1.0.0", "packages": [p]})
}

fn decode(text: &str) -> String {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The answer to `path`: status and body.
fn answer(path: &str) -> (u16, Vec<u8>) {
    let meta = json!({"io.modelcontextprotocol.registry/official":
        {"status": "active", "publishedAt": "2026-11-01T10:30:00Z", "isLatest": true}});
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    if route == "/v0.1/servers" {
        let words = query
            .split('&')
            .find_map(|p| p.strip_prefix("search="))
            .map(decode)
            .unwrap_or_default()
            .to_lowercase();
        let servers: Vec<Value> = documents()
            .into_iter()
            .filter(|(_, d)| {
                d["name"].as_str().unwrap().to_lowercase().contains(&words)
                    || d["description"]
                        .as_str()
                        .unwrap()
                        .to_lowercase()
                        .contains(&words)
            })
            .map(|(_, d)| json!({"server": d, "_meta": meta}))
            .collect();
        // One page of `limit` (the API's default 30), and the cursor of the next if any.
        let limit = query
            .split('&')
            .find_map(|p| p.strip_prefix("limit="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(30);
        let more = servers.len() > limit;
        let page: Vec<Value> = servers.into_iter().take(limit).collect();
        let mut metadata = json!({"count": page.len()});
        if more {
            metadata["nextCursor"] = page[limit - 1]["server"]["name"].clone();
        }
        let body = json!({"servers": page, "metadata": metadata});
        return (200, body.to_string().into_bytes());
    }
    if let Some(rest) = route.strip_prefix("/v0.1/servers/") {
        if let Some(name) = rest.strip_suffix("/versions/latest") {
            let name = decode(name);
            if name == "com.example/huge" {
                return (200, vec![b' '; HUGE]);
            }
            if let Some((_, doc)) = documents().into_iter().find(|(n, _)| *n == name) {
                let mut meta = meta;
                if name == "com.example/deprecated" {
                    meta["io.modelcontextprotocol.registry/official"]["status"] =
                        json!("deprecated");
                }
                return (
                    200,
                    json!({"server": doc, "_meta": meta})
                        .to_string()
                        .into_bytes(),
                );
            }
        }
    }
    (404, br#"{"error": "Server not found"}"#.to_vec())
}

/// A registry on 127.0.0.1: its URL. It answers at most [`MAX_CONNECTIONS`] requests, for at
/// most [`REGISTRY_LIFETIME`].
fn registry() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut served = 0;
        while served < MAX_CONNECTIONS && start.elapsed() < REGISTRY_LIFETIME {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            served += 1;
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&head);
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (status, body) = answer(&path);
            let reason = if status == 200 { "OK" } else { "Not Found" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    url
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `mcpx --config CONFIG add ARGS` with `env`, no terminal.
fn add(config: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = std::process::Command::new(MCPX)
        .arg("--config")
        .arg(config)
        .arg("add")
        .args(args)
        .env_remove("MCPX_REGISTRY")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn config_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcpx.json");
    (dir, config)
}

fn servers(config: &Path) -> Value {
    let text = std::fs::read_to_string(config).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["mcpServers"].clone()
}

#[test]
fn search_lists_matching_servers() {
    let url = registry();
    let (_dir, config) = config_dir();
    let run = add(&config, &["--search", "weather", "--registry", &url], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "io.github.user/local-weather\t1.0.0\tLocal MCP server distributed as an npm package.\n\
         io.github.user/remote-weather\t2.1.0\tRemote MCP server reachable over streamable HTTP.\n"
    );
    let run = add(
        &config,
        &["--search", "no such words"],
        &[("MCPX_REGISTRY", &url)],
    );
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(!config.exists());
}

/// More matches than one page: the first page is listed, one line a server on stdout, and a
/// note on stderr says there are more; one page exactly gets no note.
#[test]
fn a_search_with_more_matches_than_a_page_says_so() {
    assert_eq!(
        mcpregistry::MAX_SEARCH_RESULTS,
        30,
        "add --search's help and the manual (clients.md) say the first 30"
    );
    let url = registry();
    let (_dir, config) = config_dir();
    let run = add(
        &config,
        &["--search", "many alike", "--registry", &url],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        mcpregistry::MAX_SEARCH_RESULTS,
        "{}",
        run.stdout
    );
    assert!(
        lines[0].starts_with("com.example/bulk-00\t1.0.0\t"),
        "{}",
        lines[0]
    );
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "mcpx: the first {} servers are shown; more match \"many alike\": add words to narrow the search",
            mcpregistry::MAX_SEARCH_RESULTS
        )
    );
    // bulk-30 to bulk-34: fewer than a page.
    let run = add(&config, &["--search", "bulk-3", "--registry", &url], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), BULK - 30, "{}", run.stdout);
    assert_eq!(run.stderr, "");
}

#[test]
fn packages_and_remotes_become_entries() {
    let url = registry();
    let (_dir, config) = config_dir();
    let run = add(
        &config,
        &["io.github.user/local-weather", "--registry", &url],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "io.github.user/local-weather 1.0.0 from {url}: npm @modelcontextprotocol/server-weather@1.0.0\n\
             runs: npx -y @modelcontextprotocol/server-weather@1.0.0 --port 8080\n\
             added local-weather to {}\n\
             set LOCAL_WEATHER_API_KEY (a secret) in the environment mcpx runs in: Your weather service key\n",
            config.display()
        )
    );
    // The registry from the environment, as the other way to pick it.
    for name in [
        "io.github.user/remote-weather",
        "io.github.modelcontextprotocol/time",
        "io.github.github/github-mcp-server",
    ] {
        let run = add(&config, &[name], &[("MCPX_REGISTRY", &url)]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    }
    assert_eq!(
        servers(&config),
        json!({
            "local-weather": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-weather@1.0.0", "--port", "8080"],
                "env": {"API_KEY": "${LOCAL_WEATHER_API_KEY}", "UNITS": "metric"}},
            "remote-weather": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "${REMOTE_WEATHER_AUTHORIZATION}"}},
            "time": {"command": "uvx", "args": ["mcp-server-time==2026.1.26", "--local-timezone", "UTC"]},
            "github-mcp-server": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "-e", "GITHUB_TOOLSETS",
                "ghcr.io/github/github-mcp-server:0.20.0"],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_MCP_SERVER_GITHUB_PERSONAL_ACCESS_TOKEN}", "GITHUB_TOOLSETS": "repos,issues"}}
        })
    );
    // The same again is merged; --remote takes GitHub's remote, under another name.
    let run = add(
        &config,
        &["io.github.user/local-weather", "--registry", &url],
        &[],
    );
    assert!(run.stdout.contains("already in"), "{}", run.stdout);
    let run = add(
        &config,
        &[
            "io.github.github/github-mcp-server",
            "--remote",
            "--as",
            "github",
            "--registry",
            &url,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        servers(&config)["github"],
        json!({"type": "http", "url": "https://api.githubcopilot.com/mcp/"})
    );
}

#[test]
fn a_dry_run_writes_nothing() {
    let url = registry();
    let (_dir, config) = config_dir();
    let run = add(
        &config,
        &[
            "io.github.user/local-weather",
            "--dry-run",
            "--registry",
            &url,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("would add local-weather"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(r#""API_KEY":"${LOCAL_WEATHER_API_KEY}""#),
        "{}",
        run.stdout
    );
    assert!(!config.exists());
}

#[test]
fn bad_answers_are_refused() {
    let url = registry();
    let (_dir, config) = config_dir();
    let cases = [
        (
            "com.example/invalid",
            "the registry's server.json of no-slash-in-this-name is not valid:",
        ),
        (
            "com.example/sse-only",
            "com.example/sse-only: mcpx can start or reach none of what it offers (sse)",
        ),
        (
            "com.example/missing",
            "no such server in the registry (404)",
        ),
        (
            "com.example/huge",
            "the answer is over 4194304 bytes, not read",
        ),
    ];
    for (name, want) in cases {
        let run = add(&config, &[name, "--registry", &url], &[]);
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert!(run.stderr.contains(want), "{name}: {}", run.stderr);
    }
    let run = add(&config, &["com.example/invalid", "--registry", &url], &[]);
    assert!(run.stderr.contains("$.name: "), "{}", run.stderr);
    let run = add(&config, &["x/y", "--registry", "ftp://example.com"], &[]);
    assert!(
        run.stderr
            .contains("registry 'ftp://example.com' is not an http:// or https:// URL"),
        "{}",
        run.stderr
    );
    assert!(!config.exists());
}

/// What a registry document says is never trusted to run something else: a runtime other
/// than the registry type's, an identifier that reads as an option, an answer for another
/// name, a deprecated server are refused; a description cannot drive the terminal.
#[test]
fn hostile_documents_are_refused() {
    let url = registry();
    let (_dir, config) = config_dir();
    let cases = [
        (
            "com.example/other-runtime",
            "mcpx starts none of what it offers: its runtime hint 'sh' is not npx",
        ),
        (
            "com.example/option",
            "its identifier or version starts with '-', which npx would read as an option",
        ),
        (
            "com.example/asked",
            "asked for com.example/asked, the registry answered with com.example/answered",
        ),
        (
            "com.example/deprecated",
            "com.example/deprecated: the registry marks it deprecated",
        ),
    ];
    for (name, want) in cases {
        let run = add(&config, &[name, "--registry", &url], &[]);
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert!(run.stderr.contains(want), "{name}: {}", run.stderr);
    }
    assert!(!config.exists());
    let run = add(&config, &["--search", "escape", "--registry", &url], &[]);
    assert!(!run.stdout.contains('\u{1b}'), "{:?}", run.stdout);
    assert!(
        run.stdout
            .contains("com.example/escape\t1.0.0\todd [2J[31mredforged line\n"),
        "{:?}",
        run.stdout
    );
}

/// An optional secret is left out; a required one becomes a reference named after the
/// server, numbered on when another server of the config already uses that name.
#[test]
fn secret_references_are_the_servers_own() {
    let url = registry();
    let (_dir, config) = config_dir();
    std::fs::write(
        &config,
        r#"{"mcpServers": {"mine": {"url": "https://x/mcp", "headers": {"Authorization": "${OPTIONAL_KEY}"}}}}"#,
    )
    .unwrap();
    let run = add(&config, &["com.example/optional", "--registry", &url], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        servers(&config)["optional"],
        json!({"command": "npx", "args": ["-y", "pkg@1.0.0"], "env": {"KEY": "${OPTIONAL_KEY_2}"}})
    );
    assert!(
        run.stdout.contains("set OPTIONAL_KEY_2 (a secret)"),
        "{}",
        run.stdout
    );
    // Added again: the same entry, merged.
    let run = add(&config, &["com.example/optional", "--registry", &url], &[]);
    assert!(run.stdout.contains("already in"), "{}", run.stdout);
}
