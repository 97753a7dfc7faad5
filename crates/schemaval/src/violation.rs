//! One flat line per problem: `$.count: got string, want integer`.
//!
//! Lines are short and exact: numbers print as written (never through `f64`), strings are quoted
//! and cut at [`crate::MAX_QUOTED_CHARS`], and arrays and objects are named by size, so no line ever
//! embeds a whole instance. The wording of every kind is pinned in `tests/messages.rs`.

use std::fmt;
use std::sync::{Arc, OnceLock};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::render::{cut, is_integral, plural, quote_key, render};
use crate::{hint, path};
use crate::{MAX_LISTED_ALTERNATIVES, MAX_LISTED_OPTIONS, MAX_REGEX_BACKTRACKS};

/// One problem found in an instance.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The whole line, `PATH: MESSAGE`, built once.
    line: String,
    /// Where the path ends in `line`.
    path_len: usize,
    keyword: &'static str,
    /// What the hint is worked out from, and which of its error's lines this is.
    seed: Option<(Arc<hint::Seed>, usize)>,
    /// The hint, worked out on the first ask.
    hint: OnceLock<Option<String>>,
}

/// Two violations are the same line for the same keyword (the hint follows from them).
impl PartialEq for Violation {
    fn eq(&self, other: &Violation) -> bool {
        self.line == other.line && self.path_len == other.path_len && self.keyword == other.keyword
    }
}

impl Eq for Violation {}

impl Violation {
    /// Where the problem is, as a path into the instance: `$`, `$.a.b`, `$.items[3]`, `$['odd key']`.
    pub fn path(&self) -> &str {
        &self.line[..self.path_len]
    }

    /// The schema keyword that failed (`type`, `required`, `maximum`, …).
    pub fn keyword(&self) -> &'static str {
        self.keyword
    }

    /// What is wrong, without the path: `got string, want integer`.
    pub fn message(&self) -> &str {
        &self.line[self.path_len + SEPARATOR.len()..]
    }

    /// The whole line: `$.count: got string, want integer`.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// What would be right, where that is certain: `did you mean 3, without quotes?`,
    /// `did you mean 'color'?`, `add 'path' (string)`, `allowed: 1 <= value <= 100`.
    /// Never part of the line. Worked out on the first call (the lines alone cost nothing
    /// for it), then kept.
    pub fn hint(&self) -> Option<&str> {
        self.hint
            .get_or_init(|| self.seed.as_ref().and_then(|(seed, nth)| seed.hint(*nth)))
            .as_deref()
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

/// Between the path and the message in a line.
const SEPARATOR: &str = ": ";

/// Adds the violations one error of the underlying validator stands for (one per unexpected
/// property, otherwise one) to `out`, with paths taken against `root`, and what their hints
/// need of `schema` kept for when they are asked for. Each line is written once, path and message together.
pub(crate) fn push_violations(
    schema: &Arc<Value>,
    root: &Value,
    error: &jsonschema::ValidationError<'_>,
    out: &mut Vec<Violation>,
) {
    let mut prefix = path::from_pointer(root, error.instance_path().as_str());
    let path_len = prefix.len();
    prefix.push_str(SEPARATOR);
    let keyword = static_keyword(error.kind());
    let at = &prefix[..path_len];
    let seed = hint::seed(schema, error);
    let mut nth = 0;
    messages(
        error.kind(),
        error.instance(),
        root,
        at,
        &prefix,
        true,
        &mut |line| {
            out.push(Violation {
                line,
                path_len,
                keyword,
                seed: seed.clone().map(|seed| (seed, nth)),
                hint: OnceLock::new(),
            });
            nth += 1;
        },
    );
}

/// The messages alone (no path) for one error; `detail`: with each alternative's problem.
fn bare_messages(
    error: &jsonschema::ValidationError<'_>,
    root: &Value,
    at: &str,
    detail: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    messages(
        error.kind(),
        error.instance(),
        root,
        at,
        "",
        detail,
        &mut |m| {
            out.push(m);
        },
    );
    out
}

/// The messages of a metaschema violation (the instance is the schema itself), joined.
pub(crate) fn schema_messages(schema: &Value, error: &jsonschema::ValidationError<'_>) -> String {
    let at = path::from_pointer(schema, error.instance_path().as_str());
    bare_messages(error, schema, &at, true).join("; ")
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

/// Each message for `kind`, given to `emit` with `prefix` in front (the path and separator,
/// or nothing); `at` is the path of `instance`.
fn messages(
    kind: &ValidationErrorKind,
    instance: &Value,
    root: &Value,
    at: &str,
    prefix: &str,
    detail: bool,
    emit: &mut dyn FnMut(String),
) {
    use ValidationErrorKind as K;
    match kind {
        K::Type { kind } => {
            let (got, wanted) = (type_name(instance), wanted_types(kind));
            let wants_integer = wanted.split(" or ").any(|t| t == "integer");
            match instance {
                // Integral, yet refused as an integer: only draft-04 does that, for a number
                // written with a fraction or an exponent (`1.0`, `1e2`). Said so, or the line
                // would read "got integer, want integer".
                Value::Number(n) if got == "integer" && wants_integer => emit(format!(
                    "{prefix}got number {n}, want {wanted} (draft-04: {n} is not an integer; write it without a fraction or exponent)"
                )),
                _ => emit(format!("{prefix}got {got}, want {wanted}")),
            }
        }
        K::Required { property } => emit(format!("{prefix}missing property {}", quote_name(property))),
        K::AdditionalProperties { unexpected } => {
            for p in unexpected {
                emit(format!("{prefix}additional property {} not allowed", quote_key(p)));
            }
        }
        K::UnevaluatedProperties { unexpected } => {
            for p in unexpected {
                emit(format!("{prefix}unevaluated property {} not allowed", quote_key(p)));
            }
        }
        K::UnevaluatedItems { unexpected } => emit(format!(
            "{prefix}unevaluatedItems: {} unevaluated item{} not allowed",
            unexpected.len(),
            plural(unexpected.len())
        )),
        K::AdditionalItems { limit } => emit(format!(
            "{prefix}additionalItems: got {} items, want {limit}",
            len_of(instance)
        )),
        K::Maximum { limit } | K::Minimum { limit } => emit(format!(
            "{prefix}{}: got {}, want {}",
            kind.keyword(),
            render(instance),
            render(limit)
        )),
        K::ExclusiveMaximum { limit } => emit(format!(
            "{prefix}exclusiveMaximum: got {}, want less than {}",
            render(instance),
            render(limit)
        )),
        K::ExclusiveMinimum { limit } => emit(format!(
            "{prefix}exclusiveMinimum: got {}, want more than {}",
            render(instance),
            render(limit)
        )),
        K::MultipleOf { multiple_of } => emit(format!(
            "{prefix}multipleOf: got {}, want a multiple of {}",
            render(instance),
            render(multiple_of)
        )),
        K::MaxLength { limit } | K::MinLength { limit } => emit(format!(
            "{prefix}{}: got {} characters, want {limit}",
            kind.keyword(),
            instance.as_str().map_or(0, |s| s.chars().count())
        )),
        K::MaxItems { limit } | K::MinItems { limit } => emit(format!(
            "{prefix}{}: got {} items, want {limit}",
            kind.keyword(),
            len_of(instance)
        )),
        K::MaxProperties { limit } | K::MinProperties { limit } => emit(format!(
            "{prefix}{}: got {} properties, want {limit}",
            kind.keyword(),
            len_of(instance)
        )),
        K::Constant { expected_value } => emit(format!(
            "{prefix}const: got {}, want {}",
            render(instance),
            render(expected_value)
        )),
        K::Enum { options } => emit(format!(
            "{prefix}enum: got {}, want {}",
            render(instance),
            one_of(options)
        )),
        K::Pattern { pattern } => emit(format!(
            "{prefix}pattern: got {}, want a match for {}",
            render(instance),
            cut(pattern)
        )),
        K::BacktrackLimitExceeded { .. } => emit(format!(
            "{prefix}pattern: too costly to evaluate (over {MAX_REGEX_BACKTRACKS} backtracking steps)"
        )),
        K::RegexEngineFailure { message } => {
            emit(format!("{prefix}pattern: could not be evaluated: {message}"))
        }
        K::Format { format } => emit(format!(
            "{prefix}format: got {}, want {}",
            render(instance),
            cut(format)
        )),
        K::FalseSchema => emit(format!("{prefix}not allowed here (the schema is false)")),
        K::Not { .. } => emit(format!("{prefix}not: matches the schema it must not match")),
        K::Contains => emit(format!("{prefix}contains: no item matches")),
        K::UniqueItems => emit(format!("{prefix}uniqueItems: items are not unique")),
        K::PropertyNames { error } => {
            let inner = bare_messages(error, root, at, false);
            let name = quote_name(error.instance());
            emit(format!("{prefix}propertyNames: name {name}: {}", inner.join("; ")))
        }
        K::AnyOf { context } | K::OneOfNotValid { context } => {
            emit(format!(
                "{prefix}{}",
                alternatives(kind.keyword(), context, root, at, detail)
            ));
        }
        K::OneOfMultipleValid { .. } => emit(format!("{prefix}oneOf: matches more than one alternative")),
        K::ContentEncoding { content_encoding } => emit(format!(
            "{prefix}contentEncoding: not valid {}",
            cut(content_encoding)
        )),
        K::ContentMediaType { content_media_type } => emit(format!(
            "{prefix}contentMediaType: not valid {}",
            cut(content_media_type)
        )),
        K::FromUtf8 { .. } => emit(format!("{prefix}contentEncoding: decoded bytes are not UTF-8")),
        K::Custom { keyword, message } => emit(format!("{prefix}{keyword}: {message}")),
        K::Referencing(err) => emit(format!("{prefix}$ref: unresolved reference: {err}")),
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
        let text = bare_messages(first, root, &sub_path, false).join("; ");
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
