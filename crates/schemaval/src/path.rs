//! Rendering a JSON location as the path people read in violation lines: `$`, `$.a.b`,
//! `$.items[3]`, `$['odd key']`.

use std::fmt::Write;

use serde_json::Value;

/// Appends one object key to a path, as `.key` when it is an ASCII identifier (the JSONPath
/// member-name shorthand of RFC 9535, less its non-ASCII part) and `['key']` otherwise.
pub(crate) fn push_key(path: &mut String, key: &str) {
    let mut chars = key.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if identifier {
        path.push('.');
        path.push_str(key);
        return;
    }
    path.push_str("['");
    for c in key.chars() {
        match c {
            '\'' => path.push_str("\\'"),
            '\\' => path.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(path, "\\u{{{:x}}}", u32::from(c));
            }
            c => path.push(c),
        }
    }
    path.push_str("']");
}

/// Appends one array index to a path.
pub(crate) fn push_index(path: &mut String, index: usize) {
    let _ = write!(path, "[{index}]");
}

/// The readable path of a JSON pointer into `root`. Whether a segment is a key or an index is
/// taken from the document itself, so the key `"0"` of an object prints as `['0']`.
pub(crate) fn from_pointer(root: &Value, pointer: &str) -> String {
    let mut path = String::from("$");
    let mut node = Some(root);
    for raw in pointer.split('/').skip(1) {
        let segment = if raw.contains('~') {
            std::borrow::Cow::Owned(raw.replace("~1", "/").replace("~0", "~"))
        } else {
            std::borrow::Cow::Borrowed(raw)
        };
        match node {
            Some(Value::Array(items)) => match segment.parse::<usize>() {
                Ok(index) => {
                    push_index(&mut path, index);
                    node = items.get(index);
                }
                Err(_) => {
                    push_key(&mut path, &segment);
                    node = None;
                }
            },
            Some(Value::Object(map)) => {
                push_key(&mut path, &segment);
                node = map.get(segment.as_ref());
            }
            _ => {
                push_key(&mut path, &segment);
                node = None;
            }
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_read_like_jsonpath() {
        let doc =
            json!({"a": {"b": 1}, "items": [0, 1, 2, {"x": 1}], "odd key": 1, "0": {"it's": 1}});
        assert_eq!(from_pointer(&doc, ""), "$");
        assert_eq!(from_pointer(&doc, "/a/b"), "$.a.b");
        assert_eq!(from_pointer(&doc, "/items/3"), "$.items[3]");
        assert_eq!(from_pointer(&doc, "/items/3/x"), "$.items[3].x");
        assert_eq!(from_pointer(&doc, "/odd key"), "$['odd key']");
        assert_eq!(from_pointer(&doc, "/0/it's"), "$['0']['it\\'s']");
        assert_eq!(from_pointer(&json!({"a/b~c": 1}), "/a~1b~0c"), "$['a/b~c']");
        assert_eq!(from_pointer(&json!({}), "/missing/0"), "$.missing['0']");
        assert_eq!(from_pointer(&json!({}), "/$ref/_a1"), "$['$ref']._a1");
    }
}
