//! What mcpx learns about servers and keeps between runs, through the real binary with a cache
//! folder of the test's own (the other tests run without a cache, see `.cargo/config.toml`):
//!
//! - the protocol era under the default config (`"protocol": "auto"`), with both cores kept
//!   busy: a dual-era stand-in that starts slowly is spoken to in 2026-07-28, and one that dies
//!   on the `server/discover` probe as servers on the MCP Python SDK 1.6 do is started again
//!   without it, in `mcpx servers` and in `mcpx serve`; the next start of each speaks the era
//!   learnt without probing;
//! - the tool lists: `tools`, `tools --search` and `lint` from the cache (saying so and how
//!   old), `--refresh` and `call` asking the servers, and no secret in the cache.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

mod common;
use common::{logged, run_with, running, servers_row, spec, CpuHog, Downstream, MCPX};

/// How long the test waits for the gateway to log the servers' starts.
const LOG_WAIT: Duration = Duration::from_secs(300);

/// The stand-ins' `startupTimeout`, in seconds: long enough for a machine busier than the hog
/// alone makes it (the era is decided by their answers whatever the time they take).
const STARTUP_TIMEOUT: u64 = 120;

/// `mcpx --config CONFIG ARGS` with the cache in `cache` (and a secret in the environment),
/// expecting exit `code`.
fn mcpx(config: &Path, cache: &Path, args: &[&str], code: i32) -> (String, String) {
    let env = [
        ("MCPX_NO_CACHE", Path::new("")),
        ("XDG_CACHE_HOME", cache),
        ("MCPX_TEST_SECRET", Path::new("s3cret-value")),
    ];
    run_with(config, args, &env, code)
}

/// The demo server with `args`, recording to `dir/NAME.jsonl`.
fn demo(dir: &Path, name: &str, args: &[&str]) -> Value {
    let record = dir.join(format!("{name}.jsonl")).display().to_string();
    let mut all = vec!["demo-server", "--record", &record];
    all.extend_from_slice(args);
    json!({"command": MCPX, "args": all, "startupTimeout": STARTUP_TIMEOUT})
}

/// Three servers, none with a `protocol`: `slow-modern`, dual-era, 3 s and 0.5 s of CPU to
/// start (longer than the probe's quiet period); `dies-on-probe`, legacy, 3 s to start, then
/// dies on `server/discover`; `plain`, legacy, answering it -32601.
fn stand_ins(dir: &Path) -> PathBuf {
    let servers = json!({"mcpServers": {
        "slow-modern": demo(dir, "slow-modern", &["--era", "dual", "--start-delay", "3", "--start-cpu", "0.5"]),
        "dies-on-probe": demo(dir, "dies-on-probe", &["--crash-on-unknown-method", "--start-delay", "3"]),
        "plain": demo(dir, "plain", &[]),
    }});
    let path = dir.join("mcpx.json");
    std::fs::write(&path, servers.to_string()).unwrap();
    path
}

/// How many `server/discover` requests a recorded server was sent.
fn probes(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(format!("{name}.jsonl")))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(r#""from":"client""#) && l.contains(r#""method":"server/discover""#))
        .count()
}

#[test]
fn servers_find_each_era_under_load_and_the_second_start_skips_the_probe() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let config = stand_ins(dir.path());
    let _hog = CpuHog::start();

    let (out, _) = mcpx(&config, &cache, &["servers"], 0);
    assert!(
        servers_row(&out, "slow-modern").starts_with("ok\t2026-07-28 (probed)\t"),
        "{out}"
    );
    assert!(
        servers_row(&out, "dies-on-probe")
            .starts_with("ok\t2025-11-25 (fell back after a failed start)\t"),
        "{out}"
    );
    assert!(
        servers_row(&out, "plain").starts_with("ok\t2025-11-25 (probed)\t"),
        "{out}"
    );
    let report: Value =
        serde_json::from_str(&mcpx(&config, &cache, &["servers", "--json"], 0).0).unwrap();
    let dies = &report[1];
    assert_eq!(dies["era"], "legacy");
    assert_eq!(dies["eraChosen"], "remembered");
    let probed = [
        probes(dir.path(), "slow-modern"),
        probes(dir.path(), "dies-on-probe"),
        probes(dir.path(), "plain"),
    ];

    // Remembered: the legacy servers are not probed again; the modern one's discover is its
    // handshake.
    let (out, _) = mcpx(&config, &cache, &["servers"], 0);
    for name in ["slow-modern", "dies-on-probe", "plain"] {
        assert!(servers_row(&out, name).contains(" (remembered)\t"), "{out}");
    }
    assert_eq!(probes(dir.path(), "dies-on-probe"), probed[1]);
    assert_eq!(probes(dir.path(), "plain"), probed[2]);
    assert!(probes(dir.path(), "slow-modern") > probed[0]);
}

#[tokio::test]
async fn serve_finds_each_era_under_load_and_its_next_run_skips_the_probe() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache").display().to_string();
    let config = stand_ins(dir.path());
    let _hog = CpuHog::start();
    let env = [("MCPX_NO_CACHE", ""), ("XDG_CACHE_HOME", cache.as_str())];

    let mut gateway = Downstream::start_with_env(spec, &config, &[], json!({}), &env).await;
    let first = [
        running("slow-modern", "2026-07-28", "modern", "probed"),
        running(
            "dies-on-probe",
            "2025-11-25",
            "legacy",
            "fell back after a failed start",
        ),
        running("plain", "2025-11-25", "legacy", "probed"),
    ];
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    assert!(
        logged(&gateway, &first, LOG_WAIT).await,
        "{}",
        gateway.log()
    );
    let names = gateway.tool_names().await;
    for server in ["slow-modern", "dies-on-probe", "plain"] {
        let echo = format!("{server}__echo");
        assert!(names.contains(&echo), "{names:?}");
    }
    gateway.close().await;
    let probed = probes(dir.path(), "dies-on-probe");

    let gateway = Downstream::start_with_env(spec, &config, &[], json!({}), &env).await;
    let again = [
        running("slow-modern", "2026-07-28", "modern", "remembered"),
        running("dies-on-probe", "2025-11-25", "legacy", "remembered"),
        running("plain", "2025-11-25", "legacy", "remembered"),
    ];
    let again: Vec<&str> = again.iter().map(String::as_str).collect();
    assert!(
        logged(&gateway, &again, LOG_WAIT).await,
        "{}",
        gateway.log()
    );
    gateway.close().await;
    assert_eq!(probes(dir.path(), "dies-on-probe"), probed);
}

#[test]
#[cfg_attr(windows, ignore = "its stand-in servers are `sh` scripts")]
fn tool_lists_come_from_the_cache_until_refreshed_and_calls_ask_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let servers = json!({"mcpServers": {
        "demo": demo(dir.path(), "demo", &[]),
        "secretive": {"command": MCPX, "args": ["demo-server"],
            "env": {"API_KEY": "${MCPX_TEST_SECRET}"}},
    }});
    let config = dir.path().join("mcpx.json");
    std::fs::write(&config, servers.to_string()).unwrap();
    let listings = || {
        std::fs::read_to_string(dir.path().join("demo.jsonl"))
            .unwrap_or_default()
            .matches(r#""method":"tools/list""#)
            .count()
    };

    let (first, err) = mcpx(&config, &cache, &["tools"], 0);
    assert_eq!(err, "");
    assert_eq!(listings(), 1);
    let (again, err) = mcpx(&config, &cache, &["tools"], 0);
    assert_eq!(again, first);
    assert!(
        err.starts_with("mcpx: the tools of 2 servers are from the cache (listed "),
        "{err}"
    );
    assert!(
        err.ends_with(" ago; --refresh asks the servers)\n"),
        "{err}"
    );
    let (hits, err) = mcpx(
        &config,
        &cache,
        &["tools", "--search", "add two numbers"],
        0,
    );
    assert!(hits.starts_with("demo\tget-sum(a, b)\t"), "{hits}");
    assert!(err.contains("from the cache"), "{err}");
    let (lint, err) = mcpx(&config, &cache, &["lint", "demo"], 0);
    assert!(lint.starts_with("0 problems\n"), "{lint}");
    assert!(
        err.contains("the tools of 1 server are from the cache"),
        "{err}"
    );
    assert_eq!(listings(), 1, "nothing asked the server");

    let (_, err) = mcpx(&config, &cache, &["tools", "--refresh"], 0);
    assert_eq!(err, "");
    assert_eq!(listings(), 2);
    mcpx(
        &config,
        &cache,
        &["call", "demo", "get-sum", "a=1", "b=2"],
        0,
    );
    assert_eq!(listings(), 3, "a call asks the server");

    // The cache holds no value of the environment.
    for entry in walk(&cache) {
        let text = std::fs::read_to_string(&entry).unwrap();
        assert!(!text.contains("s3cret-value"), "{}", entry.display());
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
#[cfg_attr(windows, ignore = "its stand-in servers are `sh` scripts")]
fn a_remembered_era_whose_start_fails_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let broken = dir.path().join("broken");
    let script = format!(
        "if [ -e {} ]; then exit 1; fi; exec {MCPX} demo-server",
        broken.display()
    );
    let servers = json!({"mcpServers": {"flaky": {"command": "sh", "args": ["-c", script]}}});
    let config = dir.path().join("mcpx.json");
    std::fs::write(&config, servers.to_string()).unwrap();
    let eras = || walk(&cache.join("mcpx/eras")).len();

    mcpx(&config, &cache, &["servers"], 0);
    assert_eq!(eras(), 1);
    std::fs::write(&broken, "").unwrap();
    mcpx(&config, &cache, &["servers"], 2);
    assert_eq!(eras(), 0, "the next start probes again");
}
