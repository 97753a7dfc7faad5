//! `mcpx pin`: the lock file beside the config, and `--check` against it.

mod common;

use common::{config, run};
use serde_json::Value;

#[test]
fn pin_writes_the_lock_and_check_classifies_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let (out, _) = run(&config, &["pin"], 0);
    assert!(out.starts_with("pinned "), "{out}");
    let lock = dir.path().join("mcpx.lock.json");
    let text = std::fs::read_to_string(&lock).unwrap();
    // Pinning again gives the same bytes.
    run(&config, &["pin"], 0);
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), text);
    let (out, _) = run(&config, &["pin", "--check"], 0);
    assert_eq!(out, "0 tools changed since pinned\n");

    // What was pinned differs from what the server lists: as if the server had changed.
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let tools = doc["servers"]["demo"].as_object_mut().unwrap();
    let echo = tools.get_mut("echo").unwrap();
    echo["description"] = "was different".into();
    echo["inputSchema"]["properties"]["text"]["minLength"] = 0.into();
    tools.insert("gone".into(), serde_json::json!({"name": "gone"}));
    tools.remove("get-sum");
    std::fs::write(&lock, serde_json::to_string(&doc).unwrap()).unwrap();
    let (out, _) = run(&config, &["pin", "--check"], 1);
    assert_eq!(
        out,
        "demo: echo: description changed; input accepts less (a call valid before may now be refused)\n  \
         description was: \"was different\"\n  \
         description now: \"Returns its text.\"\n\
         demo: get-sum: added\n\
         demo: gone: removed\n\
         3 tools changed since pinned\n"
    );
}

#[test]
fn check_without_a_lock_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let (_, err) = run(&config, &["pin", "--check"], 2);
    assert!(err.contains("run `mcpx pin` first"), "{err}");
}
