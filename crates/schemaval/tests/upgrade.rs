//! The 2020-12 upgrade, proven over the official JSON-Schema-Test-Suite: for every test of the
//! draft4, draft6, draft7 and draft2019-09 folders (required, optional and format files), the
//! upgraded schema under 2020-12 gives the same verdict as the original under its own dialect.
//!
//! Excluded are only the groups the policy refuses (a remote document), as in `suite.rs`. A group
//! whose schema is [`schemaval::NotUpgradable`] is counted. The counts per dialect are pinned, so
//! a change in coverage is a visible diff; any verdict that differs fails the test unless it is in
//! `EXPECTED_DIFFERENCES` with its reason (and an entry that stops differing fails it too).

#![allow(clippy::print_stderr)] // a test reports what it counted

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use schemaval::{parse_json, upgrade, CompileError, Compiler, Dialect, Schema};

mod suite_files;
use suite_files::{files, needs_remote, suite_root};

/// Verdicts that differ on purpose, as `file :: group :: test`, with the reason.
const EXPECTED_DIFFERENCES: &[(&str, &str)] = &[(
    "draft4/optional/zeroTerminatedFloats.json :: some languages do not distinguish between different types of numeric value :: a float is not an integer even without fractional part",
    "draft-04 does not count 1.0 as an integer; 2020-12 does. The upgraded schema is wider, never narrower, and mcpx validates with the original",
)];

/// Tests per outcome: same verdict, refused by the policy (remote), schema not upgradable.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    equal: usize,
    excluded: usize,
    not_upgradable: usize,
}

fn all_files(root: &Path, dialect: &str) -> Vec<PathBuf> {
    let dir = root.join("tests").join(dialect);
    let mut out = files(&dir);
    out.extend(files(&dir.join("optional")));
    out.extend(files(&dir.join("optional/format")));
    out
}

fn run(dialect: &str, default: Dialect) -> Option<(Counts, BTreeSet<String>, Vec<String>)> {
    let root = suite_root()?;
    let compiler = Compiler::new().default_dialect(default);
    let mut counts = Counts::default();
    let mut differences = BTreeSet::new();
    let mut reasons = Vec::new();
    for file in all_files(&root, dialect) {
        // Named with `/` on every platform, as the expected differences are.
        let name = file
            .strip_prefix(root.join("tests"))
            .unwrap()
            .display()
            .to_string()
            .replace('\\', "/");
        let groups = parse_json(&std::fs::read(&file).unwrap()).unwrap();
        for group in groups.as_array().unwrap() {
            let gname = group["description"].as_str().unwrap();
            let tests = group["tests"].as_array().unwrap();
            let original = match compiler.compile(&group["schema"]) {
                Ok(s) => s,
                Err(
                    CompileError::UnresolvedRef { .. } | CompileError::UnsupportedDialect { .. },
                ) if needs_remote(&group["schema"]) => {
                    counts.excluded += tests.len();
                    continue;
                }
                Err(e) => panic!("{name} :: {gname}: the original does not compile: {e}"),
            };
            let upgraded = match upgrade(&group["schema"], default) {
                Ok(u) => u,
                Err(reason) => {
                    counts.not_upgradable += tests.len();
                    reasons.push(format!("{name} :: {gname}: {reason}"));
                    continue;
                }
            };
            let compiled = Schema::compile(&upgraded).unwrap_or_else(|e| {
                panic!("{name} :: {gname}: the upgraded schema does not compile: {e}\n{upgraded:#}")
            });
            assert_eq!(
                compiled.dialect(),
                Dialect::Draft202012,
                "{name} :: {gname}"
            );
            for test in tests {
                let tname = test["description"].as_str().unwrap();
                let data = &test["data"];
                if original.is_valid(data) == compiled.is_valid(data) {
                    counts.equal += 1;
                } else {
                    differences.insert(format!("{name} :: {gname} :: {tname}"));
                    eprintln!("differs: {name} :: {gname} :: {tname}\n  upgraded: {upgraded}");
                }
            }
        }
    }
    Some((counts, differences, reasons))
}

fn check(dialect: &str, default: Dialect, want: Counts) {
    let Some((counts, differences, reasons)) = run(dialect, default) else {
        return;
    };
    for r in &reasons {
        eprintln!("{r}");
    }
    eprintln!(
        "{dialect}: {} equal, {} excluded (remote), {} not upgradable",
        counts.equal, counts.excluded, counts.not_upgradable
    );
    let expected: BTreeSet<String> = EXPECTED_DIFFERENCES
        .iter()
        .filter(|(t, _)| t.starts_with(&format!("{dialect}/")))
        .map(|(t, _)| (*t).to_owned())
        .collect();
    let unexpected: Vec<&String> = differences.difference(&expected).collect();
    let stale: Vec<&String> = expected.difference(&differences).collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "verdicts that differ:\n{unexpected:#?}\nexpected differences that no longer differ:\n{stale:#?}"
    );
    assert_eq!(counts, want, "{dialect}: counts changed");
}

#[test]
fn draft4_upgrades_with_the_same_verdicts() {
    check(
        "draft4",
        Dialect::Draft4,
        Counts {
            equal: 845,
            excluded: 17,
            not_upgradable: 0,
        },
    );
}

#[test]
fn draft6_upgrades_with_the_same_verdicts() {
    check(
        "draft6",
        Dialect::Draft6,
        Counts {
            equal: 1126,
            excluded: 23,
            not_upgradable: 0,
        },
    );
}

#[test]
fn draft7_upgrades_with_the_same_verdicts() {
    check(
        "draft7",
        Dialect::Draft7,
        Counts {
            equal: 1440,
            excluded: 25,
            not_upgradable: 0,
        },
    );
}

#[test]
fn draft2019_09_upgrades_with_the_same_verdicts() {
    check(
        "draft2019-09",
        Dialect::Draft201909,
        Counts {
            equal: 1825,
            excluded: 39,
            not_upgradable: 0,
        },
    );
}

fn up(schema: serde_json::Value) -> serde_json::Value {
    upgrade(&schema, Dialect::Draft202012).unwrap()
}

#[test]
fn each_rewrite_is_exact_and_keeps_key_order() {
    use serde_json::json;
    let got = up(json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "http://example.com/root.json#top",
        "type": "object",
        "properties": {
            "definitions": {"$ref": "#/definitions/pair"},
            "n": {"maximum": 5, "exclusiveMaximum": true, "minimum": 0, "exclusiveMinimum": false},
            "d": {"dependencies": {"a": ["b"], "c": {"$ref": "#/properties/d/dependencies/c2"}, "c2": {"required": ["x"]}}}
        },
        "definitions": {"pair": {"items": [{"type": "string"}], "additionalItems": false}},
        "const": "ignored by draft-04"
    }));
    let want = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "http://example.com/root.json",
        "$anchor": "top",
        "type": "object",
        "properties": {
            "definitions": {"$ref": "#/$defs/pair"},
            "n": {"exclusiveMaximum": 5, "minimum": 0},
            "d": {
                "dependentRequired": {"a": ["b"]},
                "dependentSchemas": {"c": {"$ref": "#/properties/d/dependentSchemas/c2"}, "c2": {"required": ["x"]}}
            }
        },
        "$defs": {"pair": {"prefixItems": [{"type": "string"}], "items": false}}
    });
    assert_eq!(got, want);
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        serde_json::to_string(&want).unwrap(),
        "key order"
    );
}

#[test]
fn siblings_of_ref_that_draft7_ignores_are_left_out() {
    use serde_json::json;
    let got = up(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/definitions/a", "type": "string", "title": "kept",
        "definitions": {"a": {"type": "integer"}}
    }));
    assert_eq!(
        got,
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
               "$ref": "#/$defs/a", "title": "kept", "$defs": {"a": {"type": "integer"}}})
    );
}

#[test]
fn recursive_references_become_dynamic_ones() {
    use serde_json::json;
    let got = up(json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "$recursiveAnchor": true, "$anchor": "recursive",
        "properties": {"child": {"$recursiveRef": "#"}}
    }));
    assert_eq!(
        got,
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
               "$dynamicAnchor": "recursive1", "$anchor": "recursive",
               "properties": {"child": {"$dynamicRef": "#recursive1"}}})
    );
    let plain = up(json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "properties": {"child": {"$recursiveRef": "#"}}
    }));
    assert_eq!(plain["properties"]["child"], json!({"$ref": "#"}));
}

#[test]
fn what_has_no_exact_form_is_a_typed_reason() {
    use schemaval::NotUpgradable as N;
    use serde_json::json;
    let d7 = "http://json-schema.org/draft-07/schema#";
    let cases = [
        (
            json!({"$schema": d7, "properties": {"a": {"$ref": "#/properties/b/type", "x": 1}, "b": {"$ref": "#/definitions/z", "type": "string"}}, "definitions": {"z": {}}}),
            "RefIntoDropped",
        ),
        (json!({"$schema": d7, "$id": "#with:colon"}), "Identifier"),
        (json!({"$schema": d7, "$id": "#/pointer"}), "Identifier"),
        (
            json!({"$schema": d7, "$ref": "#/definitions/missing"}),
            "Pointer",
        ),
        (
            json!({"$schema": d7, "definitions": {"a": {}}, "$defs": {"a": {}}}),
            "Conflict",
        ),
        (
            json!({"$schema": d7, "properties": {"a": {"$schema": "http://json-schema.org/draft-04/schema#"}}}),
            "NestedDialect",
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveRef": "#/x"}),
            "Undefined",
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "properties": {"a": {"$recursiveAnchor": true}}}),
            "Undefined",
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-03/schema#"}),
            "UnsupportedDialect",
        ),
    ];
    for (schema, want) in cases {
        let err = upgrade(&schema, Dialect::Draft202012).expect_err(&schema.to_string());
        let kind = match &err {
            N::RefIntoDropped { .. } => "RefIntoDropped",
            N::Identifier { .. } => "Identifier",
            N::Pointer { .. } => "Pointer",
            N::Conflict { .. } => "Conflict",
            N::NestedDialect { .. } => "NestedDialect",
            N::Undefined { .. } => "Undefined",
            N::UnsupportedDialect { .. } => "UnsupportedDialect",
            _ => "other",
        };
        assert_eq!(kind, want, "{schema}: {err}");
        assert!(err.to_string().starts_with("not upgradable: "), "{err}");
    }
}

#[test]
fn a_2020_12_document_comes_back_unchanged() {
    use serde_json::json;
    let s = json!({"definitions": {"a": {}}, "items": {"type": "string"}, "dependencies": {"a": ["b"]}});
    assert_eq!(up(s.clone()), s);
}
