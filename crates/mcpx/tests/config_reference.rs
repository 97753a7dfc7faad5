//! The manual's configuration reference (`docs/src/reference/configuration.md`, the table under
//! "Every key") names exactly the keys the config parser accepts: every property of
//! `crates/mcpx/schemas/config.schema.json`, which the parser enforces before reading the file.
//! A key added to the schema without a row, or a row for a key the schema does not have, fails
//! here with the keys in question.
//!
//! Keys are dotted paths from the root; a map whose entries are objects with keys of their own
//! (`mcpServers`) has a `NAME` step. A definition reached again through another `$ref`
//! (`servers.NAME`, the same server entry) is named once, at its first path.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

/// The placeholder for a map's entry names.
const ENTRY: &str = "NAME";

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every key path the schema accepts.
fn schema_keys() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repository().join("crates/mcpx/schemas/config.schema.json"))
        .unwrap();
    let root: Value = serde_json::from_str(&text).unwrap();
    let mut keys = BTreeSet::new();
    let mut walked = BTreeSet::new();
    walk(&root, &root, "", &mut keys, &mut walked, 0);
    keys
}

/// The schema's nesting is a dozen levels; past this the walk is in a loop.
const MAX_DEPTH: usize = 32;

/// Adds the keys `schema` (at `path`) declares, through `$ref`s and subschemas.
fn walk(
    root: &Value,
    schema: &Value,
    path: &str,
    keys: &mut BTreeSet<String>,
    walked: &mut BTreeSet<String>,
    depth: usize,
) {
    assert!(
        depth < MAX_DEPTH,
        "the schema nests past {MAX_DEPTH} at {path}"
    );
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        // A definition is walked once: where it is reached again, its keys are the same ones.
        if walked.insert(reference.to_owned()) {
            let target = root
                .pointer(reference.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("{reference} does not resolve"));
            walk(root, target, path, keys, walked, depth + 1);
        }
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let key = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            keys.insert(key.clone());
            walk(root, property, &key, keys, walked, depth + 1);
        }
    }
    if let Some(entry) = schema.get("additionalProperties").filter(|s| s.is_object()) {
        if declares_keys(root, entry) {
            let key = format!("{path}.{ENTRY}");
            keys.insert(key.clone());
            walk(root, entry, &key, keys, walked, depth + 1);
        }
    }
    for combinator in ["allOf", "anyOf", "oneOf"] {
        for branch in schema
            .get(combinator)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(root, branch, path, keys, walked, depth + 1);
        }
    }
}

/// Whether `schema` (through one `$ref`) is an object with named properties, rather than a map
/// of free names to plain values (`env`, `headers`, `toolScopes`).
fn declares_keys(root: &Value, schema: &Value) -> bool {
    let target = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.trim_start_matches('#')).unwrap(),
        None => schema,
    };
    target.get("properties").is_some()
}

/// The keys of the reference table: the first cell of each row under "## Every key", in
/// backticks.
fn reference_keys() -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(repository().join("docs/src/reference/configuration.md")).unwrap();
    let table = text
        .split("\n## Every key\n")
        .nth(1)
        .expect("a section \"Every key\"")
        .split("\n## ")
        .next()
        .unwrap();
    let mut keys = BTreeSet::new();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let cell = row.split('|').nth(1).unwrap().trim();
        let key = cell.trim_matches('`').to_owned();
        assert!(keys.insert(key.clone()), "{key} has two rows");
    }
    keys
}

#[test]
fn the_configuration_reference_names_every_key_the_parser_accepts_and_no_other() {
    let schema = schema_keys();
    let reference = reference_keys();
    let missing: Vec<&String> = schema.difference(&reference).collect();
    let extra: Vec<&String> = reference.difference(&schema).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/src/reference/configuration.md is out of step with crates/mcpx/schemas/config.schema.json:\n  \
         accepted but not in the table: {missing:?}\n  in the table but not accepted: {extra:?}"
    );
    // The walk reaches every kind of place a key can be.
    for key in [
        "gateway.maxSessionServersPerClient",
        "gateway.auth.toolScopes",
        "mcpServers.NAME.auth.idp.idTokenFile",
        "servers.NAME",
    ] {
        assert!(schema.contains(key), "{key}");
    }
    assert!(
        !schema.contains("mcpServers.NAME.env.NAME"),
        "env is a map of values"
    );
}
