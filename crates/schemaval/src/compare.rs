//! How a changed input schema differs from the one before, for tool pinning: does it accept more
//! calls, fewer (a call valid before may now be refused), or both.
//!
//! The comparison is by keyword, and sound rather than complete: `required`, `properties` with
//! `additionalProperties`, `type`, `enum`, `const`, numeric and size bounds, and `items` are read
//! for their direction; any other difference (a `pattern`, an `anyOf`, a `$ref`, …) cannot be
//! told apart and counts as both. So a change reported as only wider or only narrower is that,
//! and an unclear one is never reported as harmless.

use serde_json::{Map, Value};

use crate::MAX_COMPARE_DEPTH;

/// How a schema changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaChange {
    /// The same document.
    Same,
    /// Every instance valid before is valid now, and some more are.
    AcceptsMore,
    /// Every instance valid now was valid before: a call valid before may now be refused.
    AcceptsLess,
    /// Some of each, or a difference whose direction cannot be told.
    Both,
}

/// How `new` differs from `old`, both schema documents.
pub fn compare(old: &Value, new: &Value) -> SchemaChange {
    if old == new {
        return SchemaChange::Same;
    }
    let mut way = Way::default();
    subschema(old, new, 0, &mut way);
    match (way.more, way.less) {
        (true, false) => SchemaChange::AcceptsMore,
        (false, true) => SchemaChange::AcceptsLess,
        // Differently written, same meaning as far as read (key order is not a difference).
        (false, false) => SchemaChange::Same,
        (true, true) => SchemaChange::Both,
    }
}

#[derive(Default)]
struct Way {
    more: bool,
    less: bool,
}

impl Way {
    fn both(&mut self) {
        self.more = true;
        self.less = true;
    }
}

/// Keywords whose direction is read; a difference in any other is [`SchemaChange::Both`].
const READ: [&str; 16] = [
    "required",
    "properties",
    "additionalProperties",
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "items",
    // Annotations: never a change in what is accepted.
    "description",
    "title",
    "default",
];

fn subschema(old: &Value, new: &Value, depth: usize, way: &mut Way) {
    if old == new {
        return;
    }
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        // `true`/`false` schemas or malformed ones.
        match (old, new) {
            (Value::Bool(false), _) | (_, Value::Bool(true)) => way.more = true,
            (Value::Bool(true), _) | (_, Value::Bool(false)) => way.less = true,
            _ => way.both(),
        }
        return;
    };
    if depth >= MAX_COMPARE_DEPTH {
        way.both();
        return;
    }
    let unread = |m: &Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| !READ.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Map<String, Value>>()
    };
    if unread(old) != unread(new) {
        way.both();
    }
    required(old, new, way);
    properties(old, new, depth, way);
    types(old.get("type"), new.get("type"), way);
    values(old, new, way);
    for (low, high) in [
        ("minimum", "maximum"),
        ("minLength", "maxLength"),
        ("minItems", "maxItems"),
    ] {
        bound(old.get(low), new.get(low), true, way);
        bound(old.get(high), new.get(high), false, way);
    }
    match (old.get("items"), new.get("items")) {
        (None, None) => {}
        (Some(o), Some(n)) => subschema(o, n, depth + 1, way),
        (Some(o), None) => subschema(o, &Value::Bool(true), depth + 1, way),
        (None, Some(n)) => subschema(&Value::Bool(true), n, depth + 1, way),
    }
}

fn names(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn required(old: &Map<String, Value>, new: &Map<String, Value>, way: &mut Way) {
    let (before, now) = (names(old), names(new));
    if now.iter().any(|n| !before.contains(n)) {
        way.less = true;
    }
    if before.iter().any(|n| !now.contains(n)) {
        way.more = true;
    }
}

/// Each property's schema in `schema`, `additionalProperties` standing for one not listed.
fn property<'s>(schema: &'s Map<String, Value>, name: &str) -> &'s Value {
    const ANY: Value = Value::Bool(true);
    let listed = schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.get(name));
    listed
        .or_else(|| schema.get("additionalProperties"))
        .unwrap_or(&ANY)
}

fn properties(old: &Map<String, Value>, new: &Map<String, Value>, depth: usize, way: &mut Way) {
    let keys = |m: &Map<String, Value>| -> Vec<String> {
        m.get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut all = keys(old);
    all.extend(keys(new).into_iter().filter(|k| !keys(old).contains(k)));
    for name in &all {
        subschema(property(old, name), property(new, name), depth + 1, way);
    }
    // Properties neither lists: what `additionalProperties` says about them.
    let extra = |m: &Map<String, Value>| m.get("additionalProperties").cloned();
    match (extra(old), extra(new)) {
        (None, None) => {}
        (o, n) => subschema(
            &o.unwrap_or(Value::Bool(true)),
            &n.unwrap_or(Value::Bool(true)),
            depth + 1,
            way,
        ),
    }
}

/// The types a `type` keyword admits (`None`: every type); `number` includes `integer`.
fn type_set(value: Option<&Value>) -> Option<Vec<&str>> {
    let mut set: Vec<&str> = match value? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    if set.contains(&"number") && !set.contains(&"integer") {
        set.push("integer");
    }
    Some(set)
}

fn types(old: Option<&Value>, new: Option<&Value>, way: &mut Way) {
    sets(type_set(old), type_set(new), way);
}

/// Two sets of what is allowed (`None`: no restriction): one gaining members accepts more, one
/// losing members accepts less.
fn sets<T: PartialEq>(before: Option<Vec<T>>, now: Option<Vec<T>>, way: &mut Way) {
    match (before, now) {
        (None, None) => {}
        (None, Some(_)) => way.less = true,
        (Some(_), None) => way.more = true,
        (Some(before), Some(now)) => {
            if now.iter().any(|t| !before.contains(t)) {
                way.more = true;
            }
            if before.iter().any(|t| !now.contains(t)) {
                way.less = true;
            }
        }
    }
}

/// `enum` and `const` as one list of allowed values (`None`: no such restriction).
fn allowed(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(values)), None) => Some(values.iter().collect()),
        (None, Some(value)) => Some(vec![value]),
        (None, None) => None,
        // Both, or a malformed enum: read as its own thing.
        (Some(e), Some(c)) => Some(vec![e, c]),
        (Some(e), None) => Some(vec![e]),
    }
}

fn values(old: &Map<String, Value>, new: &Map<String, Value>, way: &mut Way) {
    sets(allowed(old), allowed(new), way);
}

/// A lower (`low`) or upper bound: raised lower or lowered upper bounds accept less.
fn bound(old: Option<&Value>, new: Option<&Value>, low: bool, way: &mut Way) {
    let number = |v: Option<&Value>| v.map(|v| v.as_f64());
    match (number(old), number(new)) {
        (None, None) => {}
        (None, Some(_)) => way.less = true,
        (Some(_), None) => way.more = true,
        (Some(Some(before)), Some(Some(now))) => {
            if before == now {
                return;
            }
            let tighter = if low { now > before } else { now < before };
            if tighter {
                way.less = true;
            } else {
                way.more = true;
            }
        }
        _ => way.both(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{compare, SchemaChange as C};

    #[test]
    fn directions_are_read_per_keyword() {
        let base = json!({"type": "object", "properties": {"a": {"type": "integer", "maximum": 10}},
            "required": ["a"], "additionalProperties": false});
        let with = |patch: serde_json::Value| {
            let mut s = base.clone();
            for (k, v) in patch.as_object().unwrap() {
                s[k] = v.clone();
            }
            s
        };
        assert_eq!(compare(&base, &base), C::Same);
        assert_eq!(
            compare(&base, &with(json!({"description": "now documented"}))),
            C::Same
        );
        assert_eq!(
            compare(&base, &with(json!({"required": []}))),
            C::AcceptsMore
        );
        assert_eq!(
            compare(&with(json!({"required": []})), &base),
            C::AcceptsLess
        );
        let b = json!({"a": {"type": "integer", "maximum": 10}, "b": {"type": "string"}});
        assert_eq!(
            compare(&base, &with(json!({"properties": b}))),
            C::AcceptsMore
        );
        let bounded = json!({"a": {"type": "integer", "maximum": 5}});
        assert_eq!(
            compare(&base, &with(json!({"properties": bounded}))),
            C::AcceptsLess
        );
        let number = json!({"a": {"type": "number", "maximum": 10}});
        assert_eq!(
            compare(&base, &with(json!({"properties": number}))),
            C::AcceptsMore
        );
        let both = json!({"a": {"type": "number", "maximum": 5}});
        assert_eq!(compare(&base, &with(json!({"properties": both}))), C::Both);
        assert_eq!(
            compare(&base, &with(json!({"additionalProperties": true}))),
            C::AcceptsMore
        );
        // A keyword whose direction is not read.
        let pattern = json!({"a": {"type": "integer", "maximum": 10, "pattern": "x"}});
        assert_eq!(
            compare(&base, &with(json!({"properties": pattern}))),
            C::Both
        );
    }

    #[test]
    fn enums_and_items() {
        let old = json!({"type": "array", "items": {"enum": ["a", "b"]}});
        let fewer = json!({"type": "array", "items": {"enum": ["a"]}});
        let more = json!({"type": "array", "items": {"enum": ["a", "b", "c"]}});
        assert_eq!(compare(&old, &fewer), C::AcceptsLess);
        assert_eq!(compare(&old, &more), C::AcceptsMore);
        assert_eq!(compare(&old, &json!({"type": "array"})), C::AcceptsMore);
    }
}
