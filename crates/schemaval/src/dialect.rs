//! Which JSON Schema dialect a document is written in.
//!
//! No `$schema` means 2020-12. The dialects real MCP servers declare are honoured by their own
//! rules; anything else is refused rather than guessed at.

use std::fmt;

use serde_json::Value;

use crate::CompileError;

/// A JSON Schema dialect mcpx validates by its own rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// Draft 4.
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7, what most MCP servers emit today.
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12, the default.
    #[default]
    Draft202012,
}

impl Dialect {
    /// Every supported dialect, oldest first.
    pub const ALL: [Dialect; 5] = [
        Dialect::Draft4,
        Dialect::Draft6,
        Dialect::Draft7,
        Dialect::Draft201909,
        Dialect::Draft202012,
    ];

    /// The dialect a `$schema` URI names (with or without `http`/`https`, trailing `#`), if it
    /// is one of the supported ones.
    pub fn from_uri(uri: &str) -> Option<Dialect> {
        let rest = uri
            .strip_prefix("https://")
            .or_else(|| uri.strip_prefix("http://"))?;
        let path = rest.strip_prefix("json-schema.org/")?;
        match path.trim_end_matches('#') {
            "draft-04/schema" => Some(Dialect::Draft4),
            "draft-06/schema" => Some(Dialect::Draft6),
            "draft-07/schema" => Some(Dialect::Draft7),
            "draft/2019-09/schema" => Some(Dialect::Draft201909),
            "draft/2020-12/schema" => Some(Dialect::Draft202012),
            _ => None,
        }
    }

    /// The dialect a schema document declares, `default` when it declares none.
    ///
    /// # Errors
    /// [`CompileError::UnsupportedDialect`] for a `$schema` naming anything else, and
    /// [`CompileError::InvalidSchema`] for a `$schema` that is not a string.
    pub fn of(schema: &Value, default: Dialect) -> Result<Dialect, CompileError> {
        match schema.get("$schema") {
            None => Ok(default),
            Some(Value::String(uri)) => Dialect::from_uri(uri)
                .ok_or_else(|| CompileError::UnsupportedDialect { uri: uri.clone() }),
            Some(_) => Err(CompileError::InvalidSchema {
                location: "$['$schema']".to_owned(),
                message: "got a non-string, want a dialect URI".to_owned(),
            }),
        }
    }

    /// The canonical `$schema` URI of this dialect.
    pub fn uri(self) -> &'static str {
        match self {
            Dialect::Draft4 => "http://json-schema.org/draft-04/schema#",
            Dialect::Draft6 => "http://json-schema.org/draft-06/schema#",
            Dialect::Draft7 => "http://json-schema.org/draft-07/schema#",
            Dialect::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
            Dialect::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        }
    }

    pub(crate) fn draft(self) -> referencing::Draft {
        match self {
            Dialect::Draft4 => referencing::Draft::Draft4,
            Dialect::Draft6 => referencing::Draft::Draft6,
            Dialect::Draft7 => referencing::Draft::Draft7,
            Dialect::Draft201909 => referencing::Draft::Draft201909,
            Dialect::Draft202012 => referencing::Draft::Draft202012,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::Draft4 => "draft-04",
            Dialect::Draft6 => "draft-06",
            Dialect::Draft7 => "draft-07",
            Dialect::Draft201909 => "2019-09",
            Dialect::Draft202012 => "2020-12",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_dialects_are_recognised_in_every_spelling() {
        for d in Dialect::ALL {
            assert_eq!(Dialect::from_uri(d.uri()), Some(d));
            let other = if d.uri().starts_with("https") {
                d.uri().replacen("https", "http", 1)
            } else {
                d.uri().replacen("http", "https", 1)
            };
            assert_eq!(Dialect::from_uri(&other), Some(d));
            assert_eq!(Dialect::from_uri(d.uri().trim_end_matches('#')), Some(d));
        }
    }

    #[test]
    fn no_schema_means_2020_12_and_unknown_is_refused() {
        let d = Dialect::default();
        assert_eq!(d, Dialect::Draft202012);
        assert_eq!(Dialect::of(&json!({}), d).unwrap(), Dialect::Draft202012);
        assert_eq!(Dialect::of(&json!(true), d).unwrap(), Dialect::Draft202012);
        assert_eq!(
            Dialect::of(&json!({}), Dialect::Draft7).unwrap(),
            Dialect::Draft7
        );
        let err = Dialect::of(
            &json!({"$schema": "http://json-schema.org/draft-03/schema#"}),
            d,
        );
        assert!(
            matches!(err, Err(CompileError::UnsupportedDialect { uri }) if uri.contains("draft-03"))
        );
        assert!(matches!(
            Dialect::of(&json!({"$schema": 7}), d),
            Err(CompileError::InvalidSchema { .. })
        ));
    }
}
