//! Why a schema failed to compile under the policy.

use thiserror::Error;

/// A schema that cannot be used, with everything needed to print the reason.
///
/// Each variant names its kind first when printed (`unresolved reference: …`), so a list of
/// failures reads the same in `mcpx schema check`, `mcpx lint` and the gateway's log.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The document is larger than [`crate::MAX_SCHEMA_BYTES`]; it was not parsed.
    #[error("schema too large: {size} bytes, limit {limit}")]
    SchemaTooLarge {
        /// The document's size in bytes (for a parsed value, its compact serialization).
        size: usize,
        /// The limit it exceeds.
        limit: usize,
    },
    /// The document is not JSON.
    #[error("invalid JSON: {message} at line {line}, column {column}")]
    InvalidJson {
        /// What the parser objected to.
        message: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
    },
    /// The document nests arrays and objects deeper than [`crate::MAX_DEPTH`].
    #[error("schema too deep: nesting over {limit} levels")]
    TooDeep {
        /// The limit it exceeds.
        limit: usize,
    },
    /// `$schema` names a dialect that is not supported.
    #[error("unsupported dialect: {uri}")]
    UnsupportedDialect {
        /// The `$schema` value.
        uri: String,
    },
    /// A reference points outside the document, or to a part of it that does not exist.
    #[error("unresolved reference: {reference} at {location}")]
    UnresolvedRef {
        /// The reference as written.
        reference: String,
        /// Where the reference stands in the schema, as a path (`$.properties.a['$ref']`).
        location: String,
    },
    /// The document is not a valid schema of its dialect (against the dialect's metaschema, or
    /// a keyword whose value cannot be used, such as a malformed `pattern`).
    #[error("invalid schema: {location}: {message}")]
    InvalidSchema {
        /// Where the problem stands in the schema, as a path.
        location: String,
        /// What is wrong there.
        message: String,
    },
}

impl CompileError {
    /// The kind of failure, as a short fixed name (`unresolved-reference`, `too-large`, …),
    /// for machine-readable output.
    pub fn kind(&self) -> &'static str {
        match self {
            CompileError::SchemaTooLarge { .. } => "too-large",
            CompileError::InvalidJson { .. } => "invalid-json",
            CompileError::TooDeep { .. } => "too-deep",
            CompileError::UnsupportedDialect { .. } => "unsupported-dialect",
            CompileError::UnresolvedRef { .. } => "unresolved-reference",
            CompileError::InvalidSchema { .. } => "invalid-schema",
        }
    }
}
