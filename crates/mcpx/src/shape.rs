//! What a property's schema accepts, read the way the validator reads it: local `$ref`s
//! resolved, `anyOf`/`oneOf` flattened into alternatives, a lone `allOf` entry followed, `type`,
//! `enum` and `const` collected. The command line reads a [`Shape`] twice: to type `key=value`
//! words ([`crate::arguments`]) and to print a tool's argument table (`integer | null`,
//! `enum: a, b`, the name of a referenced definition), so both agree on what a schema says.
//!
//! The walk is bounded ([`MAX_WALK_DEPTH`], [`MAX_ALTERNATIVES`]): past either bound the rest is
//! read as accepting anything, which only ever makes typing keep a word as a string.

use serde_json::Value;

/// Most `$ref`s and nested combinators followed from one property; deeper, it accepts anything.
pub const MAX_WALK_DEPTH: usize = 32;

/// Most alternatives collected for one property; later ones are not read.
pub const MAX_ALTERNATIVES: usize = 64;

/// Most `enum` values named in a type label; the others are counted.
pub const MAX_SHOWN_VALUES: usize = 8;

/// The schema of a property the schema does not describe.
static ANYTHING: Value = Value::Bool(true);

/// A JSON type as schemas name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `null`
    Null,
    /// `true` or `false`
    Boolean,
    /// A number without a fraction.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    /// The name schemas use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "boolean",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Array => "array",
            Kind::Object => "object",
        }
    }

    /// The kind of a value; a number is an integer when its text has no fraction or exponent.
    pub fn of(value: &Value) -> Kind {
        match value {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Boolean,
            Value::Number(n)
                if n.to_string()
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'-') =>
            {
                Kind::Integer
            }
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    /// Whether a schema naming `self` takes a value of kind `value` (`number` takes integers).
    fn takes(self, value: Kind) -> bool {
        self == value || (self == Kind::Number && value == Kind::Integer)
    }
}

/// One way a value can satisfy a property's schema.
#[derive(Debug, Clone)]
pub struct Alternative<'s> {
    /// The definition it was reached through (`Color` for `#/$defs/Color`), the nearest one.
    pub name: Option<&'s str>,
    /// The kinds it accepts; `None` when it does not restrict them.
    pub kinds: Option<Vec<Kind>>,
    /// Its `enum` values, or its `const` as one value.
    pub values: Option<Vec<&'s Value>>,
    /// Its schema, references resolved.
    pub schema: &'s Value,
}

/// Every alternative of a property's schema, in the schema's order.
#[derive(Debug, Clone)]
pub struct Shape<'s> {
    /// The alternatives; empty when nothing is accepted (`false`).
    pub alternatives: Vec<Alternative<'s>>,
}

impl<'s> Shape<'s> {
    /// The shape of `schema`, a part of `root` (references are resolved in `root`); no schema
    /// accepts anything.
    pub fn of(root: &'s Value, schema: Option<&'s Value>) -> Shape<'s> {
        Shape::at_depth(root, schema, 0)
    }

    fn at_depth(root: &'s Value, schema: Option<&'s Value>, depth: usize) -> Shape<'s> {
        let mut shape = Shape {
            alternatives: Vec::new(),
        };
        match schema {
            Some(schema) => shape.walk(root, schema, None, depth),
            None => shape.alternatives.push(Alternative {
                name: None,
                kinds: None,
                values: None,
                schema: &ANYTHING,
            }),
        }
        shape
    }

    /// Whether some alternative names `kind` (an alternative naming `number` names integers).
    pub fn names(&self, kind: Kind) -> bool {
        self.alternatives.iter().any(|alt| {
            alt.kinds
                .as_ref()
                .is_some_and(|kinds| kinds.iter().any(|k| k.takes(kind)))
        })
    }

    /// Whether some alternative accepts values of every kind.
    pub fn is_open(&self) -> bool {
        self.alternatives.iter().any(|alt| alt.kinds.is_none())
    }

    fn walk(&mut self, root: &'s Value, schema: &'s Value, name: Option<&'s str>, depth: usize) {
        if self.alternatives.len() >= MAX_ALTERNATIVES {
            return;
        }
        let open = Alternative {
            name,
            kinds: None,
            values: None,
            schema,
        };
        let Some(object) = schema.as_object() else {
            if *schema != Value::Bool(false) {
                self.alternatives.push(open);
            }
            return;
        };
        if depth > MAX_WALK_DEPTH {
            self.alternatives.push(open);
            return;
        }
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            match resolve(root, reference) {
                Some(target) => {
                    self.walk(root, target, Some(definition_name(reference)), depth + 1)
                }
                None => self.alternatives.push(Alternative {
                    name: Some(reference),
                    ..open
                }),
            }
            return;
        }
        let own = own_kinds(object.get("type"));
        for combinator in ["anyOf", "oneOf"] {
            if let Some(options) = object.get(combinator).and_then(Value::as_array) {
                let start = self.alternatives.len();
                for option in options {
                    self.walk(root, option, name, depth + 1);
                }
                if let Some(own) = &own {
                    for alt in &mut self.alternatives[start..] {
                        let kinds = alt.kinds.get_or_insert_with(|| own.clone());
                        kinds.retain(|k| own.iter().any(|o| o.takes(*k) || k.takes(*o)));
                    }
                }
                return;
            }
        }
        if let Some([only]) = object
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            self.walk(root, only, name, depth + 1);
            return;
        }
        let values: Option<Vec<&Value>> = match (object.get("enum"), object.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.iter().collect()),
            (_, Some(value)) => Some(vec![value]),
            _ => None,
        };
        let kinds = own.or_else(|| {
            values.as_ref().map(|values| {
                let mut kinds: Vec<Kind> = Vec::new();
                for kind in values.iter().map(|v| Kind::of(v)) {
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
                kinds
            })
        });
        self.alternatives.push(Alternative {
            kinds,
            values,
            ..open
        });
    }

    /// The type as the argument table shows it: alternatives joined by ` | `, `enum: a, b`,
    /// `array of string`, a definition's name before what it is (`Color (enum: red, green)`).
    pub fn label(&self, root: &'s Value) -> String {
        self.label_at(root, 0)
    }

    fn label_at(&self, root: &'s Value, depth: usize) -> String {
        let mut labels: Vec<String> = Vec::new();
        let mut values: Vec<&Value> = Vec::new();
        for alt in &self.alternatives {
            // Unnamed enums and consts side by side (a oneOf of consts) read as one enum.
            if let (None, Some(these)) = (alt.name, &alt.values) {
                values.extend(these.iter().copied());
                continue;
            }
            let label = alt.own_label(root, depth);
            let label = match alt.name {
                Some(name) => format!("{name} ({label})"),
                None => label,
            };
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        if !values.is_empty() {
            labels.insert(0, enum_label(&values));
        }
        if labels.is_empty() {
            return "nothing".to_owned();
        }
        labels.join(" | ")
    }
}

impl<'s> Alternative<'s> {
    fn own_label(&self, root: &'s Value, depth: usize) -> String {
        if let Some(values) = &self.values {
            return enum_label(values);
        }
        let Some(kinds) = &self.kinds else {
            return "any".to_owned();
        };
        let names: Vec<String> = kinds
            .iter()
            .map(|kind| match (kind, self.schema.get("items")) {
                (Kind::Array, Some(items)) if depth < MAX_WALK_DEPTH => {
                    let inner = Shape::at_depth(root, Some(items), depth + 1);
                    let label = inner.label_at(root, depth + 1);
                    if inner.alternatives.len() > 1 {
                        format!("array of ({label})")
                    } else {
                        format!("array of {label}")
                    }
                }
                _ => kind.name().to_owned(),
            })
            .collect();
        names.join(" | ")
    }
}

/// `enum: a, b, "two words"`: bare strings where they read unambiguously, JSON otherwise.
fn enum_label(values: &[&Value]) -> String {
    let mut shown: Vec<String> = values
        .iter()
        .take(MAX_SHOWN_VALUES)
        .map(|value| match value {
            Value::String(s)
                if !s.is_empty()
                    && !s.contains([' ', ',', '|'])
                    && serde_json::from_str::<Value>(s).is_err() =>
            {
                s.clone()
            }
            other => other.to_string(),
        })
        .collect();
    if values.len() > MAX_SHOWN_VALUES {
        shown.push(format!("… ({} more)", values.len() - MAX_SHOWN_VALUES));
    }
    format!("enum: {}", shown.join(", "))
}

fn own_kinds(types: Option<&Value>) -> Option<Vec<Kind>> {
    match types? {
        Value::String(name) => Some(Kind::from_name(name).into_iter().collect()),
        Value::Array(names) => Some(
            names
                .iter()
                .filter_map(Value::as_str)
                .filter_map(Kind::from_name)
                .collect(),
        ),
        _ => None,
    }
}

/// The schema a local reference (`#`, `#/$defs/Name`, any `#/json/pointer`) points to in
/// `root`; other references (remote, anchors) are not followed.
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        return None;
    }
    root.pointer(&percent_decode(pointer)?)
}

/// A URI fragment's `%XX` escapes decoded (JSON pointers in `$ref`s are URI fragments).
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The last segment of a reference: `Color` for `#/$defs/Color`, `#` for the root.
fn definition_name(reference: &str) -> &str {
    match reference.rsplit_once('/') {
        Some((_, last)) if !last.is_empty() => last,
        _ => reference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn label(root: &Value, property: &str) -> String {
        let schema = &root["properties"][property];
        Shape::of(root, Some(schema)).label(root)
    }

    #[test]
    fn labels_read_through_refs_and_alternatives() {
        let root = json!({
            "properties": {
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
                "color": {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}]},
                "mode": {"enum": ["fast", "slow", "two words"]},
                "pick": {"oneOf": [{"const": "a", "title": "A"}, {"const": "b"}]},
                "point": {"$ref": "#/definitions/Point"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mixed": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                "either": {"type": ["string", "integer"]},
                "free": {},
                "nested": {"allOf": [{"$ref": "#/$defs/Color"}]},
                "remote": {"$ref": "https://example.com/x.json"},
                "loop": {"$ref": "#/$defs/Loop"}
            },
            "$defs": {
                "Color": {"type": "string", "enum": ["red", "green"]},
                "Loop": {"$ref": "#/$defs/Loop"}
            },
            "definitions": {"Point": {"type": "object"}}
        });
        let cases = [
            ("limit", "integer | null"),
            ("color", "Color (enum: red, green) | null"),
            ("mode", r#"enum: fast, slow, "two words""#),
            ("pick", "enum: a, b"),
            ("point", "Point (object)"),
            ("tags", "array of string"),
            ("mixed", "array of (string | integer)"),
            ("either", "string | integer"),
            ("free", "any"),
            ("nested", "Color (enum: red, green)"),
            ("remote", "https://example.com/x.json (any)"),
            ("loop", "Loop (any)"),
        ];
        for (property, want) in cases {
            assert_eq!(label(&root, property), want, "{property}");
        }
    }

    #[test]
    fn long_enums_are_counted() {
        let values: Vec<Value> = (0..12).map(|i| json!(format!("v{i}"))).collect();
        let root = json!({"properties": {"e": {"enum": values}}});
        assert_eq!(
            label(&root, "e"),
            "enum: v0, v1, v2, v3, v4, v5, v6, v7, … (4 more)"
        );
    }

    #[test]
    fn kinds_named_and_open() {
        let root = json!({"properties": {"n": {"type": "number"}, "any": {"anyOf": [{"type": "integer"}, {}]}}});
        let n = Shape::of(&root, Some(&root["properties"]["n"]));
        assert!(n.names(Kind::Integer) && n.names(Kind::Number) && !n.names(Kind::String));
        assert!(!n.is_open());
        let any = Shape::of(&root, Some(&root["properties"]["any"]));
        assert!(any.names(Kind::Integer) && any.is_open());
        assert!(Shape::of(&root, None).is_open());
        assert_eq!(Kind::of(&json!(2)), Kind::Integer);
        assert_eq!(Kind::of(&json!(2.5)), Kind::Number);
    }
}
