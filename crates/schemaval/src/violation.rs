//! One flat line per problem: `$.count: got string, want integer`.
//!
//! Lines are short and exact: numbers print as written (never through `f64`), strings are quoted
//! and cut at [`MAX_QUOTED_CHARS`], and arrays and objects are named by size, so no line ever
//! embeds a whole instance. The wording of every kind is pinned in `tests/messages.rs`.

use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::path;
use crate::{MAX_LISTED_ALTERNATIVES, MAX_LISTED_OPTIONS, MAX_QUOTED_CHARS, MAX_REGEX_BACKTRACKS};

/// One problem found in an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    path: String,
    keyword: &'static str,
    message: String,
}

impl Violation {
    /// Where the problem is, as a path into the instance: `$`, `$.a.b`, `$.items[3]`, `$['odd key']`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The schema keyword that failed (`type`, `required`, `maximum`, …).
    pub fn keyword(&self) -> &'static str {
        self.keyword
    }

    /// What is wrong, without the path: `got string, want integer`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The violations one error of the underlying validator stands for (one per unexpected property,
/// otherwise one), with paths taken against `root`.
pub(crate) fn from_error(root: &Value, error: &jsonschema::ValidationError<'_>) -> Vec<Violation> {
    let path = path::from_pointer(root, error.instance_path().as_str());
    let keyword = static_keyword(error.kind());
    let mut messages = messages(error.kind(), error.instance(), root, &path, true);
    let last = messages.pop();
    let mut out: Vec<Violation> = messages
        .into_iter()
        .map(|message| Violation {
            path: path.clone(),
            keyword,
            message,
        })
        .collect();
    out.extend(last.map(|message| Violation {
        path,
        keyword,
        message,
    }));
    out
}

/// The keyword that failed, for the kinds this policy can produce; `custom` for any other.
fn static_keyword(kind: &ValidationErrorKind) -> &'static str {
    const KNOWN: [&str; 34] = [
        "additionalItems",
        "additionalProperties",
        "anyOf",
        "pattern",
        "const",
        "contains",
        "contentEncoding",
        "contentMediaType",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "falseSchema",
        "format",
        "maxItems",
        "maximum",
        "maxLength",
        "maxProperties",
        "minItems",
        "minimum",
        "minLength",
        "minProperties",
        "multipleOf",
        "not",
        "oneOf",
        "propertyNames",
        "required",
        "type",
        "unevaluatedItems",
        "unevaluatedProperties",
        "uniqueItems",
        "$ref",
        "dependentRequired",
        "dependencies",
        "items",
    ];
    let name = kind.keyword();
    KNOWN
        .iter()
        .find(|k| **k == name)
        .copied()
        .unwrap_or("custom")
}

fn messages(
    kind: &ValidationErrorKind,
    instance: &Value,
    root: &Value,
    at: &str,
    detail: bool,
) -> Vec<String> {
    use ValidationErrorKind as K;
    let one = |m: String| vec![m];
    match kind {
        K::Type { kind } => one(format!(
            "got {}, want {}",
            type_name(instance),
            wanted_types(kind)
        )),
        K::Required { property } => one(format!("missing property {}", quote_name(property))),
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|p| format!("additional property {} not allowed", quote_key(p)))
            .collect(),
        K::UnevaluatedProperties { unexpected } => unexpected
            .iter()
            .map(|p| format!("unevaluated property {} not allowed", quote_key(p)))
            .collect(),
        K::UnevaluatedItems { unexpected } => one(format!(
            "unevaluatedItems: {} unevaluated item{} not allowed",
            unexpected.len(),
            plural(unexpected.len())
        )),
        K::AdditionalItems { limit } => one(format!(
            "additionalItems: got {} items, want {limit}",
            len_of(instance)
        )),
        K::Maximum { limit } | K::Minimum { limit } => one(format!(
            "{}: got {}, want {}",
            kind.keyword(),
            render(instance),
            render(limit)
        )),
        K::ExclusiveMaximum { limit } => one(format!(
            "exclusiveMaximum: got {}, want less than {}",
            render(instance),
            render(limit)
        )),
        K::ExclusiveMinimum { limit } => one(format!(
            "exclusiveMinimum: got {}, want more than {}",
            render(instance),
            render(limit)
        )),
        K::MultipleOf { multiple_of } => one(format!(
            "multipleOf: got {}, want a multiple of {}",
            render(instance),
            render(multiple_of)
        )),
        K::MaxLength { limit } | K::MinLength { limit } => one(format!(
            "{}: got {} characters, want {limit}",
            kind.keyword(),
            instance.as_str().map_or(0, |s| s.chars().count())
        )),
        K::MaxItems { limit } | K::MinItems { limit } => one(format!(
            "{}: got {} items, want {limit}",
            kind.keyword(),
            len_of(instance)
        )),
        K::MaxProperties { limit } | K::MinProperties { limit } => one(format!(
            "{}: got {} properties, want {limit}",
            kind.keyword(),
            len_of(instance)
        )),
        K::Constant { expected_value } => one(format!(
            "const: got {}, want {}",
            render(instance),
            render(expected_value)
        )),
        K::Enum { options } => one(format!(
            "enum: got {}, want {}",
            render(instance),
            one_of(options)
        )),
        K::Pattern { pattern } => one(format!(
            "pattern: got {}, want a match for {}",
            render(instance),
            cut(pattern)
        )),
        K::BacktrackLimitExceeded { .. } => one(format!(
            "pattern: too costly to evaluate (over {MAX_REGEX_BACKTRACKS} backtracking steps)"
        )),
        K::RegexEngineFailure { message } => {
            one(format!("pattern: could not be evaluated: {message}"))
        }
        K::Format { format } => one(format!(
            "format: got {}, want {}",
            render(instance),
            cut(format)
        )),
        K::FalseSchema => one("not allowed here (the schema is false)".to_owned()),
        K::Not { .. } => one("not: matches the schema it must not match".to_owned()),
        K::Contains => one("contains: no item matches".to_owned()),
        K::UniqueItems => one("uniqueItems: items are not unique".to_owned()),
        K::PropertyNames { error } => {
            let inner = messages(error.kind(), error.instance(), root, at, false);
            let name = quote_name(error.instance());
            one(format!("propertyNames: name {name}: {}", inner.join("; ")))
        }
        K::AnyOf { context } | K::OneOfNotValid { context } => {
            one(alternatives(kind.keyword(), context, root, at, detail))
        }
        K::OneOfMultipleValid { .. } => one("oneOf: matches more than one alternative".to_owned()),
        K::ContentEncoding { content_encoding } => one(format!(
            "contentEncoding: not valid {}",
            cut(content_encoding)
        )),
        K::ContentMediaType { content_media_type } => one(format!(
            "contentMediaType: not valid {}",
            cut(content_media_type)
        )),
        K::FromUtf8 { .. } => one("contentEncoding: decoded bytes are not UTF-8".to_owned()),
        K::Custom { keyword, message } => one(format!("{keyword}: {message}")),
        K::Referencing(err) => one(format!("$ref: unresolved reference: {err}")),
    }
}

/// `anyOf: matches none of 2 alternatives ([1] got integer, want string; [2] …)`.
fn alternatives(
    keyword: &str,
    context: &[Vec<jsonschema::ValidationError<'static>>],
    root: &Value,
    at: &str,
    detail: bool,
) -> String {
    let n = context.len();
    let mut line = format!("{keyword}: matches none of {n} alternative{}", plural(n));
    if !detail || n == 0 {
        return line;
    }
    let mut parts = Vec::new();
    for (i, errors) in context.iter().take(MAX_LISTED_ALTERNATIVES).enumerate() {
        let Some(first) = errors.first() else {
            continue;
        };
        let sub_path = path::from_pointer(root, first.instance_path().as_str());
        let text = messages(first.kind(), first.instance(), root, &sub_path, false).join("; ");
        if sub_path == at {
            parts.push(format!("[{}] {text}", i + 1));
        } else {
            parts.push(format!("[{}] {sub_path}: {text}", i + 1));
        }
    }
    if n > MAX_LISTED_ALTERNATIVES {
        parts.push(format!("… {} more", n - MAX_LISTED_ALTERNATIVES));
    }
    if !parts.is_empty() {
        line.push_str(" (");
        line.push_str(&parts.join("; "));
        line.push(')');
    }
    line
}

/// The JSON Schema type of a value; an integral number is an `integer`.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integral(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integral(n: &serde_json::Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let text = n.as_str();
    match text.split_once(['e', 'E']) {
        None => text
            .split_once('.')
            .is_none_or(|(_, frac)| frac.bytes().all(|b| b == b'0')),
        // Exponent forms: decided by value where f64 can say; 1e400 and the like count as numbers.
        Some(_) => n
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0),
    }
}

fn wanted_types(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.as_str().to_owned(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// A value as it appears in a line: scalars exactly, strings quoted and cut, containers by size.
pub(crate) fn render(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::String(s) => serde_json::to_string(&Value::String(cut(s))).unwrap_or_default(),
        Value::Array(items) => format!("an array of {} item{}", items.len(), plural(items.len())),
        Value::Object(map) => format!(
            "an object of {} propert{}",
            map.len(),
            if map.len() == 1 { "y" } else { "ies" }
        ),
    }
}

fn one_of(options: &Value) -> String {
    let Value::Array(options) = options else {
        return render(options);
    };
    let mut listed: Vec<String> = options
        .iter()
        .take(MAX_LISTED_OPTIONS)
        .map(render)
        .collect();
    if options.len() > MAX_LISTED_OPTIONS {
        listed.push(format!("… ({} more)", options.len() - MAX_LISTED_OPTIONS));
    }
    format!("one of {}", listed.join(", "))
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// A property name in single quotes, escaped and cut like a path key.
fn quote_key(name: &str) -> String {
    let mut out = String::new();
    path::push_key(&mut out, &cut(name));
    match out.strip_prefix("['").and_then(|s| s.strip_suffix("']")) {
        Some(inner) => format!("'{inner}'"),
        None => format!("'{}'", &out[1..]),
    }
}

fn quote_name(property: &Value) -> String {
    match property {
        Value::String(s) => quote_key(s),
        other => render(other),
    }
}

fn len_of(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        _ => 0,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn keywords_are_named() {
        let schema =
            crate::Schema::compile(&serde_json::json!({"required": ["a"], "maxLength": 1}))
                .unwrap();
        let Err(crate::ValidateError::Invalid(v)) = schema.validate(&serde_json::json!({})) else {
            panic!("want a violation");
        };
        assert_eq!(v[0].keyword(), "required");
        assert_eq!(v[0].path(), "$");
        assert_eq!(v[0].message(), "missing property 'a'");
    }
}
