//! Every bound the policy puts on schemas and instances, in one place.
//!
//! Each limit exists because the validator is fed by servers and clients mcpx does not control:
//! without it, one hostile document could take unbounded time, memory or stack.

/// Largest schema document accepted, in bytes (1 MiB). For a parsed value it is measured as the
/// length of its compact serialization. A document of exactly this size is accepted.
pub const MAX_SCHEMA_BYTES: usize = 1024 * 1024;

/// Deepest nesting of arrays and objects accepted in a schema or an instance.
///
/// Validation recurses once per nesting level; this bound keeps that recursion well inside the
/// 2 MiB stack of a test or async worker thread, in debug builds too. `serde_json`'s parser
/// refuses a 128th level, so this is the same bound for parsed text and for values built in
/// memory: anything [`crate::parse_json`] returns is within it.
pub const MAX_DEPTH: usize = 127;

/// Most backtracking steps one `pattern` or `patternProperties` match may take before it is
/// abandoned (and the value counted invalid). Only patterns that need backtracking (look-around,
/// back-references) use a backtracking engine at all; every other pattern runs in linear time.
pub const MAX_REGEX_BACKTRACKS: usize = 100_000;

/// Largest compiled form of one regular expression, in bytes.
pub const MAX_REGEX_SIZE: usize = 2 * 1024 * 1024;

/// Most characters of a string value quoted in a violation line; longer strings are cut with `…`.
pub const MAX_QUOTED_CHARS: usize = 40;

/// Most `enum` options listed in a violation line; the rest are counted.
pub const MAX_LISTED_OPTIONS: usize = 8;

/// Most alternatives of an `anyOf`/`oneOf` whose first problem is summarised in a violation line.
pub const MAX_LISTED_ALTERNATIVES: usize = 4;

/// Most references whose graph is searched for cycles at compile time; a schema with more is
/// taken to recurse (so its instances' depth is measured). Bounds the quadratic search on hostile
/// documents; real tool schemas have tens.
pub const MAX_REFS_FOR_CYCLE_SEARCH: usize = 2_000;

/// Most passes the 2020-12 upgrade makes over a document whose references point into places that
/// are not schema positions (each pass may reveal such a place holding further references).
/// Real schemas need one; the suite's deepest case needs two.
pub const MAX_UPGRADE_PASSES: usize = 8;

/// Longest string or property name compared when looking for a hint (characters); longer ones
/// get none, so the edit-distance work per line stays small.
pub const MAX_HINT_CHARS: usize = 64;

/// Most enum options or declared properties compared when looking for a hint.
pub const MAX_HINT_CANDIDATES: usize = 256;

/// Most edits (insert, delete, substitute, swap two neighbours) between a near miss and the
/// name or value a hint suggests; a suggestion is also at most half its own length away.
pub const MAX_HINT_EDITS: usize = 2;

/// Most local `$ref`s followed to find a missing property's declared type for a hint.
pub const MAX_HINT_REF_HOPS: usize = 8;

/// Most rounds of fixes [`crate::Schema::coerce`] makes: one wraps a single value in an array,
/// the next fixes that array's item (`"7"` → `["7"]` → `[7]`).
pub const MAX_COERCION_ROUNDS: usize = 2;

/// Deepest subschema nesting [`crate::compare`] reads for the direction of a change; a
/// difference deeper than this counts as [`crate::SchemaChange::Both`].
pub const MAX_COMPARE_DEPTH: usize = 64;
