//! Adding imported servers to mcpx's own config file, predictably: a name not taken is added
//! as it is; an entry JSON-equal to the one already under its name is merged (nothing
//! written); a different one is renamed `NAME-CLIENT` (then `NAME-CLIENT-2`, …) with a note.
//! New members go at the end of the servers object (`mcpServers`, or `servers` in a file that
//! uses that form), and every other byte of the file stays as it was.

use std::path::Path;

use serde_json::Value;

use crate::error::Error;
use crate::jsonc;

/// The most renames tried for one name (`NAME-CLIENT-2` … `NAME-CLIENT-N`).
const MAX_RENAMES: usize = 1000;

/// What import did with one server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Added under its own name.
    Added {
        /// Its name.
        name: String,
    },
    /// Already in mcpx's config, the same entry: merged.
    Same {
        /// Its name in the client.
        name: String,
        /// Its name in mcpx's config.
        to: String,
    },
    /// mcpx's config has another server of that name: added under a new one.
    Renamed {
        /// Its name in the client.
        name: String,
        /// Its name in mcpx's config.
        to: String,
    },
}

/// mcpx's config text with `imported` added, and what happened to each.
pub(crate) fn merge(
    path: &Path,
    text: Option<&str>,
    imported: &[(String, Value)],
    client: &str,
) -> Result<(String, Vec<Outcome>), Error> {
    let mut text = match text {
        Some(t) if !t.trim().is_empty() => t.to_owned(),
        _ => "{\n  \"mcpServers\": {}\n}\n".to_owned(),
    };
    let malformed = |syntax| Error::Malformed {
        path: path.to_path_buf(),
        format: "JSON",
        syntax,
    };
    let mut doc = jsonc::parse(&text, false).map_err(malformed)?;
    let key = if doc.value.get("mcpServers").is_none() && doc.value.get("servers").is_some() {
        "servers"
    } else {
        "mcpServers"
    };
    match doc.value.get(key) {
        None | Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(Error::NotAnObject {
                path: path.to_path_buf(),
                at: format!("$.{key}"),
            })
        }
    }
    if doc.value.get(key).is_none() {
        text = jsonc::set(
            &text,
            &doc,
            &[key.to_owned()],
            &Value::Object(Default::default()),
        )
        .map_err(|at| Error::NotAnObject {
            path: path.to_path_buf(),
            at,
        })?;
        doc = jsonc::parse(&text, false).map_err(malformed)?;
    }
    let mut outcomes = Vec::new();
    for (name, entry) in imported {
        let existing =
            |n: &str, doc: &jsonc::Doc| doc.value.get(key).and_then(|s| s.get(n)).cloned();
        let mut to = name.clone();
        let mut n = 1;
        let outcome = loop {
            match existing(&to, &doc) {
                None if to == *name => break Outcome::Added { name: name.clone() },
                None => {
                    break Outcome::Renamed {
                        name: name.clone(),
                        to: to.clone(),
                    }
                }
                Some(same) if same == *entry => {
                    break Outcome::Same {
                        name: name.clone(),
                        to: to.clone(),
                    }
                }
                Some(_) if n > MAX_RENAMES => {
                    return Err(Error::Config {
                        path: path.to_path_buf(),
                        problem: format!("over {MAX_RENAMES} servers named {name}-{client}-N"),
                    })
                }
                Some(_) => {
                    n += 1;
                    to = if n == 2 {
                        format!("{name}-{client}")
                    } else {
                        format!("{name}-{client}-{}", n - 1)
                    };
                }
            }
        };
        if !matches!(outcome, Outcome::Same { .. }) {
            text = jsonc::set(&text, &doc, &[key.to_owned(), to.clone()], entry).map_err(|at| {
                Error::NotAnObject {
                    path: path.to_path_buf(),
                    at,
                }
            })?;
            doc = jsonc::parse(&text, false).map_err(malformed)?;
        }
        outcomes.push(outcome);
    }
    Ok((text, outcomes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collisions_merge_or_rename() {
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n    \"b\": {\"command\": \"y\"}\n  },\n  \"gateway\": {}\n}\n";
        let imported = vec![
            ("a".to_owned(), json!({"command": "x"})),
            ("b".to_owned(), json!({"command": "other"})),
            ("c".to_owned(), json!({"url": "https://c/mcp"})),
        ];
        let (out, outcomes) = merge(Path::new("m.json"), Some(text), &imported, "cursor").unwrap();
        assert_eq!(
            outcomes,
            [
                Outcome::Same {
                    name: "a".into(),
                    to: "a".into()
                },
                Outcome::Renamed {
                    name: "b".into(),
                    to: "b-cursor".into()
                },
                Outcome::Added { name: "c".into() },
            ]
        );
        let value: Value = serde_json::from_str(&out).unwrap();
        let names: Vec<_> = value["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(names, ["a", "b", "b-cursor", "c"]);
        assert!(out.ends_with("  },\n  \"gateway\": {}\n}\n"));
        // Again: everything is there already.
        let (again, outcomes) =
            merge(Path::new("m.json"), Some(&out), &imported, "cursor").unwrap();
        assert_eq!(again, out);
        assert!(matches!(&outcomes[1], Outcome::Same { to, .. } if to == "b-cursor"));
        let (fresh, _) = merge(Path::new("m.json"), None, &imported[..1], "cursor").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&fresh).unwrap(),
            json!({"mcpServers": {"a": {"command": "x"}}})
        );
    }
}
