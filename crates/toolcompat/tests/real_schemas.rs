//! `mcpx lint --target` over the real tool lists collected from registry packages
//! (`crates/toolsearch/fixture/tools`, one file per server): how many tools each provider would
//! refuse, refuse under strict mode, or accept, pinned so that a rule's change is a visible diff.

use std::collections::BTreeMap;

use serde_json::Value;
use toolcompat::{check, Effect, Target};

/// Per target: tools with a finding that rejects the request, tools with one only under
/// strict mode, and the findings by rule.
#[derive(Debug, Default)]
struct Counts {
    rejected: usize,
    strict_only: usize,
    rules: BTreeMap<&'static str, usize>,
}

#[test]
fn real_servers_per_target() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../toolsearch/fixture/tools");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 33, "the fixture's servers");
    let mut tools = 0;
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    for file in &files {
        let listed: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for tool in &listed {
            tools += 1;
            let name = tool["name"].as_str().unwrap();
            let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            for target in Target::ALL {
                let found = check(target, name, &schema);
                let entry = counts.entry(target.name()).or_default();
                if found.iter().any(|f| f.effect == Effect::Rejected) {
                    entry.rejected += 1;
                } else if found.iter().any(|f| f.effect == Effect::RejectedIfStrict) {
                    entry.strict_only += 1;
                }
                for f in &found {
                    *entry.rules.entry(f.rule).or_default() += 1;
                }
            }
        }
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(target, c)| {
            format!(
                "{target}: {} rejected, {} only with strict, {:?}",
                c.rejected, c.strict_only, c.rules
            )
        })
        .collect();
    assert_eq!(tools, 485, "the fixture's tools");
    // The nine rejected by Anthropic and OpenAI are one server's (gitlab 0.6.x lists
    // `{"$schema": …}` alone, no type); Gemini refuses most tools for a field outside its
    // OpenAPI subset (`additionalProperties`, `$schema`, `const`, `$ref`, `oneOf`, …).
    assert_eq!(
        summary,
        [
            r#"anthropic: 9 rejected, 270 only with strict, {"anthropic/root-object": 9, "anthropic/strict-additional": 552, "anthropic/strict-bounds": 228}"#,
            r#"gemini: 409 rejected, 0 only with strict, {"gemini/type-list": 29, "gemini/unknown-field": 920}"#,
            r#"openai: 9 rejected, 382 only with strict, {"openai/root-object": 9, "openai/strict-additional": 552, "openai/strict-required": 565}"#,
        ]
    );
}
