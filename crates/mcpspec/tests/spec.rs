//! The protocol schemas themselves: the specification's valid examples pass, hand-made invalid
//! frames fail with the expected lines, and responses are checked by the request they answer.

use mcpspec::{spec_dir, spec_or_skip, Conversation, Side, VERSIONS};
use serde_json::{json, Value};

#[test]
fn every_version_loads_and_a_ping_round_trip_is_valid() {
    for version in VERSIONS {
        let Some(spec) = spec_or_skip(version) else {
            return;
        };
        let mut c = Conversation::new(&spec);
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        if spec.has_definition("PingRequest") {
            assert_eq!(
                c.check(Side::Client, &ping).unwrap(),
                Vec::<String>::new(),
                "{version}"
            );
            let pong = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
            assert_eq!(
                c.check(Side::Server, &pong).unwrap(),
                Vec::<String>::new(),
                "{version}"
            );
        }
    }
}

#[test]
fn every_specification_example_validates_against_its_type() {
    let Some(spec) = spec_or_skip("2026-07-28") else {
        return;
    };
    let dir = spec_dir().join("2026-07-28/examples");
    let mut checked = 0;
    let mut problems = Vec::new();
    for folder in std::fs::read_dir(&dir).unwrap() {
        let folder = folder.unwrap().path();
        let type_name = folder.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(spec.has_definition(&type_name), "no definition {type_name}");
        for file in std::fs::read_dir(&folder).unwrap() {
            let file = file.unwrap().path();
            let value = schemaval::parse_json(&std::fs::read(&file).unwrap()).unwrap();
            let lines = spec.check_type(&type_name, &value).unwrap();
            if !lines.is_empty() {
                problems.push(format!("{}: {lines:?}", file.display()));
            }
            checked += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 88, "only {checked} examples");
}

fn client_then_server(version: &str, request: Value, answer: Value) -> Option<Vec<String>> {
    let spec = spec_or_skip(version)?;
    let mut c = Conversation::new(&spec);
    assert_eq!(
        c.check(Side::Client, &request).unwrap(),
        Vec::<String>::new()
    );
    Some(c.check(Side::Server, &answer).unwrap())
}

#[test]
fn a_wrong_jsonrpc_version_is_rejected() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    let mut c = Conversation::new(&spec);
    let lines = c
        .check(
            Side::Client,
            &json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
        )
        .unwrap();
    assert_eq!(lines, ["$.jsonrpc: const: got \"1.0\", want \"2.0\""]);
}

#[test]
fn a_request_without_id_is_not_a_notification_either() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    let mut c = Conversation::new(&spec);
    let lines = c
        .check(
            Side::Client,
            &json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "x"}}),
        )
        .unwrap();
    assert_eq!(
        lines,
        ["$.method: 'tools/call' is not a client notification in 2025-11-25"]
    );
}

#[test]
fn a_call_tool_result_without_content_is_rejected_in_2025_06_18() {
    let call = json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "get-sum", "arguments": {"a": 1}}});
    let answer = json!({"jsonrpc": "2.0", "id": "c1", "result": {"structuredContent": {"sum": 3}}});
    let Some(lines) = client_then_server("2025-06-18", call, answer) else {
        return;
    };
    assert_eq!(lines, ["$.result: missing property 'content'"]);
}

#[test]
fn a_nested_object_in_an_elicitation_schema_is_rejected() {
    let Some(spec) = spec_or_skip("2025-06-18") else {
        return;
    };
    let mut c = Conversation::new(&spec);
    let elicit = json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create", "params": {
        "message": "Your address?",
        "requestedSchema": {"type": "object", "properties": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}}}
    }});
    let lines = c.check(Side::Server, &elicit).unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "$.params.requestedSchema.properties.address: anyOf: matches none of 4 alternatives"
        ),
        "{lines:?}"
    );
    // The same request with a flat schema is fine, and so is the user's answer.
    let flat = json!({"jsonrpc": "2.0", "id": 10, "method": "elicitation/create", "params": {
        "message": "Your street?",
        "requestedSchema": {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"]}
    }});
    assert_eq!(c.check(Side::Server, &flat).unwrap(), Vec::<String>::new());
    let answer = json!({"jsonrpc": "2.0", "id": 10, "result": {"action": "accept", "content": {"street": "Main St"}}});
    assert_eq!(
        c.check(Side::Client, &answer).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn responses_are_checked_against_the_request_they_answer() {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // A tools/list answer must carry tools, whatever a generic result allows.
    let Some(lines) = client_then_server(
        "2025-11-25",
        list.clone(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
    ) else {
        return;
    };
    assert_eq!(lines, ["$.result: missing property 'tools'"]);
    let Some(lines) = client_then_server(
        "2025-11-25",
        list,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [], "x-unknown": 1}}),
    ) else {
        return;
    };
    assert_eq!(lines, Vec::<String>::new());
}

#[test]
fn unknown_methods_and_unmatched_responses_are_reported() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    let mut c = Conversation::new(&spec);
    let lines = c
        .check(
            Side::Client,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/frobnicate"}),
        )
        .unwrap();
    assert_eq!(
        lines,
        ["$.method: 'tools/frobnicate' is not a client request in 2025-11-25"]
    );
    // A server may not send a client's request.
    let lines = c
        .check(
            Side::Server,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .unwrap();
    assert_eq!(
        lines,
        ["$.method: 'tools/list' is not a server request in 2025-11-25"]
    );
    let lines = c
        .check(
            Side::Server,
            &json!({"jsonrpc": "2.0", "id": 77, "result": {}}),
        )
        .unwrap();
    assert_eq!(lines, ["$.id: answers no pending client request"]);
    // Errors are checked by their envelope.
    let lines = c
        .check(
            Side::Server,
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}}),
        )
        .unwrap();
    assert_eq!(lines, ["$.error: missing property 'code'"]);
    let lines = c.check(Side::Client, &json!({"jsonrpc": "2.0"})).unwrap();
    assert!(!lines.is_empty());
}

#[test]
fn batches_are_checked_member_by_member() {
    let Some(spec) = spec_or_skip("2025-03-26") else {
        return;
    };
    let mut c = Conversation::new(&spec);
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "nope"}
    ]);
    let lines = c.check(Side::Client, &batch).unwrap();
    assert_eq!(
        lines,
        ["batch[2]: $.method: 'nope' is not a client request in 2025-03-26"]
    );
}

#[test]
fn assert_valid_fails_on_the_first_invalid_frame_with_its_lines_and_the_frame() {
    let Some(spec) = spec_or_skip("2025-11-25") else {
        return;
    };
    let mut c = Conversation::new(&spec);
    c.assert_valid(
        Side::Client,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    );
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        c.assert_valid(
            Side::Server,
            &json!({"jsonrpc": "2.0", "id": 1, "result": 5}),
        );
    }))
    .unwrap_err();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(
        msg.starts_with("invalid server frame for 2025-11-25:\n$.result: got integer, want object"),
        "{msg}"
    );
    assert!(
        msg.ends_with(r#"frame: {"jsonrpc":"2.0","id":1,"result":5}"#),
        "{msg}"
    );
}
