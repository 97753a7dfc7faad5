//! `mcpx schema check` and `mcpx schema validate`, driving the real binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The validator on the example files: an invalid and a valid argument file against the example tool schema.
const BAD_THEN_GOOD: [&str; 6] = [
    "schema",
    "validate",
    "--schema",
    "search-tool.schema.json",
    "search-args.bad.json",
    "search-args.json",
];

/// Runs mcpx in the examples folder, so paths in the output are short and stable.
fn mcpx(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::cargo_bin("mcpx").unwrap();
    cmd.current_dir(examples()).args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn validate_prints_flat_lines_per_file_and_exits_1_when_any_is_invalid() {
    let (code, out, err) = mcpx(&BAD_THEN_GOOD, None);
    assert_eq!(code, 1);
    assert_eq!(err, "");
    insta::assert_snapshot!(out, @r#"
    search-args.bad.json: invalid
      $.query: minLength: got 0 characters, want 1
      $.repo: pattern: got "widgets", want a match for ^[\w.-]+/[\w.-]+$
      $.state: enum: got "any", want one of "open", "closed", "all"
      $.limit: got string, want integer
      $.labels: uniqueItems: items are not unique
      $.sort: missing property 'by'
      $: additional property 'page' not allowed
    search-args.json: valid
    "#);
}

#[test]
fn validate_one_valid_instance_prints_nothing_and_exits_0() {
    let (code, out, err) = mcpx(
        &[
            "schema",
            "validate",
            "--schema",
            "search-tool.schema.json",
            "search-args.json",
        ],
        None,
    );
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
}

#[test]
fn validate_reads_standard_input_with_a_dash() {
    let (code, out, _) = mcpx(
        &[
            "schema",
            "validate",
            "--schema",
            "search-tool.schema.json",
            "-",
        ],
        Some(r#"{"query": "q", "repo": "a/b", "limit": 18446744073709551617}"#),
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!(out, @"$.limit: maximum: got 18446744073709551617, want 100");
}

#[test]
fn validate_json_report() {
    let (code, out, _) = mcpx(
        &[
            "schema",
            "validate",
            "--json",
            "--schema",
            "search-tool.schema.json",
            "-",
        ],
        Some(r#"{"query": 1, "repo": "a/b"}"#),
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!(out, @r#"
    [
      {
        "file": "-",
        "valid": false,
        "violations": [
          "$.query: got integer, want string"
        ]
      }
    ]
    "#);
}

#[test]
fn validate_exits_2_when_a_file_cannot_be_read_or_parsed_or_the_schema_does_not_compile() {
    let (code, out, err) = mcpx(
        &[
            "schema",
            "validate",
            "--schema",
            "search-tool.schema.json",
            "missing.json",
        ],
        None,
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with("mcpx: missing.json: cannot read: "),
        "{err}"
    );

    let (code, _, err) = mcpx(
        &[
            "schema",
            "validate",
            "--schema",
            "search-tool.schema.json",
            "-",
        ],
        Some("{\"a\": "),
    );
    assert_eq!(code, 2);
    insta::assert_snapshot!(err, @"mcpx: -: invalid JSON: EOF while parsing a value at line 1 column 6");

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r##"{"$ref": "https://example.com/other.json"}"##).unwrap();
    let (code, _, err) = mcpx(
        &["schema", "validate", "--schema", bad.to_str().unwrap(), "-"],
        Some("{}"),
    );
    assert_eq!(code, 2);
    assert!(
        err.ends_with(
            "bad.json: unresolved reference: https://example.com/other.json at $['$ref']\n"
        ),
        "{err}"
    );
}

#[test]
fn standard_input_can_be_named_once_only() {
    let (code, _, err) = mcpx(&["schema", "validate", "--schema", "-", "-"], Some("{}"));
    assert_eq!(code, 2);
    insta::assert_snapshot!(err, @"mcpx: `-` (standard input) can be given only once");
}

#[test]
fn check_names_each_failing_file_and_its_kind_of_error() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let files = [
        write("ok.json", r#"{"type": "object"}"#),
        write(
            "remote.json",
            r#"{"properties": {"a": {"$ref": "http://127.0.0.1:1/a.json"}}}"#,
        ),
        write(
            "draft3.json",
            r#"{"$schema": "http://json-schema.org/draft-03/schema#"}"#,
        ),
        write(
            "big.json",
            &format!(r#"{{"description": "{}"}}"#, "x".repeat(1024 * 1024)),
        ),
        write("invalid.json", r#"{"type": "strng"}"#),
        write("notjson.json", "{"),
    ];
    let mut args = vec!["schema", "check"];
    args.extend(files.iter().map(String::as_str));
    let mut cmd = Command::cargo_bin("mcpx").unwrap();
    let out = cmd.current_dir(dir.path()).args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap().replace(
        &format!("{}{}", dir.path().display(), std::path::MAIN_SEPARATOR),
        "",
    );
    insta::assert_snapshot!(text, @r#"
    remote.json: unresolved reference: http://127.0.0.1:1/a.json at $.properties.a['$ref']
    draft3.json: unsupported dialect: http://json-schema.org/draft-03/schema#
    big.json: schema too large: 1048595 bytes, limit 1048576
    invalid.json: invalid schema: $.type: anyOf: matches none of 2 alternatives ([1] enum: got "strng", want one of "array", "boolean", "integer", "null", "number", "object", "string"; [2] got string, want array)
    notjson.json: invalid JSON: EOF while parsing an object at line 1, column 1
    "#);
}

#[test]
fn check_exits_0_when_every_schema_compiles() {
    let (code, out, err) = mcpx(&["schema", "check", "search-tool.schema.json"], None);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let (code, out, _) = mcpx(
        &["schema", "check", "--json", "search-tool.schema.json"],
        None,
    );
    assert_eq!(code, 0);
    insta::assert_snapshot!(out, @r#"
    [
      {
        "file": "search-tool.schema.json",
        "ok": true,
        "dialect": "draft-07"
      }
    ]
    "#);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // `mcpx … | head -0`: stdout closes before mcpx writes.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mcpx"))
        .current_dir(examples())
        .args(BAD_THEN_GOOD)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    assert!(matches!(out.status.code(), Some(0 | 1)));
}

#[test]
fn help_documents_the_exit_codes() {
    let (code, out, _) = mcpx(&["--help"], None);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes:\n  0  success"), "{out}");
    assert!(out.contains("2  mcpx could not do its job"), "{out}");
}

#[test]
fn a_draft_04_line_says_what_the_dialect_saw() {
    // Under draft-04 a number written with a fraction is no integer, even when it is integral:
    // the line says so, instead of "got integer, want integer".
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("count.schema.json");
    std::fs::write(
        &schema,
        r#"{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"count": {"type": "integer"}}}"#,
    )
    .unwrap();
    let schema = schema.display().to_string();
    let args = ["schema", "validate", "--schema", &schema, "-"];
    let (code, out, _) = mcpx(&args, Some(r#"{"count": 1.0}"#));
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "$.count: got number 1.0, want integer (draft-04: 1.0 is not an integer; write it without a fraction or exponent)\n"
    );
    let (code, _, _) = mcpx(&args, Some(r#"{"count": 1}"#));
    assert_eq!(code, 0);
}
