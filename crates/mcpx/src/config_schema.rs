//! The config schema (`schemas/config.schema.json`) applied in two parts, each compiled once:
//! the file without its server entries, whose problems refuse the whole file, and one server
//! entry, whose problems make that server fail to start with them while the others go on. A
//! mistake in one entry (a client's entry imported as it was, a typo) so never takes the
//! whole gateway down.

use std::sync::OnceLock;

use schemaval::Schema;
use serde_json::Value;

const CONFIG_SCHEMA: &str = include_str!("../schemas/config.schema.json");

/// The members of the file that hold server entries.
pub(crate) const SERVER_KEYS: [&str; 2] = ["mcpServers", "servers"];

fn parts() -> &'static (Schema, Schema) {
    static PARTS: OnceLock<(Schema, Schema)> = OnceLock::new();
    PARTS.get_or_init(|| {
        let full: Value =
            serde_json::from_str(CONFIG_SCHEMA).expect("the bundled config schema is JSON");
        let mut file = full.clone();
        for key in SERVER_KEYS {
            file["properties"][key]["additionalProperties"] = Value::Bool(true);
        }
        let entry = serde_json::json!({"$ref": "#/$defs/server", "$defs": full["$defs"]});
        let compile = |value: &Value| {
            Schema::from_slice(value.to_string().as_bytes())
                .expect("the bundled config schema compiles")
        };
        (compile(&file), compile(&entry))
    })
}

/// The problems of the file outside its server entries, one line each.
pub(crate) fn file_problems(value: &Value) -> Vec<String> {
    parts()
        .0
        .validate(value)
        .err()
        .map_or_else(Vec::new, |e| e.lines())
}

/// The problems of one server entry at `at` (`$.mcpServers.NAME`), one line each, with their
/// places in the file: `$.mcpServers.NAME.command: got integer, want string`.
pub fn entry_problems(entry: &Value, at: &str) -> Vec<String> {
    let Err(err) = parts().1.validate(entry) else {
        return Vec::new();
    };
    err.lines()
        .into_iter()
        .map(|line| match line.strip_prefix('$') {
            Some(rest) => format!("{at}{rest}"),
            None => line,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_is_checked_apart_from_the_file() {
        let file = json!({"mcpServers": {"a": {"command": 3}}, "gateway": {"maxSessions": 0}});
        let lines = file_problems(&file);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("$.gateway.maxSessions"), "{lines:?}");
        assert_eq!(
            entry_problems(&json!({"command": 3}), "$.mcpServers.a"),
            ["$.mcpServers.a.command: got integer, want string"]
        );
        assert!(!entry_problems(&json!({"command": "x", "url": "http://x"}), "$.a").is_empty());
        assert!(!entry_problems(&json!({"command": ""}), "$.a").is_empty());
        assert!(entry_problems(&json!({"command": "x"}), "$.a").is_empty());
        assert!(file_problems(&json!({"other": {}})).len() == 1);
    }
}
