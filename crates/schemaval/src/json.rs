//! Reading JSON exactly: numbers keep their text (no trip through `f64`), nesting and size are
//! bounded before anything recurses over the document.

use serde_json::Value;

use crate::{CompileError, MAX_DEPTH};

/// Parses JSON text with every number kept exactly as written.
///
/// Nesting deeper than [`MAX_DEPTH`] is refused by the parser itself.
///
/// # Errors
/// The parser's error, with line and column.
pub fn parse_json(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Whether `value` nests deeper than `limit` (a scalar is 0 deep, a container one more than its
/// deepest child). The walk recurses, but never more than `limit` calls deep whatever the value
/// is, so a hostile value cannot overflow the stack while being measured; `limit` is at most
/// [`MAX_DEPTH`].
pub(crate) fn deeper_than(value: &Value, limit: usize) -> bool {
    debug_assert!(limit <= MAX_DEPTH, "the recursion is bounded by MAX_DEPTH");
    fn within(value: &Value, levels: usize) -> bool {
        match value {
            Value::Array(items) => levels > 0 && items.iter().all(|item| within(item, levels - 1)),
            Value::Object(map) => levels > 0 && map.values().all(|item| within(item, levels - 1)),
            _ => true,
        }
    }
    !within(value, limit.min(MAX_DEPTH))
}

/// Length of `value`'s compact serialization (what `serde_json::to_string` would produce),
/// counted without building it and without recursion.
pub(crate) fn compact_len(value: &Value) -> usize {
    let mut len = 0;
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        len += match node {
            Value::Null => 4,
            Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => n.as_str().len(),
            Value::String(s) => quoted_len(s),
            Value::Array(items) => {
                stack.extend(items.iter());
                // Brackets and the commas between items.
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                stack.extend(map.values());
                // Braces, commas, and each key quoted with its colon.
                2 + map.len().saturating_sub(1)
                    + map.keys().map(|k| quoted_len(k) + 1).sum::<usize>()
            }
        };
    }
    len
}

/// Length of a string as `serde_json` writes it: quoted, with its escapes.
fn quoted_len(s: &str) -> usize {
    let escaped = |b: &u8| *b < 0x20 || *b == b'"' || *b == b'\\';
    // Most strings escape nothing: counted in one pass the compiler vectorizes.
    if s.bytes().filter(escaped).count() == 0 {
        return 2 + s.len();
    }
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

impl From<serde_json::Error> for CompileError {
    fn from(err: serde_json::Error) -> Self {
        if err.to_string().starts_with("recursion limit exceeded") {
            return CompileError::TooDeep { limit: MAX_DEPTH };
        }
        let full = err.to_string();
        let message = match full.rfind(" at line ") {
            Some(cut) => full[..cut].to_owned(),
            None => full,
        };
        CompileError::InvalidJson {
            message,
            line: err.line(),
            column: err.column(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(depth: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..depth {
            v = Value::Array(vec![v]);
        }
        v
    }

    #[test]
    fn depth_is_measured_in_containers() {
        assert!(!deeper_than(&json!(1), 0));
        assert!(!deeper_than(&json!([]), 1));
        assert!(deeper_than(&json!([[]]), 1));
        assert!(!deeper_than(&nested(MAX_DEPTH), MAX_DEPTH));
        assert!(deeper_than(&nested(MAX_DEPTH + 1), MAX_DEPTH));
    }

    #[test]
    fn parser_refuses_what_the_depth_limit_refuses() {
        let ok = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let v = parse_json(ok.as_bytes()).unwrap();
        assert!(!deeper_than(&v, MAX_DEPTH));
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let err = CompileError::from(parse_json(deep.as_bytes()).unwrap_err());
        assert_eq!(err, CompileError::TooDeep { limit: MAX_DEPTH });
    }

    #[test]
    fn compact_length_matches_serialization() {
        let docs: [&[u8]; 5] = [
            br#"{ "a": [1, 2, {"b": "c d"}], "e": 18446744073709551617, "f": -1.5e-7 }"#,
            br#"[null, true, false, [], {}, "", [[]], {"": {}}]"#,
            b"\"quote \\\" backslash \\\\ controls \\n\\t\\r\\b\\f\\u0001\\u001f \\u00e9 \\ud83d\\ude00 / <>\"",
            br#"{"k\"ey": ["\u0000", "tab\there"]}"#,
            b"0",
        ];
        for doc in docs {
            let v = parse_json(doc).unwrap();
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(compact_len(&v), text.len(), "{text}");
        }
    }

    #[test]
    fn numbers_keep_their_text() {
        let v =
            parse_json(b"[18446744073709551617, 1e400, 0.100000000000000000000000000001]").unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            "[18446744073709551617,1e+400,0.100000000000000000000000000001]",
            "digits kept; serde_json spells the exponent with its sign"
        );
    }
}
