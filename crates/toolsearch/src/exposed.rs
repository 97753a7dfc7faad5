//! The canonical definitions of the three tools a gateway lists in search mode instead of its
//! servers' tools, and the result of a search as such a tool returns it. The descriptions are
//! written for a model reading them: what to pass, what comes back, what to do next.
//!
//! Names refer to tools as the gateway lists them directly (`SERVER__TOOL`); the gateway passes
//! its own naming to [`search_result`].

use serde_json::{json, Value};

use crate::index::{Hit, MAX_LIMIT, MAX_QUERY_BYTES};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "search_tools";
/// The describe tool's name.
pub const DESCRIBE_TOOL: &str = "describe_tool";
/// The call tool's name.
pub const CALL_TOOL: &str = "call_tool";
/// Hits a search returns when the caller gives no `limit`.
pub const DEFAULT_LIMIT: usize = 5;

/// The search-mode tool list: search, describe and call, as `tools/list` entries.
pub fn search_mode_tools() -> Vec<Value> {
    vec![search_tool(), describe_tool(), call_tool()]
}

fn search_tool() -> Value {
    json!({
        "name": SEARCH_TOOL,
        "title": "Search tools",
        "description": format!(
            "Find the tools that can do a task, among every tool of every server behind this \
             gateway (they are not listed directly). Describe the task in plain words, e.g. \
             \"open a pull request\" or \"take a screenshot of the page\". Returns up to {DEFAULT_LIMIT} \
             tools (or `limit`), best match first, each with its name, a one-line description \
             and its argument names. Then call `{DESCRIBE_TOOL}` for a tool's full argument \
             schema, and `{CALL_TOOL}` to run it. Search again with other words if nothing fits."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_BYTES,
                    "description": "The task in plain words."
                },
                "server": {
                    "type": "string",
                    "description": "Only this server's tools (its name as configured in the gateway)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                    "description": "How many tools to return at most."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "The name to pass to describe and call."},
                            "server": {"type": "string"},
                            "description": {"type": "string"},
                            "arguments": {"type": "array", "items": {"type": "string"}}
                        },
                        "required": ["name", "server", "description", "arguments"]
                    }
                }
            },
            "required": ["tools"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

fn describe_tool() -> Value {
    json!({
        "name": DESCRIBE_TOOL,
        "title": "Describe a tool",
        "description": format!(
            "Show one tool's full definition: its description, the JSON Schema of its arguments \
             (inputSchema: names, types, which are required, allowed values) and of its result \
             (outputSchema, when it has one). Pass a name returned by `{SEARCH_TOOL}`. Read this \
             before `{CALL_TOOL}` unless the arguments are obvious."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The tool's name, as returned by search."}
            },
            "required": ["name"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

fn call_tool() -> Value {
    json!({
        "name": CALL_TOOL,
        "title": "Call a tool",
        "description": format!(
            "Run a tool found with `{SEARCH_TOOL}`, with its arguments as one JSON object. The call \
             goes to the tool's server exactly as a direct call would: the arguments are checked \
             against the tool's inputSchema first, and when they do not fit, the error lists each \
             problem (fix them and call again); otherwise the tool's own result comes back \
             unchanged."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The tool's name, as returned by search."},
                "arguments": {"type": "object", "description": "The tool's arguments, as its inputSchema describes them.", "default": {}}
            },
            "required": ["name"],
            "additionalProperties": false
        },
        "annotations": {"openWorldHint": true}
    })
}

/// The search tool's result for `hits`: `structuredContent` per the tool's outputSchema, and the
/// same as text, one tool a line (`name(arg, ...): description`), for clients that read only text.
/// `name_of` gives the name a hit is called by through the gateway.
pub fn search_result(hits: &[Hit], name_of: impl Fn(&Hit) -> String) -> Value {
    let mut text = String::new();
    let mut tools = Vec::new();
    for hit in hits {
        let name = name_of(hit);
        text.push_str(&format!(
            "{name}({}): {}\n",
            hit.arguments.join(", "),
            hit.description
        ));
        tools.push(json!({
            "name": name,
            "server": hit.server,
            "description": hit.description,
            "arguments": hit.arguments,
        }));
    }
    if hits.is_empty() {
        text.push_str("No tool matches; try other words, or no server filter.\n");
    }
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"tools": tools}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_tools_with_compilable_schemas() {
        let tools = search_mode_tools();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, [SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]);
        for tool in &tools {
            assert!(tool["description"].as_str().is_some_and(|d| d.len() > 80));
            for key in ["inputSchema", "outputSchema"] {
                if let Some(schema) = tool.get(key) {
                    assert_eq!(schema["type"], "object", "{key} of {}", tool["name"]);
                    jsonschema::validator_for(schema).expect("the schema compiles");
                }
            }
        }
    }

    #[test]
    fn a_search_result_fits_the_output_schema() {
        let hits = [Hit {
            server: "github".into(),
            name: "get_issue".into(),
            description: "Get an issue.".into(),
            arguments: vec!["owner".into(), "repo".into()],
            score: 1.0,
        }];
        let result = search_result(&hits, |h| format!("{}__{}", h.server, h.name));
        assert_eq!(
            result["content"][0]["text"],
            "github__get_issue(owner, repo): Get an issue.\n"
        );
        let schema = &search_tool()["outputSchema"];
        let validator = jsonschema::validator_for(schema).unwrap();
        assert!(validator.is_valid(&result["structuredContent"]));
        let empty = search_result(&[], |h| h.name.clone());
        assert!(validator.is_valid(&empty["structuredContent"]));
        assert!(empty["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("No tool"));
    }

    #[test]
    fn search_arguments_are_bounded_by_the_index_limits() {
        let schema = &search_tool()["inputSchema"];
        let validator = jsonschema::validator_for(schema).unwrap();
        assert!(validator.is_valid(&json!({"query": "open a pull request", "limit": 5})));
        assert!(!validator.is_valid(&json!({"query": ""})));
        assert!(!validator.is_valid(&json!({"query": "x", "limit": MAX_LIMIT + 1})));
        assert!(!validator.is_valid(&json!({"limit": 3})));
    }
}
