//! A tool call's arguments from the command line: one JSON object, `@FILE`, `-` (standard
//! input), or `key=value` pairs typed by the tool's `inputSchema`, with `key:=JSON` for exactly
//! the JSON given.
//!
//! The typing rule. A word has at most one reading other than the string: the JSON it spells
//! (`5`, `1.5`, `true`, `null`, `[1, 2]`, `{"a": 1}`). The property's schema is read as the
//! validator reads it ([`Shape`]: `$ref`s resolved, every `anyOf`/`oneOf` alternative), and
//! 1. the JSON reading is sent when the schema names its type (`integer`, also through an
//!    `enum` or `const`; `number` takes integers) and the validator accepts it there;
//! 2. else the string, when the schema allows strings or does not restrict the type (a property
//!    the schema does not describe keeps its text);
//! 3. else the JSON reading when there is one, and the string when there is none, so that the
//!    check names what is wrong (`max_count=1.5`: `got number, want integer`; `count=three`:
//!    `got string, want integer`).
//!
//! So where several readings are valid, the typed one wins: for a string-or-integer property
//! `id=5` sends `5`, and `id:='"5"'` sends the string; for `Optional[str]`, `x=null` sends null.

use anyhow::{anyhow, bail, Context};
use schemaval::{Schema, ValidateError};
use serde_json::{Map, Value};

use crate::shape::{Kind, Shape};

/// The arguments object for `words`, typed by `schema` (the tool's `inputSchema`): one JSON
/// object, or `key=value` and `key:=JSON` pairs. (`@FILE` and `-` are read by the caller.)
pub fn arguments(words: &[String], schema: &Value) -> anyhow::Result<Value> {
    if let [only] = words {
        if only.trim_start().starts_with('{') {
            let value =
                serde_json::from_str(only).context("the arguments are not a JSON object")?;
            once_each(only)?;
            return Ok(value);
        }
    }
    let typer = Typer::new(schema);
    let mut object = Map::new();
    for word in words {
        let (key, value) = if let Some((key, raw)) = word.split_once(":=") {
            let value =
                serde_json::from_str(raw).with_context(|| format!("{key}:= is not JSON: {raw}"))?;
            once_each(raw).with_context(|| format!("{key}:="))?;
            (key, value)
        } else if let Some((key, text)) = word.split_once('=') {
            (key, typer.typed(key, text))
        } else {
            bail!("`{word}` is not key=value, key:=JSON, a JSON object, @FILE or -");
        };
        if key.is_empty() {
            return Err(anyhow!("`{word}` has no key"));
        }
        if object.insert(key.to_owned(), value).is_some() {
            bail!("`{key}` is given twice: give each argument once");
        }
    }
    Ok(Value::Object(object))
}

/// Refuses JSON `text` that names a member twice: a server reading it might act on the value
/// mcpx did not check (see [`schemaval::duplicate_member`]).
fn once_each(text: &str) -> anyhow::Result<()> {
    match schemaval::duplicate_member(text) {
        Some(duplicate) => Err(anyhow!("{duplicate}")),
        None => Ok(()),
    }
}

/// An object schema read for typing its properties' `key=value` words.
pub struct Typer<'s> {
    root: &'s Value,
    /// The schema compiled, to ask the validator; none when it does not compile (the call is
    /// refused then anyway, and typing falls back to the types the schema names).
    compiled: Option<Schema>,
}

impl<'s> Typer<'s> {
    /// Reads `root`, an object schema.
    pub fn new(root: &'s Value) -> Typer<'s> {
        Typer {
            root,
            compiled: Schema::compile(root).ok(),
        }
    }

    /// `text` typed for the property `key`, by the rule in the module's documentation.
    pub fn typed(&self, key: &str, text: &str) -> Value {
        let property = self
            .root
            .get("properties")
            .and_then(|properties| properties.get(key));
        let shape = Shape::of(self.root, property);
        let Some(reading) = json_reading(text) else {
            return Value::String(text.to_owned());
        };
        if shape.names(Kind::of(&reading)) && self.accepts(key, &reading) {
            return reading;
        }
        if shape.names(Kind::String) || shape.is_open() {
            return Value::String(text.to_owned());
        }
        reading
    }

    /// Whether the validator finds nothing wrong with `value` as the property `key`: problems
    /// at the object itself (`$`: other properties missing or not allowed) are not its own.
    fn accepts(&self, key: &str, value: &Value) -> bool {
        let Some(compiled) = &self.compiled else {
            return true;
        };
        let mut alone = Map::new();
        alone.insert(key.to_owned(), value.clone());
        match compiled.validate(&Value::Object(alone)) {
            Ok(()) => true,
            Err(ValidateError::Invalid(violations)) => violations.iter().all(|v| v.path() == "$"),
            Err(_) => false,
        }
    }
}

/// `text` typed as the property schema `property` wants it, by the rule in the module's
/// documentation (the schema standing alone: what it references is not followed).
pub fn typed(text: &str, property: Option<&Value>) -> Value {
    const KEY: &str = "value";
    let mut properties = Map::new();
    if let Some(property) = property {
        properties.insert(KEY.to_owned(), property.clone());
    }
    let mut root = Map::new();
    root.insert("properties".to_owned(), Value::Object(properties));
    let root = Value::Object(root);
    Typer::new(&root).typed(KEY, text)
}

/// The JSON a word spells, other than a string: a number, `true`, `false`, `null`, an array or
/// an object, written without surrounding space.
fn json_reading(text: &str) -> Option<Value> {
    if text.trim() != text {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(|value| !value.is_string())
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

    fn typed_all(schema: &Value, words: &[&str]) -> String {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        arguments(&words, schema).unwrap().to_string()
    }

    #[test]
    fn typing_reads_through_refs_and_alternatives() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
                "label": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "color": {"$ref": "#/$defs/Color"},
                "level": {"oneOf": [{"const": 1}, {"const": 2}]},
                "codes": {"enum": ["1", "2"]},
                "id": {"type": ["string", "integer"]},
                "small": {"anyOf": [{"type": "integer", "maximum": 10}, {"type": "string"}]},
                "count": {"type": "integer", "maximum": 10},
                "flag": {"allOf": [{"$ref": "#/$defs/Flag"}]},
                "free": {}
            },
            "required": ["limit", "label"],
            "additionalProperties": false,
            "$defs": {"Color": {"enum": ["red", "green"]}, "Flag": {"type": "boolean"}}
        });
        let cases = [
            ("limit=5", r#"{"limit":5}"#),
            ("limit=null", r#"{"limit":null}"#),
            ("limit=1.5", r#"{"limit":1.5}"#),
            ("limit=five", r#"{"limit":"five"}"#),
            ("label=5", r#"{"label":"5"}"#),
            ("label=null", r#"{"label":null}"#),
            ("color=red", r#"{"color":"red"}"#),
            ("level=2", r#"{"level":2}"#),
            ("codes=1", r#"{"codes":"1"}"#),
            // Both readings valid: the typed one wins.
            ("id=5", r#"{"id":5}"#),
            ("id=abc", r#"{"id":"abc"}"#),
            // The integer reading is out of bounds, the string one is valid.
            ("small=50", r#"{"small":"50"}"#),
            ("small=5", r#"{"small":5}"#),
            // No reading is valid: the typed one, for the check to report.
            ("count=50", r#"{"count":50}"#),
            ("count=1.5", r#"{"count":1.5}"#),
            ("flag=true", r#"{"flag":true}"#),
            ("free=5", r#"{"free":"5"}"#),
            ("unknown=5", r#"{"unknown":"5"}"#),
            ("padded= 5", r#"{"padded":" 5"}"#),
        ];
        for (word, want) in cases {
            assert_eq!(typed_all(&schema, &[word]), want, "{word}");
        }
        assert_eq!(typed("5", Some(&json!({"type": "integer"}))), json!(5));
        assert_eq!(typed("5", None), json!("5"));
    }

    #[test]
    fn one_json_object_is_taken_whole() {
        let args = arguments(&[r#"{"a": 1}"#.to_owned()], &json!({})).unwrap();
        assert_eq!(args, json!({"a": 1}));
        assert!(arguments(&["nonsense".to_owned()], &json!({})).is_err());
    }
}
