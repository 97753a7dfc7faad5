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

/// How many names an object's are compared one by one before they go into a set.
const LINEAR_NAMES: usize = 16;

/// How many containers deep, and how many names in all, the scan makes room for before it
/// starts (a few hundred bytes, which the allocator hands out from its caches): most texts
/// need no more, so the scan allocates nothing else.
const ROOM: usize = 8;

/// An object or array being scanned: an object's names so far (from `first` in the scan's one
/// list of names, or in a set of their own past [`LINEAR_NAMES`]) and the one whose value is
/// being read, an array's index. The path is written only when a duplicate is found.
enum Container<'a> {
    Object {
        first: usize,
        many: Option<HashSet<Cow<'a, str>>>,
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
    memchr::memchr(b',', bytes)?;
    let mut stack: Vec<Container<'_>> = Vec::with_capacity(ROOM);
    // The names of the objects on the stack, outermost first, each object's after its
    // container's `first` (compared one by one: no hashing, no copies while there are few).
    let mut names: Vec<Cow<'_, str>> = Vec::with_capacity(ROOM);
    let mut expect_name = false;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'{' => {
                stack.push(Container::Object {
                    first: names.len(),
                    many: None,
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
                    let Some(Container::Object {
                        first,
                        many,
                        current,
                    }) = stack.last_mut()
                    else {
                        return None;
                    };
                    let fresh = match many {
                        Some(set) => set.insert(name.clone()),
                        None => {
                            let theirs = names.get(*first..).unwrap_or_default();
                            if theirs.contains(&name) {
                                false
                            } else if theirs.len() < LINEAR_NAMES {
                                names.push(name.clone());
                                true
                            } else {
                                let mut set: HashSet<Cow<'_, str>> =
                                    names.drain(*first..).collect();
                                set.insert(name.clone());
                                *many = Some(set);
                                true
                            }
                        }
                    };
                    if !fresh {
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
                if let Container::Object {
                    first, many: None, ..
                } = stack.pop()?
                {
                    names.truncate(first);
                }
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
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes[at] {
            b'\\' => at += 2,
            _ => return Some(at + 1),
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
    fn each_object_compares_only_its_own_names_whatever_nests_between_them() {
        // An inner object's names are not the outer's, before or after it.
        assert_eq!(
            found(r#"{"a":{"b":1,"c":2},"b":{"a":1,"c":[{"b":0}]},"c":3}"#),
            None
        );
        assert_eq!(
            found(r#"{"a":{"b":1},"c":{"d":2},"e":{"d":3,"d":4}}"#),
            Some(("$.e.d".into(), "d".into()))
        );
        assert_eq!(
            found(r#"{"a":{"b":{"c":1},"d":2},"x":0,"a":1}"#),
            Some(("$.a".into(), "a".into()))
        );
        // The same with an outer object past the one-by-one comparison, objects inside it
        // before and after it grew, and a repeat after them.
        let names: Vec<String> = (0..2 * LINEAR_NAMES)
            .map(|n| format!("\"k{n}\":{{\"k{n}\":1,\"j\":[{{\"k1\":2}}]}}"))
            .collect();
        let outer = names.join(",");
        assert_eq!(found(&format!("{{{outer}}}")), None);
        assert_eq!(
            found(&format!("{{{outer},\"k3\":0}}")),
            Some(("$.k3".into(), "k3".into()))
        );
        assert_eq!(
            found(&format!("{{{outer},\"z\":{{\"k1\":1,\"k1\":2}}}}")),
            Some(("$.z.k1".into(), "k1".into()))
        );
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
