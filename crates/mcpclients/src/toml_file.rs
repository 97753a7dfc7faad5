//! Codex's `config.toml`: the `[mcp_servers.NAME]` tables read as JSON entries, and replaced by
//! others, with `toml_edit` so that every other table, key and comment of the file stays as
//! it was. The servers tables' own text (comments above and inside them) is kept apart by
//! install ([`tables_text`]) and put back by uninstall when nothing changed since
//! ([`with_tables_text`]).

use serde_json::{Map, Number, Value};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use crate::error::Syntax;

/// Reads `text` as TOML. The error keeps the place and the parser's words, never the line's
/// text (toml_edit's own message quotes it, and it may hold a token).
pub(crate) fn parse(text: &str) -> Result<DocumentMut, Syntax> {
    text.parse::<DocumentMut>().map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let problem = e.message().lines().next().unwrap_or("not TOML").to_owned();
        Syntax::at(text, at, &problem)
    })
}

/// The servers under `key`, in the file's order; `None` when there is no such table. `Err`
/// names the part that is not a table.
pub(crate) fn servers(
    doc: &DocumentMut,
    key: &str,
) -> Result<Option<Vec<(String, Value)>>, String> {
    let Some(item) = doc.get(key) else {
        return Ok(None);
    };
    let Some(table) = item.as_table_like() else {
        return Err(format!("$.{key}"));
    };
    let mut out = Vec::new();
    for (name, item) in table.iter() {
        let entry = item_json(item);
        if !entry.is_object() {
            return Err(crate::error::json_path(&[key.to_owned(), name.to_owned()]));
        }
        out.push((name.to_owned(), entry));
    }
    Ok(Some(out))
}

/// Where the tables under `key` are in the document: the least position of any of them (a
/// table made here has none).
fn block_position(doc: &DocumentMut, key: &str) -> Option<isize> {
    fn least(item: &Item) -> Option<isize> {
        match item {
            Item::Table(t) => t
                .iter()
                .filter_map(|(_, v)| least(v))
                .chain(t.position())
                .min(),
            Item::ArrayOfTables(a) => a.iter().filter_map(|t| t.position()).min(),
            _ => None,
        }
    }
    doc.get(key).and_then(least)
}

/// Gives every table in `item` the position `at`: written where the block it replaces was (the
/// text writes tables by position, the same position in the order they are in the document).
fn place(item: &mut Item, at: isize) {
    match item {
        Item::Table(t) => {
            t.set_position(Some(at));
            for (_, v) in t.iter_mut() {
                place(v, at);
            }
        }
        Item::ArrayOfTables(a) => {
            for t in a.iter_mut() {
                t.set_position(Some(at));
            }
        }
        _ => {}
    }
}

/// Puts `item` under `key` in place of what is there, where that was in the document (at the
/// end when it was nowhere).
fn put_in_place(doc: &mut DocumentMut, key: &str, mut item: Item) {
    if let Some(at) = block_position(doc, key) {
        place(&mut item, at);
    }
    doc.remove(key);
    doc.insert(key, item);
}

/// The document with the table under `key` replaced by `servers` (or removed with `None`); the
/// new tables go where the old ones were (at the end of the file when there were none).
pub(crate) fn with_servers(doc: &mut DocumentMut, key: &str, servers: Option<&[(String, Value)]>) {
    let Some(servers) = servers else {
        doc.remove(key);
        return;
    };
    let mut outer = Table::new();
    outer.set_implicit(true);
    for (name, entry) in servers {
        let mut table = Table::new();
        if let Some(members) = entry.as_object() {
            for (k, v) in members {
                if let Some(v) = json_toml(v) {
                    table.insert(k, Item::Value(v));
                }
            }
        }
        outer.insert(name, Item::Table(table));
    }
    put_in_place(doc, key, Item::Table(outer));
}

/// The tables under `key` alone, as a document's text, comments and layout kept.
pub(crate) fn tables_text(doc: &DocumentMut, key: &str) -> Option<String> {
    let item = doc.get(key)?;
    let mut alone = DocumentMut::new();
    alone.insert(key, item.clone());
    Some(alone.to_string())
}

/// The document with the tables under `key` replaced by those of `text` (as
/// [`tables_text`] wrote it); false, and the document as it was, when `text` holds none.
pub(crate) fn with_tables_text(doc: &mut DocumentMut, key: &str, text: &str) -> bool {
    let Some(item) = parse(text).ok().and_then(|alone| alone.get(key).cloned()) else {
        return false;
    };
    put_in_place(doc, key, item);
    true
}

/// The whole document as JSON.
pub(crate) fn document_json(doc: &DocumentMut) -> Value {
    item_json(doc.as_item())
}

fn item_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), item_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| {
                    Value::Object(
                        t.iter()
                            .map(|(k, v)| (k.to_owned(), item_json(v)))
                            .collect(),
                    )
                })
                .collect(),
        ),
        Item::None => Value::Null,
    }
}

fn value_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::Number((*i.value()).into()),
        T::Float(f) => Number::from_f64(*f.value())
            .map_or_else(|| Value::String(f.value().to_string()), Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), value_json(v)))
                .collect::<Map<_, _>>(),
        ),
    }
}

fn json_toml(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut array = Array::new();
            for item in items.iter().filter_map(json_toml) {
                array.push(item);
            }
            toml_edit::Value::Array(array)
        }
        Value::Object(members) => {
            let mut table = InlineTable::new();
            for (k, v) in members {
                if let Some(v) = json_toml(v) {
                    table.insert(k, v);
                }
            }
            toml_edit::Value::InlineTable(table)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn servers_round_trip_and_the_rest_stays() {
        let text = "# mine\nmodel = \"o3\"\n\n[mcp_servers.a]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nenv = { K = \"v\" }\n\n[mcp_servers.\"b.c\"]\nurl = \"https://x/mcp\"\nstartup_timeout_sec = 20\n\n[profiles.p]\nmodel = \"gpt\" # note\n";
        let mut doc = parse(text).unwrap();
        let servers = servers(&doc, "mcp_servers").unwrap().unwrap();
        assert_eq!(
            servers[0],
            (
                "a".into(),
                json!({"command": "npx", "args": ["-y", "x"], "env": {"K": "v"}})
            )
        );
        assert_eq!(
            servers[1],
            (
                "b.c".into(),
                json!({"url": "https://x/mcp", "startup_timeout_sec": 20})
            )
        );
        with_servers(
            &mut doc,
            "mcp_servers",
            Some(&[("mcpx".into(), json!({"command": "/m", "args": ["serve"]}))]),
        );
        let out = doc.to_string();
        assert!(out.starts_with("# mine\nmodel = \"o3\"\n"), "{out}");
        assert!(
            out.contains("[profiles.p]\nmodel = \"gpt\" # note\n"),
            "{out}"
        );
        assert!(
            out.contains("[mcp_servers.mcpx]\ncommand = \"/m\"\nargs = [\"serve\"]\n"),
            "{out}"
        );
        assert!(!out.contains("npx"));
        let mut again = parse(&out).unwrap();
        with_servers(&mut again, "mcp_servers", Some(&servers));
        assert_eq!(
            super::servers(&again, "mcp_servers").unwrap().unwrap(),
            servers
        );
    }

    #[test]
    fn errors_never_quote_the_file() {
        let err = parse("token = \"sk-secret\nx = 1\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(!err.to_string().contains("sk-secret"), "{err}");
    }
}
