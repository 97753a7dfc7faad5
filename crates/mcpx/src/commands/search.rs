//! `mcpx tools --search QUERY`: the tools of every configured server (or of the one named),
//! ranked for a task in plain words by the same index the gateway's search mode uses.

use serde_json::Value;
use toolsearch::{Hit, Index, Options};

use super::mcp::Listed;

/// Hits printed unless `--limit` says otherwise: more than the gateway's default, since a person
/// scans a terminal faster than a model reads a result.
pub(crate) const SEARCH_LIMIT: usize = 10;

/// What `mcpx tools --search` was asked.
#[derive(Debug)]
pub(crate) struct Asked<'a> {
    /// The task in plain words.
    pub(crate) query: &'a str,
    /// Hits at most.
    pub(crate) limit: usize,
    /// Print JSON instead of lines.
    pub(crate) json: bool,
    /// Ask the servers even when the cache holds their lists.
    pub(crate) refresh: bool,
}

/// The ranked hits for `query` over the listed servers' tools, at most `limit`.
pub(crate) fn search(listed: &[Listed<'_>], query: &str, limit: usize) -> Vec<Hit> {
    let tools = listed.iter().flat_map(|l| {
        l.tools
            .iter()
            .map(move |t| (l.server.name.as_str(), t.raw()))
    });
    Index::build(tools, &Options::default()).search(query, None, limit)
}

/// One line a hit: `SERVER<TAB>TOOL(ARGUMENTS)<TAB>DESCRIPTION`.
pub(crate) fn lines(hits: &[Hit]) -> String {
    hits.iter()
        .map(|h| {
            format!(
                "{}\t{}({})\t{}\n",
                h.server,
                h.name,
                h.arguments.join(", "),
                h.description
            )
        })
        .collect()
}

/// The hits as JSON: the gateway search tool's structured result, each named as `mcpx serve`
/// exposes it (the server's configured prefix, `SERVER__` by default).
pub(crate) fn json(hits: &[Hit], listed: &[Listed<'_>]) -> Value {
    let name_of = |hit: &Hit| {
        let prefix = listed
            .iter()
            .find(|l| l.server.name == hit.server)
            .map_or_else(
                || mcpgateway::default_prefix(&hit.server),
                |l| l.server.prefix.clone(),
            );
        mcpgateway::exposed_name(&prefix, &hit.name)
    };
    toolsearch::search_result(hits, name_of)["structuredContent"].clone()
}
