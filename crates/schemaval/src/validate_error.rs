//! Why an instance was not accepted.

use std::fmt;

use crate::Violation;

/// An instance that did not validate.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValidateError {
    /// The instance violates the schema; one entry per problem, never empty.
    Invalid(Vec<Violation>),
    /// The instance nests deeper than [`crate::MAX_DEPTH`] under a schema whose validation
    /// would follow it that deep; it was not validated.
    TooDeep {
        /// The limit it exceeds.
        limit: usize,
    },
}

impl ValidateError {
    /// The flat lines, one per problem: `$.count: got string, want integer`.
    pub fn lines(&self) -> Vec<String> {
        match self {
            ValidateError::Invalid(violations) => {
                violations.iter().map(|v| v.line().to_owned()).collect()
            }
            ValidateError::TooDeep { limit } => {
                vec![format!(
                    "$: nesting deeper than {limit} levels is not accepted"
                )]
            }
        }
    }

    /// The hint beside each line of [`ValidateError::lines`], in the same order: what would be
    /// right where that is certain ([`Violation::hint`]), `None` elsewhere.
    pub fn hints(&self) -> Vec<Option<String>> {
        match self {
            ValidateError::Invalid(violations) => violations
                .iter()
                .map(|v| v.hint().map(str::to_owned))
                .collect(),
            ValidateError::TooDeep { .. } => vec![None],
        }
    }
}

impl fmt::Display for ValidateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

impl std::error::Error for ValidateError {}
