//! A request's `params` as the text of each member, in order: what a gateway forwards.
//!
//! A gateway changes a few members of what it forwards (a tool's name, the progress token) and
//! must leave the rest as the client wrote it: unknown members, `_meta` entries such as trace
//! context, number text (`1E2`, `1.0e400`), key order. Each member is kept as raw JSON and only
//! the ones changed are written anew.

use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::Serializer;
use serde_json::value::{to_raw_value, RawValue};
use serde_json::Value;

/// Up to this many members, a parse finds a repeated name by comparing it with each member
/// before it (a request's params have a handful: cheaper than hashing each name); past it,
/// through an index of the names, so that a hostile object with many members costs linear time.
const LINEAR_MEMBERS: usize = 16;

/// The members of a JSON object, each as its raw text, in order. A name written twice is kept
/// once, where it was first written, with the value written last (as a JSON parser reads it).
#[derive(Debug, Clone, Default)]
pub struct RawParams(Vec<(String, Box<RawValue>)>);

impl RawParams {
    /// The members of `raw`, which must be a JSON object.
    ///
    /// # Errors
    /// The parser's, when `raw` is not an object.
    pub fn parse(raw: &RawValue) -> Result<RawParams, serde_json::Error> {
        serde_json::from_str(raw.get())
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.0.iter().position(|(name, _)| name == key)
    }

    /// The raw text of member `key`.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_ref())
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
        match self.position(key) {
            Some(at) => self.0[at].1 = value,
            None => self.0.push((key.to_owned(), value)),
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
        let at = self.position(key)?;
        Some(self.0.remove(at).1)
    }

    /// The object, each member's text as it was or was set.
    pub fn to_raw(&self) -> Box<RawValue> {
        to_raw_value(self).expect("raw members serialize without error")
    }
}

impl serde::Serialize for RawParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, value)))
    }
}

impl<'de> serde::Deserialize<'de> for RawParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawParams;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawParams, A::Error> {
                let mut members: Vec<(String, Box<RawValue>)> = Vec::new();
                // Built once the members outnumber LINEAR_MEMBERS: each name's place.
                let mut index: Option<HashMap<String, usize>> = None;
                while let Some(name) = map.next_key::<String>()? {
                    let value: Box<RawValue> = map.next_value()?;
                    let kept = match &index {
                        Some(index) => index.get(&name).copied(),
                        None => members.iter().position(|(kept, _)| *kept == name),
                    };
                    if let Some(at) = kept {
                        members[at].1 = value;
                        continue;
                    }
                    if let Some(index) = &mut index {
                        index.insert(name.clone(), members.len());
                    }
                    members.push((name, value));
                    if index.is_none() && members.len() > LINEAR_MEMBERS {
                        index = Some(
                            members
                                .iter()
                                .enumerate()
                                .map(|(at, (name, _))| (name.clone(), at))
                                .collect(),
                        );
                    }
                }
                Ok(RawParams(members))
            }
        }
        deserializer.deserialize_map(Members)
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
    fn a_repeated_name_keeps_its_first_place_and_its_last_value() {
        let raw: Box<RawValue> =
            serde_json::from_str(r#"{"a":1,"b":2,"a":3,"c":{"a":4}}"#).unwrap();
        let params = RawParams::parse(&raw).unwrap();
        assert_eq!(params.to_raw().get(), r#"{"a":3,"b":2,"c":{"a":4}}"#);
        // The same past LINEAR_MEMBERS, where names are found through the index: a name
        // repeated from before the index was built, one from after it, and one after both.
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!(r#""m{i}":{i},"#));
        }
        text.push_str(r#""m3":"again","m30":"again","m39":[1],"last":true}"#);
        let raw: Box<RawValue> = serde_json::from_str(&text).unwrap();
        let mut params = RawParams::parse(&raw).unwrap();
        let mut want: Vec<(String, String)> =
            (0..40).map(|i| (format!("m{i}"), i.to_string())).collect();
        want[3].1 = r#""again""#.to_owned();
        want[30].1 = r#""again""#.to_owned();
        want[39].1 = "[1]".to_owned();
        want.push(("last".to_owned(), "true".to_owned()));
        let got: Vec<(String, String)> = params
            .0
            .iter()
            .map(|(name, value)| (name.clone(), value.get().to_owned()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(params.get("m30").map(RawValue::get), Some(r#""again""#));
        assert_eq!(
            params.remove("m0").map(|v| v.get().to_owned()),
            Some("0".to_owned())
        );
        assert!(params.get("m0").is_none());
        params.set("m1", &json!("set"));
        params.set("new", &json!(null));
        let back: serde_json::Map<String, Value> =
            serde_json::from_str(params.to_raw().get()).unwrap();
        assert_eq!(back.len(), 41);
        assert_eq!(back.keys().next().map(String::as_str), Some("m1"));
        assert_eq!(back["m1"], json!("set"));
        assert_eq!(back.keys().next_back().map(String::as_str), Some("new"));
    }

    #[test]
    fn names_with_escapes_are_written_back_escaped() {
        let raw: Box<RawValue> = serde_json::from_str(r#"{"a\"b":1,"\u00e9":2}"#).unwrap();
        let params = RawParams::parse(&raw).unwrap();
        assert_eq!(params.get("a\"b").map(RawValue::get), Some("1"));
        assert_eq!(params.get("é").map(RawValue::get), Some("2"));
        assert_eq!(params.to_raw().get(), r#"{"a\"b":1,"é":2}"#);
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
