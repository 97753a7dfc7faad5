//! Search over MCP tool definitions, for a gateway that lists a few search tools instead of
//! hundreds of servers' tools, and for the CLI's `mcpx tools --search`.
//!
//! Lexical ranking: BM25F over six fields of each tool (name and title, server, the description's
//! first sentence, description, argument names, argument descriptions) weighted by [`Weights`],
//! with the `bm25` crate's term weights. Names are split the way they are written (`get_issue`,
//! `getIssue`, `SERVER__tool`, `kebab-case`), plurals made singular (and a second BM25F over
//! Snowball stems added), and query words expanded with general synonyms (`folder` also searches
//! `directory`, each word by its best synonym), so "show the issues in this repo" finds
//! `get_issue`. Two signals beside a tool's own score: its server's score (the server's tools'
//! words) and how much of its name the query covers. Meaning beside words: a static word
//! table distilled from a sentence-embedding model, compiled in, gives each tool and query a
//! vector; their cosine is fused with the lexical score (`semantic`).
//! The measured recall of these choices on real servers' tools is in BENCHMARKS.md.
//!
//! [`search_mode_tools`] holds the canonical definitions of the search, describe and call tools.

mod document;
mod exposed;
mod index;
mod postings;
mod semantic;
mod signals;
mod synonyms;
mod tokens;

pub use document::{MAX_FIELD_BYTES, MAX_SCHEMA_DEPTH};
pub use exposed::{
    search_mode_tools, search_result, CALL_TOOL, DEFAULT_LIMIT, DESCRIBE_TOOL, SEARCH_TOOL,
};
pub use index::{
    one_line, Combine, Hit, Index, Options, Weights, MAX_LIMIT, MAX_QUERY_BYTES, MAX_WEIGHT,
    ONE_LINE_CHARS,
};
pub use tokens::{Stem, TokenOptions, MAX_TERM_BYTES};
