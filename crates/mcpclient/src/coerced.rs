//! Saying in a result that its call's arguments were coerced (`"coerceArguments": "safe"`).
//!
//! The result is otherwise forwarded as the server wrote it: only `_meta` gains one namespaced
//! key, the rest of `_meta` and of the result kept in order with its number text.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `_meta` key of a result whose call's arguments mcpx coerced: one line per change.
pub const COERCED_META: &str = "io.mcpx/coerced";

/// `result` with `_meta[COERCED_META]` set to `changes`; unchanged when it is not a JSON object
/// or its `_meta` is not one (nothing to add the key to without rewriting what the server sent).
pub fn mark_coerced(result: &RawValue, changes: &[String]) -> Box<RawValue> {
    let unchanged = || result.to_owned();
    let Ok(mut object) = serde_json::from_str::<Map<String, Value>>(result.get()) else {
        return unchanged();
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return unchanged();
    };
    meta.insert(COERCED_META.to_owned(), Value::from(changes.to_vec()));
    serde_json::value::to_raw_value(&object).unwrap_or_else(|_| unchanged())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn the_key_is_added_and_the_rest_kept() {
        let changes = ["$.n: \"3\" → 3".to_owned()];
        let marked = mark_coerced(
            &raw(r#"{"z":1,"content":[],"big":18446744073709551617}"#),
            &changes,
        );
        assert_eq!(
            marked.get(),
            r#"{"z":1,"content":[],"big":18446744073709551617,"_meta":{"io.mcpx/coerced":["$.n: \"3\" → 3"]}}"#
        );
        let marked = mark_coerced(&raw(r#"{"_meta":{"a":1},"content":[]}"#), &changes);
        assert_eq!(
            marked.get(),
            r#"{"_meta":{"a":1,"io.mcpx/coerced":["$.n: \"3\" → 3"]},"content":[]}"#
        );
    }

    #[test]
    fn what_cannot_carry_the_key_is_unchanged() {
        for text in [r#"[1]"#, r#"{"_meta":3}"#] {
            assert_eq!(mark_coerced(&raw(text), &["x".to_owned()]).get(), text);
        }
    }
}
