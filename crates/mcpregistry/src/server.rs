//! A server.json as the registry gives it, checked against the server.json schema (the
//! registry's own, bundled in `schemas/server.schema.json`: its assertions without the
//! descriptions) with schemaval, once per process.

use std::sync::OnceLock;

use serde_json::Value;

use crate::error::Error;

const SCHEMA: &str = include_str!("../schemas/server.schema.json");

fn schema() -> &'static schemaval::Schema {
    static SCHEMA_COMPILED: OnceLock<schemaval::Schema> = OnceLock::new();
    SCHEMA_COMPILED.get_or_init(|| {
        schemaval::Schema::from_slice(SCHEMA.as_bytes())
            .expect("the bundled server.json schema compiles")
    })
}

/// A server.json that validates against the schema.
#[derive(Debug, Clone)]
pub struct ServerJson {
    value: Value,
}

impl ServerJson {
    /// `value` when it validates; otherwise one line per problem.
    pub fn checked(value: Value) -> Result<ServerJson, Error> {
        match schema().validate(&value) {
            Ok(()) => Ok(ServerJson { value }),
            Err(err) => Err(Error::Invalid {
                name: value.get("name").and_then(Value::as_str).map(str::to_owned),
                lines: err.lines(),
            }),
        }
    }

    /// The document.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Its name (`io.github.user/weather`).
    pub fn name(&self) -> &str {
        self.value["name"].as_str().unwrap_or_default()
    }

    /// Its version.
    pub fn version(&self) -> &str {
        self.value["version"].as_str().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_holds_the_registry_rules() {
        let minimal = json!({"name": "io.github.user/minimal", "description": "A minimal server.", "version": "1.0.0"});
        assert!(ServerJson::checked(minimal.clone()).is_ok());
        let mut long = minimal.clone();
        long["description"] = json!("x".repeat(101));
        let positional = json!({"name": "io.github.user/p", "description": "d", "version": "1.0.0",
            "packages": [{"registryType": "npm", "identifier": "p", "version": "1.0.0", "transport": {"type": "stdio"},
                "packageArguments": [{"type": "positional"}]}]});
        let mut nameless = minimal;
        nameless.as_object_mut().unwrap().remove("name");
        for (doc, want) in [
            (long, "$.description: maxLength"),
            (positional, "$.packages[0]: oneOf"),
            (nameless, "missing property 'name'"),
        ] {
            let err = ServerJson::checked(doc).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
    }
}
