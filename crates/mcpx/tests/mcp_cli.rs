//! The MCP commands driven through the real binary against the bundled demo server
//! (`mcpx demo-server`): config errors, argument typing, exit codes, byte-exact `--json`, lint.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The drifting tool's result, exactly as the demo server sends it.
const DRIFTING: &str = r#"{"zeta":true,"content":[{"type":"text","text":"drifted"}],"structuredContent":{"sum":"eleven","big":18446744073709551617,"precise":0.100000000000000000000000000001,"negative":-18446744073709551617,"z":1,"a":2},"x-vendor":{"kept":[1,2,3]},"isError":false}"#;

fn config(dir: &Path, args: &str) -> PathBuf {
    let path = dir.join("mcpx.json");
    let exe = env!("CARGO_BIN_EXE_mcpx");
    std::fs::write(
        &path,
        format!(r#"{{"mcpServers": {{"demo": {{"command": "{exe}", "args": [{args}]}}}}}}"#),
    )
    .unwrap();
    path
}

fn mcpx(config: &Path) -> Command {
    let mut cmd = Command::cargo_bin("mcpx").unwrap();
    cmd.arg("--config").arg(config);
    cmd
}

#[test]
fn key_value_pairs_are_typed_and_a_bad_type_is_rejected_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server""#);
    mcpx(&config)
        .args(["call", "demo", "get-sum", "a=2", "b=3"])
        .assert()
        .code(0)
        .stdout("5\n{\n  \"sum\": 5\n}\n");
    mcpx(&config)
        .args(["call", "demo", "get-sum", "a=2", "b=three"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("mcpx: arguments rejected before sending (1 problem):\n  $.b: got string, want integer\n");
    mcpx(&config)
        .args(["call", "demo", "get-sum", r#"{"a": 2, "b": 3}"#, "--json"])
        .assert()
        .code(0)
        .stdout(
            r#"{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5}}
"#,
        );
}

#[test]
fn json_output_is_the_result_byte_for_byte_and_warnings_go_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server""#);
    mcpx(&config)
        .args(["call", "demo", "drifting-output", "--json"])
        .assert()
        .code(0)
        .stdout(format!("{DRIFTING}\n"))
        .stderr("mcpx: warning: drifting-output: structuredContent violates outputSchema (delivered unchanged)\n  $.sum: got string, want integer\n");
}

/// A mistake outside the servers refuses the file, naming it and the path; a mistake in one
/// server's entry (a wrong type, a variable that is not set) makes that server fail to start
/// with its place and reason, and the others are served.
#[test]
fn config_mistakes_name_the_file_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"demo": {"command": "x"}}, "gateway": {"maxSessions": "many"}}"#,
    )
    .unwrap();
    let out = mcpx(&path)
        .arg("servers")
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with(&format!("mcpx: config {}: ", path.display())),
        "{text}"
    );
    assert!(
        text.contains("$.gateway.maxSessions: got string, want integer"),
        "{text}"
    );

    let exe = env!("CARGO_BIN_EXE_mcpx");
    std::fs::write(
        &path,
        format!(
            r#"{{"mcpServers": {{"typed": {{"command": 7}}, "unset": {{"command": "x", "env": {{"K": "${{MCPX_TEST_UNSET_VARIABLE}}"}}}},
                "demo": {{"command": "{exe}", "args": ["demo-server"]}}}}}}"#
        ),
    )
    .unwrap();
    let out = mcpx(&path)
        .arg("servers")
        .env_remove("MCPX_TEST_UNSET_VARIABLE")
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "typed\tstdio\tfailed\tserver 'typed': invalid transport configuration: $.mcpServers.typed.command: got integer, want string",
            "unset\tstdio\tfailed\tserver 'unset': invalid transport configuration: $.mcpServers.unset.env.K: environment variable MCPX_TEST_UNSET_VARIABLE is not set",
        ],
        "{text}"
    );
    assert!(lines[2].starts_with("demo\tstdio\tok\t"), "{text}");
}

#[test]
fn a_server_that_cannot_start_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcpx.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}}"#,
    )
    .unwrap();
    mcpx(&path).args(["call", "gone", "x"]).assert().code(2);
    let out = mcpx(&path)
        .arg("servers")
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("gone\tstdio\tfailed\t"));
}

#[test]
fn lint_lists_every_schema_that_breaks_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server", "--broken""#);
    mcpx(&config).arg("lint").assert().code(1).stdout(
        "demo: fetch-remote: inputSchema: unresolved reference: https://example.com/x.json at $.properties.x['$ref'] (unresolved-reference)\n\
         demo: odd-dialect: outputSchema: unsupported dialect: https://example.com/my-dialect (unsupported-dialect)\n\
         demo: legacy-ref: inputSchema: not upgradable: #/definitions/args/properties/copy: reference #/properties/original points into 'properties', which is ignored in the original dialect (presented as listed with \"downstreamDialect\": \"2020-12\"; calls are checked either way)\n\
         2 problems\n\
         1 schema not upgradable to 2020-12 (not a problem: mcpx validates them as listed)\n",
    );
    // The schema that cannot be upgraded is presented as listed; the others as 2020-12.
    let listed = mcpx(&config)
        .args(["tools", "demo", "legacy-ref", "--json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    mcpx(&config)
        .args([
            "tools",
            "demo",
            "legacy-ref",
            "--json",
            "--dialect",
            "2020-12",
        ])
        .assert()
        .code(0)
        .stdout(listed);
    let clean = config_clean(dir.path());
    mcpx(&clean)
        .arg("lint")
        .assert()
        .code(0)
        .stdout("0 problems\n");
}

fn config_clean(dir: &Path) -> PathBuf {
    let sub = dir.join("clean");
    std::fs::create_dir_all(&sub).unwrap();
    config(&sub, r#""demo-server""#)
}

#[test]
fn tools_lists_and_describes() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server""#);
    mcpx(&config)
        .args(["tools", "demo"])
        .assert()
        .code(0)
        .stdout(
            "demo\tget-sum\tAdds two integers.\n\
         demo\techo\tReturns its text.\n\
         demo\tbook-table\tBooks a table, asking the user (elicitation) for the party size and time.\n\
         demo\tcount\tCounts to steps, reporting progress at each step.\n\
         demo\ttiny-image\tReturns a 1x1 PNG image.\n\
         demo\tdrifting-output\tReturns structuredContent that violates its own outputSchema.\n",
        );
    let out = mcpx(&config)
        .args(["tools", "demo", "get-sum"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!(String::from_utf8(out).unwrap(), @r#"
    get-sum: Adds two integers.

    ARGUMENT  TYPE     REQUIRED  DEFAULT  DESCRIPTION
    a         integer  yes                First addend
    b         integer  yes                Second addend

    outputSchema:
    {
      "type": "object",
      "properties": {
        "sum": {
          "type": "integer"
        }
      },
      "required": [
        "sum"
      ]
    }
    "#);
    let servers = mcpx(&config)
        .arg("servers")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!(String::from_utf8(servers).unwrap(), @"demo	stdio	ok	2025-11-25 (probed)	6 tools	0 failing the policy");
    mcpx(&config)
        .args(["tools", "demo", "nope"])
        .assert()
        .code(2);
}

#[test]
fn tools_json_presents_2020_12_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server""#);
    let json = |args: &[&str]| -> serde_json::Value {
        let out = mcpx(&config)
            .args(args)
            .assert()
            .code(0)
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    let listed = json(&["tools", "demo", "echo", "--json"]);
    assert_eq!(
        listed[0]["inputSchema"]["$schema"],
        "http://json-schema.org/draft-07/schema#"
    );
    let upgraded = json(&["tools", "demo", "echo", "--json", "--dialect", "2020-12"]);
    let mut want = listed.clone();
    want[0]["inputSchema"]["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
    assert_eq!(upgraded, want);
    // A 2020-12 (or undeclared) schema is presented unchanged.
    assert_eq!(
        json(&["tools", "demo", "get-sum", "--json", "--dialect", "2020-12"]),
        json(&["tools", "demo", "get-sum", "--json"])
    );
    // --dialect is for --json only, and knows two values.
    mcpx(&config)
        .args(["tools", "--dialect", "2020-12"])
        .assert()
        .code(2);
    mcpx(&config)
        .args(["tools", "--json", "--dialect", "draft-07"])
        .assert()
        .code(2);
}

#[test]
fn elicitation_is_answered_with_elicit_or_declined_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server""#);
    let book = ["call", "demo", "book-table", "restaurant=Luigi"];
    mcpx(&config)
        .args(book)
        .args(["--elicit", r#"{"party": 4, "time": "19:00"}"#])
        .assert()
        .code(0)
        .stdout("booked Luigi for 4 at 19:00\n");
    // A field left out takes the requested schema's default (time: 19:00) ...
    mcpx(&config)
        .args(book)
        .args(["--elicit", r#"{"party": 2}"#])
        .assert()
        .code(0)
        .stdout("booked Luigi for 2 at 19:00\n");
    // ... and one without a default stays out, for the check to report.
    mcpx(&config)
        .args(book)
        .args(["--elicit", r#"{}"#])
        .assert()
        .code(0)
        .stdout("not booked (cancel)\n")
        .stderr(
            "mcpx: --elicit does not match the requested schema: $: missing property 'party'\n",
        );
    // Content that breaks the requested schema is never sent: the server hears a cancel.
    mcpx(&config)
        .args(book)
        .args(["--elicit", r#"{"party": 40, "time": "19:00"}"#])
        .assert()
        .code(0)
        .stdout("not booked (cancel)\n")
        .stderr("mcpx: --elicit does not match the requested schema: $.party: maximum: got 40, want 12\n");
    mcpx(&config)
        .args(book)
        .assert()
        .code(0)
        .stdout("not booked (decline)\n")
        .stderr("mcpx: the server asks: How many, and when? (declined: give the answer with --elicit JSON)\n");
}

#[test]
fn images_are_saved_to_files_and_their_paths_printed() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), r#""demo-server""#);
    let saved = dir.path().join("tiny-image-0.png");
    mcpx(&config)
        .args(["call", "demo", "tiny-image", "--save-dir"])
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout(format!(
            "[image image/png, 70 bytes, saved to {}]\n",
            saved.display()
        ));
    assert!(std::fs::read(&saved).unwrap().starts_with(b"\x89PNG"));
    // A second call never overwrites the first file.
    mcpx(&config)
        .args(["call", "demo", "tiny-image", "--save-dir"])
        .arg(dir.path())
        .assert()
        .code(0);
    assert!(dir.path().join("tiny-image-0-1.png").exists());
}

#[test]
#[cfg_attr(
    windows,
    ignore = "needs the Node or Python peers, which scripts/fetch-interop-peers fetches and runs for Linux"
)]
fn against_the_mcp_reference_server_from_npm() {
    let bin = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/interop/node_modules/.bin/mcp-server-everything"
    ));
    if !bin.exists() {
        let msg = format!(
            "MCP reference server not found at {} (run scripts/fetch-interop-peers)",
            bin.display()
        );
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: {msg}");
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcpx.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"mcpServers": {{"everything": {{"command": "node", "args": ["{}", "stdio"]}}}}}}"#,
            bin.display()
        ),
    )
    .unwrap();
    mcpx(&path)
        .args(["call", "everything", "get-sum", "a=2", "b=3"])
        .assert()
        .code(0)
        .stdout("The sum of 2 and 3 is 5.\n");
    mcpx(&path)
        .args(["call", "everything", "get-sum", "a=two", "b=3"])
        .assert()
        .code(1)
        .stderr("mcpx: arguments rejected before sending (1 problem):\n  $.a: got string, want number\n");
    mcpx(&path)
        .arg("lint")
        .assert()
        .code(0)
        .stdout("0 problems\n");
}

/// A server that fails quoting its argument, which holds `${CLI_KEY}`: every command shows the
/// failure (its error, its stderr, the `servers` report as text and `--json`) with the key's
/// value replaced, never the value.
#[test]
fn a_failing_servers_words_never_show_the_configs_secrets() {
    const KEY: &str = "sk_cli_secret_77";
    let dir = tempfile::tempdir().unwrap();
    // A subcommand mcpx does not have: the server says so on stderr, naming it, and exits.
    let config = config(dir.path(), r#""no-such-command-${CLI_KEY}""#);
    for args in [
        &["servers"][..],
        &["servers", "--json"],
        &["tools"],
        &["tools", "demo"],
        &["call", "demo", "echo", "text=hi"],
    ] {
        let out = mcpx(&config)
            .args(args)
            .env("CLI_KEY", KEY)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            shown.contains("no-such-command-[redacted]"),
            "{args:?}: {shown}"
        );
        assert!(!shown.contains(KEY), "{args:?}: {shown}");
    }
}
