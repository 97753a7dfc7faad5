//! Real servers whose era the probe must find under load, under the default config and with
//! both cores busy, installed pinned by `scripts/fetch-real-servers`: chroma-mcp 0.2.6 from PyPI
//! (built on the MCP Python SDK 1.6.0, which dies on a request it cannot validate, the probe
//! among them) and @upstash/context7-mcp 4.1.1 from npm (dual-era) started 8 s late, as in
//! issue 34, beside a dual-era stand-in that starts slowly. Through `mcpx servers` and `mcpx
//! serve`: chroma is started again without the probe and lists its 13 tools, context7 and the
//! stand-in are spoken to in 2026-07-28, and the next run of each remembers. Without the servers
//! the test skips with a message (it fails when `CI` is set).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

mod common;
use common::{logged, run_with, running, servers_row, spec, CpuHog, Downstream, MCPX};

/// How long the test waits for the gateway to log the servers' starts.
const LOG_WAIT: Duration = Duration::from_secs(300);

/// chroma-mcp under the installation folder.
const CHROMA: &str = "chroma/bin/chroma-mcp";

/// context7's script under the installation folder.
const CONTEXT7: &str = "node_modules/@upstash/context7-mcp/dist/index.js";

/// Each server's `startupTimeout`, in seconds.
const STARTUP_TIMEOUT: u64 = 120;

/// Where scripts/fetch-real-servers installs the servers, if it did.
fn installed() -> Option<PathBuf> {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/real-servers"
    ));
    let needed = [CHROMA, CONTEXT7];
    let Some(missing) = needed.iter().find(|path| !root.join(path).exists()) else {
        return Some(root);
    };
    let msg = format!(
        "{} not found under {} (run scripts/fetch-real-servers)",
        missing,
        root.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{msg}");
    #[allow(clippy::print_stderr)]
    {
        eprintln!("skipped: {msg}");
    }
    None
}

/// chroma (in memory), context7 started 8 s late and the slow dual-era stand-in, all under the
/// default config but for a `startupTimeout` long enough for a machine busier than the hog
/// alone makes it (the era is decided by the servers' answers whatever the time they take; how
/// long a start may take is the operator's).
fn config(dir: &Path, root: &Path) -> PathBuf {
    let late = format!("sleep 8; exec node {}", root.join(CONTEXT7).display());
    let servers = json!({"mcpServers": {
        "chroma": {"command": root.join(CHROMA), "args": ["--client-type", "ephemeral"],
            "startupTimeout": STARTUP_TIMEOUT},
        "context7-late": {"command": "sh", "args": ["-c", late],
            "startupTimeout": STARTUP_TIMEOUT},
        "slow-modern": {"command": MCPX,
            "args": ["demo-server", "--era", "dual", "--start-delay", "3", "--start-cpu", "0.5"],
            "startupTimeout": STARTUP_TIMEOUT},
    }});
    let path = dir.join("mcpx.json");
    std::fs::write(&path, servers.to_string()).unwrap();
    path
}

#[tokio::test]
#[cfg_attr(windows, ignore = "the real servers are installed for Linux")]
async fn chroma_and_a_late_context7_start_under_the_default_config_in_the_cli_and_serve() {
    let Some(root) = installed() else { return };
    let Some(spec) = spec() else { return };
    let _hog = CpuHog::start();
    cli(&root);
    serve(spec, &root).await;
}

/// Two runs of `mcpx servers`.
fn cli(root: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), root);
    let cache = dir.path().join("cache");
    let env = [("MCPX_NO_CACHE", Path::new("")), ("XDG_CACHE_HOME", &cache)];
    let (out, _) = run_with(&config, &["servers"], &env, 0);
    assert!(
        servers_row(&out, "chroma")
            .starts_with("ok\t2024-11-05 (fell back after a failed start)\t13 tools\t"),
        "{out}"
    );
    for modern in ["context7-late", "slow-modern"] {
        assert!(
            servers_row(&out, modern).starts_with("ok\t2026-07-28 (probed)\t"),
            "{out}"
        );
    }
    let (out, _) = run_with(&config, &["servers"], &env, 0);
    assert!(
        servers_row(&out, "chroma").starts_with("ok\t2024-11-05 (remembered)\t13 tools\t"),
        "{out}"
    );
    for modern in ["context7-late", "slow-modern"] {
        assert!(
            servers_row(&out, modern).starts_with("ok\t2026-07-28 (remembered)\t"),
            "{out}"
        );
    }
}

/// Two runs of `mcpx serve`.
async fn serve(spec: &'static mcpspec::Spec, root: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), root);
    let cache = dir.path().join("cache").display().to_string();
    let env = [("MCPX_NO_CACHE", ""), ("XDG_CACHE_HOME", cache.as_str())];
    for (chroma_why, modern_why) in [
        ("fell back after a failed start", "probed"),
        ("remembered", "remembered"),
    ] {
        let mut gateway = Downstream::start_with_env(spec, &config, &[], json!({}), &env).await;
        let wanted = [
            running("chroma", "2024-11-05", "legacy", chroma_why),
            running("context7-late", "2026-07-28", "modern", modern_why),
            running("slow-modern", "2026-07-28", "modern", modern_why),
        ];
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        assert!(
            logged(&gateway, &wanted, LOG_WAIT).await,
            "{}",
            gateway.log()
        );
        let names = gateway.tool_names().await;
        let chroma_tools = names.iter().filter(|n| n.starts_with("chroma__")).count();
        assert_eq!(chroma_tools, 13, "{names:?}");
        assert!(names.iter().any(|n| n == "slow-modern__echo"), "{names:?}");
        gateway.close().await;
    }
}
