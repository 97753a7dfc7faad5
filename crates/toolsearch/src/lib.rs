//! Search over MCP tool definitions, for a gateway that lists a few search tools instead of
//! hundreds of servers' tools, and for the CLI's `mcpx tools --search`.
//!
//! Lexical ranking: BM25 (the `bm25` crate's scorer) over five fields of each tool (name and
//! title, server, description, argument names, argument descriptions), each scored on its own
//! and summed with [`Weights`]. Names are split the way they are written (`get_issue`,
//! `getIssue`, `SERVER__tool`, `kebab-case`) and words stemmed, so "issues" finds `get_issue`.
//! The measured recall of these choices on real servers' tools is in BENCHMARKS.md.
//!
//! [`search_mode_tools`] holds the canonical definitions of the search, describe and call tools.

mod document;
mod exposed;
mod index;
mod tokens;

pub use document::{MAX_FIELD_BYTES, MAX_SCHEMA_DEPTH};
pub use exposed::{
    search_mode_tools, search_result, CALL_TOOL, DEFAULT_LIMIT, DESCRIBE_TOOL, SEARCH_TOOL,
};
pub use index::{
    one_line, Hit, Index, Options, Weights, MAX_LIMIT, MAX_QUERY_BYTES, ONE_LINE_CHARS,
};
pub use tokens::{TokenOptions, MAX_TERM_BYTES};
