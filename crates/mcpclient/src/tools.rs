//! A listed tool with its schemas compiled once, and the warn-only check of its outputs.

use std::sync::OnceLock;

use schemaval::{CompileError, Dialect, NotUpgradable, Schema};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::Response;

/// The log target of the warnings about a listed tool's schemas (one that does not compile, an
/// invalid `x-mcp-header`), so that a program that reports them itself (the `mcpx` command
/// line: `lint`, `tools`, `servers`) can leave them out of its log.
pub const SCHEMA_LOG_TARGET: &str = "mcpclient::schemas";

/// The warning recorded when `structuredContent` does not match the tool's `outputSchema`.
pub const OUTPUT_WARNING: &str = "structuredContent violates outputSchema (delivered unchanged)";

/// The warning recorded at list time for an `outputSchema` that does not compile.
pub const UNCHECKED_OUTPUT_WARNING: &str =
    "outputSchema does not compile; results are delivered unchecked";

/// Something delivered unchanged that did not match what the server declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What happened, e.g. [`OUTPUT_WARNING`].
    pub message: String,
    /// The tool it concerns.
    pub tool: String,
    /// The flat lines, one per problem.
    pub lines: Vec<String>,
}

/// One tool as listed, with its schemas compiled once.
#[derive(Debug)]
pub struct Tool {
    raw: Value,
    pub(crate) name: String,
    pub(crate) input: Result<Schema, CompileError>,
    pub(crate) output: Option<Result<Schema, CompileError>>,
    /// The tool as 2020-12, built on first use (only a gateway presenting 2020-12 needs it).
    upgraded: OnceLock<Upgraded>,
}

/// A tool as presented to clients that accept only JSON Schema 2020-12: each schema that compiles
/// and can be upgraded exactly is the equivalent 2020-12 document; any other is passed on
/// unchanged, with the reason. Calls are still checked against the schemas as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Upgraded {
    /// The tool object, unknown fields kept.
    pub tool: Value,
    /// Each schema passed on unchanged because it cannot be upgraded exactly:
    /// `inputSchema` or `outputSchema`, and why.
    pub not_upgradable: Vec<(&'static str, NotUpgradable)>,
}

impl Tool {
    /// A tool object listed earlier (kept in a cache), its schemas compiled as when listed;
    /// `None` without a string `name`.
    pub fn from_listed(raw: Value) -> Option<Tool> {
        Tool::new(raw)
    }

    pub(crate) fn new(raw: Value) -> Option<Tool> {
        let name = raw.get("name")?.as_str()?.to_owned();
        let input = Schema::compile(raw.get("inputSchema").unwrap_or(&json!({"type": "object"})));
        let output = raw.get("outputSchema").map(Schema::compile);
        Some(Tool {
            raw,
            name,
            input,
            output,
            upgraded: OnceLock::new(),
        })
    }

    /// The tool as 2020-12 (see [`Upgraded`]), computed once.
    pub fn upgraded(&self) -> &Upgraded {
        self.upgraded.get_or_init(|| {
            let mut tool = self.raw.clone();
            let mut not_upgradable = Vec::new();
            for (which, compiled) in [
                ("inputSchema", Some(&self.input)),
                ("outputSchema", self.output.as_ref()),
            ] {
                // A schema that does not compile is refused (input) or unchecked (output) as
                // listed; presenting it otherwise would hide that.
                let (Some(Ok(_)), Some(schema)) = (compiled, self.raw.get(which)) else {
                    continue;
                };
                match schemaval::upgrade(schema, Dialect::Draft202012) {
                    Ok(upgraded) => tool[which] = upgraded,
                    Err(reason) => not_upgradable.push((which, reason)),
                }
            }
            Upgraded {
                tool,
                not_upgradable,
            }
        })
    }

    /// The tool object exactly as listed (unknown fields kept).
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why the `inputSchema` does not compile, if it does not.
    pub fn input_error(&self) -> Option<&CompileError> {
        self.input.as_ref().err()
    }

    /// Why the `outputSchema` does not compile, if there is one and it does not.
    pub fn output_error(&self) -> Option<&CompileError> {
        self.output.as_ref().and_then(|o| o.as_ref().err())
    }
}

/// The result of a call, delivered unchanged, with what did not match the declared schema.
#[derive(Debug)]
pub struct CallOutcome {
    /// The response, exactly as received.
    pub response: Response,
    /// Output warnings (never a reason to change the result).
    pub warnings: Vec<Warning>,
    /// What was changed in the arguments before they were sent, one line per change
    /// ([`crate::CallOptions::coerce_arguments`]); empty when they were sent as given.
    pub coerced: Vec<String>,
    /// Whether the result says `"isError": true` (read once, by the output check when the
    /// tool has an output schema).
    pub is_error: bool,
}

/// The output check of a result against the tool's `outputSchema`, and whether the result is a
/// tool error (which is not checked).
pub(crate) fn output_warnings(
    tool: &str,
    schema: &Schema,
    response: &Response,
) -> (bool, Vec<Warning>) {
    let Some(checked) = Checked::of(response) else {
        return (false, Vec::new());
    };
    if is_true(checked.is_error.as_ref()) {
        return (true, Vec::new());
    }
    let lines = match &checked.structured_content {
        None => vec!["$: no structuredContent, but the tool declares an outputSchema".to_owned()],
        Some(content) => match schema.validate(content) {
            Ok(()) => return (false, Vec::new()),
            Err(err) => err.lines(),
        },
    };
    let warning = Warning {
        message: OUTPUT_WARNING.to_owned(),
        tool: tool.to_owned(),
        lines,
    };
    (false, vec![warning])
}

/// Whether a result of a tool with no output schema says `"isError": true` (read as the output
/// check reads it: a member given twice counts by its last value).
pub(crate) fn tool_error(response: &Response) -> bool {
    #[derive(Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<Value>,
    }
    let flag = serde_json::from_str::<Flag>(response.result_text())
        .map(|f| f.is_error)
        .or_else(|_| {
            response
                .result()
                .map(|mut r| r.get_mut("isError").map(Value::take))
        });
    is_true(flag.ok().flatten().as_ref())
}

fn is_true(flag: Option<&Value>) -> bool {
    flag.and_then(Value::as_bool) == Some(true)
}

/// What the output check reads of a result: the rest (its `content`, which may be megabytes)
/// is skipped, not built.
#[derive(Deserialize)]
struct Checked {
    #[serde(rename = "isError", default)]
    is_error: Option<Value>,
    /// Any JSON value (2026-07-28), `null` too: present is checked.
    #[serde(rename = "structuredContent", default, deserialize_with = "present")]
    structured_content: Option<Value>,
}

/// A member that is there, whatever its value (`Option`'s own reading takes `null` for absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as Deserialize>::deserialize(d).map(Some)
}

impl Checked {
    fn of(response: &Response) -> Option<Checked> {
        serde_json::from_str(response.result_text())
            .ok()
            // A result with a member twice is read as a whole value reads it (the last one
            // counts), so that a duplicate cannot hide content from the check.
            .or_else(|| {
                let mut result = response.result().ok()?;
                Some(Checked {
                    is_error: result.get_mut("isError").map(Value::take),
                    structured_content: result.get_mut("structuredContent").map(Value::take),
                })
            })
    }
}

/// A warning for each listed tool whose `outputSchema` does not compile.
/// The warning for a tool dropped from the list because its `x-mcp-header` declarations are
/// invalid (2026-07-28 over HTTP: such a tool cannot be called correctly).
pub const HEADER_WARNING: &str =
    "tool dropped from the list: its x-mcp-header declarations are invalid";

pub(crate) fn list_warnings(tools: &[Tool]) -> Vec<Warning> {
    tools
        .iter()
        .filter_map(|t| {
            t.output_error().map(|e| Warning {
                message: UNCHECKED_OUTPUT_WARNING.to_owned(),
                tool: t.name.clone(),
                lines: vec![e.to_string()],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;

    fn warnings(result: &str) -> Vec<Warning> {
        let schema = Schema::compile(&json!({"type": "object", "required": ["sum"]})).unwrap();
        let frame = Frame::parse(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#));
        output_warnings("t", &schema, &Response::from_frame(frame.unwrap()).unwrap()).1
    }

    fn response(result: &str) -> Response {
        let frame = Frame::parse(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#));
        Response::from_frame(frame.unwrap()).unwrap()
    }

    #[test]
    fn a_tool_error_is_read_once_with_or_without_an_output_schema() {
        let schema = Schema::compile(&json!({"type": "object", "required": ["sum"]})).unwrap();
        for (result, error) in [
            (r#"{"content":[],"isError":true}"#, true),
            (r#"{"content":[],"isError":false}"#, false),
            (r#"{"content":[]}"#, false),
            (r#"{"content":[],"isError":"true"}"#, false),
            // Given twice, the last counts, as the output check reads it.
            (r#"{"content":[],"isError":false,"isError":true}"#, true),
            (r#"{"content":[],"isError":true,"isError":false}"#, false),
        ] {
            assert_eq!(tool_error(&response(result)), error, "{result}");
            let (checked_error, _) = output_warnings("t", &schema, &response(result));
            assert_eq!(checked_error, error, "{result}");
        }
    }

    #[test]
    fn structured_content_is_checked_and_the_rest_skipped() {
        assert!(warnings(
            r#"{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}}"#
        )
        .is_empty());
        assert_eq!(
            warnings(r#"{"content":[],"structuredContent":{"total":3}}"#)[0].lines,
            ["$: missing property 'sum'"]
        );
        assert_eq!(
            warnings(r#"{"content":[]}"#)[0].lines,
            ["$: no structuredContent, but the tool declares an outputSchema"]
        );
        assert!(warnings(r#"{"content":[],"isError":true}"#).is_empty());
        // Any JSON value is structured content (2026-07-28), null and arrays too.
        assert_eq!(
            warnings(r#"{"content":[],"structuredContent":null}"#)[0].lines,
            ["$: got null, want object"]
        );
        assert_eq!(
            warnings(r#"{"content":[],"structuredContent":[1]}"#)[0].lines,
            ["$: got array, want object"]
        );
        // Not a boolean: not an error result, so checked.
        assert_eq!(
            warnings(r#"{"isError":"yes","structuredContent":{}}"#).len(),
            1
        );
    }

    #[test]
    fn a_duplicate_member_cannot_hide_content_from_the_check() {
        // As a whole value reads it, the last one counts.
        let twice = r#"{"structuredContent":{"sum":3},"structuredContent":{"total":3}}"#;
        assert_eq!(warnings(twice).len(), 1);
        let error_first = r#"{"isError":true,"isError":false,"structuredContent":{}}"#;
        assert_eq!(warnings(error_first).len(), 1);
    }
}
