//! Finding the official JSON-Schema-Test-Suite and its files, shared by the suite test and the
//! upgrade-equivalence test.
//!
//! The suite comes from `scripts/fetch-test-suite` (pinned, hash-checked) into
//! `target/json-schema-test-suite`, or from `$JSON_SCHEMA_TEST_SUITE`. Absent, the tests skip
//! with a message, and fail when `CI` is set.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the remote documents of the suite would be served; the policy never fetches them.
pub(crate) const REMOTE: &str = "http://localhost:1234/";

/// The suite's root folder, or `None` (after saying so) when it is absent outside CI.
pub(crate) fn suite_root() -> Option<PathBuf> {
    let root = match std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/json-schema-test-suite"),
    };
    if root.join("tests").is_dir() {
        return Some(root);
    }
    let msg = format!(
        "JSON-Schema-Test-Suite not found at {} (run scripts/fetch-test-suite or set JSON_SCHEMA_TEST_SUITE)",
        root.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{msg}");
    #[allow(clippy::print_stderr)] // a test says what it skipped
    {
        eprintln!("skipped: {msg}");
    }
    None
}

/// The `.json` files of a folder, sorted.
pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

/// Whether a schema needs a document the policy refuses to fetch: the suite's remote server, or
/// a reference to any other host that is not a metaschema.
pub(crate) fn needs_remote(schema: &Value) -> bool {
    let text = serde_json::to_string(schema).unwrap();
    text.contains(REMOTE) || (text.contains("\"$ref\":\"http") && !text.contains("json-schema.org"))
}
