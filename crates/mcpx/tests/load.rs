//! Load through `mcpx serve --http` (loopback only, bounded in count and time): 8 concurrent
//! clients, 10,000 calls mixing valid, invalid and drifting-output calls, every one answered
//! exactly once with its own answer; then a soak of 100,000 calls with the gateway's resident
//! memory sampled. And 20,000 calls pipelined 16 at a time through `mcpx serve` over stdio.

mod common;

use std::time::Duration;

use common::{config, spec, MCPX};
use mcpclient::{HttpConfig, Reach};
use mcpx_interop::HttpPeer;
use mcpx_loadgen::{run, Call, CpuOf, Load};
use serde_json::Value;

/// How much the gateway's resident memory may grow over the soak after its warm-up.
const SOAK_GROWTH_LIMIT_KIB: u64 = 16 * 1024;

async fn gateway(dir: &std::path::Path) -> HttpPeer {
    gateway_with(dir, &[]).await
}

/// The gateway, with more arguments to `serve --http`.
async fn gateway_with(dir: &std::path::Path, more: &[&str]) -> HttpPeer {
    let config = config(dir, &[], "", "").display().to_string();
    let mut args = vec!["--config", &config, "serve", "--http", "127.0.0.1:0"];
    args.extend_from_slice(more);
    HttpPeer::start(MCPX, &args, &[("MCPX_LOG", "error,mcpx=info")], "/mcp").await
}

/// How many of process `pid`'s threads are a multi-thread runtime's workers (tokio names them;
/// its blocking pool's threads are named the same, and a gateway just started has none).
#[cfg(target_os = "linux")]
fn runtime_workers(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the gateway is running")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim().starts_with("tokio-r"))
        .count()
}

/// How long a new thread may take to take its name: each names itself once it first runs,
/// which on a loaded machine can come after the gateway said it listens.
#[cfg(target_os = "linux")]
const THREAD_NAMING_BOUND: Duration = Duration::from_secs(10);

/// The runtime workers of the gateway `pid` once at least `want` of them carry their name, or
/// as many as do when [`THREAD_NAMING_BOUND`] has passed.
#[cfg(target_os = "linux")]
async fn runtime_workers_named(pid: u32, want: usize) -> usize {
    let deadline = tokio::time::Instant::now() + THREAD_NAMING_BOUND;
    loop {
        let named = runtime_workers(pid);
        if named >= want || tokio::time::Instant::now() >= deadline {
            return named;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn load(clients: usize, calls: usize) -> Load {
    Load {
        clients,
        concurrency: 4,
        calls,
        mix: vec![Call::Valid, Call::Invalid, Call::Drifting],
        prefix: "demo__".to_owned(),
        timeout: Duration::from_secs(60),
        cpu_of: None,
        modern: false,
        new_connection: false,
    }
}

/// A TCP proxy on loopback in front of the HTTP endpoint `url` that counts the connections it
/// accepts (each forwarded both ways on threads of its own), and the target that goes through it.
fn counting_proxy(url: &str) -> (Reach, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let rest = url.trim_start_matches("http://");
    let (address, path) = rest.split_once('/').unwrap();
    let upstream = address.to_owned();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxied = format!("http://{}/{path}", listener.local_addr().unwrap());
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        // Bounded: the test makes at most a few hundred connections.
        for client in listener.incoming().take(1_000) {
            let Ok(client) = client else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                return;
            };
            for (mut from, mut to) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    let target = Reach::Http(HttpConfig {
        url: proxied,
        headers: Vec::new(),
        auth: None,
    });
    (target, accepted)
}

fn target(peer: &HttpPeer) -> Reach {
    Reach::Http(HttpConfig {
        url: peer.url.clone(),
        headers: Vec::new(),
        auth: None,
    })
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    mcpx_loadgen::resident_kib(pid).expect("the gateway is running")
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_thousand_mixed_calls_from_eight_clients_are_each_answered_once_and_right() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path()).await;
    let report = run(&target(&peer), &load(8, 10_000)).await.unwrap();
    answered_each_once(&report, 10_000);
    drop(peer);
    // Only the valid and drifting calls reached the server (3,334 + 3,333), every frame valid.
    assert_eq!(valid_calls_arrived(dir.path(), spec), 6_667);
}

/// Every call of `report` was answered right, once.
fn answered_each_once(report: &mcpx_loadgen::Report, calls: usize) {
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.right, calls);
    assert_eq!(report.unmatched, 0, "answers that matched no call");
}

/// How many calls reached the demo server (its transcript in `dir`, every frame valid), after
/// checking that none of them is an invalid one (`b` a string).
fn valid_calls_arrived(dir: &std::path::Path, spec: &mcpspec::Spec) -> usize {
    let transcript = common::demo_transcript(dir, spec);
    let arrived: Vec<&Value> = transcript
        .iter()
        .filter(|e| e["from"] == "client" && e["message"]["method"] == "tools/call")
        .map(|e| &e["message"]["params"]["arguments"])
        .collect();
    assert!(arrived
        .iter()
        .all(|a| a.get("b") != Some(&Value::from("one"))));
    arrived.len()
}

#[tokio::test(flavor = "multi_thread")]
async fn sessionless_calls_from_four_clients_are_each_answered_once_and_right() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path()).await;
    let sessionless = Load {
        mix: vec![Call::Valid, Call::Invalid],
        modern: true,
        new_connection: false,
        ..load(4, 1_200)
    };
    let report = run(&target(&peer), &sessionless).await.unwrap();
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.right, 1_200);
    // 200 more through a proxy that counts the connections: kept alive, they share a few (about
    // one per call in flight, 4 clients x 4; a client's pool may open one more when a call
    // starts before the last one's connection is back in it, which a loaded machine makes
    // more likely: fewer than half as many connections as calls is what says they are reused);
    // with --new-connection, each call has its own.
    for (new_connection, calls) in [(false, 100), (true, 100)] {
        let (proxy, accepted) = counting_proxy(&peer.url);
        let report = run(
            &proxy,
            &Load {
                calls,
                new_connection,
                ..sessionless.clone()
            },
        )
        .await
        .unwrap();
        assert_eq!(report.failures, Vec::<String>::new());
        assert_eq!(report.right, calls);
        let connections = accepted.load(std::sync::atomic::Ordering::SeqCst);
        if new_connection {
            assert_eq!(connections, calls, "one connection per call");
        } else {
            assert!(
                (1..calls / 2).contains(&connections),
                "{connections} connections for {calls} calls kept alive"
            );
        }
    }
    drop(peer);
    // The valid calls reached the server, each once; the invalid ones did not.
    let transcript = common::demo_transcript(dir.path(), spec);
    let arrived = transcript
        .iter()
        .filter(|e| e["from"] == "client" && e["message"]["method"] == "tools/call")
        .count();
    assert_eq!(arrived, 700);
    // Drifting answers cannot be checked byte for byte on this path: refused up front.
    let drifting = Load {
        mix: vec![Call::Drifting],
        modern: true,
        new_connection: false,
        ..load(1, 1)
    };
    let nowhere = Reach::Http(HttpConfig {
        url: "http://127.0.0.1:9/mcp".to_owned(),
        headers: Vec::new(),
        auth: None,
    });
    let refused = run(&nowhere, &drifting).await.unwrap_err().to_string();
    assert!(refused.contains("byte for byte"), "{refused}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_thread_serves_sessions_and_sessionless_calls_from_several_clients_each_once() {
    let Some(spec) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    // --threads 1: the HTTP front on one thread (no runtime workers at all), as the stdio front.
    let peer = gateway_with(dir.path(), &["--threads", "1"]).await;
    // Its threads are read from /proc: on Linux only (the calls below are made everywhere).
    #[cfg(target_os = "linux")]
    {
        assert_eq!(
            runtime_workers(peer.pid().unwrap()),
            0,
            "one thread: no workers"
        );
        let elsewhere = tempfile::tempdir().unwrap();
        let default = gateway(elsewhere.path()).await;
        let workers = runtime_workers_named(default.pid().unwrap(), 2).await;
        assert!(workers >= 2, "a worker per core, at least 2: {workers}");
    }
    let sessions = load(4, 2_000);
    let sessionless = Load {
        mix: vec![Call::Valid, Call::Invalid],
        modern: true,
        new_connection: true,
        ..load(4, 400)
    };
    // Both at once: four sessions and four clients opening a connection per call.
    let to = target(&peer);
    let (sessions, sessionless) = tokio::join!(run(&to, &sessions), run(&to, &sessionless));
    answered_each_once(&sessions.unwrap(), 2_000);
    answered_each_once(&sessionless.unwrap(), 400);
    drop(peer);
    // What reached the server: the sessions' valid and drifting calls (667 + 666) and the
    // sessionless valid ones (200), each once; no invalid one.
    assert_eq!(valid_calls_arrived(dir.path(), spec), 667 + 666 + 200);
}

#[tokio::test(flavor = "multi_thread")]
#[allow(clippy::print_stderr)] // the figures, for RELIABILITY.md
#[cfg_attr(windows, ignore = "reads the gateway's memory from /proc")]
async fn resident_memory_stays_flat_over_a_hundred_thousand_calls() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer = gateway(dir.path()).await;
    let pid = peer.pid().unwrap();
    let warm = run(&target(&peer), &load(8, 20_000)).await.unwrap();
    assert_eq!(warm.right, 20_000, "{:?}", warm.failures);
    let after_warm_up = rss_kib(pid);
    let soak = run(&target(&peer), &load(8, 80_000)).await.unwrap();
    assert_eq!(soak.right, 80_000, "{:?}", soak.failures);
    let after_soak = rss_kib(pid);
    eprintln!(
        "gateway RSS: {after_warm_up} KiB after 20,000 calls, {after_soak} KiB after 100,000 ({:.0} calls/s)",
        soak.throughput()
    );
    assert!(
        after_soak <= after_warm_up + SOAK_GROWTH_LIMIT_KIB,
        "resident memory grew from {after_warm_up} to {after_soak} KiB"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(windows, ignore = "reads the gateway's CPU time from /proc")]
async fn twenty_thousand_pipelined_calls_through_the_stdio_front_are_each_answered_once() {
    let Some(_) = spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "").display().to_string();
    // 16 in flight on one stdin: the front's pacing must never stall (a lost wake-up once
    // held its input back for good, about one run in ten of this size).
    let target = Reach::Stdio(mcpclient::StdioCommand {
        program: MCPX.to_owned(),
        args: vec!["--config".to_owned(), config, "serve".to_owned()],
        ..Default::default()
    });
    let load = Load {
        concurrency: 16,
        timeout: Duration::from_secs(20),
        // This process's own CPU time (its calls and their checks): that the measurement
        // `scripts/bench` reports for the gateway works.
        cpu_of: Some(CpuOf::Pid(std::process::id())),
        ..load(1, 20_000)
    };
    let report = tokio::time::timeout(Duration::from_secs(300), run(&target, &load))
        .await
        .expect("the calls end")
        .unwrap();
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.right, 20_000);
    assert_eq!(report.unmatched, 0, "answers that matched no call");
    let cpu = report.cpu.expect("this process's CPU time is read");
    assert!(
        cpu > Duration::ZERO && cpu < report.elapsed * 64,
        "{cpu:?} over {:?}",
        report.elapsed
    );
}
