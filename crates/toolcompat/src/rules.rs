//! The rules, each beside the page it comes from.

use serde_json::Value;

use crate::{Effect, Finding, Target};

/// The longest tool name any of the three accepts.
const MAX_NAME: usize = 64;

fn push(
    found: &mut Vec<Finding>,
    target: Target,
    effect: Effect,
    rule: &'static str,
    at: &str,
    message: String,
    source: &'static str,
) {
    found.push(Finding {
        target,
        effect,
        rule,
        at: at.to_owned(),
        message,
        source,
    });
}

/// The tool's name.
pub(crate) fn name(target: Target, name: &str, found: &mut Vec<Finding>) {
    let (ok, wanted, source) = match target {
        // "name: Must match the regex ^[a-zA-Z0-9_-]{1,64}$"
        Target::Anthropic => (
            plain_name(name, &['_', '-']),
            "1 to 64 of a-z A-Z 0-9 _ -",
            "https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools",
        ),
        // function.name: "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a
        // maximum length of 64."
        Target::Openai => (
            plain_name(name, &['_', '-']),
            "1 to 64 of a-z A-Z 0-9 _ -",
            "https://platform.openai.com/docs/api-reference/chat/create",
        ),
        // FunctionDeclaration.name: "Must start with a letter or an underscore. Must be a-z,
        // A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 64."
        Target::Gemini => (
            plain_name(name, &['_', '-', '.', ':'])
                && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
            "a letter or _ first, then up to 63 of a-z A-Z 0-9 _ . : -",
            "https://ai.google.dev/api/caching#FunctionDeclaration",
        ),
    };
    if !ok {
        let rule = match target {
            Target::Anthropic => "anthropic/name",
            Target::Openai => "openai/name",
            Target::Gemini => "gemini/name",
        };
        push(
            found,
            target,
            Effect::Rejected,
            rule,
            "name",
            format!("tool name '{name}' is not {wanted}"),
            source,
        );
    }
}

fn plain_name(name: &str, extra: &[char]) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The input schema as a whole.
pub(crate) fn root(target: Target, schema: &Value, found: &mut Vec<Finding>) {
    let object = schema.get("type").and_then(Value::as_str) == Some("object");
    match target {
        // tools[].input_schema: {"type": "object", "properties", "required"}: the type is
        // required and must be "object".
        Target::Anthropic if !object => push(
            found,
            target,
            Effect::Rejected,
            "anthropic/root-object",
            "$",
            "the input schema's type is not \"object\"".to_owned(),
            "https://platform.claude.com/docs/en/api/messages",
        ),
        // Observed: "Invalid schema for function 'json': schema must be a JSON Schema of
        // 'type: \"object\"', got 'type: \"None\"'."
        Target::Openai if !object => push(
            found,
            target,
            Effect::Rejected,
            "openai/root-object",
            "$",
            "the input schema's type is not \"object\"".to_owned(),
            "https://github.com/browserbase/stagehand/issues/1159",
        ),
        _ => {}
    }
    // Structured Outputs, supported schemas: "the root level object of a schema must be an
    // object, and not use anyOf".
    if target == Target::Openai && schema.get("anyOf").is_some() {
        push(
            found,
            target,
            Effect::RejectedIfStrict,
            "openai/strict-root-anyof",
            "$",
            "anyOf at the root".to_owned(),
            OPENAI_STRICT,
        );
    }
}

/// Structured Outputs' supported schemas (OpenAI strict mode).
const OPENAI_STRICT: &str =
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas";

/// Claude's structured outputs, JSON Schema limitations (strict tool use).
const ANTHROPIC_STRICT: &str =
    "https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations";

/// The fields of Gemini's `Schema` (a select subset of OpenAPI 3.0's schema object); the API
/// refuses a request with any other field in `parameters` ("Invalid JSON payload received.
/// Unknown name … Cannot find field.").
const GEMINI_FIELDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Gemini's `Schema` object, the reference for every Gemini rule on the schema.
const GEMINI_SCHEMA: &str = "https://ai.google.dev/api/caching#Schema";

/// One subschema at `at`, under `keyword` (none for the root).
pub(crate) fn subschema(
    target: Target,
    schema: &Value,
    at: &str,
    keyword: Option<&str>,
    found: &mut Vec<Finding>,
) {
    match target {
        Target::Anthropic => anthropic(schema, at, found),
        Target::Openai => openai(schema, at, found),
        Target::Gemini => gemini(schema, at, keyword, found),
    }
}

fn anthropic(schema: &Value, at: &str, found: &mut Vec<Finding>) {
    let target = Target::Anthropic;
    // Observed: "tools.18.custom.input_schema: JSON schema is invalid. It must match JSON
    // Schema draft 2020-12": draft-07 forms that 2020-12's metaschema refuses.
    let old_items = schema.get("items").is_some_and(Value::is_array);
    let bool_bound = ["exclusiveMinimum", "exclusiveMaximum"]
        .iter()
        .any(|k| schema.get(*k).is_some_and(Value::is_boolean));
    if old_items || bool_bound {
        let what = if old_items {
            "\"items\" is an array (draft-07 tuple form)"
        } else {
            "a boolean exclusive bound (draft-04 form)"
        };
        push(
            found,
            target,
            Effect::Rejected,
            "anthropic/draft-2020-12",
            at,
            format!("{what}, not valid 2020-12 (\"downstreamDialect\": \"2020-12\" rewrites it)"),
            "https://github.com/acomagu/vscode-as-mcp-server/issues/6",
        );
    }
    // Strict tool use, not supported: numerical constraints, string length constraints, array
    // constraints beyond minItems 0 or 1, additionalProperties other than false.
    let bounds: Vec<&str> = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
    ]
    .into_iter()
    .filter(|k| schema.get(*k).is_some())
    .chain(
        schema
            .get("minItems")
            .and_then(Value::as_u64)
            .filter(|n| *n > 1)
            .map(|_| "minItems"),
    )
    .collect();
    if !bounds.is_empty() {
        push(
            found,
            target,
            Effect::RejectedIfStrict,
            "anthropic/strict-bounds",
            at,
            format!("{} not supported with strict tool use", bounds.join(", ")),
            ANTHROPIC_STRICT,
        );
    }
    if types(schema).contains(&"object")
        && schema.get("additionalProperties") != Some(&Value::Bool(false))
    {
        push(
            found,
            target,
            Effect::RejectedIfStrict,
            "anthropic/strict-additional",
            at,
            "an object without \"additionalProperties\": false".to_owned(),
            ANTHROPIC_STRICT,
        );
    }
}

fn openai(schema: &Value, at: &str, found: &mut Vec<Finding>) {
    let target = Target::Openai;
    // Observed: "Invalid schema for function '…': In context=('properties', 'paths'), array
    // schema missing items." (code invalid_function_parameters, without strict).
    if types(schema).contains(&"array") && schema.get("items").is_none() {
        push(
            found,
            target,
            Effect::Rejected,
            "openai/array-items",
            at,
            "an array schema without \"items\"".to_owned(),
            "https://github.com/sigoden/aichat/pull/1049",
        );
    }
    if !types(schema).contains(&"object") {
        return composition(schema, at, found);
    }
    // Strict: "additionalProperties: false must always be set in objects"; "all fields must
    // be required".
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        push(
            found,
            target,
            Effect::RejectedIfStrict,
            "openai/strict-additional",
            at,
            "an object without \"additionalProperties\": false".to_owned(),
            OPENAI_STRICT,
        );
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let optional: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .map(String::as_str)
                .filter(|k| !required.contains(k))
                .collect()
        })
        .unwrap_or_default();
    if !optional.is_empty() {
        push(
            found,
            target,
            Effect::RejectedIfStrict,
            "openai/strict-required",
            at,
            format!("properties not in \"required\": {}", optional.join(", ")),
            OPENAI_STRICT,
        );
    }
    composition(schema, at, found);
}

/// Strict: "Composition: allOf, not, dependentRequired, dependentSchemas, if, then, else" are
/// not supported.
fn composition(schema: &Value, at: &str, found: &mut Vec<Finding>) {
    let used: Vec<&str> = [
        "allOf",
        "not",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
    ]
    .into_iter()
    .filter(|k| schema.get(*k).is_some())
    .collect();
    if !used.is_empty() {
        push(
            found,
            Target::Openai,
            Effect::RejectedIfStrict,
            "openai/strict-composition",
            at,
            format!("{} not supported in strict mode", used.join(", ")),
            OPENAI_STRICT,
        );
    }
}

fn gemini(schema: &Value, at: &str, keyword: Option<&str>, found: &mut Vec<Finding>) {
    let target = Target::Gemini;
    // Under a keyword Gemini does not know, the parent's finding says it already.
    if keyword.is_some_and(|k| !GEMINI_FIELDS.contains(&k)) {
        return;
    }
    let Some(object) = schema.as_object() else {
        // A Schema is an object: `true` or `false` is not one.
        push(
            found,
            target,
            Effect::Rejected,
            "gemini/boolean-schema",
            at,
            "a boolean schema".to_owned(),
            GEMINI_SCHEMA,
        );
        return;
    };
    // Observed: "Invalid JSON payload received. Unknown name \"additionalProperties\" at
    // 'tools[0].function_declarations[8].parameters.properties[1].value.items': Cannot find
    // field." (https://github.com/nanbingxyz/5ire/issues/42). `parametersJsonSchema` takes
    // JSON Schema instead, where the client uses it.
    let unknown: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|k| !GEMINI_FIELDS.contains(k))
        .collect();
    if !unknown.is_empty() {
        push(
            found,
            target,
            Effect::Rejected,
            "gemini/unknown-field",
            at,
            format!("not a field of Gemini's Schema: {}", unknown.join(", ")),
            GEMINI_SCHEMA,
        );
    }
    // Schema.type is one Type; a list is refused ("Proto field is not repeating, cannot start
    // list", https://github.com/zed-industries/zed/issues/53919).
    if object.get("type").is_some_and(Value::is_array) {
        push(
            found,
            target,
            Effect::Rejected,
            "gemini/type-list",
            at,
            "\"type\" is a list (Gemini takes one type, and \"nullable\")".to_owned(),
            GEMINI_SCHEMA,
        );
    }
    // Schema.enum is string[].
    let enum_values = object.get("enum").and_then(Value::as_array);
    if enum_values.is_some_and(|values| values.iter().any(|v| !v.is_string())) {
        push(
            found,
            target,
            Effect::Rejected,
            "gemini/enum-strings",
            at,
            "an \"enum\" value that is not a string".to_owned(),
            GEMINI_SCHEMA,
        );
    }
}
