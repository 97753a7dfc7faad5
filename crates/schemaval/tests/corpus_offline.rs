//! No network for any schema of the fuzz corpus: every schema of the JSON-Schema-Test-Suite (all
//! dialects, the remote-reference groups included), the committed seeds of the `schema` fuzz
//! target and, when a fuzz run left one, its generated corpus, compiled with every absolute URI
//! (except json-schema.org's metaschemas, which resolve from built-in copies) pointed at a
//! listening loopback socket. Nobody may connect.

#![allow(clippy::print_stderr)] // the test reports what it compiled

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Most files read from a generated fuzz corpus, to bound the test's time.
const MAX_GENERATED_INPUTS: usize = 20_000;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every schema in the suite's test files.
fn suite_schemas(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    files_under(&root.join("tests"), &mut files);
    let mut schemas = Vec::new();
    for file in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let text = std::fs::read(file).unwrap();
        let groups: Value = schemaval::parse_json(&text).unwrap();
        for group in groups.as_array().into_iter().flatten() {
            schemas.push(group["schema"].to_string());
        }
    }
    schemas
}

/// The schema part (before the first NUL) of every fuzz input in `dir`.
fn fuzz_schemas(dir: &Path, limit: usize) -> Vec<String> {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    files
        .iter()
        .take(limit)
        .map(|file| {
            let bytes = std::fs::read(file).unwrap();
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        })
        .collect()
}

/// `text` with the scheme and authority of every `http://` or `https://` URI, except
/// json-schema.org's, replaced by `base`.
fn pointed_at(text: &str, base: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("http") {
        out.push_str(&rest[..start]);
        let at = &rest[start..];
        let after = at
            .strip_prefix("http://")
            .or_else(|| at.strip_prefix("https://"));
        match after {
            Some(after) if !after.starts_with("json-schema.org") => {
                let end = after
                    .find(['/', '"', '#', '?', '\\'])
                    .unwrap_or(after.len());
                out.push_str(base);
                rest = &after[end..];
            }
            _ => {
                out.push_str("http");
                rest = &at[4..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn pointing_references_anywhere_is_never_a_connection() {
    let suite = std::env::var_os("JSON_SCHEMA_TEST_SUITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/json-schema-test-suite"));
    let mut schemas = Vec::new();
    if suite.join("tests").is_dir() {
        schemas.extend(suite_schemas(&suite));
    } else {
        let msg = format!(
            "JSON-Schema-Test-Suite not found at {} (run scripts/fetch-test-suite)",
            suite.display()
        );
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("skipped the suite: {msg}");
    }
    let from_suite = schemas.len();
    schemas.extend(fuzz_schemas(
        &workspace().join("fuzz/seeds/schema"),
        usize::MAX,
    ));
    schemas.extend(fuzz_schemas(
        &workspace().join("target/fuzz-corpus/schema"),
        MAX_GENERATED_INPUTS,
    ));

    let watch = common::LoopbackWatch::start();
    let mut remote = 0;
    let mut compiled = 0;
    for schema in &schemas {
        let text = pointed_at(schema, &watch.base);
        remote += usize::from(text.contains(&watch.base));
        if schemaval::Schema::from_slice(text.as_bytes()).is_ok() {
            compiled += 1;
        }
    }
    eprintln!(
        "{} schemas ({from_suite} from the suite), {remote} with a loopback URI, {compiled} compiled",
        schemas.len()
    );
    let base = watch.base.clone();
    assert!(!watch.finish(), "the validator connected to {base}");
    if from_suite > 0 {
        assert!(
            remote > 100,
            "the rewrite pointed almost nothing at the listener"
        );
    }
}

#[test]
fn uris_are_pointed_at_the_listener_but_metaschemas_are_not() {
    let text = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"http://localhost:1234/a.json#/x","b":"https://example.com?q","c":"httpx"}"#;
    assert_eq!(
        pointed_at(text, "http://127.0.0.1:9"),
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"http://127.0.0.1:9/a.json#/x","b":"http://127.0.0.1:9?q","c":"httpx"}"#
    );
}
