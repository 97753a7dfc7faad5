//! One version's protocol schema: its definitions, which methods each side may send, and
//! compiled checks, each compiled once on first use.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use schemaval::{CompileError, Schema};
use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::Side;

/// Why a protocol schema could not be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The schema file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a protocol schema (not JSON, or no definitions).
    #[error("{path}: not a protocol schema: {reason}")]
    NotASchema {
        /// The schema file.
        path: String,
        /// What is missing.
        reason: String,
    },
    /// A check built from the schema does not compile under the policy.
    #[error("{version}: {check}: {source}")]
    Compile {
        /// The protocol version.
        version: String,
        /// The check, e.g. `JSONRPCRequest+CallToolRequest`.
        check: String,
        /// Why it does not compile.
        source: CompileError,
    },
}

/// What kind of message a method is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Request,
    Notification,
}

/// One version's protocol schema.
pub struct Spec {
    version: String,
    document: Value,
    /// `definitions` (draft-07 files) or `$defs` (2020-12 files).
    defs_key: &'static str,
    /// (side, kind, method) → definition name.
    methods: HashMap<(Side, Kind, String), String>,
    compiled: Mutex<HashMap<String, Schema>>,
}

impl Spec {
    /// Reads the schema of `version` from `path`.
    ///
    /// # Errors
    /// [`SpecError`] when the file cannot be read or is not a protocol schema.
    pub fn from_file(version: &str, path: &Path) -> Result<Spec, SpecError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| SpecError::Read {
            path: name.clone(),
            source,
        })?;
        let document = schemaval::parse_json(&bytes).map_err(|e| SpecError::NotASchema {
            path: name.clone(),
            reason: e.to_string(),
        })?;
        Spec::from_value(version, document)
            .map_err(|reason| SpecError::NotASchema { path: name, reason })
    }

    fn from_value(version: &str, document: Value) -> Result<Spec, String> {
        let defs_key = if document.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        let defs = document
            .get(defs_key)
            .and_then(Value::as_object)
            .ok_or("no $defs or definitions")?;
        let mut methods = HashMap::new();
        let unions = [
            ("ClientRequest", Side::Client, Kind::Request),
            ("ServerRequest", Side::Server, Kind::Request),
            ("ClientNotification", Side::Client, Kind::Notification),
            ("ServerNotification", Side::Server, Kind::Notification),
        ];
        for (union, side, kind) in unions {
            // 2026-07-28 has no server-to-client requests: an absent union means none.
            let Some(members) = defs.get(union) else {
                continue;
            };
            // A union of one is the definition itself (2026-07-28's ClientNotification is the
            // cancellation notification).
            let names = match union_members(members) {
                names if names.is_empty() => vec![union.to_owned()],
                names => names,
            };
            for name in names {
                let method = defs
                    .get(&name)
                    .and_then(|d| d.pointer("/properties/method/const"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("{union} member {name} has no method constant"))?;
                methods.insert((side, kind, method.to_owned()), name);
            }
        }
        if methods.is_empty() {
            return Err("no request or notification unions".to_owned());
        }
        Ok(Spec {
            version: version.to_owned(),
            document,
            defs_key,
            methods,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// The protocol version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether the schema defines `name`.
    pub fn has_definition(&self, name: &str) -> bool {
        self.document
            .get(self.defs_key)
            .and_then(|d| d.get(name))
            .is_some()
    }

    /// The definition a `method` sent by `side` as a request or notification must match.
    pub(crate) fn method_definition(&self, side: Side, kind: Kind, method: &str) -> Option<&str> {
        self.methods
            .get(&(side, kind, method.to_owned()))
            .map(String::as_str)
    }

    /// The definition of the result of the request defined as `request`: `XResult` for
    /// `XRequest`, else the schema's `EmptyResult`, else its `Result`.
    pub(crate) fn result_definition(&self, request: &str) -> String {
        let name = request
            .strip_suffix("Request")
            .map(|stem| format!("{stem}Result"));
        match name {
            Some(name) if self.has_definition(&name) => name,
            _ if self.has_definition("EmptyResult") => "EmptyResult".to_owned(),
            _ => "Result".to_owned(),
        }
    }

    /// The envelope of a response with a result, and of an error, in this version.
    pub(crate) fn envelopes(&self) -> (&'static str, &'static str) {
        let response = if self.has_definition("JSONRPCResultResponse") {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        };
        let error = if self.has_definition("JSONRPCErrorResponse") {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        (response, error)
    }

    /// Checks `value` against the definition `name`; one flat line per problem.
    ///
    /// # Errors
    /// [`SpecError::Compile`] when the definition does not compile under the policy.
    pub fn check_type(&self, name: &str, value: &Value) -> Result<Vec<String>, SpecError> {
        self.check(&[name], None, value)
    }

    /// Checks `value` against every definition in `all`, and its `result` member against
    /// `result` when given.
    pub(crate) fn check(
        &self,
        all: &[&str],
        result: Option<&str>,
        value: &Value,
    ) -> Result<Vec<String>, SpecError> {
        let key = match result {
            Some(r) => format!("{}+result:{r}", all.join("+")),
            None => all.join("+"),
        };
        let schema = self.compiled_check(&key, all, result)?;
        let mut lines = match schema.validate(value) {
            Ok(()) => Vec::new(),
            Err(err) => err.lines(),
        };
        // The envelope and the method's own definition often say the same thing twice.
        let mut seen = std::collections::HashSet::new();
        lines.retain(|line| seen.insert(line.clone()));
        Ok(lines)
    }

    fn compiled_check(
        &self,
        key: &str,
        all: &[&str],
        result: Option<&str>,
    ) -> Result<Schema, SpecError> {
        let mut cache = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(schema) = cache.get(key) {
            return Ok(schema.clone());
        }
        let pointer = |name: &str| json!({ "$ref": format!("#/{}/{name}", self.defs_key) });
        let mut parts: Vec<Value> = all.iter().map(|n| pointer(n)).collect();
        if let Some(result) = result {
            parts.push(json!({ "properties": { "result": pointer(result) } }));
        }
        // The whole document, so every definition resolves, with the check at its root.
        let mut root: Map<String, Value> = self.document.as_object().cloned().unwrap_or_default();
        root.insert("allOf".to_owned(), Value::Array(parts));
        let schema =
            Schema::compile(&Value::Object(root)).map_err(|source| SpecError::Compile {
                version: self.version.clone(),
                check: key.to_owned(),
                source,
            })?;
        cache.insert(key.to_owned(), schema.clone());
        Ok(schema)
    }
}

fn union_members(union: &Value) -> Vec<String> {
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| union.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(|member| member.get("$ref").and_then(Value::as_str))
        .filter_map(|r| r.rsplit('/').next())
        .map(str::to_owned)
        .collect()
}
