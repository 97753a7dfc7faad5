//! Duplicate member names: `{"a": "DUP", "a": 1}` is valid JSON text whose meaning depends on
//! the parser (serde_json keeps the last `a`, others the first, some refuse it). A validator
//! that checks one reading while the reader downstream acts on another has checked nothing, so
//! mcpx refuses such text where it interprets it: tool arguments, and every member of a request
//! it forwards.
//!
//! Names are compared as decoded (`"a"` and `"\u0061"` are the same name). The scan is one pass
//! over the text with an explicit stack (no recursion, whatever the nesting), run on text a
//! parser has accepted already.

use std::borrow::Cow;
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

/// An object's member names so far. Compared one by one while there are few (no hashing, no
/// copies: most arguments have a handful), kept in a set past [`LINEAR_NAMES`].
#[derive(Default)]
struct Names<'a> {
    few: Vec<Cow<'a, str>>,
    many: HashSet<Cow<'a, str>>,
}

/// How many names an object's are compared one by one before they go into a set.
const LINEAR_NAMES: usize = 16;

impl<'a> Names<'a> {
    /// Adds `name`; false when the object had it already.
    fn insert(&mut self, name: Cow<'a, str>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&name) {
                return false;
            }
            if self.few.len() < LINEAR_NAMES {
                self.few.push(name);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(name)
    }
}

/// An object or array being scanned: an object's names so far and the one whose value is being
/// read, an array's index. The path is written only when a duplicate is found.
enum Container<'a> {
    Object {
        names: Names<'a>,
        current: Option<Cow<'a, str>>,
    },
    Array {
        index: usize,
    },
}

/// The first member name of `text` (JSON) that repeats one before it in the same object; `None`
/// when every object's names are distinct, or when `text` is not JSON (parse it first).
pub fn duplicate_member(text: &str) -> Option<DuplicateMember> {
    let bytes = text.as_bytes();
    // No object with two members, no duplicate: most arguments are skipped at this test.
    if !bytes.contains(&b',') {
        return None;
    }
    let mut stack: Vec<Container<'_>> = Vec::new();
    let mut expect_name = false;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'{' => {
                stack.push(Container::Object {
                    names: Names::default(),
                    current: None,
                });
                expect_name = true;
                at += 1;
            }
            b'[' => {
                stack.push(Container::Array { index: 0 });
                expect_name = false;
                at += 1;
            }
            b'"' => {
                let end = string_end(bytes, at)?;
                if expect_name {
                    let quoted = text.get(at..end)?;
                    // Only a name with an escape needs decoding to be compared as decoded.
                    let name = if quoted.contains('\\') {
                        Cow::Owned(serde_json::from_str::<String>(quoted).ok()?)
                    } else {
                        Cow::Borrowed(quoted.get(1..quoted.len() - 1)?)
                    };
                    let Some(Container::Object { names, current }) = stack.last_mut() else {
                        return None;
                    };
                    if !names.insert(name.clone()) {
                        return Some(DuplicateMember {
                            path: path_to(&stack, &name),
                            name: name.into_owned(),
                        });
                    }
                    *current = Some(name);
                    expect_name = false;
                }
                at = end;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Container::Object { .. }) => expect_name = true,
                    Some(Container::Array { index }) => *index += 1,
                    None => return None,
                }
                at += 1;
            }
            b'}' | b']' => {
                stack.pop()?;
                expect_name = false;
                at += 1;
            }
            _ => at += 1,
        }
    }
    None
}

/// The path of member `name` of the innermost container of `stack`: `$.arguments.x[1].k`.
fn path_to(stack: &[Container<'_>], name: &str) -> String {
    let mut path = String::from("$");
    let Some((_, outer)) = stack.split_last() else {
        return path;
    };
    for container in outer {
        match container {
            Container::Object { current, .. } => {
                push_key(&mut path, current.as_deref().unwrap_or_default())
            }
            Container::Array { index } => push_index(&mut path, *index),
        }
    }
    push_key(&mut path, name);
    path
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
    fn objects_with_many_names_are_checked_past_the_one_by_one_comparison() {
        let names: Vec<String> = (0..3 * LINEAR_NAMES)
            .map(|n| format!("\"k{n}\":{n}"))
            .collect();
        let distinct = format!("{{\"x\":[1,{{{}}}]}}", names.join(","));
        assert_eq!(found(&distinct), None);
        for repeated in [0, LINEAR_NAMES - 1, LINEAR_NAMES, 3 * LINEAR_NAMES - 1] {
            let expected = Some((format!("$.x[1].k{repeated}"), format!("k{repeated}")));
            // Once as written, once with its `k` escaped: the same name either way.
            for again in [format!("k{repeated}"), format!("\\u006b{repeated}")] {
                let text = format!("{{\"x\":[1,{{{},\"{again}\":0}}]}}", names.join(","));
                assert_eq!(found(&text), expected, "{text}");
            }
        }
    }

    #[test]
    fn the_path_names_each_enclosing_member_and_index() {
        assert_eq!(
            found(r#"{"a":{"b":1},"c":[[0,{"d":1}],[2,3,{"e":{"f":1,"f":2}}]]}"#),
            Some(("$.c[1][2].e.f".into(), "f".into()))
        );
        assert_eq!(
            found(r#"{"a\u0020b":{"x":1,"x":2}}"#),
            Some(("$['a b'].x".into(), "x".into()))
        );
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
