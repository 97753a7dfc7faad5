//! JSON Schema validation with mcpx's dialect policy.
//!
//! mcpx compiles the schemas of servers it does not control, so the policy is explicit:
//!
//! - **No network, ever.** A schema may reference only itself and the built-in metaschemas of
//!   the supported dialects. Every other reference, also one inside an unused `$defs` entry, is a
//!   [`CompileError::UnresolvedRef`].
//! - **Bounded.** Documents over [`MAX_SCHEMA_BYTES`] are refused before parsing; nesting over
//!   [`MAX_DEPTH`] is refused; `pattern` matching is bounded by [`MAX_REGEX_BACKTRACKS`].
//! - **`format` is an annotation**, never an assertion, in every dialect; so are
//!   `contentEncoding` and `contentMediaType`.
//! - **Exact numbers.** Integers and decimals are compared by their text, never through `f64`,
//!   for bounds, `multipleOf`, `enum`, `const` and `uniqueItems`.
//! - **Flat errors.** Every problem is one line, `$.count: got string, want integer`, with a
//!   hint beside it where what would be right is certain (`did you mean 3, without quotes?`).
//! - **Dialects.** No `$schema` means 2020-12; draft-04, -06, -07 and 2019-09 are honoured by
//!   their own rules; anything else is a [`CompileError::UnsupportedDialect`]. [`upgrade`] presents
//!   an older dialect's document as the equivalent 2020-12 one, or says why it cannot.
//!
//! This crate is the only place in the workspace that uses the underlying validator.

#![deny(missing_docs)]

mod coerce;
mod compare;
mod dialect;
mod error;
mod hint;
mod json;
mod limits;
mod path;
mod refs;
mod render;
mod schema;
mod unique;
mod upgrade;
mod upgrade_error;
mod validate_error;
mod violation;

pub use coerce::Coerced;
pub use compare::{compare, SchemaChange};
pub use dialect::Dialect;
pub use error::CompileError;
pub use hint::with_hints;
pub use json::parse_json;
pub use limits::{
    MAX_COERCION_ROUNDS, MAX_COMPARE_DEPTH, MAX_DEPTH, MAX_HINT_CANDIDATES, MAX_HINT_CHARS,
    MAX_HINT_EDITS, MAX_HINT_REF_HOPS, MAX_LISTED_ALTERNATIVES, MAX_LISTED_OPTIONS,
    MAX_QUOTED_CHARS, MAX_REFS_FOR_CYCLE_SEARCH, MAX_REGEX_BACKTRACKS, MAX_REGEX_SIZE,
    MAX_SCHEMA_BYTES, MAX_UPGRADE_PASSES,
};
#[doc(hidden)]
pub use schema::policy_options;
pub use schema::{Compiler, Schema};
pub use unique::{duplicate_member, DuplicateMember};
pub use upgrade::upgrade;
pub use upgrade_error::NotUpgradable;
pub use validate_error::ValidateError;
pub use violation::Violation;
