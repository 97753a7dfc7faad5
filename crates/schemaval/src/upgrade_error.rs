//! Why a schema cannot be presented as an equivalent 2020-12 document.

use thiserror::Error;

/// A construct with no exact 2020-12 equivalent. The caller passes such a schema on unchanged;
/// `mcpx lint` reports it. Every location is a JSON pointer into the original document.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum NotUpgradable {
    /// `$schema` names a dialect this crate does not know.
    #[error("not upgradable: unsupported dialect {uri}")]
    UnsupportedDialect {
        /// The `$schema` value.
        uri: String,
    },
    /// A subschema declares a dialect other than the document's.
    #[error("not upgradable: {location} declares {uri}, the document another dialect")]
    NestedDialect {
        /// Where the nested `$schema` is.
        location: String,
        /// Its value.
        uri: String,
    },
    /// A reference points into a keyword that has no 2020-12 counterpart at that place (a
    /// sibling of `$ref` that drafts 4 to 7 ignore, a keyword unknown to the original dialect).
    #[error("not upgradable: {location}: reference {reference} points into '{keyword}', which is ignored in the original dialect")]
    RefIntoDropped {
        /// Where the reference is.
        location: String,
        /// The reference as written.
        reference: String,
        /// The keyword it passes through.
        keyword: String,
    },
    /// A JSON-pointer reference that does not lead anywhere in its document, or escapes `/` as
    /// `%2F` (its segments would not survive rewriting).
    #[error("not upgradable: {location}: reference {reference} cannot be followed")]
    Pointer {
        /// Where the reference is.
        location: String,
        /// The reference as written.
        reference: String,
    },
    /// A reference or identifier that is not a URI reference.
    #[error("not upgradable: {location}: {value} is not a URI reference")]
    InvalidUri {
        /// Where it is.
        location: String,
        /// The value as written.
        value: String,
    },
    /// An identifier whose fragment 2020-12 cannot carry: a JSON pointer, or a plain name
    /// outside `$anchor`'s grammar.
    #[error("not upgradable: {location}: identifier {id} has no 2020-12 form")]
    Identifier {
        /// Where it is.
        location: String,
        /// The identifier as written.
        id: String,
    },
    /// The upgrade would produce a keyword the object already has, with other content
    /// (`definitions` and `$defs` naming the same entry, `$recursiveRef` beside `$ref`).
    #[error("not upgradable: {location}: '{keyword}' would be written twice")]
    Conflict {
        /// Where it is.
        location: String,
        /// The keyword.
        keyword: String,
    },
    /// A `$recursiveRef` other than `"#"`, a `$recursiveAnchor` away from a resource root, or
    /// `dependencies` holding neither a list of names nor a schema: constructs whose 2019-09
    /// meaning is not fixed by the specification.
    #[error("not upgradable: {location}: '{keyword}' is used in a way 2019-09 leaves undefined")]
    Undefined {
        /// Where it is.
        location: String,
        /// The keyword.
        keyword: String,
    },
    /// References into parts of the document that are not schemas, nested more than
    /// [`crate::MAX_UPGRADE_PASSES`] deep.
    #[error("not upgradable: references into non-schema locations nest more than {limit} deep")]
    TooManyPasses {
        /// The limit.
        limit: usize,
    },
}
