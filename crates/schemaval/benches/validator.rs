//! schemaval against the raw `jsonschema` crate, doing the same work in the same run, so the
//! wrapper's overhead reads as a ratio. Raw runs use the options schemaval uses (offline, formats
//! off, bounded regex), so the difference is the policy checks and the flat lines.
//!
//! `cargo bench -p schemaval --bench validator`

#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use schemaval::{parse_json, Dialect, Schema};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!("{}/benches/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    parse_json(&std::fs::read(path).unwrap()).unwrap()
}

fn raw_options() -> jsonschema::ValidationOptions<'static> {
    schemaval::policy_options(Dialect::Draft202012)
}

fn tool_schema(c: &mut Criterion) {
    let schema = fixture("tool-input.json");
    let valid = fixture("tool-args-valid.json");
    let invalid = fixture("tool-args-invalid.json");
    // Near misses an LLM makes: each line has a hint (a misspelt name or enum value, a quoted
    // number or boolean, a bound, a missing property).
    let near_miss = fixture("tool-args-near-miss.json");
    let ours = Schema::compile(&schema).unwrap();
    let raw = raw_options().build(&schema).unwrap();
    assert!(ours.is_valid(&valid) && raw.is_valid(&valid));
    assert!(!ours.is_valid(&invalid) && !raw.is_valid(&invalid));
    assert!(!ours.is_valid(&near_miss) && !raw.is_valid(&near_miss));
    let hints = ours.validate(&near_miss).unwrap_err().hints();
    assert!(hints.iter().all(Option::is_some), "{hints:?}");

    let mut g = c.benchmark_group("tool/compile");
    g.bench_function("schemaval", |b| {
        b.iter(|| Schema::compile(&schema).unwrap())
    });
    g.bench_function("jsonschema", |b| {
        b.iter(|| raw_options().build(&schema).unwrap())
    });
    g.finish();

    for (name, instance) in [
        ("valid", &valid),
        ("invalid", &invalid),
        ("near-miss", &near_miss),
    ] {
        let mut g = c.benchmark_group(format!("tool/is_valid/{name}"));
        g.bench_function("schemaval", |b| b.iter(|| ours.is_valid(instance)));
        g.bench_function("jsonschema", |b| b.iter(|| raw.is_valid(instance)));
        g.finish();

        let mut g = c.benchmark_group(format!("tool/errors/{name}"));
        g.bench_function("schemaval", |b| {
            b.iter(|| ours.validate(instance).map_err(|e| e.lines()).err())
        });
        // The lines and their hints, as the gateway's answer to a refused call shows them
        // (hints are worked out only when asked for).
        g.bench_function("schemaval+hints", |b| {
            b.iter(|| {
                ours.validate(instance)
                    .map_err(|e| (e.lines(), e.hints()))
                    .err()
            })
        });
        g.bench_function("jsonschema", |b| {
            b.iter(|| {
                raw.iter_errors(instance)
                    .map(|e| format!("{}: {e}", e.instance_path()))
                    .collect::<Vec<_>>()
            })
        });
        g.finish();
    }
}

/// The MCP 2025-11-25 protocol schema, read from `../shared` (skipped when absent).
fn protocol_schema(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/mcp-spec/2025-11-25/schema.json"
    );
    let Ok(text) = std::fs::read(path) else {
        return;
    };
    let mut schema = parse_json(&text).unwrap();
    // The document only holds definitions; validate messages against its JSONRPCMessage.
    schema["$ref"] = Value::String("#/$defs/JSONRPCMessage".into());
    let frame = parse_json(
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2},"_meta":{"progressToken":"t1"}}}"#,
    )
    .unwrap();
    let ours = Schema::compile(&schema).unwrap();
    let raw = raw_options().build(&schema).unwrap();
    assert!(ours.is_valid(&frame) && raw.is_valid(&frame));

    let mut g = c.benchmark_group("protocol-2025-11-25/compile");
    g.sample_size(20);
    g.bench_function("schemaval", |b| {
        b.iter(|| Schema::compile(&schema).unwrap())
    });
    g.bench_function("jsonschema", |b| {
        b.iter(|| raw_options().build(&schema).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("protocol-2025-11-25/is_valid");
    g.bench_with_input(
        BenchmarkId::new("schemaval", "tools/call"),
        &frame,
        |b, f| b.iter(|| ours.is_valid(f)),
    );
    g.bench_with_input(
        BenchmarkId::new("jsonschema", "tools/call"),
        &frame,
        |b, f| b.iter(|| raw.is_valid(f)),
    );
    g.finish();
}

criterion_group!(benches, tool_schema, protocol_schema);
criterion_main!(benches);
