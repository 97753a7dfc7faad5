//! Safe coercion: the one unambiguous fix that makes invalid arguments valid, if there is one.
//!
//! Only type mismatches are fixed, and only these: a string that is exactly the JSON text of the
//! wanted boolean or number becomes that value, and a single value where an array is wanted
//! becomes an array of one. A location with two possible fixes (`"3"` where an array or an
//! integer is wanted), any other problem (a bound, a missing property, an `anyOf`), or fixes that
//! still leave the arguments invalid: no coercion. The caller sends either the arguments as they
//! came or the fixed ones with the list of changes, never a guess.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::hint::{plain_integer, wants_type};
use crate::render::render;
use crate::{path, Schema, MAX_COERCION_ROUNDS};

/// Arguments made valid by [`Schema::coerce`], with what was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coerced {
    /// The fixed arguments.
    pub value: Value,
    /// One line per change: `$.count: "3" → 3`.
    pub changes: Vec<String>,
}

/// One fix: the instance location (a JSON pointer) and the value put there.
struct Fix {
    pointer: String,
    value: Value,
}

impl Schema {
    /// The arguments with the one unambiguous fix applied at each type mismatch (a numeric or
    /// boolean string, a single value where an array is wanted), if that makes them valid.
    /// `None` for valid arguments, for a problem no such fix touches, and for a location with
    /// more than one possible fix.
    pub fn coerce(&self, instance: &Value) -> Option<Coerced> {
        if self.is_valid(instance) || self.too_deep(instance) {
            return None;
        }
        let mut value = instance.clone();
        let mut changes = Vec::new();
        for _ in 0..MAX_COERCION_ROUNDS {
            let mut fixes: Vec<Fix> = Vec::new();
            for error in self.validator().iter_errors(&value) {
                let ValidationErrorKind::Type { kind } = error.kind() else {
                    return None;
                };
                let fixed = fix(error.instance(), kind)?;
                let pointer = error.instance_path().as_str().to_owned();
                match fixes.iter().find(|f| f.pointer == pointer) {
                    Some(same) if same.value == fixed => {}
                    Some(_) => return None,
                    None => fixes.push(Fix {
                        pointer,
                        value: fixed,
                    }),
                }
            }
            if fixes.is_empty() {
                break;
            }
            for Fix {
                pointer,
                value: fixed,
            } in fixes
            {
                let at = path::from_pointer(&value, &pointer);
                let slot = value.pointer_mut(&pointer)?;
                changes.push(format!("{at}: {} → {}", render(slot), render(&fixed)));
                *slot = fixed;
            }
            if self.is_valid(&value) {
                return Some(Coerced { value, changes });
            }
        }
        None
    }
}

/// The one fix of `got` for a type mismatch against `wanted`, if exactly one exists.
fn fix(got: &Value, wanted: &TypeKind) -> Option<Value> {
    let wants = |name: &str| wants_type(wanted, name);
    let mut fixes = Vec::new();
    if let Some(text) = got.as_str() {
        match crate::parse_json(text.as_bytes()) {
            Ok(Value::Bool(b)) if wants("boolean") => fixes.push(Value::Bool(b)),
            Ok(Value::Number(n))
                if wants("number") || (wants("integer") && plain_integer(&n, text)) =>
            {
                fixes.push(Value::Number(n));
            }
            _ => {}
        }
    }
    if wants("array") && !got.is_array() {
        fixes.push(Value::Array(vec![got.clone()]));
    }
    match fixes.len() {
        1 => fixes.pop(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Schema;

    fn coerce(schema: serde_json::Value, instance: serde_json::Value) -> Option<super::Coerced> {
        Schema::compile(&schema).unwrap().coerce(&instance)
    }

    #[test]
    fn numeric_and_boolean_strings_become_values() {
        let schema = json!({"properties": {"n": {"type": "integer"}, "x": {"type": "number"},
            "b": {"type": "boolean"}}});
        let fixed = coerce(schema, json!({"n": "3", "x": "2.5", "b": "false"})).unwrap();
        assert_eq!(fixed.value, json!({"n": 3, "x": 2.5, "b": false}));
        assert_eq!(
            fixed.changes,
            [
                "$.n: \"3\" → 3",
                "$.x: \"2.5\" → 2.5",
                "$.b: \"false\" → false"
            ]
        );
    }

    #[test]
    fn a_single_value_becomes_an_array_of_one_and_its_item_is_fixed_too() {
        let schema =
            json!({"properties": {"ids": {"type": "array", "items": {"type": "integer"}}}});
        let fixed = coerce(schema.clone(), json!({"ids": "7"})).unwrap();
        assert_eq!(fixed.value, json!({"ids": [7]}));
        assert_eq!(
            fixed.changes,
            ["$.ids: \"7\" → an array of 1 item", "$.ids[0]: \"7\" → 7"]
        );
        let fixed = coerce(schema, json!({"ids": 7})).unwrap();
        assert_eq!(fixed.value, json!({"ids": [7]}));
    }

    #[test]
    fn nothing_is_guessed() {
        // Valid already.
        assert!(coerce(json!({"type": "integer"}), json!(3)).is_none());
        // Two possible fixes.
        assert!(coerce(json!({"type": ["integer", "array"]}), json!("3")).is_none());
        // Not exactly a number, or not an integer.
        assert!(coerce(json!({"type": "integer"}), json!(" 3")).is_none());
        assert!(coerce(json!({"type": "integer"}), json!("3.5")).is_none());
        // The fix leaves the arguments invalid.
        assert!(coerce(json!({"type": "integer", "minimum": 5}), json!("3")).is_none());
        // Another problem beside the fixable one.
        let schema = json!({"properties": {"n": {"type": "integer"}}, "required": ["m"]});
        assert!(coerce(schema, json!({"n": "3"})).is_none());
        // Inside an alternative: not a type mismatch of the arguments as such.
        assert!(coerce(
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
            json!("3")
        )
        .is_none());
    }
}
