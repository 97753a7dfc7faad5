//! The official JSON-Schema-Test-Suite, run under mcpx's policy.
//!
//! Every required test of draft2020-12 and draft7 runs, plus the optional groups the policy
//! promises (bignum, ecmascript-regex, non-bmp-regex, float-overflow, refOfUnknownKeyword) and the
//! format tests, with the expectation that `format` never fails. Groups that need a remote
//! document must fail compilation with `UnresolvedRef` (or, for a remote metaschema,
//! `UnsupportedDialect`), and this test asserts exactly that. Anything else that does not pass
//! sits in `EXPECTED_FAILURES` with its reason; an entry that starts passing fails the test too,
//! so the list stays true.
//!
//! The suite comes from `scripts/fetch-test-suite` (pinned, hash-checked) into
//! `target/json-schema-test-suite`, or from `$JSON_SCHEMA_TEST_SUITE`.

#![allow(clippy::print_stderr)] // a test reports what it skipped and counted

use std::collections::BTreeSet;
use std::path::Path;

use schemaval::{parse_json, CompileError, Compiler, Dialect};

mod suite_files;
use suite_files::{files, needs_remote, suite_root};

/// Tests that do not pass under the policy, as `file :: group :: test`, each with its reason.
const EXPECTED_FAILURES: &[(&str, &str)] = &[];

#[derive(Default)]
struct Tally {
    passed: usize,
    remote: usize,
    failures: BTreeSet<String>,
}

fn run_file(root: &Path, file: &Path, compiler: Compiler, formats_pass: bool, tally: &mut Tally) {
    let name = file
        .strip_prefix(root.join("tests"))
        .unwrap()
        .display()
        .to_string();
    let text = std::fs::read(file).unwrap();
    let groups = parse_json(&text).unwrap();
    for group in groups.as_array().unwrap() {
        let gname = group["description"].as_str().unwrap();
        let tests = group["tests"].as_array().unwrap();
        match compiler.compile(&group["schema"]) {
            Ok(schema) => {
                for test in tests {
                    let tname = test["description"].as_str().unwrap();
                    let want = formats_pass || test["valid"].as_bool().unwrap();
                    let yes_no = schema.is_valid(&test["data"]);
                    let lines = schema.validate(&test["data"]);
                    if yes_no == want && lines.is_ok() == want {
                        tally.passed += 1;
                    } else {
                        tally
                            .failures
                            .insert(format!("{name} :: {gname} :: {tname}"));
                    }
                }
            }
            Err(CompileError::UnresolvedRef { .. } | CompileError::UnsupportedDialect { .. })
                if needs_remote(&group["schema"]) =>
            {
                tally.remote += tests.len();
            }
            Err(err) => {
                for test in tests {
                    let tname = test["description"].as_str().unwrap();
                    tally
                        .failures
                        .insert(format!("{name} :: {gname} :: {tname} (compile: {err})"));
                }
            }
        }
    }
}

fn run_dialect(root: &Path, dialect: &str, default: Dialect, optional: &[&str]) -> Tally {
    let compiler = Compiler::new().default_dialect(default);
    let dir = root.join("tests").join(dialect);
    let mut tally = Tally::default();
    for file in files(&dir) {
        run_file(root, &file, compiler, false, &mut tally);
    }
    for name in optional {
        run_file(
            root,
            &dir.join("optional").join(format!("{name}.json")),
            compiler,
            false,
            &mut tally,
        );
    }
    for file in files(&dir.join("optional/format")) {
        run_file(root, &file, compiler, true, &mut tally);
    }
    tally
}

fn check(dialect: &str, default: Dialect, optional: &[&str]) {
    let Some(root) = suite_root() else { return };
    let tally = run_dialect(&root, dialect, default, optional);
    let expected: BTreeSet<String> = EXPECTED_FAILURES
        .iter()
        .filter(|(t, _)| t.starts_with(&format!("{dialect}/")))
        .map(|(t, _)| (*t).to_owned())
        .collect();
    let unexpected: Vec<&String> = tally.failures.difference(&expected).collect();
    let stale: Vec<&String> = expected.difference(&tally.failures).collect();
    eprintln!(
        "{dialect}: {} passed, {} refused as remote (UnresolvedRef), {} expected failures",
        tally.passed,
        tally.remote,
        expected.len()
    );
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "unexpected failures:\n{}\nexpected failures that now pass:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        stale
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert!(tally.passed > 500, "too few tests ran: {}", tally.passed);
}

const OPTIONAL: &[&str] = &[
    "bignum",
    "ecmascript-regex",
    "non-bmp-regex",
    "float-overflow",
    "refOfUnknownKeyword",
];

#[test]
fn draft2020_12() {
    check("draft2020-12", Dialect::Draft202012, OPTIONAL);
}

#[test]
fn draft7() {
    check(
        "draft7",
        Dialect::Draft7,
        &[
            "bignum",
            "ecmascript-regex",
            "non-bmp-regex",
            "float-overflow",
        ],
    );
}

#[test]
fn draft2019_09() {
    check("draft2019-09", Dialect::Draft201909, OPTIONAL);
}

#[test]
fn draft6() {
    check(
        "draft6",
        Dialect::Draft6,
        &[
            "bignum",
            "ecmascript-regex",
            "non-bmp-regex",
            "float-overflow",
        ],
    );
}

#[test]
fn draft4() {
    check(
        "draft4",
        Dialect::Draft4,
        &[
            "bignum",
            "ecmascript-regex",
            "non-bmp-regex",
            "float-overflow",
        ],
    );
}
