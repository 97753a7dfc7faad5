//! Reading JSON exactly: numbers keep their text (no trip through `f64`), nesting and size are
//! bounded before anything recurses over the document.

use std::io;

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

/// Whether `value` nests deeper than `limit`, found without recursion so that a hostile value
/// cannot overflow the stack while being measured.
pub(crate) fn deeper_than(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((node, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match node {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth >= limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// Length of `value`'s compact serialization, counted without building it.
pub(crate) fn compact_len(value: &Value) -> usize {
    struct Counter {
        written: usize,
    }
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { written: 0 };
    // Writing to the counter cannot fail, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.written
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
        let v = parse_json(br#"{ "a": [1, 2, {"b": "c d"}], "e": 18446744073709551617 }"#).unwrap();
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(compact_len(&v), text.len());
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
