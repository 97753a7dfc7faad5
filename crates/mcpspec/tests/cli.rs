//! The dev binary: `mcpspec check --protocol-version V TRANSCRIPT.jsonl`.

use assert_cmd::Command;

fn run(version: &str, transcript: &str) -> Option<(i32, String, String)> {
    mcpspec::spec_or_skip(version)?;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, transcript).unwrap();
    let out = Command::cargo_bin("mcpspec")
        .unwrap()
        .args([
            "check",
            "--protocol-version",
            version,
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    Some((
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    ))
}

const INIT: &str = r#"{"from":"client","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}}
{"from":"server","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}
{"from":"client","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
"#;

#[test]
fn a_valid_transcript_exits_0_silently() {
    let transcript = format!(
        "{INIT}{}\n{}\n",
        r#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}}"#,
        r#"{"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}}"#
    );
    let Some((code, out, err)) = run("2025-06-18", &transcript) else {
        return;
    };
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
}

#[test]
fn an_invalid_frame_is_reported_by_line_and_exits_1() {
    let transcript = format!(
        "{INIT}{}\n{}\n",
        r#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-sum"}}}"#,
        r#"{"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{}}}}"#
    );
    let Some((code, out, _)) = run("2025-06-18", &transcript) else {
        return;
    };
    assert_eq!(code, 1);
    assert_eq!(out, "line 5: $.result: missing property 'content'\n");
}

#[test]
fn unreadable_input_exits_2() {
    let Some((code, _, err)) = run("2025-06-18", "{\"from\":\"client\",\"message\":\n") else {
        return;
    };
    assert_eq!(code, 2);
    assert!(err.contains("line 1: invalid JSON"), "{err}");
    let Some((code, _, err)) = run("2025-06-18", r#"{"from":"nobody","message":{}}"#) else {
        return;
    };
    assert_eq!(code, 2);
    assert!(err.contains(r#""from" must be"#), "{err}");
}
