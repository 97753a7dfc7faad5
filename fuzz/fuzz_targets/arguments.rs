//! Arbitrary words as a tool call's command-line arguments (`key=value`, `key:=JSON`, one JSON
//! object), typed by a schema that names every JSON type: no panic, and nothing invented: a
//! `key=value` that became something other than a string is the JSON the word spells, valid
//! against the property's own schema (checked by schemaval) unless the schema takes no string
//! (then it is sent as what it is, for the check to report), and a property of type string
//! keeps its text exactly.
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
                assert_eq!(Some(&other), serde_json::from_str::<Value>(value).ok().as_ref());
                let check = schemaval::Schema::from_slice(property.to_string().as_bytes()).unwrap();
                let takes_strings = check.is_valid(&Value::String(value.to_owned()));
                assert!(
                    check.is_valid(&other) || !takes_strings,
                    "{key}={value} became {other}, not a {property}"
                );
            }
        }
    }
});
