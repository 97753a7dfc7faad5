//! Config reload of `mcpx serve --http`, through the real binary: on SIGHUP and with `--watch`,
//! servers added, removed and changed are started, stopped and restarted while two clients
//! stay connected with calls in flight; a broken file is refused with the message `mcpx serve`
//! gives at start, and the config in force stays.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{processes_with, spec, MCPX};
use mcpclient::{Client, ClientOptions, Event, Protocol};
use mcpx_interop::HttpPeer;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// The longest a test waits for the gateway to act on a reload (each wait ends as soon as it
/// has).
const RELOAD_WAIT: Duration = Duration::from_secs(30);

/// The longest the `--watch` test waits for a change of the file to be acted on: the file is
/// looked at every second and given 0.2 s to settle, then the new server starts and the
/// clients list again (about 1.1 s in all, measured); room for a loaded machine. Before:
/// [`RELOAD_WAIT`].
const WATCH_WAIT: Duration = Duration::from_secs(3);

/// How long the calls in flight across a reload take.
const CALL_MS: u64 = 3_000;

/// A demo server entry (with the `slow` tool) recording its conversation to `dir/RECORD`, so
/// that its process can be told apart by that file's name.
fn demo(dir: &Path, record: &str, extra: &str) -> String {
    let record = dir.join(record).display().to_string();
    let args = json!(["demo-server", "--faults", "--record", record]);
    format!(r#"{{"command": "{MCPX}", "args": {args}{extra}}}"#)
}

fn write_config(path: &Path, servers: &[(&str, String)]) {
    write_config_with(path, servers, "");
}

/// A config of `servers` and the top-level members `more` (`, "gateway": …`).
fn write_config_with(path: &Path, servers: &[(&str, String)], more: &str) {
    let members: Vec<String> = servers
        .iter()
        .map(|(name, entry)| format!(r#""{name}": {entry}"#))
        .collect();
    let text = format!(r#"{{"mcpServers": {{{}}}{more}}}"#, members.join(", "));
    std::fs::write(path, text).unwrap();
}

async fn gateway(config: &Path, watch: bool) -> HttpPeer {
    let config = config.display().to_string();
    let mut args = vec!["--config", &config, "serve", "--http", "127.0.0.1:0"];
    if watch {
        args.push("--watch");
    }
    HttpPeer::start(MCPX, &args, &[], "/mcp").await
}

/// A 2025-11-25 client of `gateway`, its tools listed, and its events.
async fn client(gateway: &HttpPeer) -> (Client, mpsc::Receiver<Event>) {
    let options = ClientOptions {
        protocol: Protocol::Legacy,
        ..ClientOptions::default()
    };
    common::http_client(gateway, options).await
}

fn names(client: &Client) -> Vec<String> {
    client.tools().iter().map(|t| t.name().to_owned()).collect()
}

/// Waits (at most [`RELOAD_WAIT`]) until `done` holds; false if it never did.
async fn eventually(done: impl FnMut() -> bool) -> bool {
    within(RELOAD_WAIT, done).await
}

/// Waits (at most `bound`) until `done` holds; false if it never did.
async fn within(bound: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + bound;
    while tokio::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}

/// Whether the client's tool list has every name of `present` and none of `absent`: the client
/// lists again only when told `notifications/tools/list_changed`.
fn lists(client: &Client, present: &[&str], absent: &[&str]) -> bool {
    let names = names(client);
    present.iter().all(|p| names.iter().any(|n| n == p))
        && absent.iter().all(|a| names.iter().all(|n| n != a))
}

/// How many `notifications/tools/list_changed` the client acted on so far.
fn relisted(events: &mut mpsc::Receiver<Event>) -> usize {
    let mut count = 0;
    while let Ok(event) = events.try_recv() {
        count += usize::from(matches!(event, Event::ToolsRelisted));
    }
    count
}

fn text(outcome: &mcpclient::CallOutcome) -> String {
    let result: Value = outcome.response.result().unwrap();
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn hangup(gateway: &HttpPeer) {
    let pid = gateway.pid().expect("the gateway runs").to_string();
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether `record` (a demo server's transcript) shows a `slow` call arrived (before, any
/// mention of `"name":"slow"` counted, and the tool list has one: the reload could come
/// before the call reached the server, and the call go to the changed server's new process).
fn slow_call_arrived(dir: &Path, record: &str) -> bool {
    common::call_arrived(&dir.join(record), "slow")
}

/// Two clients stay connected across a SIGHUP reload that adds `added`, removes `gone` and
/// changes `moved` (a new record file, and `crash` denied): their calls in flight (one to the
/// untouched `demo`, one to the changed `moved`) finish with their answers (the old `moved`
/// process answers its call; the new one never sees it), both clients are told the tools
/// changed and see the new list, and go on calling in the same sessions; the removed server's
/// process and the old `moved` are stopped and reaped.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "SIGHUP has no Windows counterpart (--watch is the reload there, tested beside it)"
)]
async fn sighup_adds_removes_and_changes_servers_while_clients_stay() {
    if spec().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcpx.json");
    let d = dir.path();
    write_config(
        &config,
        &[
            ("demo", demo(d, "demo.jsonl", "")),
            ("gone", demo(d, "gone.jsonl", "")),
            ("moved", demo(d, "moved.jsonl", "")),
        ],
    );
    let gateway = gateway(&config, false).await;
    let (alice, mut alice_events) = client(&gateway).await;
    let (bob, mut bob_events) = client(&gateway).await;
    assert!(lists(
        &alice,
        &["demo__slow", "gone__slow", "moved__crash"],
        &[]
    ));
    relisted(&mut alice_events);
    relisted(&mut bob_events);

    let reload = async {
        assert!(eventually(|| slow_call_arrived(d, "demo.jsonl")).await);
        assert!(eventually(|| slow_call_arrived(d, "moved.jsonl")).await);
        let old: Vec<u32> = ["gone.jsonl", "moved.jsonl"]
            .iter()
            .flat_map(|record| processes_with(record))
            .map(|(pid, _)| pid)
            .collect();
        assert_eq!(old.len(), 2, "{old:?}");
        write_config(
            &config,
            &[
                ("demo", demo(d, "demo.jsonl", "")),
                (
                    "moved",
                    demo(d, "moved2.jsonl", r#", "denyTools": ["crash"]"#),
                ),
                ("added", demo(d, "added.jsonl", "")),
            ],
        );
        hangup(&gateway);
        let present = ["demo__slow", "moved__slow", "added__slow"];
        let absent = ["gone__slow", "moved__crash"];
        assert!(
            eventually(|| lists(&alice, &present, &absent) && lists(&bob, &present, &absent)).await,
            "alice {:?}, bob {:?}\n{}",
            names(&alice),
            names(&bob),
            gateway.log()
        );
        old
    };
    let slow = json!({"ms": CALL_MS});
    let (in_demo, in_moved, old) = tokio::join!(
        alice.call_tool("demo__slow", slow.clone()),
        bob.call_tool("moved__slow", slow.clone()),
        reload
    );
    let expected = format!("slept {CALL_MS} ms");
    assert_eq!(text(&in_demo.unwrap()), expected);
    assert_eq!(text(&in_moved.unwrap()), expected, "{}", gateway.log());
    // The changed server's old process answered the call it had; the new one never got it.
    let transcript = |record: &str| std::fs::read_to_string(d.join(record)).unwrap_or_default();
    assert!(
        transcript("moved.jsonl").contains(&expected),
        "{}",
        transcript("moved.jsonl")
    );
    assert!(
        !slow_call_arrived(d, "moved2.jsonl"),
        "{}",
        transcript("moved2.jsonl")
    );
    assert!(relisted(&mut alice_events) >= 1);
    assert!(relisted(&mut bob_events) >= 1);

    // The same sessions go on, on the untouched, the changed and the added server.
    for (client, tool) in [
        (&alice, "demo__echo"),
        (&bob, "moved__echo"),
        (&alice, "added__echo"),
    ] {
        let outcome = client.call_tool(tool, json!({"text": "still here"})).await;
        assert_eq!(text(&outcome.unwrap()), "still here", "{tool}");
    }
    let refused = bob.call_tool("gone__echo", json!({"text": "x"})).await;
    assert!(refused.is_err(), "{refused:?}");

    let log = gateway.log();
    assert!(log.contains("config reloaded"), "{log}");
    assert!(
        log.contains(r#"added=["added"] removed=["gone"] changed=["moved"] unchanged=1"#),
        "{log}"
    );
    // Stopped and reaped: not even a zombie is left.
    assert!(
        eventually(|| common::still_there(&old).is_empty()).await,
        "the removed and the old changed server are still there: {:?}",
        common::still_there(&old)
    );
    assert_eq!(processes_with("moved2.jsonl").len(), 1);
}

/// With `--watch`, a broken file is refused with the message `mcpx serve` gives at start (the
/// file, the JSON path, the problem) and the servers go on; the file mended, its change is
/// taken without a signal, and a changed `gateway` key is reported as needing a restart.
#[tokio::test(flavor = "multi_thread")]
async fn watch_refuses_a_broken_file_and_takes_the_mended_one() {
    if spec().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("mcpx.json");
    write_config(&config, &[("demo", demo(d, "demo.jsonl", ""))]);
    let gateway = gateway(&config, true).await;
    let (alice, _events) = client(&gateway).await;

    // Broken outside its servers (a problem in one server's entry stops that server alone).
    let broken = d.join("broken.json");
    write_config_with(
        &broken,
        &[
            ("demo", demo(d, "demo.jsonl", "")),
            ("added", demo(d, "added.jsonl", "")),
        ],
        r#", "gateway": {"maxSessions": "many"}"#,
    );
    let (_, at_start) = common::run(&broken, &["serve"], 2);
    let at_start = at_start
        .trim()
        .replace(&broken.display().to_string(), "FILE");
    let message = at_start
        .strip_prefix("mcpx: ")
        .unwrap_or(&at_start)
        .to_owned();
    assert!(
        message.contains("$.gateway.maxSessions: got string, want integer"),
        "{message}"
    );
    std::fs::rename(&broken, &config).unwrap();
    let refused = |log: &str| {
        log.replace(&config.display().to_string(), "FILE")
            .contains(&format!("{message} (the config was not reloaded"))
    };
    assert!(
        within(WATCH_WAIT, || refused(&gateway.log())).await,
        "{}",
        gateway.log()
    );
    let kept = alice.call_tool("demo__echo", json!({"text": "kept"})).await;
    assert_eq!(text(&kept.unwrap()), "kept");
    assert!(!names(&alice).iter().any(|n| n.starts_with("added__")));

    write_config_with(
        &config,
        &[
            ("demo", demo(d, "demo.jsonl", "")),
            ("added", demo(d, "added.jsonl", "")),
        ],
        r#", "gateway": {"maxSessions": 7}"#,
    );
    assert!(
        within(WATCH_WAIT, || lists(
            &alice,
            &["demo__echo", "added__echo"],
            &[]
        ))
        .await,
        "{:?}\n{}",
        names(&alice),
        gateway.log()
    );
    let added = alice.call_tool("added__echo", json!({"text": "new"})).await;
    assert_eq!(text(&added.unwrap()), "new");
    let log = gateway.log();
    assert!(log.contains(r#"keys=["maxSessions"]"#), "{log}");
    assert!(
        log.contains(r#"added=["added"] removed=[] changed=[]"#),
        "{log}"
    );
}

/// A reloaded config's secrets are kept out of the log as the first config's are: a server
/// added by the reload, whose argument holds `${RELOAD_KEY}`, fails to start and its stderr
/// (quoting the argument) is logged with the key's value replaced.
#[tokio::test(flavor = "multi_thread")]
async fn a_reloaded_configs_secrets_never_reach_the_log() {
    const KEY: &str = "sk_reload_secret_42";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("mcpx.json");
    write_config(&config, &[("demo", demo(d, "demo.jsonl", ""))]);
    let config_text = config.display().to_string();
    let args = [
        "--config",
        &config_text,
        "serve",
        "--http",
        "127.0.0.1:0",
        "--watch",
    ];
    let gateway = HttpPeer::start(MCPX, &args, &[("RELOAD_KEY", KEY)], "/mcp").await;
    // A subcommand mcpx does not have: it says so on stderr, naming it, and exits.
    let failing =
        format!(r#"{{"command": "{MCPX}", "args": ["no-such-command-${{RELOAD_KEY}}"]}}"#);
    write_config(
        &config,
        &[("demo", demo(d, "demo.jsonl", "")), ("failing", failing)],
    );
    let told = |log: &str| log.contains("no-such-command-[redacted]");
    assert!(
        within(RELOAD_WAIT, || told(&gateway.log())).await,
        "{}",
        gateway.log()
    );
    let log = gateway.log();
    assert!(!log.contains(KEY), "{log}");
}
