//! A tool call's arguments from the command line: one JSON object, `@FILE`, `-` (standard
//! input), or `key=value` pairs typed by the tool's `inputSchema` (`count=3` is an integer where
//! the schema says integer) with `key:=JSON` for raw JSON.
//!
//! A value that does not parse as the type the schema asks for stays a string, so that the
//! schema check reports it in its own words (`$.count: got string, want integer`): nothing is
//! guessed or silently changed.

use anyhow::{anyhow, bail, Context};
use serde_json::{Map, Value};

/// The arguments object for `words`, typed by `schema` (the tool's `inputSchema`): one JSON
/// object, or `key=value` and `key:=JSON` pairs. (`@FILE` and `-` are read by the caller.)
pub fn arguments(words: &[String], schema: &Value) -> anyhow::Result<Value> {
    if let [only] = words {
        if only.trim_start().starts_with('{') {
            return serde_json::from_str(only).context("the arguments are not a JSON object");
        }
    }
    let mut object = Map::new();
    for word in words {
        let (key, value) = if let Some((key, raw)) = word.split_once(":=") {
            let value =
                serde_json::from_str(raw).with_context(|| format!("{key}:= is not JSON: {raw}"))?;
            (key, value)
        } else if let Some((key, text)) = word.split_once('=') {
            (
                key,
                typed(
                    text,
                    schema.pointer(&format!("/properties/{}", escape(key))),
                ),
            )
        } else {
            bail!("`{word}` is not key=value, key:=JSON, a JSON object, @FILE or -");
        };
        if key.is_empty() {
            return Err(anyhow!("`{word}` has no key"));
        }
        object.insert(key.to_owned(), value);
    }
    Ok(Value::Object(object))
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `text` as the type the property's schema names, or as a string when it does not parse so.
pub fn typed(text: &str, property: Option<&Value>) -> Value {
    let types: Vec<&str> = match property.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for kind in types {
        let parsed: Option<Value> = match kind {
            "integer" => serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v.is_i64() || v.is_u64() || is_big_integer(v, text)),
            "number" => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_number),
            "boolean" => match text {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => (text == "null").then_some(Value::Null),
            "array" => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_array),
            "object" => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object),
            "string" => return Value::String(text.to_owned()),
            _ => None,
        };
        if let Some(value) = parsed {
            return value;
        }
    }
    Value::String(text.to_owned())
}

/// An integer beyond 64 bits, kept exact (numbers keep their text).
fn is_big_integer(value: &Value, text: &str) -> bool {
    value.is_number()
        && text
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pairs_are_typed_by_the_schema() {
        let schema = json!({"properties": {
            "count": {"type": "integer"}, "ratio": {"type": "number"}, "on": {"type": "boolean"},
            "name": {"type": "string"}, "maybe": {"type": ["integer", "null"]}}});
        let words: Vec<String> = [
            "count=3",
            "ratio=0.5",
            "on=true",
            "name=42",
            "maybe=null",
            "raw:=[1,2]",
            "other=x",
            "big=18446744073709551617",
        ]
        .map(str::to_owned)
        .to_vec();
        let args = arguments(&words, &schema).unwrap();
        assert_eq!(
            args.to_string(),
            r#"{"count":3,"ratio":0.5,"on":true,"name":"42","maybe":null,"raw":[1,2],"other":"x","big":"18446744073709551617"}"#
        );
        // Not an integer: left a string for the schema check to report.
        let args = arguments(&["count=three".to_owned()], &schema).unwrap();
        assert_eq!(args, json!({"count": "three"}));
        let big = json!({"properties": {"n": {"type": "integer"}}});
        let args = arguments(&["n=18446744073709551617".to_owned()], &big).unwrap();
        assert_eq!(args.to_string(), r#"{"n":18446744073709551617}"#);
    }

    #[test]
    fn one_json_object_is_taken_whole() {
        let args = arguments(&[r#"{"a": 1}"#.to_owned()], &json!({})).unwrap();
        assert_eq!(args, json!({"a": 1}));
        assert!(arguments(&["nonsense".to_owned()], &json!({})).is_err());
    }
}
