//! JSON files, with comments and trailing commas where the client allows them (VS Code's and
//! Zed's JSONC), read so that every member keeps its place in the text.
//!
//! Clients write their own state into the file that holds their servers (Claude Code keeps
//! dozens of keys in `~/.claude.json`), and people comment their settings. So a change is a
//! splice: the text of one member's value is replaced, or one member is added or removed, and
//! every other byte of the file (comments, spacing, key order, number text) stays as it was.
//! The scanner records where each object member and value starts and ends; the value itself is
//! read by serde_json from a copy of the text whose comments and trailing commas are blanked
//! (same length, same lines, so an error's line and column are the file's).

use serde_json::Value;

use crate::error::Syntax;

/// The deepest nesting of objects and arrays read (serde_json's own limit is the same).
pub(crate) const MAX_DEPTH: usize = 128;

/// A value's place in the text.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

#[derive(Debug)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array,
    Scalar,
}

/// An object member: its key (decoded), where the key's quote starts, and its value.
#[derive(Debug)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) key_start: usize,
    pub(crate) value: Node,
}

/// A file read: the places of its values and the value they spell.
#[derive(Debug)]
pub(crate) struct Doc {
    pub(crate) root: Node,
    pub(crate) value: Value,
}

/// Reads `text` as JSON; with `comments`, `//` and `/* */` comments and trailing commas are
/// allowed too.
pub(crate) fn parse(text: &str, comments: bool) -> Result<Doc, Syntax> {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        comments,
        blanks: Vec::new(),
    };
    if scanner.bytes.starts_with("\u{feff}".as_bytes()) {
        scanner.blanks.push((0, 3));
        scanner.pos = 3;
    }
    let root = scanner.value(0)?;
    scanner.skip_space()?;
    if scanner.pos < scanner.bytes.len() {
        return Err(scanner.error("text after the JSON value"));
    }
    let mut clean = text.as_bytes().to_vec();
    for &(start, end) in &scanner.blanks {
        for byte in &mut clean[start..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    }
    // Only whole comments and single commas were blanked, so the text is still UTF-8.
    let clean = String::from_utf8(clean).map_err(|_| Syntax::at(text, 0, "not UTF-8"))?;
    let value: Value = serde_json::from_str(&clean).map_err(|e| Syntax {
        line: e.line(),
        column: e.column(),
        problem: serde_problem(&e),
    })?;
    Ok(Doc { root, value })
}

/// serde_json's message without its " at line L column C" tail (the caller prints both).
fn serde_problem(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    comments: bool,
    /// Comments and trailing commas: blanked in the copy serde_json reads.
    blanks: Vec<(usize, usize)>,
}

impl Scanner<'_> {
    fn error(&self, problem: &str) -> Syntax {
        Syntax::at(self.text, self.pos, problem)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_space(&mut self) -> Result<(), Syntax> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.comments => {
                    let start = self.pos;
                    match self.bytes.get(self.pos + 1) {
                        Some(b'/') => {
                            let end = memchr_from(self.bytes, self.pos, b'\n');
                            self.pos = end;
                        }
                        Some(b'*') => match find_from(self.bytes, self.pos + 2, b"*/") {
                            Some(end) => self.pos = end + 2,
                            None => return Err(self.error("a comment that never ends")),
                        },
                        _ => return Err(self.error("unexpected '/'")),
                    }
                    self.blanks.push((start, self.pos));
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, Syntax> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_space()?;
        let start = self.pos;
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                self.string()?;
                Ok(Node {
                    start,
                    end: self.pos,
                    kind: Kind::Scalar,
                })
            }
            Some(b) if b.is_ascii_alphanumeric() || b == b'-' => {
                while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b"+-.".contains(&b))
                {
                    self.pos += 1;
                }
                Ok(Node {
                    start,
                    end: self.pos,
                    kind: Kind::Scalar,
                })
            }
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("the file ends where a value should be")),
        }
    }

    fn string(&mut self) -> Result<(), Syntax> {
        self.pos += 1;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => self.pos += 2,
                Some(b) if b < 0x20 => return Err(self.error("a control character in a string")),
                Some(_) => self.pos += 1,
                None => return Err(self.error("a string that never ends")),
            }
        }
    }

    /// After a member or element: a comma (then maybe the trailing-comma close), or `close`.
    /// True when the container ended.
    fn after_item(&mut self, close: u8) -> Result<bool, Syntax> {
        self.skip_space()?;
        match self.peek() {
            Some(b',') => {
                let comma = self.pos;
                self.pos += 1;
                self.skip_space()?;
                if self.peek() == Some(close) {
                    if !self.comments {
                        return Err(Syntax::at(self.text, comma, "a trailing comma"));
                    }
                    self.blanks.push((comma, comma + 1));
                    self.pos += 1;
                    return Ok(true);
                }
                Ok(false)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(self.error(if close == b'}' {
                "expected ',' or '}'"
            } else {
                "expected ',' or ']'"
            })),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Node, Syntax> {
        let start = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_space()?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.skip_space()?;
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a member name in double quotes"));
                }
                let key_start = self.pos;
                self.string()?;
                let key: String =
                    serde_json::from_str(&self.text[key_start..self.pos]).map_err(|_| {
                        Syntax::at(
                            self.text,
                            key_start,
                            "a member name that is not a valid string",
                        )
                    })?;
                self.skip_space()?;
                if self.peek() != Some(b':') {
                    return Err(self.error("expected ':'"));
                }
                self.pos += 1;
                let value = self.value(depth + 1)?;
                members.push(Member {
                    key,
                    key_start,
                    value,
                });
                if self.after_item(b'}')? {
                    break;
                }
            }
        }
        Ok(Node {
            start,
            end: self.pos,
            kind: Kind::Object(members),
        })
    }

    fn array(&mut self, depth: usize) -> Result<Node, Syntax> {
        let start = self.pos;
        self.pos += 1;
        self.skip_space()?;
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                self.value(depth + 1)?;
                if self.after_item(b']')? {
                    break;
                }
            }
        }
        Ok(Node {
            start,
            end: self.pos,
            kind: Kind::Array,
        })
    }
}

fn memchr_from(bytes: &[u8], from: usize, needle: u8) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == needle)
        .map_or(bytes.len(), |i| from + i)
}

fn find_from(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

/// Where a member path leads.
enum Lookup<'a> {
    /// The member is there: its object and its index.
    Found(&'a Node, usize),
    /// The path goes as far as this object after `matched` names; the rest is missing.
    Missing(&'a Node, usize),
}

fn members(node: &Node) -> Option<&[Member]> {
    match &node.kind {
        Kind::Object(members) => Some(members),
        _ => None,
    }
}

/// Follows `path` from the root. An error names the first step that is not an object.
fn lookup<'a>(root: &'a Node, path: &[String]) -> Result<Lookup<'a>, String> {
    let mut object = root;
    for (i, name) in path.iter().enumerate() {
        let Some(list) = members(object) else {
            return Err(crate::error::json_path(&path[..i]));
        };
        // The last member of a name is the one JSON readers keep.
        match list.iter().rposition(|m| &m.key == name) {
            Some(index) if i + 1 == path.len() => return Ok(Lookup::Found(object, index)),
            Some(index) => object = &list[index].value,
            None => return Ok(Lookup::Missing(object, i)),
        }
    }
    Err(crate::error::json_path(path))
}

/// The whitespace that starts the line `pos` is on.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let width = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..width]
}

/// The file's indentation step: that of its first member on a line of its own, else two
/// spaces.
pub(crate) fn indent_unit(text: &str, root: &Node) -> String {
    let first = members(root).and_then(|m| m.first());
    match first {
        Some(member) if text[root.start..member.key_start].contains('\n') => {
            let indent = line_indent(text, member.key_start);
            if indent.is_empty() {
                "  ".to_owned()
            } else {
                indent.to_owned()
            }
        }
        _ => "  ".to_owned(),
    }
}

/// `value` as pretty JSON indented by `unit`, its lines after the first starting with `base`.
pub(crate) fn render(value: &Value, unit: &str, base: &str) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Serializing a Value into a Vec cannot fail.
    let _ = value.serialize(&mut serializer);
    let text = String::from_utf8(out).unwrap_or_default();
    text.replace('\n', &format!("\n{base}"))
}

/// The text with the member at `path` set to `value`: its value replaced where it is, or the
/// member added at the end of the deepest object the path reaches (with the objects the rest
/// of the path names).
pub(crate) fn set(text: &str, doc: &Doc, path: &[String], value: &Value) -> Result<String, String> {
    set_with(
        text,
        doc,
        path,
        &|base, unit| render(value, unit, base),
        value,
    )
}

/// [`set`] with the value's own text (as it was in a file), where the member is there or
/// missing alike.
pub(crate) fn set_text(
    text: &str,
    doc: &Doc,
    path: &[String],
    raw: &str,
    value: &Value,
) -> Result<String, String> {
    set_with(text, doc, path, &|_, _| raw.to_owned(), value)
}

fn set_with(
    text: &str,
    doc: &Doc,
    path: &[String],
    shown: &dyn Fn(&str, &str) -> String,
    value: &Value,
) -> Result<String, String> {
    let unit = indent_unit(text, &doc.root);
    match lookup(&doc.root, path)? {
        Lookup::Found(object, index) => {
            let Some(list) = members(object) else {
                return Err(crate::error::json_path(path));
            };
            let node = &list[index].value;
            let base = line_indent(text, list[index].key_start);
            let mut out = String::with_capacity(text.len());
            out.push_str(&text[..node.start]);
            out.push_str(&shown(base, &unit));
            out.push_str(&text[node.end..]);
            Ok(out)
        }
        Lookup::Missing(object, matched) => {
            let mut nested = value.clone();
            for name in path[matched + 1..].iter().rev() {
                let mut wrapper = serde_json::Map::new();
                wrapper.insert(name.clone(), nested);
                nested = Value::Object(wrapper);
            }
            Ok(insert_member(text, object, &path[matched], &nested, &unit))
        }
    }
}

/// The text of the value at `path`, when it is there.
pub(crate) fn value_text<'t>(text: &'t str, doc: &Doc, path: &[String]) -> Option<&'t str> {
    match lookup(&doc.root, path).ok()? {
        Lookup::Found(object, index) => {
            let node = &members(object)?[index].value;
            text.get(node.start..node.end)
        }
        Lookup::Missing(..) => None,
    }
}

fn insert_member(text: &str, object: &Node, key: &str, value: &Value, unit: &str) -> String {
    let list = members(object).unwrap_or_default();
    let brace_indent = line_indent(text, object.start);
    let indent = match list.last() {
        Some(last) if text[object.start..last.key_start].contains('\n') => {
            line_indent(text, last.key_start).to_owned()
        }
        _ => format!("{brace_indent}{unit}"),
    };
    let member = format!(
        "{}: {}",
        Value::String(key.to_owned()),
        render(value, unit, &indent)
    );
    let (at, insert) = match list.last() {
        Some(last) => {
            let after = trailing_comma(text, last.value.end, object.end);
            match after {
                Some(comma) => (comma + 1, format!("\n{indent}{member}")),
                None => (last.value.end, format!(",\n{indent}{member}")),
            }
        }
        None => (
            object.start + 1,
            format!("\n{indent}{member}\n{brace_indent}"),
        ),
    };
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..at]);
    out.push_str(&insert);
    // An empty object may have spaces before its brace: they went before the new member's line.
    let rest = &text[at..];
    if list.is_empty() {
        out.push_str(rest.trim_start_matches([' ', '\t']));
    } else {
        out.push_str(rest);
    }
    out
}

/// The place of a comma after `from` (before `end`), skipping spaces and comments.
fn trailing_comma(text: &str, from: usize, end: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut pos = from;
    while pos < end {
        match bytes[pos] {
            b' ' | b'\t' | b'\n' | b'\r' => pos += 1,
            b',' => return Some(pos),
            b'/' if bytes.get(pos + 1) == Some(&b'/') => pos = memchr_from(bytes, pos, b'\n'),
            b'/' if bytes.get(pos + 1) == Some(&b'*') => {
                pos = find_from(bytes, pos + 2, b"*/").map_or(end, |p| p + 2);
            }
            _ => return None,
        }
    }
    None
}

/// The text without the member at `path` (the same text when it is not there).
pub(crate) fn remove(text: &str, doc: &Doc, path: &[String]) -> Result<String, String> {
    let Lookup::Found(object, index) = lookup(&doc.root, path)? else {
        return Ok(text.to_owned());
    };
    let list = members(object).unwrap_or_default();
    let (from, to) = if index > 0 {
        (list[index - 1].value.end, list[index].value.end)
    } else if let Some(next) = list.get(1) {
        (list[0].key_start, next.key_start)
    } else {
        // The only member: taken with the space before it, its comma, and the line end
        // [`insert_member`] gave it; what else the braces hold (a comment) kept.
        let member = &list[0];
        let from = object.start
            + 1
            + text[object.start + 1..member.key_start]
                .trim_end_matches([' ', '\t', '\n', '\r'])
                .len();
        let mut to = trailing_comma(text, member.value.end, object.end)
            .map_or(member.value.end, |comma| comma + 1);
        let line_end = format!("\n{}", line_indent(text, object.start));
        if from == object.start + 1 && text[to..object.end].starts_with(&line_end) {
            to += line_end.len();
        }
        (from, to)
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..from]);
    out.push_str(&text[to..]);
    Ok(out)
}

/// The value at `path`, when every step is there.
pub(crate) fn get<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, name| v.get(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn comments_and_trailing_commas_are_read_where_allowed() {
        let text = "// top\n{\n  /* a */ \"a\": [1, 2,], // after\n  \"b\": {\"c\": \"x // not a comment\",},\n}\n";
        let doc = parse(text, true).unwrap();
        assert_eq!(doc.value["a"], serde_json::json!([1, 2]));
        assert_eq!(doc.value["b"]["c"], "x // not a comment");
        let err = parse(text, false).unwrap_err();
        assert_eq!((err.line, err.column), (1, 1));
        let err = parse("{\"a\": 1,}", false).unwrap_err();
        assert_eq!(err.problem, "a trailing comma");
    }

    #[test]
    fn set_replaces_one_value_and_keeps_every_other_byte() {
        let text = "{\n    // mine\n    \"keep\": 1.50,\n    \"servers\": {\"x\": 1}, /* c */\n    \"after\": true\n}\n";
        let doc = parse(text, true).unwrap();
        let out = set(
            text,
            &doc,
            &path(&["servers"]),
            &serde_json::json!({"m": {"a": [1]}}),
        )
        .unwrap();
        assert_eq!(
            out,
            "{\n    // mine\n    \"keep\": 1.50,\n    \"servers\": {\n        \"m\": {\n            \"a\": [\n                1\n            ]\n        }\n    }, /* c */\n    \"after\": true\n}\n"
        );
    }

    #[test]
    fn set_adds_missing_members_and_objects() {
        let text = "{\n  \"a\": 1\n}";
        let doc = parse(text, false).unwrap();
        let out = set(text, &doc, &path(&["p", "q"]), &serde_json::json!({})).unwrap();
        assert_eq!(out, "{\n  \"a\": 1,\n  \"p\": {\n    \"q\": {}\n  }\n}");
        let text = "{}";
        let doc = parse(text, false).unwrap();
        let out = set(text, &doc, &path(&["a"]), &serde_json::json!(1)).unwrap();
        assert_eq!(out, "{\n  \"a\": 1\n}");
        let text = "{\n  \"a\": 1, // c\n}";
        let doc = parse(text, true).unwrap();
        let out = set(text, &doc, &path(&["b"]), &serde_json::json!(2)).unwrap();
        assert_eq!(out, "{\n  \"a\": 1,\n  \"b\": 2 // c\n}");
        assert!(parse(&out, true).is_ok());
    }

    #[test]
    fn remove_takes_the_member_and_its_comma() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}";
        let doc = parse(text, false).unwrap();
        assert_eq!(
            remove(text, &doc, &path(&["b"])).unwrap(),
            "{\n  \"a\": 1,\n  \"c\": 3\n}"
        );
        assert_eq!(
            remove(text, &doc, &path(&["a"])).unwrap(),
            "{\n  \"b\": 2,\n  \"c\": 3\n}"
        );
        assert_eq!(
            remove(text, &doc, &path(&["c"])).unwrap(),
            "{\n  \"a\": 1,\n  \"b\": 2\n}"
        );
        let text = "{\"only\": 1}";
        let doc = parse(text, false).unwrap();
        assert_eq!(remove(text, &doc, &path(&["only"])).unwrap(), "{}");
    }

    /// A member added to an object with no member, then removed: the text as it was, comments
    /// in the braces and all; a comment the user put before a lone member stays too.
    #[test]
    fn the_lone_member_set_then_removed_leaves_the_text_as_it_was() {
        let servers = serde_json::json!({"mcpx": {"command": "m"}});
        for text in [
            "{}",
            "{\n}\n",
            "{\n  // add servers here\n}\n",
            "  {\n    /* one */ // two\n  }",
            "{\"a\": {\n  // inner\n}}",
        ] {
            let at = if text.contains("\"a\"") {
                path(&["a", "servers"])
            } else {
                path(&["servers"])
            };
            let doc = parse(text, true).unwrap();
            let set_text = set(text, &doc, &at, &servers).unwrap();
            let again = parse(&set_text, true).unwrap();
            let removed = remove(&set_text, &again, &at).unwrap();
            assert_eq!(removed, text, "set gave:\n{set_text}");
        }
        let text = "{\n  // my server\n  \"servers\": {},\n}";
        let doc = parse(text, true).unwrap();
        let removed = remove(text, &doc, &path(&["servers"])).unwrap();
        assert_eq!(removed, "{\n  // my server\n}");
        assert!(parse(&removed, true).is_ok());
    }

    /// Every truncation of the JSONC fixtures, and every byte of them replaced by a character
    /// that matters to the scanner: never a panic, and where the text reads, an edit of its
    /// servers gives a text that reads with the same other members.
    #[test]
    fn broken_texts_never_panic_and_edits_stay_valid() {
        let fixtures = [
            include_str!("../tests/fixtures/vscode.jsonc"),
            include_str!("../tests/fixtures/zed.jsonc"),
        ];
        let servers = serde_json::json!({"mcpx": {"command": "m"}});
        for text in fixtures {
            let mut variants: Vec<String> = (0..=text.len())
                .filter(|i| text.is_char_boundary(*i))
                .map(|i| text[..i].to_owned())
                .collect();
            for (i, _) in text.char_indices() {
                for c in ['"', '{', '}', '[', ']', ',', ':', '/', '*', '\\', '\n', 'x'] {
                    let mut v = text.to_owned();
                    let len = text[i..].chars().next().map_or(1, char::len_utf8);
                    v.replace_range(i..i + len, &c.to_string());
                    variants.push(v);
                }
            }
            for variant in &variants {
                let Ok(doc) = parse(variant, true) else {
                    continue;
                };
                if !doc.value.is_object() {
                    continue;
                }
                for key in ["servers", "context_servers"] {
                    let Ok(out) = set(variant, &doc, &path(&[key]), &servers) else {
                        continue;
                    };
                    let again = parse(&out, true).unwrap_or_else(|e| panic!("{e}:\n{out}"));
                    assert_eq!(again.value[key], servers);
                    let mut before = doc.value.clone();
                    let mut after = again.value.clone();
                    before.as_object_mut().unwrap().shift_remove(key);
                    after.as_object_mut().unwrap().shift_remove(key);
                    assert_eq!(before, after, "{out}");
                    let removed = remove(&out, &again, &path(&[key])).unwrap();
                    assert_eq!(parse(&removed, true).unwrap().value, before);
                }
            }
        }
    }

    #[test]
    fn a_step_that_is_not_an_object_is_refused() {
        let text = "{\"projects\": []}";
        let doc = parse(text, false).unwrap();
        assert_eq!(
            set(text, &doc, &path(&["projects", "x"]), &Value::Null).unwrap_err(),
            "$.projects"
        );
    }
}
