//! Real MCP clients written by others, the Python SDK (`mcp` from PyPI) and the TypeScript SDK
//! (`@modelcontextprotocol/sdk` from npm), list and call tools through `mcpx serve` over stdio
//! and Streamable HTTP. The gateway fronts the workspace's demo server and the MCP reference
//! server; every frame the demo server exchanged is checked against the protocol schema.

mod common;

use std::path::{Path, PathBuf};

use common::{config, demo_transcript, spec, MCPX};
use mcpx_interop::{everything, peer_file, python, run_client, ts_sdk, HttpPeer};
use serde_json::{json, Value};

/// The config: the demo server and the reference server (over stdio).
fn both(dir: &Path, everything: &Path) -> PathBuf {
    let reference = json!({"command": "node", "args": [everything.display().to_string(), "stdio"]});
    config(dir, &[], &format!(r#""everything": {reference}"#), "")
}

/// A client's report: one JSON object per step, by the step's name.
type Report = std::collections::HashMap<String, Value>;

/// Runs a client script to its end; its report, one JSON object per step, by step name.
async fn run(program: &Path, args: &[String]) -> Report {
    run_client(program, args)
        .await
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["step"].as_str().unwrap().to_owned(), v))
        .collect()
}

/// What both SDKs must see, whatever the front.
fn assert_report(report: &Report) {
    assert_eq!(report["initialize"]["server"], "mcpx");
    let names = report["tools"]["names"].as_array().unwrap();
    for expected in [
        "demo__get-sum",
        "demo__book-table",
        "everything__get-sum",
        "everything__echo",
    ] {
        assert!(names.contains(&json!(expected)), "{expected} in {names:?}");
    }
    assert_eq!(report["demo-sum"]["structured"], json!({"sum": 5}));
    assert_eq!(
        report["everything-sum"]["text"],
        "The sum of 20 and 22 is 42."
    );
    assert_eq!(report["rejected"]["code"], -32602);
    assert!(
        report["rejected"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid arguments for tool 'demo__get-sum': $.b: got string, want integer"),
        "{}",
        report["rejected"]
    );
    assert_eq!(report["progress"]["text"], "counted to 3");
    assert_eq!(
        report["elicited"]["text"],
        "booked Chez Rust for 4 at 19:00"
    );
    // Neither SDK checks the user's answer against the requested schema; mcpx does, and the
    // server got -32602 with the violation instead of the answer.
    let refused = report["elicitation-refused"]["text"].as_str().unwrap();
    assert!(
        refused.starts_with("not booked: ")
            && refused.contains("-32602")
            && refused.contains("$.party: maximum: got 40, want 12"),
        "{refused}"
    );
}

/// The demo server never saw the rejected call, and every frame it exchanged is valid.
fn assert_upstream(dir: &Path) {
    let transcript = demo_transcript(dir, spec().unwrap());
    assert!(
        !transcript
            .iter()
            .any(|e| e["message"]["params"]["arguments"]["b"] == "three"),
        "the rejected call reached the server"
    );
}

/// Runs a client script through the gateway over `front` (`stdio` or `http`): `args` first,
/// then `stdio MCPX --config CONFIG serve`, or `http URL` of a gateway started here.
async fn through_gateway(
    front: &str,
    config: &Path,
    program: &Path,
    mut args: Vec<String>,
) -> Report {
    let config = config.display().to_string();
    let _gateway = match front {
        "stdio" => {
            args.extend(["stdio", MCPX, "--config", &config, "serve"].map(str::to_owned));
            None
        }
        _ => {
            let listen = ["--config", &config, "serve", "--http", "127.0.0.1:0"];
            let gateway = HttpPeer::start(MCPX, &listen, &[], "/mcp").await;
            args.extend(["http".to_owned(), gateway.url.clone()]);
            Some(gateway)
        }
    };
    run(program, &args).await
}

async fn python_client(front: &str) {
    let (Some(_), Some(python), Some(everything)) = (spec(), python(), everything()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = both(dir.path(), &everything);
    let script = vec![peer_file("python_client.py")];
    let report = through_gateway(front, &config, &python, script).await;
    assert_report(&report);
    assert_eq!(progress(&report), [1.0, 2.0, 3.0]);
    // The Python SDK hands the drifted result over as it came, big integer included.
    assert_eq!(report["drifting"]["sum"], "eleven");
    assert_eq!(report["drifting"]["big"], "18446744073709551617");
    assert_upstream(dir.path());
}

async fn typescript_client(front: &str) {
    let (Some(_), Some(node_modules), Some(everything)) = (spec(), ts_sdk(), everything()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = both(dir.path(), &everything);
    let script = vec![
        peer_file("ts_client.cjs"),
        node_modules.display().to_string(),
    ];
    let report = through_gateway(front, &config, Path::new("node"), script).await;
    assert_report(&report);
    // The server pauses between its progress and its answer (the TypeScript SDK drops progress
    // handlers when the answer arrives): every step must arrive, in order.
    assert_eq!(progress(&report), [1.0, 2.0, 3.0]);
    assert_upstream(dir.path());
}

/// The progress steps a client reported.
fn progress(report: &Report) -> Vec<f64> {
    report["progress"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_sdk_client_over_stdio() {
    python_client("stdio").await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn python_sdk_client_over_http() {
    python_client("http").await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn typescript_sdk_client_over_stdio() {
    typescript_client("stdio").await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
async fn typescript_sdk_client_over_http() {
    typescript_client("http").await;
}
