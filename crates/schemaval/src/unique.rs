//! Duplicate member names: `{"a": "DUP", "a": 1}` is valid JSON text whose meaning depends on
//! the parser (serde_json keeps the last `a`, others the first, some refuse it). A validator
//! that checks one reading while the reader downstream acts on another has checked nothing, so
//! mcpx refuses such text where it interprets it: tool arguments, and every member of a request
//! it forwards.
//!
//! Names are compared as decoded (`"a"` and `"\u0061"` are the same name). The scan is one pass
//! over the text with an explicit stack (no recursion, whatever the nesting), run on text a
//! parser has accepted already.

use std::collections::HashSet;
use std::fmt;

use crate::path::{push_index, push_key};

/// A member name that appears twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateMember {
    /// Where the second one is: `$.arguments.a`.
    pub path: String,
    /// The name, decoded.
    pub name: String,
}

impl fmt::Display for DuplicateMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the member name {} appears twice in one object (which one counts depends on the reader, so it is not taken)",
            self.path,
            serde_json::Value::from(self.name.as_str())
        )
    }
}

/// An object or array being scanned, and the length of the path at its start.
enum Container {
    Object { names: HashSet<String>, base: usize },
    Array { index: usize, base: usize },
}

impl Container {
    fn base(&self) -> usize {
        match self {
            Container::Object { base, .. } | Container::Array { base, .. } => *base,
        }
    }
}

/// The first member name of `text` (JSON) that repeats one before it in the same object; `None`
/// when every object's names are distinct, or when `text` is not JSON (parse it first).
pub fn duplicate_member(text: &str) -> Option<DuplicateMember> {
    let bytes = text.as_bytes();
    // No object with two members, no duplicate: most arguments are skipped at this test.
    if !bytes.contains(&b',') {
        return None;
    }
    let mut stack: Vec<Container> = Vec::new();
    let mut path = String::from("$");
    let mut expect_name = false;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'{' => {
                stack.push(Container::Object {
                    names: HashSet::new(),
                    base: path.len(),
                });
                expect_name = true;
                at += 1;
            }
            b'[' => {
                stack.push(Container::Array {
                    index: 0,
                    base: path.len(),
                });
                push_index(&mut path, 0);
                expect_name = false;
                at += 1;
            }
            b'"' => {
                let end = string_end(bytes, at)?;
                if expect_name {
                    let name: String = serde_json::from_str(&text[at..end]).ok()?;
                    let Some(Container::Object { names, base }) = stack.last_mut() else {
                        return None;
                    };
                    path.truncate(*base);
                    push_key(&mut path, &name);
                    if !names.insert(name.clone()) {
                        return Some(DuplicateMember { path, name });
                    }
                    expect_name = false;
                }
                at = end;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Container::Object { .. }) => expect_name = true,
                    Some(Container::Array { index, base }) => {
                        *index += 1;
                        path.truncate(*base);
                        push_index(&mut path, *index);
                    }
                    None => return None,
                }
                at += 1;
            }
            b'}' | b']' => {
                let closed = stack.pop()?;
                path.truncate(closed.base());
                expect_name = false;
                at += 1;
            }
            _ => at += 1,
        }
    }
    None
}

/// Where the string starting at `start` (its opening quote) ends: the byte after its closing
/// quote.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        match *bytes.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Option<(String, String)> {
        duplicate_member(text).map(|d| (d.path, d.name))
    }

    #[test]
    fn the_second_member_of_a_name_is_found_with_its_path() {
        assert_eq!(
            found(r#"{"a":"DUP","b":2,"a":1}"#),
            Some(("$.a".into(), "a".into()))
        );
        assert_eq!(
            found(r#"{"name":"t","arguments":{"x":[{"k":1},{"k":2,"k":3}]}}"#),
            Some(("$.arguments.x[1].k".into(), "k".into()))
        );
        assert_eq!(
            found(r#"{"odd key":1,"odd key":2}"#),
            Some(("$['odd key']".into(), "odd key".into()))
        );
    }

    #[test]
    fn names_are_compared_decoded() {
        assert_eq!(
            found(r#"{"a":1,"\u0061":2}"#),
            Some(("$.a".into(), "a".into()))
        );
        assert_eq!(
            found(r#"{"\ud83d\ude00":1, "😀" :2}"#).map(|f| f.1),
            Some("😀".into())
        );
    }

    #[test]
    fn distinct_names_and_other_objects_pass() {
        for text in [
            r#"{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}"#,
            r#"{"a\"":1,"a":2,"s":"{\"a\":1,\"a\":2}"}"#,
            r#"[{"a":1},{"a":1}]"#,
            r#"{}"#,
            r#"1"#,
            r#"{"a":1}"#,
        ] {
            assert_eq!(found(text), None, "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_scanned_without_recursion() {
        let depth = 100_000;
        let text = format!(
            "{}{{\"a\":1,\"a\":2}}{}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let found = duplicate_member(&text).unwrap();
        assert!(found.path.ends_with("[0].a"));
        assert_eq!(found.name, "a");
    }

    #[test]
    fn the_line_names_the_path_and_the_name() {
        let line = duplicate_member(r#"{"a":1,"a":2}"#).unwrap().to_string();
        assert!(
            line.starts_with(r#"$.a: the member name "a" appears twice"#),
            "{line}"
        );
    }
}
