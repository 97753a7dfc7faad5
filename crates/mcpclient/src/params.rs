//! A request's `params` as the text of each member, in order: what a gateway forwards.
//!
//! A gateway changes a few members of what it forwards (a tool's name, the progress token) and
//! must leave the rest as the client wrote it: unknown members, `_meta` entries such as trace
//! context, number text (`1E2`, `1.0e400`), key order. Each member is kept as raw JSON and only
//! the ones changed are written anew.

use indexmap::IndexMap;
use serde_json::value::{to_raw_value, RawValue};
use serde_json::Value;

/// The members of a JSON object, each as its raw text, in order.
#[derive(Debug, Clone, Default)]
pub struct RawParams(IndexMap<String, Box<RawValue>>);

impl RawParams {
    /// The members of `raw`, which must be a JSON object.
    ///
    /// # Errors
    /// The parser's, when `raw` is not an object.
    pub fn parse(raw: &RawValue) -> Result<RawParams, serde_json::Error> {
        serde_json::from_str(raw.get()).map(RawParams)
    }

    /// The raw text of member `key`.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.get(key).map(AsRef::as_ref)
    }

    /// Member `key` parsed, if it is there and is JSON of that type.
    pub fn get_as<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_str(self.get(key)?.get()).ok()
    }

    /// Member `key` as a string, if it is one.
    pub fn get_str(&self, key: &str) -> Option<String> {
        self.get_as::<String>(key)
    }

    /// Sets member `key` to `value` (in place when it is there, else last).
    pub fn set(&mut self, key: &str, value: &Value) {
        let raw = to_raw_value(value).expect("a Value serializes without error");
        self.set_raw(key, raw);
    }

    /// Sets member `key` to the raw JSON `value`.
    pub fn set_raw(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.get_mut(key) {
            Some(kept) => *kept = value,
            None => {
                self.0.insert(key.to_owned(), value);
            }
        }
    }

    /// Sets `key` inside the object member `outer` (made when absent; an `outer` that is not an
    /// object is replaced), the rest of `outer` kept as written.
    pub fn set_within(&mut self, outer: &str, key: &str, value: &Value) {
        let mut inner = self
            .get(outer)
            .and_then(|raw| RawParams::parse(raw).ok())
            .unwrap_or_default();
        inner.set(key, value);
        self.set_raw(outer, inner.to_raw());
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Takes member `key` away.
    pub fn remove(&mut self, key: &str) -> Option<Box<RawValue>> {
        self.0.shift_remove(key)
    }

    /// The object, each member's text as it was or was set.
    pub fn to_raw(&self) -> Box<RawValue> {
        to_raw_value(&self.0).expect("raw members serialize without error")
    }
}

/// About how many JSON values `text` holds (each scalar, array and object counts one; an upper
/// bound up to the commas and brackets of a malformed text), by one pass over its bytes without
/// building anything: a cheap check before a parse whose memory grows with the count.
pub fn count_values(text: &str) -> usize {
    let mut count = 1;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => count += 1,
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_what_is_set_changes() {
        let text = r#"{"name":"a__t","arguments":{"n": 1E2,"x":1.0e400},"_meta":{"progressToken":"p1","com.example/trace":"abc"},"extra":[1 ,2]}"#;
        let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
        let mut params = RawParams::parse(&raw).unwrap();
        assert_eq!(params.get_str("name").as_deref(), Some("a__t"));
        params.set("name", &json!("t"));
        params.set_within("_meta", "progressToken", &json!("mcpx-progress-1"));
        assert_eq!(
            params.to_raw().get(),
            r#"{"name":"t","arguments":{"n": 1E2,"x":1.0e400},"_meta":{"progressToken":"mcpx-progress-1","com.example/trace":"abc"},"extra":[1 ,2]}"#
        );
        let mut bare = RawParams::default();
        bare.set_within("_meta", "progressToken", &json!(7));
        assert_eq!(bare.to_raw().get(), r#"{"_meta":{"progressToken":7}}"#);
    }

    #[test]
    fn values_are_counted_without_parsing() {
        assert_eq!(count_values("0"), 1);
        assert_eq!(count_values(r#"{"a":[1,2,3],"b":"x,[{"}"#), 6);
        assert_eq!(count_values(r#""\"[,""#), 1);
    }

    #[test]
    fn not_an_object_is_an_error() {
        let raw: Box<RawValue> = serde_json::from_str("[1]").unwrap();
        assert!(RawParams::parse(&raw).is_err());
    }
}
