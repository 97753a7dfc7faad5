//! `mcpx tools --search` through the real binary, over two demo servers: ranked across every
//! configured server, restricted to one, bounded by `--limit`, as JSON (named as the gateway
//! exposes them, prefixes included), and the exit codes when nothing matches or a server fails.

use serde_json::{json, Value};

mod common;
use common::{config, run, MCPX};

/// The demo server as `demo`, a second one as `spare` with the prefix `s_`, and `extra`.
fn two_demos(dir: &std::path::Path, extra: &str) -> std::path::PathBuf {
    let spare = json!({"command": MCPX, "args": ["demo-server"], "prefix": "s_"});
    config(dir, &[], &format!(r#""spare": {spare}{extra}"#), "")
}

#[test]
fn search_ranks_the_tools_of_every_server() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_demos(dir.path(), "");
    let (out, _) = run(&config, &["tools", "--search", "add up two numbers"], 0);
    assert_eq!(
        out,
        "demo\tget-sum(a, b)\tAdds two integers.\n\
         spare\tget-sum(a, b)\tAdds two integers.\n"
    );
    let (out, _) = run(
        &config,
        &["tools", "spare", "--search", "a small picture"],
        0,
    );
    assert_eq!(out, "spare\ttiny-image()\tReturns a 1x1 PNG image.\n");
    let (out, _) = run(
        &config,
        &["tools", "--search", "add up two numbers", "--limit", "1"],
        0,
    );
    assert_eq!(out, "demo\tget-sum(a, b)\tAdds two integers.\n");
    for wrong in ["0", "51", "many"] {
        run(&config, &["tools", "--search", "sum", "--limit", wrong], 2);
    }
    run(&config, &["tools", "--limit", "3"], 2);
}

#[test]
fn search_as_json_and_without_a_match() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_demos(dir.path(), "");
    let (out, _) = run(
        &config,
        &["tools", "demo", "--search", "echo my text back", "--json"],
        0,
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["tools"][0]["name"], "demo__echo");
    assert_eq!(value["tools"][0]["server"], "demo");
    assert_eq!(value["tools"][0]["description"], "Returns its text.");
    let (out, _) = run(
        &config,
        &["tools", "--search", "add up two numbers", "--json"],
        0,
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["demo__get-sum", "s_get-sum"]);
    assert_eq!(value["tools"][1]["arguments"], json!(["a", "b"]));
    assert_eq!(
        run(&config, &["tools", "--search", "zebra giraffe"], 1).0,
        ""
    );
    run(&config, &["tools", "demo", "get-sum", "--search", "x"], 2);
}

#[test]
fn search_ranks_the_servers_that_start_and_exits_2_for_one_that_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let gone = r#", "gone": {"command": "/nonexistent/mcpx-no-such-server"}"#;
    let config = two_demos(dir.path(), gone);
    let (out, err) = run(
        &config,
        &["tools", "--search", "echo my text back", "--limit", "1"],
        2,
    );
    assert_eq!(out, "demo\techo(text)\tReturns its text.\n");
    assert!(err.contains("gone"), "{err}");
}
