//! The stdio transport against real child processes on every platform: the children are this
//! test binary run again in a helper role (see [`helper`]), so no shell or Unix tool is needed
//! and the same tests run on Windows, where a server and what it starts live in a Job Object.
//!
//! Whether a process still runs is told by a TCP listener it holds on loopback: the operating
//! system closes it when the process ends, so a refused connection means the process is gone.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use mcpclient::{Frame, StdioCommand, StdioTransport, Transport, TransportError};
use serde_json::{json, Value};

/// Which role the helper process plays: `echo`, `tree` or `hold` (see [`helper`]).
const ROLE: &str = "MCPCLIENT_TEST_HELPER";

/// How long a test waits for a frame, or for a process to be gone: far above what it takes.
const WAIT: Duration = Duration::from_secs(20);

/// This test binary in `role`, running only [`helper`].
fn helper_command(role: &str) -> StdioCommand {
    let mut command = StdioCommand {
        program: std::env::current_exe().unwrap().display().to_string(),
        args: ["--exact", "helper", "--nocapture", "--test-threads=1"]
            .map(str::to_owned)
            .to_vec(),
        ..StdioCommand::default()
    };
    command.env.insert(ROLE.to_owned(), role.to_owned());
    command
}

/// Not a test of its own: the body of the helper processes, by role.
/// - `echo`: each line of stdin back on stdout, after `{"cwd": …, "arg": …, "env": …}` and a
///   line on stderr.
/// - `tree`: starts a `hold` child, then holds a listener itself and prints its port as
///   `{"port": N}`; never reads stdin.
/// - `hold`: holds a listener, prints its port, and sleeps.
#[test]
#[allow(clippy::print_stdout, clippy::print_stderr)] // a helper process speaks on its stdio
fn helper() {
    use std::io::{BufRead, Write};
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    // The harness has written "test helper ... " without ending the line.
    println!();
    let hold = || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        println!("{}", json!({"port": port}));
        std::io::stdout().flush().unwrap();
        std::thread::sleep(Duration::from_secs(300));
    };
    match role.as_str() {
        "echo" => {
            let cwd = std::env::current_dir().unwrap();
            let var = std::env::var("MCPCLIENT_TEST_VAR").unwrap_or_default();
            println!("{}", json!({"cwd": cwd, "env": var}));
            eprintln!("warming up");
            for line in std::io::stdin().lock().lines() {
                println!("{}", line.unwrap());
            }
        }
        "tree" => {
            let hold_role = helper_command("hold");
            // Never waited for: it is to be stopped with this process.
            #[allow(clippy::zombie_processes)]
            let mut held = std::process::Command::new(&hold_role.program)
                .args(&hold_role.args)
                .env(ROLE, "hold")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The child's port is passed on by this process, whole: two processes writing one
            // pipe could glue a line of one harness to the other's port line (seen in CI).
            let child_out = std::io::BufReader::new(held.stdout.take().unwrap());
            for line in child_out.lines() {
                let line = line.unwrap();
                if serde_json::from_str::<Value>(&line).is_ok_and(|v| v.get("port").is_some()) {
                    println!("{line}");
                    break;
                }
            }
            hold();
        }
        _ => hold(),
    }
}

/// The next frame, skipping the test harness's own lines (not JSON).
async fn next_frame(t: &mut StdioTransport) -> Value {
    loop {
        let received = tokio::time::timeout(WAIT, t.receive())
            .await
            .expect("a frame in time")
            .expect("the child is still there");
        match received {
            Ok(frame) => return frame.value().unwrap(),
            Err(TransportError::BadFrame(_)) => continue,
            Err(error) => panic!("{error}"),
        }
    }
}

/// The ports of the listeners the helpers in `t` hold, `n` of them.
async fn ports(t: &mut StdioTransport, n: usize) -> Vec<SocketAddr> {
    let mut ports = Vec::new();
    while ports.len() < n {
        let frame = next_frame(t).await;
        let port = u16::try_from(frame["port"].as_u64().unwrap()).unwrap();
        ports.push(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    ports
}

/// Whether the process holding the listener at `addr` runs.
fn runs(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

/// Waits (at most [`WAIT`]) until no process holds a listener at `addrs`; whether that came.
async fn all_gone(addrs: &[SocketAddr]) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < WAIT {
        if !addrs.iter().any(|a| runs(*a)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn frames_stderr_args_env_and_cwd_go_through_a_real_child() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = helper_command("echo");
    command
        .env
        .insert("MCPCLIENT_TEST_VAR".to_owned(), "secret-ish".to_owned());
    command.cwd = Some(dir.path().to_owned());
    let mut t = StdioTransport::spawn(&command).unwrap();
    let started = next_frame(&mut t).await;
    assert_eq!(started["env"], "secret-ish");
    let cwd = std::path::PathBuf::from(started["cwd"].as_str().unwrap());
    assert_eq!(
        cwd.canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
    let text = r#"{"jsonrpc":"2.0","id":1,"result":{"z":18446744073709551617,"_meta":{"k":[]}}}"#;
    t.send(&Frame::parse(text).unwrap()).await.unwrap();
    assert_eq!(
        next_frame(&mut t).await,
        serde_json::from_str::<Value>(text).unwrap()
    );
    t.close().await.unwrap();
    assert!(
        t.stderr_tail().contains(&"warming up".to_owned()),
        "{:?}",
        t.stderr_tail()
    );
}

#[tokio::test]
async fn a_missing_program_is_the_same_spawn_error_everywhere() {
    for program in ["mcpx-no-such-server", "./mcpx-no-such-server"] {
        let err = StdioTransport::spawn(&StdioCommand {
            program: program.into(),
            ..StdioCommand::default()
        })
        .err()
        .unwrap();
        let TransportError::Spawn {
            program: named,
            source,
        } = &err
        else {
            panic!("{err}");
        };
        assert_eq!(named, program);
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{err}");
        assert!(err
            .to_string()
            .starts_with(&format!("cannot start `{program}`: ")));
    }
}

#[tokio::test]
async fn close_stops_a_grouped_server_and_what_it_started() {
    let mut t = StdioTransport::spawn_grouped(&helper_command("tree")).unwrap();
    let held = ports(&mut t, 2).await;
    assert!(held.iter().all(|a| runs(*a)), "both run before close");
    t.close().await.unwrap();
    assert!(all_gone(&held).await, "left behind after close: {held:?}");
}

#[tokio::test]
async fn dropping_a_grouped_server_stops_it_and_what_it_started() {
    let mut t = StdioTransport::spawn_grouped(&helper_command("tree")).unwrap();
    let held = ports(&mut t, 2).await;
    drop(t);
    assert!(all_gone(&held).await, "left behind after drop: {held:?}");
}
