//! Arbitrary words as a tool call's command-line arguments (`key=value`, `key:=JSON`, one JSON
//! object), typed by a schema that names every JSON type: no panic, and nothing guessed: a
//! `key=value` that became something other than a string is valid against the property's own
//! schema (checked by schemaval), and a property of type string keeps its text exactly.
//! The input is split into words at NUL bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpx::arguments::{arguments, typed};
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let properties = json!({
        "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
        "z": {"type": "null"}, "a": {"type": "array"}, "o": {"type": "object"},
        "s": {"type": "string"}, "m": {"type": ["integer", "boolean", "null"]},
        "q": {"type": ["string", "integer"]},
    });
    let schema = json!({"type": "object", "properties": properties});
    let words: Vec<String> = text.split('\0').map(str::to_owned).collect();
    let _ = arguments(&words, &schema);
    for word in &words {
        let Some((key, value)) = word.split_once('=') else {
            continue;
        };
        let Some(property) = properties.get(key) else {
            continue;
        };
        match typed(value, Some(property)) {
            Value::String(kept) => assert_eq!(kept, value),
            other => {
                let check = schemaval::Schema::from_slice(property.to_string().as_bytes()).unwrap();
                assert!(
                    check.is_valid(&other),
                    "{key}={value} became {other}, not a {property}"
                );
            }
        }
    }
});
