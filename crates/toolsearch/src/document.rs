//! One tool definition as the texts the index scores: its name (and title), its server, its
//! description, its argument names and its argument descriptions. Only what a person would
//! search by is read; the schema's types and constraints are not words of the task.

use serde_json::Value;

use crate::tokens::head;

/// How deep into nested argument objects (`properties` within `properties`, `items`) names and
/// descriptions are read. Top-level arguments carry most of the meaning; deeper ones add words
/// such as `line`/`column` of an edit without letting a huge schema swamp the fields.
pub const MAX_SCHEMA_DEPTH: usize = 3;

/// Bytes of text read from one field of one tool. A tool whose description is a manual still
/// gets indexed, by its first part.
pub const MAX_FIELD_BYTES: usize = 16 * 1024;

/// The fields of the index; `Field as usize` is the field's place in [`Field::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Name,
    Server,
    /// The description's first sentence.
    Lead,
    Description,
    ArgumentNames,
    ArgumentDescriptions,
}

impl Field {
    pub(crate) const ALL: [Field; 6] = [
        Field::Name,
        Field::Server,
        Field::Lead,
        Field::Description,
        Field::ArgumentNames,
        Field::ArgumentDescriptions,
    ];
}

/// A tool read for the index.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub(crate) server: String,
    pub(crate) name: String,
    pub(crate) description: String,
    /// Top-level argument names, in the schema's order.
    pub(crate) arguments: Vec<String>,
    /// The text of each field, indexed by `Field as usize`.
    pub(crate) fields: [String; Field::ALL.len()],
}

impl Document {
    /// Reads `tool`; `None` when it has no string `name` (no tool can be called without one).
    pub(crate) fn read(server: &str, tool: &Value) -> Option<Document> {
        let name = tool.get("name")?.as_str()?.to_owned();
        let description = tool
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut title = String::new();
        for t in [
            tool.get("title"),
            tool.get("annotations").and_then(|a| a.get("title")),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        {
            push_text(&mut title, t);
        }
        let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
        let arguments = properties(schema)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let mut arg_names = String::new();
        let mut arg_descriptions = String::new();
        walk(schema, 0, &mut arg_names, &mut arg_descriptions);
        let mut name_field = name.clone();
        push_text(&mut name_field, &title);
        let fields = [
            cut(name_field),
            cut(server.to_owned()),
            lead(&description).to_owned(),
            cut(description.clone()),
            arg_names,
            arg_descriptions,
        ];
        Some(Document {
            server: server.to_owned(),
            name,
            description,
            arguments,
            fields,
        })
    }

    pub(crate) fn field(&self, field: Field) -> &str {
        &self.fields[field as usize]
    }
}

/// The first sentence of `description` (up to a `. ` or a line end), at most
/// [`MAX_FIELD_BYTES`]: what the tool does, before the usage notes and examples.
fn lead(description: &str) -> &str {
    let text = description.trim_start();
    let end = [text.find(". "), text.find(".\n"), text.find('\n')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(text.len());
    head(&text[..end], MAX_FIELD_BYTES)
}

fn properties(schema: &Value) -> Option<&serde_json::Map<String, Value>> {
    schema.get("properties")?.as_object()
}

/// Appends the names and descriptions of `schema`'s properties (and of the properties of its
/// items and nested objects, down to [`MAX_SCHEMA_DEPTH`]).
fn walk(schema: &Value, depth: usize, names: &mut String, descriptions: &mut String) {
    if depth >= MAX_SCHEMA_DEPTH {
        return;
    }
    if let Some(props) = properties(schema) {
        for (name, sub) in props {
            push_text(names, name);
            if let Some(d) = sub.get("description").and_then(Value::as_str) {
                push_text(descriptions, d);
            }
            walk(sub, depth + 1, names, descriptions);
        }
    }
    if let Some(items) = schema.get("items") {
        walk(items, depth + 1, names, descriptions);
    }
}

/// Appends `text` after a space, up to [`MAX_FIELD_BYTES`] in all.
fn push_text(into: &mut String, text: &str) {
    if into.len() >= MAX_FIELD_BYTES || text.is_empty() {
        return;
    }
    if !into.is_empty() {
        into.push(' ');
    }
    into.push_str(text);
    *into = cut(std::mem::take(into));
}

fn cut(mut text: String) -> String {
    let end = head(&text, MAX_FIELD_BYTES).len();
    text.truncate(end);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_field() {
        let tool = json!({
            "name": "create_issue",
            "title": "Create issue",
            "description": "Open a new issue.",
            "inputSchema": {"type": "object", "properties": {
                "repo": {"type": "string", "description": "owner/name"},
                "labels": {"type": "array", "items": {"type": "object", "properties": {
                    "color": {"type": "string", "description": "hex colour"}}}}
            }}
        });
        let d = Document::read("github", &tool).unwrap();
        assert_eq!(d.name, "create_issue");
        assert_eq!(d.arguments, ["repo", "labels"]);
        assert_eq!(d.field(Field::Name), "create_issue Create issue");
        assert_eq!(d.field(Field::Server), "github");
        assert_eq!(d.field(Field::Lead), "Open a new issue.");
        assert_eq!(d.field(Field::ArgumentNames), "repo labels color");
        assert_eq!(
            d.field(Field::ArgumentDescriptions),
            "owner/name hex colour"
        );
    }

    #[test]
    fn a_tool_without_a_name_is_not_read() {
        assert!(Document::read("s", &json!({"description": "x"})).is_none());
        assert!(Document::read("s", &json!({"name": 5})).is_none());
        assert!(Document::read("s", &json!("text")).is_none());
    }

    #[test]
    fn odd_schemas_give_empty_argument_fields() {
        for schema in [
            json!(null),
            json!(true),
            json!({"properties": 3}),
            json!([1]),
        ] {
            let d = Document::read("s", &json!({"name": "t", "inputSchema": schema})).unwrap();
            assert!(d.arguments.is_empty());
            assert_eq!(d.field(Field::ArgumentNames), "");
        }
    }

    #[test]
    fn deep_schemas_stop_at_the_depth_limit_and_fields_at_the_byte_limit() {
        let mut schema = json!({"type": "string"});
        for i in 0..(MAX_SCHEMA_DEPTH + 3) {
            schema = json!({"properties": {format!("level{i}"): schema}});
        }
        let d = Document::read("s", &json!({"name": "t", "inputSchema": schema})).unwrap();
        assert_eq!(
            d.field(Field::ArgumentNames).split(' ').count(),
            MAX_SCHEMA_DEPTH
        );
        let long = "word ".repeat(MAX_FIELD_BYTES);
        let d = Document::read("s", &json!({"name": "t", "description": long})).unwrap();
        assert_eq!(d.field(Field::Description).len(), MAX_FIELD_BYTES);
    }
}
