//! What each LLM provider's tool-calling API rejects or ignores in a tool's name and input
//! schema, so that `mcpx lint --target` names the tools that would break a model call before it
//! is made.
//!
//! Each rule cites where it comes from, next to the rule: the provider's published
//! documentation where it says so, else a public report quoting the API's own error message
//! (marked "observed"). A rule's [`Effect`] says what the provider does: refuse the whole
//! request, refuse it only when the tool is declared `strict`, or accept the schema and not
//! enforce the keyword.
//!
//! The rules read the schema as written: no reference is followed (a `$ref` is checked where
//! its target is, under `$defs`), and the walk stops at [`MAX_DEPTH`].

#![deny(missing_docs)]

mod rules;

use std::fmt;

use serde_json::Value;

/// How deep the walk over a schema's subschemas goes; deeper ones are not checked.
pub const MAX_DEPTH: usize = 64;

/// A provider's tool-calling API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Target {
    /// Anthropic's Messages API (`tools[].input_schema`).
    Anthropic,
    /// OpenAI's Chat Completions and Responses APIs (`function.parameters`).
    Openai,
    /// Google's Gemini API (`functionDeclarations[].parameters`).
    Gemini,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 3] = [Target::Anthropic, Target::Openai, Target::Gemini];

    /// The target named `name` (`anthropic`, `openai`, `gemini`).
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Anthropic => "anthropic",
            Target::Openai => "openai",
            Target::Gemini => "gemini",
        }
    }
}

/// What the provider does with what a rule found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Effect {
    /// The request carrying the tool is refused.
    Rejected,
    /// The request is refused when the tool is declared `strict` (constrained decoding).
    RejectedIfStrict,
    /// Accepted, but the model is not held to it.
    Ignored,
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Effect::Rejected => "the API rejects the request",
            Effect::RejectedIfStrict => "the API rejects it with strict: true",
            Effect::Ignored => "the API ignores it",
        })
    }
}

/// One thing a provider would reject or ignore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The provider.
    pub target: Target,
    /// What it does about it.
    pub effect: Effect,
    /// The rule's name (`openai/array-items`, …).
    pub rule: &'static str,
    /// Where: `name`, or the schema location (`$.properties.paths`).
    pub at: String,
    /// What is wrong, in a few words.
    pub message: String,
    /// Where the rule comes from (a documentation page or a report of the API's error).
    pub source: &'static str,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {} ({})",
            self.target.name(),
            self.at,
            self.message,
            self.effect
        )
    }
}

/// What `target` would reject or ignore in a tool called `name` (as the model sees it) with
/// `input_schema`, in schema order.
pub fn check(target: Target, name: &str, input_schema: &Value) -> Vec<Finding> {
    let mut found = Vec::new();
    rules::name(target, name, &mut found);
    rules::root(target, input_schema, &mut found);
    walk(
        input_schema,
        &mut "$".to_owned(),
        None,
        0,
        &mut |schema, at, keyword| {
            rules::subschema(target, schema, at, keyword, &mut found);
        },
    );
    found
}

/// The keywords whose value is a map of subschemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The keywords whose value is a subschema.
const SCHEMA_VALUES: [&str; 11] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// The keywords whose value is an array of subschemas.
const SCHEMA_ARRAYS: [&str; 5] = ["items", "prefixItems", "anyOf", "oneOf", "allOf"];

/// Calls `visit` with every subschema of `schema` (itself first), its location and the keyword
/// it is under (none for the root), down to [`MAX_DEPTH`].
fn walk(
    schema: &Value,
    at: &mut String,
    keyword: Option<&str>,
    depth: usize,
    visit: &mut impl FnMut(&Value, &str, Option<&str>),
) {
    if depth > MAX_DEPTH {
        return;
    }
    visit(schema, at, keyword);
    let Some(object) = schema.as_object() else {
        return;
    };
    let len = at.len();
    for (keyword, value) in object {
        let keyword = keyword.as_str();
        if SCHEMA_MAPS.contains(&keyword) || keyword == "dependencies" {
            for (key, sub) in value.as_object().into_iter().flatten() {
                if sub.is_object() || sub.is_boolean() {
                    at.push_str(&format!(".{keyword}.{key}"));
                    walk(sub, at, Some(keyword), depth + 1, visit);
                    at.truncate(len);
                }
            }
        } else if SCHEMA_ARRAYS.contains(&keyword) && value.is_array() {
            for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                at.push_str(&format!(".{keyword}[{i}]"));
                walk(sub, at, Some(keyword), depth + 1, visit);
                at.truncate(len);
            }
        } else if SCHEMA_VALUES.contains(&keyword) && (value.is_object() || value.is_boolean()) {
            at.push('.');
            at.push_str(keyword);
            walk(value, at, Some(keyword), depth + 1, visit);
            at.truncate(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rules(target: Target, name: &str, schema: Value) -> Vec<(&'static str, String)> {
        check(target, name, &schema)
            .into_iter()
            .map(|f| (f.rule, f.at))
            .collect()
    }

    #[test]
    fn a_plain_tool_passes_everywhere() {
        let schema =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        for target in Target::ALL {
            let found = check(target, "search", &schema);
            assert!(
                found.iter().all(|f| f.effect != Effect::Rejected),
                "{target:?}: {found:?}"
            );
        }
    }

    #[test]
    fn each_target_names_what_it_rejects() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "paths": {"type": "array"},
                "mode": {"type": ["string", "null"], "enum": ["a", 1]},
                "pair": {"type": "array", "items": [{"type": "string"}]},
                "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10}
            },
            "additionalProperties": false
        });
        let anthropic = rules(Target::Anthropic, "demo__read", schema.clone());
        assert!(anthropic.contains(&("anthropic/draft-2020-12", "$.properties.pair".into())));
        assert!(anthropic.contains(&("anthropic/strict-bounds", "$.properties.n".into())));
        let openai = rules(Target::Openai, "demo__read", schema.clone());
        assert!(openai.contains(&("openai/array-items", "$.properties.paths".into())));
        assert!(!openai.contains(&("openai/array-items", "$.properties.pair".into())));
        assert!(openai.contains(&("openai/strict-required", "$".into())));
        let gemini = rules(Target::Gemini, "demo__read", schema);
        for (rule, at) in [
            ("gemini/unknown-field", "$"),
            ("gemini/type-list", "$.properties.mode"),
            ("gemini/enum-strings", "$.properties.mode"),
            ("gemini/unknown-field", "$.properties.n"),
        ] {
            assert!(
                gemini.contains(&(rule, at.into())),
                "{rule} {at}: {gemini:?}"
            );
        }
        // Names: a dash is fine for all three; a space for none; a leading digit not for Gemini.
        assert!(rules(Target::Gemini, "9tool", json!({"type": "object"}))
            .contains(&("gemini/name", "name".into())));
        assert!(!rules(Target::Openai, "9tool", json!({"type": "object"}))
            .iter()
            .any(|(r, _)| *r == "openai/name"));
        for target in Target::ALL {
            let long = "x".repeat(65);
            assert!(check(target, &long, &json!({"type": "object"}))
                .iter()
                .any(|f| f.at == "name" && f.effect == Effect::Rejected));
        }
        // The root must be an object schema.
        for target in [Target::Anthropic, Target::Openai] {
            assert!(check(target, "t", &json!({"anyOf": [{"type": "object"}]}))
                .iter()
                .any(|f| f.rule.ends_with("/root-object")));
        }
    }

    #[test]
    fn the_walk_stops_at_its_depth() {
        let mut schema = json!({"type": "array"});
        for _ in 0..(MAX_DEPTH + 10) {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        let found = check(Target::Openai, "t", &schema);
        assert!(found.iter().all(|f| f.rule != "openai/array-items"));
    }
}
