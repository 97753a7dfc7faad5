//! A compiled schema: compiled once under the policy, validated against many times.

use std::sync::Arc;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

use crate::json::{compact_len, deeper_than};
use crate::violation::{self, Violation};
use crate::{path, refs, CompileError, Dialect, ValidateError};
use crate::{MAX_DEPTH, MAX_REGEX_BACKTRACKS, MAX_REGEX_SIZE, MAX_SCHEMA_BYTES};

/// A schema compiled under mcpx's policy. Cheap to clone and share across threads.
#[derive(Clone)]
pub struct Schema {
    inner: Arc<Inner>,
}

struct Inner {
    validator: Validator,
    /// The document, for the hints beside violation lines (shared with them).
    document: Arc<Value>,
    dialect: Dialect,
    recursive: bool,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("dialect", &self.inner.dialect)
            .finish_non_exhaustive()
    }
}

/// Compiles schemas under the policy; the one setting is the dialect assumed for a document that
/// declares none (2020-12 unless told otherwise).
#[derive(Debug, Clone, Copy, Default)]
pub struct Compiler {
    default_dialect: Dialect,
}

impl Compiler {
    /// A compiler that assumes 2020-12 for documents without `$schema`.
    pub fn new() -> Compiler {
        Compiler::default()
    }

    /// Assume `dialect` for documents without `$schema`.
    #[must_use]
    pub fn default_dialect(mut self, dialect: Dialect) -> Compiler {
        self.default_dialect = dialect;
        self
    }

    /// Compiles a schema document given as JSON text.
    ///
    /// The size is checked before anything is parsed.
    ///
    /// # Errors
    /// Any [`CompileError`]; [`CompileError::SchemaTooLarge`] for a document over
    /// [`MAX_SCHEMA_BYTES`], [`CompileError::InvalidJson`] for one that does not parse.
    pub fn from_slice(&self, bytes: &[u8]) -> Result<Schema, CompileError> {
        if bytes.len() > MAX_SCHEMA_BYTES {
            return Err(CompileError::SchemaTooLarge {
                size: bytes.len(),
                limit: MAX_SCHEMA_BYTES,
            });
        }
        let value = crate::parse_json(bytes)?;
        self.compile_unsized(&value)
    }

    /// Compiles an already-parsed schema. Its size is the length of its compact serialization.
    ///
    /// # Errors
    /// Any [`CompileError`].
    pub fn compile(&self, schema: &Value) -> Result<Schema, CompileError> {
        let size = compact_len(schema);
        if size > MAX_SCHEMA_BYTES {
            return Err(CompileError::SchemaTooLarge {
                size,
                limit: MAX_SCHEMA_BYTES,
            });
        }
        self.compile_unsized(schema)
    }

    fn compile_unsized(&self, schema: &Value) -> Result<Schema, CompileError> {
        if deeper_than(schema, MAX_DEPTH) {
            return Err(CompileError::TooDeep { limit: MAX_DEPTH });
        }
        let dialect = Dialect::of(schema, self.default_dialect)?;
        let shape = refs::check(schema, dialect)?;
        let validator = policy_options(dialect)
            .build(schema)
            .map_err(|err| compile_error(schema, &err))?;
        Ok(Schema {
            inner: Arc::new(Inner {
                validator,
                document: Arc::new(schema.clone()),
                dialect,
                recursive: shape.recursive,
            }),
        })
    }
}

impl Schema {
    /// Compiles a schema document given as JSON text, 2020-12 unless it declares otherwise.
    /// See [`Compiler::from_slice`].
    ///
    /// # Errors
    /// Any [`CompileError`].
    pub fn from_slice(bytes: &[u8]) -> Result<Schema, CompileError> {
        Compiler::new().from_slice(bytes)
    }

    /// Compiles an already-parsed schema, 2020-12 unless it declares otherwise.
    /// See [`Compiler::compile`].
    ///
    /// # Errors
    /// Any [`CompileError`].
    pub fn compile(schema: &Value) -> Result<Schema, CompileError> {
        Compiler::new().compile(schema)
    }

    /// The underlying validator.
    pub(crate) fn validator(&self) -> &Validator {
        &self.inner.validator
    }

    /// The dialect the schema is validated by.
    pub fn dialect(&self) -> Dialect {
        self.inner.dialect
    }

    /// Whether `instance` is valid, without building any error lines. An instance nested
    /// deeper than [`MAX_DEPTH`] is not valid under a schema whose validation would follow it.
    pub fn is_valid(&self, instance: &Value) -> bool {
        !self.too_deep(instance) && self.inner.validator.is_valid(instance)
    }

    /// Validates `instance`, returning every problem as a flat line.
    ///
    /// # Errors
    /// [`ValidateError::Invalid`] with the violations, or [`ValidateError::TooDeep`] for an
    /// instance nested deeper than [`MAX_DEPTH`] under a schema whose validation would follow it.
    pub fn validate(&self, instance: &Value) -> Result<(), ValidateError> {
        if self.too_deep(instance) {
            return Err(ValidateError::TooDeep { limit: MAX_DEPTH });
        }
        let mut violations: Vec<Violation> = Vec::new();
        for error in self.inner.validator.iter_errors(instance) {
            violation::push_violations(&self.inner.document, instance, &error, &mut violations);
        }
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ValidateError::Invalid(violations))
        }
    }

    /// Validation recurses as deep as the schema does, and through a reference cycle as deep as
    /// the instance: only then is the instance's depth measured.
    pub(crate) fn too_deep(&self, instance: &Value) -> bool {
        self.inner.recursive && deeper_than(instance, MAX_DEPTH)
    }
}

/// The underlying validator's options that carry the policy: offline with the built-in
/// metaschemas, formats and content as annotations, bounded regular expressions.
///
/// Public only so the benchmarks can time the raw crate with exactly these options.
#[doc(hidden)]
pub fn policy_options(dialect: Dialect) -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(dialect.draft())
        .with_registry(&referencing::SPECIFICATIONS)
        .offline()
        .should_validate_formats(false)
        .should_ignore_unknown_formats(true)
        .without_content_media_type_support("application/json")
        .without_content_encoding_support("base64")
        .with_pattern_options(
            PatternOptions::fancy_regex()
                .backtrack_limit(MAX_REGEX_BACKTRACKS)
                .size_limit(MAX_REGEX_SIZE),
        )
}

fn compile_error(schema: &Value, err: &jsonschema::ValidationError<'_>) -> CompileError {
    use jsonschema::error::ValidationErrorKind as K;
    match err.kind() {
        K::Referencing(referencing::Error::UnknownSpecification { specification }) => {
            CompileError::UnsupportedDialect {
                uri: specification.clone(),
            }
        }
        K::Referencing(inner) => CompileError::UnresolvedRef {
            reference: match inner {
                referencing::Error::Unretrievable { uri, .. } => uri.clone(),
                other => other.to_string(),
            },
            location: "$".to_owned(),
        },
        K::Format { format } if format == "regex" => CompileError::InvalidSchema {
            location: path::from_pointer(schema, err.instance_path().as_str()),
            message: "not a valid regular expression".to_owned(),
        },
        _ => {
            // A metaschema violation: the instance is the schema itself.
            let location = path::from_pointer(schema, err.instance_path().as_str());
            let message = violation::schema_messages(schema, err);
            CompileError::InvalidSchema { location, message }
        }
    }
}
