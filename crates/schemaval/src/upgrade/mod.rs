//! Presenting a schema of an older dialect as the equivalent 2020-12 document.
//!
//! Some clients and model APIs accept only 2020-12. The upgrade rewrites what changed between
//! the dialects and nothing else: `definitions` → `$defs`, array `items` → `prefixItems` (and
//! `additionalItems` → `items`), `dependencies` → `dependentRequired`/`dependentSchemas`,
//! draft-04's boolean exclusive bounds → numeric ones, `id` → `$id` (a plain-name fragment →
//! `$anchor`), `$recursiveRef`/`$recursiveAnchor` → `$dynamicRef`/`$dynamicAnchor`, and
//! `$schema`. Every JSON-pointer reference into the document is rewritten to follow the renamed
//! keywords. What the original dialect ignores (siblings of `$ref` in drafts 4 to 7, keywords it
//! does not know that 2020-12 would apply) is left out.
//!
//! Invariant: under this crate's policy, the upgraded document accepts exactly the instances the
//! original accepts under its own dialect, with one documented exception: draft-04 does not count
//! `1.0` as an integer, 2020-12 does (the upgraded schema is wider, never narrower). The suite test
//! `tests/upgrade.rs` checks this over the official test suite. Whatever cannot be carried over
//! exactly is a [`NotUpgradable`], never a guess.

use std::collections::{BTreeSet, HashMap};

mod index;

use referencing::Uri;
use serde_json::{Map, Value};

use crate::{Dialect, NotUpgradable};

/// The schema as an equivalent 2020-12 document. A document that already is 2020-12 (declared, or
/// `default` with no `$schema`) comes back unchanged.
///
/// # Errors
/// [`NotUpgradable`] with the first construct that has no exact 2020-12 form.
pub fn upgrade(schema: &Value, default: Dialect) -> Result<Value, NotUpgradable> {
    let from = match Dialect::of(schema, default) {
        Ok(d) => d,
        Err(_) => {
            let uri = match schema.get("$schema") {
                Some(Value::String(s)) => s.clone(),
                other => other.map(Value::to_string).unwrap_or_default(),
            };
            return Err(NotUpgradable::UnsupportedDialect { uri });
        }
    };
    if from == Dialect::Draft202012 {
        return Ok(schema.clone());
    }
    let mut up = Upgrade {
        from,
        marks: BTreeSet::new(),
        refs: HashMap::new(),
        dynamic: BTreeSet::new(),
        anchors: BTreeSet::new(),
        anchor_name: String::new(),
    };
    up.index(schema)?;
    up.anchor_name = up.free_anchor_name();
    let mut out = up.schema(schema, &mut Vec::new())?;
    if let Value::Object(map) = &mut out {
        let mut with_schema = Map::new();
        with_schema.insert(
            "$schema".to_owned(),
            Value::String(Dialect::Draft202012.uri().to_owned()),
        );
        for (k, v) in std::mem::take(map) {
            if k != "$schema" {
                with_schema.insert(k, v);
            }
        }
        *map = with_schema;
    }
    Ok(out)
}

/// A path of object keys and array indices into the original document.
type Path = Vec<String>;

/// What a value at some place in a schema is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A schema.
    Schema,
    /// An object whose every value is a schema.
    Map,
    /// An array of schemas.
    Array,
    /// `dependencies`: each value a schema or a list of names.
    Deps,
    /// Anything else: copied as it is.
    Plain,
}

struct Upgrade {
    from: Dialect,
    /// Places that are not schema positions but are targets of references, so are schemas.
    marks: BTreeSet<Path>,
    /// The rewritten `$ref` of the object at each path where it changes.
    refs: HashMap<Path, String>,
    /// `$recursiveRef`s whose resource has `$recursiveAnchor: true`: they become `$dynamicRef`.
    dynamic: BTreeSet<Path>,
    /// Every anchor name in the document, so the one for `$recursiveAnchor` is new.
    anchors: BTreeSet<String>,
    anchor_name: String,
}

/// One `$ref` found while indexing.
struct RefSite {
    path: Path,
    base: Uri<String>,
    value: String,
}

/// What one indexing pass found.
#[derive(Default)]
struct Index {
    /// Absolute URI (no fragment) of each resource → its path.
    resources: HashMap<String, Path>,
    sites: Vec<RefSite>,
}

fn legacy(d: Dialect) -> bool {
    matches!(d, Dialect::Draft4 | Dialect::Draft6 | Dialect::Draft7)
}

/// Keywords 2020-12 applies that `from` does not know: left out of the upgraded document. Each
/// list holds what the next dialect added; a dialect does not know its own list and every later one.
fn unknown_in(from: Dialect, key: &str) -> bool {
    const ADDED_IN: [(Dialect, &[&str]); 4] = [
        (
            Dialect::Draft202012,
            &["prefixItems", "$dynamicRef", "$dynamicAnchor"],
        ),
        (
            Dialect::Draft201909,
            &[
                "$anchor",
                "dependentRequired",
                "dependentSchemas",
                "unevaluatedItems",
                "unevaluatedProperties",
                "maxContains",
                "minContains",
                "contentSchema",
                "$vocabulary",
            ],
        ),
        (Dialect::Draft7, &["if", "then", "else"]),
        (
            Dialect::Draft6,
            &["$id", "const", "contains", "propertyNames"],
        ),
    ];
    ADDED_IN
        .iter()
        .take_while(|(added, _)| age(from) < age(*added))
        .any(|(_, keys)| keys.contains(&key))
}

/// A dialect's place in [`Dialect::ALL`], oldest first.
fn age(d: Dialect) -> usize {
    Dialect::ALL
        .iter()
        .position(|x| *x == d)
        .unwrap_or(Dialect::ALL.len())
}

/// What drafts 4 to 7 still read beside `$ref`: the definitions (reachable by pointer) and
/// annotations.
const KEPT_BESIDE_REF: &[&str] = &[
    "$ref",
    "definitions",
    "$defs",
    "title",
    "description",
    "$comment",
    "default",
    "examples",
];

/// The `$anchor` grammar of 2020-12.
fn is_anchor(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
}

fn pointer(path: &[String]) -> String {
    let mut out = String::from("#");
    for seg in path {
        out.push('/');
        out.push_str(&seg.replace('~', "~0").replace('/', "~1"));
    }
    out
}

fn child(path: &[String], seg: &str) -> Path {
    let mut p = path.to_vec();
    p.push(seg.to_owned());
    p
}

fn root_uri() -> Uri<String> {
    // The root every relative identifier resolves against, as in the validator.
    referencing::uri::from_str("").unwrap_or_else(|_| unreachable_root())
}

#[allow(clippy::panic)] // a fixed, valid URI: parsing it cannot fail
fn unreachable_root() -> Uri<String> {
    panic!("json-schema:/// is a valid URI")
}

impl Upgrade {
    /// The keyword holding the identifier in the original dialect.
    fn id_keyword(&self) -> &'static str {
        if self.from == Dialect::Draft4 {
            "id"
        } else {
            "$id"
        }
    }

    /// Whether `key` of `obj` is left out of the upgraded document.
    fn dropped(&self, obj: &Map<String, Value>, key: &str) -> bool {
        if legacy(self.from) && obj.contains_key("$ref") && !KEPT_BESIDE_REF.contains(&key) {
            return true;
        }
        if key == "additionalItems" && !obj.get("items").is_some_and(Value::is_array) {
            return true;
        }
        unknown_in(self.from, key)
    }

    /// The shape of the value at `key` of a schema object, in the original dialect.
    fn shape(&self, key: &str, value: &Value) -> Shape {
        match key {
            "items" if value.is_array() => Shape::Array,
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contentSchema" => Shape::Schema,
            "properties" | "patternProperties" | "definitions" | "$defs" | "dependentSchemas" => {
                Shape::Map
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => Shape::Array,
            "dependencies" => Shape::Deps,
            _ => Shape::Plain,
        }
    }

    /// The upgraded form of the schema at `path`.
    fn schema(&mut self, node: &Value, path: &mut Path) -> Result<Value, NotUpgradable> {
        let Value::Object(obj) = node else {
            return Ok(node.clone());
        };
        let mut out = Map::new();
        for (k, v) in obj {
            if self.dropped(obj, k) {
                continue;
            }
            path.push(k.clone());
            let result = self.keyword(obj, k, v, path, &mut out);
            path.pop();
            result?;
        }
        Ok(Value::Object(out))
    }

    /// Writes the upgraded form of keyword `k` (value `v`, at `path`) of `obj` into `out`.
    fn keyword(
        &mut self,
        obj: &Map<String, Value>,
        k: &str,
        v: &Value,
        path: &mut Path,
        out: &mut Map<String, Value>,
    ) -> Result<(), NotUpgradable> {
        let location = |p: &Path| pointer(p);
        match k {
            "$schema" => {
                if path.len() > 1 {
                    let uri = v.as_str().unwrap_or_default();
                    if Dialect::from_uri(uri) != Some(self.from) {
                        return Err(NotUpgradable::NestedDialect {
                            location: location(path),
                            uri: uri.to_owned(),
                        });
                    }
                }
            }
            "definitions" | "$defs" if legacy(self.from) => {
                if out.contains_key("$defs") {
                    return Ok(()); // merged when the first of the two was written
                }
                let mut defs = Map::new();
                for name in ["definitions", "$defs"] {
                    let Some(Value::Object(entries)) = obj.get(name) else {
                        continue;
                    };
                    for (entry, schema) in entries {
                        let mut at = child(&path[..path.len() - 1], name);
                        at.push(entry.clone());
                        if defs.contains_key(entry) {
                            return Err(NotUpgradable::Conflict {
                                location: location(&at),
                                keyword: "$defs".to_owned(),
                            });
                        }
                        let upgraded = self.schema(schema, &mut at)?;
                        defs.insert(entry.clone(), upgraded);
                    }
                }
                out.insert("$defs".to_owned(), Value::Object(defs));
            }
            "items" if v.is_array() => {
                out.insert("prefixItems".to_owned(), self.value(v, path, Shape::Array)?);
                if let Some(rest) = obj.get("additionalItems") {
                    let mut at = child(&path[..path.len() - 1], "additionalItems");
                    out.insert("items".to_owned(), self.schema(rest, &mut at)?);
                }
            }
            "additionalItems" => {} // written with the array `items`
            "dependencies" => self.dependencies(obj, v, path, out)?,
            "maximum" | "minimum" if self.from == Dialect::Draft4 => {
                let exclusive = if k == "maximum" {
                    "exclusiveMaximum"
                } else {
                    "exclusiveMinimum"
                };
                let name = if obj.get(exclusive) == Some(&Value::Bool(true)) {
                    exclusive
                } else {
                    k
                };
                out.insert(name.to_owned(), v.clone());
            }
            "exclusiveMaximum" | "exclusiveMinimum" if self.from == Dialect::Draft4 => {
                if !v.is_boolean() {
                    out.insert(k.to_owned(), v.clone());
                }
            }
            "id" if self.from == Dialect::Draft4 => self.identifier(v, path, out)?,
            "$id" if self.from != Dialect::Draft4 => self.identifier(v, path, out)?,
            "$anchor" => {
                let name = v.as_str().unwrap_or_default();
                if !is_anchor(name) {
                    return Err(NotUpgradable::Identifier {
                        location: location(path),
                        id: name.to_owned(),
                    });
                }
                out.insert(k.to_owned(), v.clone());
            }
            "$ref" => {
                let parent = &path[..path.len() - 1];
                let value = match self.refs.get(parent) {
                    Some(r) => Value::String(r.clone()),
                    None => v.clone(),
                };
                if out.insert("$ref".to_owned(), value).is_some() {
                    return Err(NotUpgradable::Conflict {
                        location: location(path),
                        keyword: "$ref".to_owned(),
                    });
                }
            }
            "$recursiveRef" if self.from == Dialect::Draft201909 => {
                if v.as_str() != Some("#") {
                    return Err(NotUpgradable::Undefined {
                        location: location(path),
                        keyword: k.to_owned(),
                    });
                }
                let parent = path[..path.len() - 1].to_vec();
                let (name, value) = if self.dynamic.contains(&parent) {
                    ("$dynamicRef", format!("#{}", self.anchor_name))
                } else {
                    ("$ref", "#".to_owned())
                };
                if obj.contains_key(name) || out.contains_key(name) {
                    return Err(NotUpgradable::Conflict {
                        location: location(path),
                        keyword: name.to_owned(),
                    });
                }
                out.insert(name.to_owned(), Value::String(value));
            }
            "$recursiveAnchor" if self.from == Dialect::Draft201909 => {
                if v == &Value::Bool(true) {
                    let at_root = path.len() == 1 || obj.contains_key("$id");
                    if !at_root {
                        return Err(NotUpgradable::Undefined {
                            location: location(path),
                            keyword: k.to_owned(),
                        });
                    }
                    out.insert(
                        "$dynamicAnchor".to_owned(),
                        Value::String(self.anchor_name.clone()),
                    );
                }
            }
            _ => {
                let upgraded = self.value(v, path, self.shape(k, v))?;
                out.insert(k.to_owned(), upgraded);
            }
        }
        Ok(())
    }

    fn dependencies(
        &mut self,
        obj: &Map<String, Value>,
        v: &Value,
        path: &mut Path,
        out: &mut Map<String, Value>,
    ) -> Result<(), NotUpgradable> {
        let Value::Object(deps) = v else {
            return Err(NotUpgradable::Undefined {
                location: pointer(path),
                keyword: "dependencies".to_owned(),
            });
        };
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (name, dep) in deps {
            path.push(name.clone());
            match dep {
                Value::Array(_) => {
                    required.insert(name.clone(), dep.clone());
                }
                Value::Object(_) | Value::Bool(_) => {
                    let upgraded = self.schema(dep, path)?;
                    schemas.insert(name.clone(), upgraded);
                }
                _ => {
                    return Err(NotUpgradable::Undefined {
                        location: pointer(path),
                        keyword: "dependencies".to_owned(),
                    })
                }
            }
            path.pop();
        }
        for (keyword, entries) in [
            ("dependentRequired", required),
            ("dependentSchemas", schemas),
        ] {
            if entries.is_empty() {
                continue;
            }
            if obj.contains_key(keyword) && !self.dropped(obj, keyword) {
                return Err(NotUpgradable::Conflict {
                    location: pointer(path),
                    keyword: keyword.to_owned(),
                });
            }
            out.insert(keyword.to_owned(), Value::Object(entries));
        }
        Ok(())
    }

    /// `id`/`$id`: the URI part stays `$id`, a plain-name fragment becomes `$anchor`.
    fn identifier(
        &mut self,
        v: &Value,
        path: &Path,
        out: &mut Map<String, Value>,
    ) -> Result<(), NotUpgradable> {
        let Value::String(id) = v else {
            out.insert("$id".to_owned(), v.clone());
            return Ok(());
        };
        let (uri_part, fragment) = id.split_once('#').unwrap_or((id.as_str(), ""));
        if !fragment.is_empty() && !is_anchor(fragment) {
            return Err(NotUpgradable::Identifier {
                location: pointer(path),
                id: id.clone(),
            });
        }
        if !uri_part.is_empty() {
            out.insert("$id".to_owned(), Value::String(uri_part.to_owned()));
        }
        if !fragment.is_empty() {
            out.insert("$anchor".to_owned(), Value::String(fragment.to_owned()));
        }
        Ok(())
    }

    /// The upgraded form of a value of the given shape.
    fn value(&mut self, v: &Value, path: &mut Path, shape: Shape) -> Result<Value, NotUpgradable> {
        if shape == Shape::Schema || self.marks.contains(path.as_slice()) {
            return self.schema(v, path);
        }
        let inner = match shape {
            Shape::Map | Shape::Array => Shape::Schema,
            _ => Shape::Plain,
        };
        if inner == Shape::Plain && !self.marks.iter().any(|m| m.starts_with(path)) {
            return Ok(v.clone());
        }
        match v {
            Value::Object(obj) => {
                let mut out = Map::new();
                for (k, item) in obj {
                    path.push(k.clone());
                    let upgraded = self.value(item, path, inner);
                    path.pop();
                    out.insert(k.clone(), upgraded?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    let upgraded = self.value(item, path, inner);
                    path.pop();
                    out.push(upgraded?);
                }
                Ok(Value::Array(out))
            }
            _ => Ok(v.clone()),
        }
    }
}
