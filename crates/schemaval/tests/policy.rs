//! Each point of the dialect policy, as a test.

mod common;

use schemaval::{
    parse_json, CompileError, Compiler, Dialect, Schema, ValidateError, MAX_DEPTH, MAX_SCHEMA_BYTES,
};
use serde_json::{json, Value};

fn schema(text: &str) -> Schema {
    Schema::from_slice(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn value(text: &str) -> Value {
    parse_json(text.as_bytes()).unwrap()
}

fn lines(s: &Schema, instance: &str) -> Vec<String> {
    match s.validate(&value(instance)) {
        Ok(()) => vec![],
        Err(e) => e.lines(),
    }
}

// 1. No network, ever.

#[test]
fn references_to_a_listening_loopback_server_are_refused_without_connecting() {
    let watch = common::LoopbackWatch::start();
    let base = watch.base.clone();
    let schemas = [
        json!({"$ref": format!("{base}/schema.json")}),
        json!({"$defs": {"unused": {"$ref": format!("{base}/unused.json#/x")}}}),
        json!({"$id": format!("{base}/root.json"), "properties": {"a": {"$ref": "sibling.json"}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$ref": format!("{base}/d7.json")}}}),
        json!({"$dynamicRef": format!("{base}/dyn.json#meta")}),
        json!({"$schema": format!("{base}/meta.json")}),
    ];
    for s in &schemas {
        let err = Schema::compile(s).unwrap_err();
        assert!(
            matches!(
                err,
                CompileError::UnresolvedRef { .. } | CompileError::UnsupportedDialect { .. }
            ),
            "{s}: {err}"
        );
    }
    assert!(!watch.finish(), "the validator connected to {base}");
}

#[test]
fn unresolved_references_name_the_reference_and_where_it_stands() {
    let cases = [
        (
            r##"{"$ref": "https://example.com/x.json"}"##,
            "https://example.com/x.json",
            "$['$ref']",
        ),
        (
            r##"{"$defs": {"a": {"$ref": "#/$defs/missing"}}}"##,
            "#/$defs/missing",
            "$['$defs'].a['$ref']",
        ),
        (
            r##"{"$defs": {"a": {"items": {"$ref": "#nowhere"}}}}"##,
            "#nowhere",
            "$['$defs'].a.items['$ref']",
        ),
        (
            r##"{"properties": {"odd key": {"$ref": "other.json"}}}"##,
            "other.json",
            "$.properties['odd key']['$ref']",
        ),
        (
            r##"{"anyOf": [{}, {"$ref": "#/anyOf/7"}]}"##,
            "#/anyOf/7",
            "$.anyOf[1]['$ref']",
        ),
        (
            r##"{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$ref": "#/definitions/b"}}}"##,
            "#/definitions/b",
            "$.definitions.a['$ref']",
        ),
        (
            r##"{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": {"$ref": "#/definitions/none"}}}"##,
            "#/definitions/none",
            "$.properties.a['$ref']",
        ),
    ];
    for (text, reference, location) in cases {
        let err = Schema::from_slice(text.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            CompileError::UnresolvedRef {
                reference: reference.to_owned(),
                location: location.to_owned()
            },
            "{text}"
        );
        assert_eq!(err.kind(), "unresolved-reference");
        assert_eq!(
            err.to_string(),
            format!("unresolved reference: {reference} at {location}")
        );
    }
}

#[test]
fn references_inside_the_document_and_to_metaschemas_resolve() {
    let ok = [
        r##"{"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}"##,
        r##"{"$defs": {"a": {"$anchor": "A", "type": "string"}}, "$ref": "#A"}"##,
        r##"{"$id": "https://example.com/root.json", "$defs": {"a": {"$id": "a.json"}}, "$ref": "a.json"}"##,
        r##"{"$id": "https://example.com/root.json", "$ref": "https://example.com/root.json#/$defs/a", "$defs": {"a": true}}"##,
        r##"{"$ref": "#"}"##,
        r##"{"$ref": "https://json-schema.org/draft/2020-12/schema"}"##,
        r##"{"$ref": "http://json-schema.org/draft-07/schema#"}"##,
        r##"{"$ref": "http://json-schema.org/draft-04/schema#"}"##,
        r##"{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "integer"}}, "properties": {"x": {"$ref": "#/definitions/a"}}}"##,
    ];
    for text in ok {
        schema(text);
    }
    let meta = schema(r##"{"$ref": "http://json-schema.org/draft-07/schema#"}"##);
    assert!(meta.is_valid(&json!({"type": "string"})));
    assert!(!meta.is_valid(&json!({"type": 5})));
}

// 2. Size bound.

/// A schema document of exactly `size` bytes: `{"description":"xxx…"}`.
fn schema_of_size(size: usize) -> String {
    let frame = r#"{"description":""}"#.len();
    format!(r#"{{"description":"{}"}}"#, "x".repeat(size - frame))
}

#[test]
fn a_document_of_exactly_one_mebibyte_compiles_and_one_byte_more_does_not() {
    assert_eq!(MAX_SCHEMA_BYTES, 1_048_576);
    let exact = schema_of_size(MAX_SCHEMA_BYTES);
    assert_eq!(exact.len(), MAX_SCHEMA_BYTES);
    Schema::from_slice(exact.as_bytes()).unwrap();
    Schema::compile(&value(&exact)).unwrap();

    let over = schema_of_size(MAX_SCHEMA_BYTES + 1);
    let want = CompileError::SchemaTooLarge {
        size: MAX_SCHEMA_BYTES + 1,
        limit: MAX_SCHEMA_BYTES,
    };
    assert_eq!(Schema::from_slice(over.as_bytes()).unwrap_err(), want);
    assert_eq!(Schema::compile(&value(&over)).unwrap_err(), want);
    assert_eq!(
        want.to_string(),
        "schema too large: 1048577 bytes, limit 1048576"
    );
}

#[test]
fn the_size_is_checked_before_parsing() {
    let mut junk = vec![b'{'; MAX_SCHEMA_BYTES + 1];
    junk[1] = b'!';
    assert!(matches!(
        Schema::from_slice(&junk).unwrap_err(),
        CompileError::SchemaTooLarge { size, .. } if size == MAX_SCHEMA_BYTES + 1
    ));
}

#[test]
fn a_parsed_value_is_measured_by_its_compact_serialization() {
    // Pretty-printed the document is larger than the limit; compact, it fits.
    let compact = schema_of_size(MAX_SCHEMA_BYTES);
    let v = value(&compact);
    let pretty = serde_json::to_string_pretty(&v).unwrap();
    assert!(pretty.len() > MAX_SCHEMA_BYTES);
    Schema::compile(&v).unwrap();
    assert!(matches!(
        Schema::from_slice(pretty.as_bytes()),
        Err(CompileError::SchemaTooLarge { .. })
    ));
}

// 3. Formats are annotations.

#[test]
fn format_never_fails_in_any_dialect() {
    let formats = [
        "email",
        "date-time",
        "ipv4",
        "uri",
        "uuid",
        "regex",
        "hostname",
        "no-such-format",
    ];
    for dialect in Dialect::ALL {
        for format in formats {
            let s = Schema::compile(&json!({"$schema": dialect.uri(), "format": format})).unwrap();
            assert_eq!(s.dialect(), dialect);
            for bad in [json!("not valid at all ["), json!(""), json!(12)] {
                assert!(s.is_valid(&bad), "{dialect} {format} {bad}");
                assert!(s.validate(&bad).is_ok(), "{dialect} {format} {bad}");
            }
        }
    }
}

#[test]
fn content_keywords_are_annotations_too() {
    for dialect in Dialect::ALL {
        let s = Compiler::new()
            .default_dialect(dialect)
            .compile(&json!({"contentEncoding": "base64", "contentMediaType": "application/json"}))
            .unwrap();
        assert!(s.is_valid(&json!("%%% not base64 {")), "{dialect}");
    }
}

// 4. Integer fidelity.

#[test]
fn integers_past_two_to_the_64_compare_exactly() {
    let cases = [
        (
            r#"{"maximum": 18446744073709551616}"#,
            "18446744073709551617",
            false,
        ),
        (
            r#"{"maximum": 18446744073709551616}"#,
            "18446744073709551616",
            true,
        ),
        (
            r#"{"minimum": 18446744073709551617}"#,
            "18446744073709551616",
            false,
        ),
        (
            r#"{"exclusiveMaximum": 18446744073709551617}"#,
            "18446744073709551617",
            false,
        ),
        (
            r#"{"exclusiveMinimum": -18446744073709551617}"#,
            "-18446744073709551616",
            true,
        ),
        (r#"{"const": 9007199254740992}"#, "9007199254740993", false),
        (r#"{"const": 9007199254740993}"#, "9007199254740993", true),
        (
            r#"{"enum": [18446744073709551616, 1]}"#,
            "18446744073709551617",
            false,
        ),
        (
            r#"{"enum": [18446744073709551617]}"#,
            "18446744073709551617",
            true,
        ),
        (
            r#"{"maximum": 9007199254740992}"#,
            "9007199254740993",
            false,
        ),
        (r#"{"multipleOf": 2}"#, "18446744073709551617", false),
        (r#"{"multipleOf": 2}"#, "18446744073709551618", true),
        (r#"{"multipleOf": 3}"#, "36893488147419103233", true),
        (r#"{"multipleOf": 0.1}"#, "0.3", true),
        (
            r#"{"uniqueItems": true}"#,
            "[9007199254740992, 9007199254740993]",
            true,
        ),
        (
            r#"{"uniqueItems": true}"#,
            "[18446744073709551617, 18446744073709551617]",
            false,
        ),
        (r#"{"type": "integer"}"#, "18446744073709551617", true),
        (r#"{"type": "integer"}"#, "1.0", true),
        (r#"{"maximum": 1e308}"#, "1e400", false),
    ];
    for (s, instance, valid) in cases {
        let compiled = schema(s);
        assert_eq!(
            compiled.is_valid(&value(instance)),
            valid,
            "{s} against {instance}"
        );
        assert_eq!(
            compiled.validate(&value(instance)).is_ok(),
            valid,
            "{s} against {instance}"
        );
    }
}

#[test]
fn numbers_in_lines_are_printed_exactly() {
    assert_eq!(
        lines(
            &schema(r#"{"maximum": 18446744073709551616}"#),
            "18446744073709551617"
        ),
        ["$: maximum: got 18446744073709551617, want 18446744073709551616"]
    );
    assert_eq!(
        lines(
            &schema(r#"{"const": 9007199254740992}"#),
            "9007199254740993"
        ),
        ["$: const: got 9007199254740993, want 9007199254740992"]
    );
    assert_eq!(
        lines(
            &schema(r#"{"maximum": 0.1}"#),
            "0.100000000000000000000000000001"
        ),
        ["$: maximum: got 0.100000000000000000000000000001, want 0.1"]
    );
}

// 6. Dialects.

#[test]
fn each_dialect_is_validated_by_its_own_rules() {
    // draft-04: boolean exclusiveMaximum.
    let d4 = schema(
        r#"{"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3, "exclusiveMaximum": true}"#,
    );
    assert_eq!(d4.dialect(), Dialect::Draft4);
    assert!(!d4.is_valid(&json!(3)));
    // draft-07: array-form items and additionalItems; $ref overrides its siblings.
    let d7 = schema(
        r#"{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}], "additionalItems": false}"#,
    );
    assert!(d7.is_valid(&json!([1])));
    assert!(!d7.is_valid(&json!([1, 2])));
    let d7ref = schema(
        r##"{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "maxLength": 1}"##,
    );
    assert!(d7ref.is_valid(&json!("long string")));
    // The same array-form items is not a 2020-12 schema.
    assert!(matches!(
        Schema::compile(&json!({"items": [{"type": "integer"}]})),
        Err(CompileError::InvalidSchema { .. })
    ));
    // 2019-09: $recursiveRef.
    let d2019 = schema(
        r##"{"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true, "type": ["integer", "array"], "items": {"$recursiveRef": "#"}}"##,
    );
    assert!(d2019.is_valid(&json!([1, [2, [3]]])));
    assert!(!d2019.is_valid(&json!([1, ["x"]])));
    // 2020-12: prefixItems, and the default when nothing is declared.
    let d2020 = schema(r#"{"prefixItems": [{"type": "integer"}], "items": false}"#);
    assert_eq!(d2020.dialect(), Dialect::Draft202012);
    assert!(!d2020.is_valid(&json!([1, 2])));
}

#[test]
fn an_unknown_dialect_is_a_typed_error() {
    for uri in [
        "http://json-schema.org/draft-03/schema#",
        "https://example.com/my-meta",
        "not a uri",
    ] {
        assert_eq!(
            Schema::compile(&json!({"$schema": uri})).unwrap_err(),
            CompileError::UnsupportedDialect {
                uri: uri.to_owned()
            }
        );
    }
}

// 7. Bounded cost.

#[test]
fn catastrophic_patterns_are_cut_off_and_fail_closed() {
    let s = schema(r#"{"pattern": "^(a|a?)+(?!a)b"}"#);
    let strings: Vec<Value> = (0..20).map(|_| json!("a".repeat(30))).collect();
    for instance in &strings {
        assert!(!s.is_valid(instance));
        let got = lines(&s, &instance.to_string());
        assert_eq!(
            got,
            ["$: pattern: too costly to evaluate (over 100000 backtracking steps)"]
        );
    }
    // The same pattern still decides what it can decide cheaply.
    assert!(s.is_valid(&json!("aab")));
}

#[test]
fn a_ten_thousand_deep_instance_is_a_typed_error_not_an_abort() {
    // Run where a real worker runs: a 2 MiB stack.
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let s = schema(r##"{"items": {"$ref": "#"}}"##);
            let mut deep = json!([]);
            for _ in 0..10_000 {
                deep = Value::Array(vec![deep]);
            }
            assert!(!s.is_valid(&deep));
            assert_eq!(
                s.validate(&deep),
                Err(ValidateError::TooDeep { limit: MAX_DEPTH })
            );
            dismantle(deep);
            // At the limit it validates, recursion and all.
            let mut at_limit = json!([]);
            for _ in 1..MAX_DEPTH {
                at_limit = Value::Array(vec![at_limit]);
            }
            assert!(s.is_valid(&at_limit));
            assert!(s.validate(&at_limit).is_ok());
            let unique = schema(r#"{"uniqueItems": true}"#);
            let pair = Value::Array(vec![at_limit[0].clone(), at_limit[0].clone()]);
            assert!(!unique.is_valid(&pair));
            assert!(unique.is_valid(&Value::Array(vec![at_limit[0].clone(), json!(1)])));
        })
        .unwrap()
        .join()
        .unwrap();
}

fn nested_arrays(depth: usize) -> Value {
    let mut v = json!([]);
    for _ in 1..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// Takes a deep value apart without recursion (dropping it whole would recurse).
fn dismantle(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if let Value::Array(items) = v {
            stack.extend(items);
        }
    }
}

#[test]
fn deep_instances_are_measured_only_where_validation_would_follow_them() {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let deep = nested_arrays(10_000);
            let recursive = [
                r##"{"items": {"$ref": "#"}}"##,
                r##"{"$defs": {"a": {"items": {"$ref": "#/$defs/b"}}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}"##,
                r##"{"$dynamicAnchor": "n", "items": {"$dynamicRef": "#n"}}"##,
                r##"{"$ref": "https://json-schema.org/draft/2020-12/schema"}"##,
            ];
            for text in recursive {
                let s = schema(text);
                assert!(!s.is_valid(&deep), "{text}");
                assert_eq!(s.validate(&deep), Err(ValidateError::TooDeep { limit: MAX_DEPTH }), "{text}");
            }
            // References without a cycle recurse only as deep as the schema: no need to measure.
            let flat = schema(r##"{"$defs": {"a": {"type": "array", "items": {"$ref": "#/$defs/b"}}, "b": {"type": "array"}}, "$ref": "#/$defs/a"}"##);
            assert!(flat.is_valid(&deep));
            // uniqueItems compares whole items, recursively: measured too.
            let unique = schema(r#"{"uniqueItems": true}"#);
            let pair = Value::Array(vec![nested_arrays(10_000), nested_arrays(10_000)]);
            assert_eq!(unique.validate(&pair), Err(ValidateError::TooDeep { limit: MAX_DEPTH }));
            dismantle(pair);
            dismantle(deep);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_too_deep_schema_is_a_typed_error() {
    let text = format!("{}{{}}{}", r#"{"items":"#.repeat(200), "}".repeat(200));
    assert_eq!(
        Schema::from_slice(text.as_bytes()).unwrap_err(),
        CompileError::TooDeep { limit: MAX_DEPTH }
    );
    let mut v = json!({});
    for _ in 0..200 {
        v = json!({ "items": v });
    }
    assert_eq!(
        Schema::compile(&v).unwrap_err(),
        CompileError::TooDeep { limit: MAX_DEPTH }
    );
}

#[test]
fn reference_cycles_terminate() {
    let s = schema(
        r##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}"##,
    );
    assert!(s.is_valid(&json!(1)));
    let tree = schema(
        r##"{"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}, "additionalProperties": false}"##,
    );
    assert!(tree.is_valid(&json!({"kids": [{"kids": []}, {}]})));
    assert_eq!(
        lines(&tree, r#"{"kids": [{"kids": [{"x": 1}]}]}"#),
        ["$.kids[0].kids[0]: additional property 'x' not allowed"]
    );
}

// 8. Compile once, validate many.

#[test]
fn a_compiled_schema_is_send_sync_and_cheap_to_share() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<Schema>();
    let s = schema(r#"{"type": "integer"}"#);
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || s.is_valid(&json!(i)) && !s.is_valid(&json!("x")))
        })
        .collect();
    assert!(handles.into_iter().all(|h| h.join().unwrap()));
}

#[test]
fn invalid_json_and_invalid_schemas_are_typed() {
    assert!(matches!(
        Schema::from_slice(b"{\"type\": ").unwrap_err(),
        CompileError::InvalidJson { line: 1, .. }
    ));
    assert_eq!(
        Schema::from_slice(br#"{"pattern": "("}"#).unwrap_err(),
        CompileError::InvalidSchema {
            location: "$.pattern".into(),
            message: "not a valid regular expression".into()
        }
    );
    assert_eq!(
        Schema::from_slice(br#"{"minLength": -1}"#)
            .unwrap_err()
            .kind(),
        "invalid-schema"
    );
}

// Hostile sizes: each bounded, each answered.

#[test]
fn an_enum_of_one_mebibyte_compiles_and_its_error_line_stays_short() {
    // About 1 MiB of distinct strings, just under the document limit.
    let items: Vec<String> = (0..49_900).map(|i| format!("value-{i:012}")).collect();
    let s = json!({"enum": items});
    let size = s.to_string().len();
    assert!(size > 1_000_000 && size <= MAX_SCHEMA_BYTES, "{size}");
    let compiled = Schema::compile(&s).unwrap();
    assert!(compiled.is_valid(&json!("value-000000049899")));
    let got = compiled.validate(&json!("nope")).unwrap_err().lines();
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with("$: "), "{}", got[0]);
    assert!(got[0].len() <= 1024, "a line of {} bytes", got[0].len());
}

#[test]
fn unique_items_over_a_hundred_thousand_items_is_answered() {
    let s = schema(r#"{"uniqueItems": true}"#);
    let numbers: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    assert!(s.is_valid(&Value::Array(numbers.clone())));
    let mut repeated = numbers;
    repeated.push(json!(99_999));
    let got = lines(&s, &Value::Array(repeated).to_string());
    assert_eq!(got.len(), 1, "{got:?}");
    let objects: Vec<Value> = (0..100_000).map(|i| json!({"id": i, "tag": "x"})).collect();
    assert!(s.is_valid(&Value::Array(objects)));
}
