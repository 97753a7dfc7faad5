//! The index: one BM25 scorer (the `bm25` crate's) per field, and a query's score for a tool
//! the weighted sum of its per-field scores. Each field has its own document-length average and
//! idf, so a word rare among names but common in descriptions (`list`) counts for what it is in
//! each. Built once from a tool list; a changed list builds a new index (a few milliseconds for
//! hundreds of tools), so no update path can drift from a fresh build.

use std::collections::HashMap;

use bm25::{Embedder, EmbedderBuilder, Scorer};
use serde_json::Value;

use crate::document::{Document, Field};
use crate::tokens::{head, TokenOptions, Tokenizer};

/// The most hits one search returns, whatever limit is asked for.
pub const MAX_LIMIT: usize = 50;

/// Bytes of a query that are read; the rest is ignored. A task sentence is far shorter.
pub const MAX_QUERY_BYTES: usize = 1024;

/// Characters of the one-line description of a hit (the description's first line, cut at a
/// sentence end when one comes early enough).
pub const ONE_LINE_CHARS: usize = 160;

/// How much each field's BM25 score counts in a tool's score; 0 leaves the field out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// The tool's name and title.
    pub name: f32,
    /// The server's name.
    pub server: f32,
    /// The tool's description.
    pub description: f32,
    /// Argument names (top level and nested).
    pub argument_names: f32,
    /// Argument descriptions.
    pub argument_descriptions: f32,
}

impl Weights {
    fn of(&self, field: Field) -> f32 {
        match field {
            Field::Name => self.name,
            Field::Server => self.server,
            Field::Description => self.description,
            Field::ArgumentNames => self.argument_names,
            Field::ArgumentDescriptions => self.argument_descriptions,
        }
    }
}

impl Default for Weights {
    /// Chosen on the real-tools fixture's task set (BENCHMARKS.md shows the others tried).
    fn default() -> Self {
        Weights {
            name: 2.0,
            server: 1.0,
            description: 1.0,
            argument_names: 0.5,
            argument_descriptions: 0.3,
        }
    }
}

/// The ranking choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How text becomes terms.
    pub tokens: TokenOptions,
    /// Field weights.
    pub weights: Weights,
    /// BM25's term-frequency saturation.
    pub k1: f32,
    /// BM25's length normalization (0: none, 1: full).
    pub b: f32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tokens: TokenOptions::default(),
            weights: Weights::default(),
            k1: 1.2,
            b: 0.75,
        }
    }
}

/// One ranked result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The server that lists the tool.
    pub server: String,
    /// The tool's name as the server lists it.
    pub name: String,
    /// The first line of its description, at most [`ONE_LINE_CHARS`] characters.
    pub description: String,
    /// Its top-level argument names, in the schema's order.
    pub arguments: Vec<String>,
    /// The score (higher is better); comparable only within one search.
    pub score: f32,
}

struct FieldIndex {
    weight: f32,
    embedder: Embedder<u32, Tokenizer>,
    scorer: Scorer<usize, u32>,
}

/// A search index over tool definitions from any number of servers.
pub struct Index {
    documents: Vec<Document>,
    fields: Vec<FieldIndex>,
    skipped: usize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("tools", &self.documents.len())
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Indexes `tools`, each a server's name and one tool object as the server listed it
    /// (`name`, `title`, `description`, `inputSchema`, ...). A tool without a string `name` is
    /// left out and counted in [`Index::skipped`].
    pub fn build<'a>(
        tools: impl IntoIterator<Item = (&'a str, &'a Value)>,
        options: &Options,
    ) -> Index {
        let mut documents = Vec::new();
        let mut skipped = 0;
        for (server, tool) in tools {
            match Document::read(server, tool) {
                Some(d) => documents.push(d),
                None => skipped += 1,
            }
        }
        let mut fields = Vec::new();
        for field in Field::ALL {
            let weight = options.weights.of(field);
            if weight <= 0.0 {
                continue;
            }
            let corpus: Vec<&str> = documents.iter().map(|d| d.field(field)).collect();
            let embedder = EmbedderBuilder::<u32, Tokenizer>::with_tokenizer_and_fit_to_corpus(
                Tokenizer::new(options.tokens),
                &corpus,
            )
            .k1(options.k1)
            .b(options.b)
            .build();
            let mut scorer = Scorer::new();
            for (id, text) in corpus.iter().enumerate() {
                scorer.upsert(&id, embedder.embed(text));
            }
            fields.push(FieldIndex {
                weight,
                embedder,
                scorer,
            });
        }
        Index {
            documents,
            fields,
            skipped,
        }
    }

    /// The number of tools indexed.
    pub fn len(&self) -> usize {
        self.documents.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// Tools left out for having no string `name`.
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// The tools that best match `query` (plain words), best first, at most `limit` (and at most
    /// [`MAX_LIMIT`]); only `server`'s when given. A tool that shares no term with the query is
    /// not a hit; equal scores keep the order the tools were given in.
    pub fn search(&self, query: &str, server: Option<&str>, limit: usize) -> Vec<Hit> {
        let query = head(query, MAX_QUERY_BYTES);
        let limit = limit.min(MAX_LIMIT);
        let mut scores: HashMap<usize, f32> = HashMap::new();
        for f in &self.fields {
            let q = f.embedder.embed(query);
            for m in f.scorer.matches(&q) {
                *scores.entry(m.id).or_default() += f.weight * m.score;
            }
        }
        let mut ranked: Vec<(usize, f32)> = scores
            .into_iter()
            .filter(|&(id, score)| {
                score > 0.0 && server.is_none_or(|s| self.documents[id].server == s)
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(limit)
            .map(|(id, score)| {
                let d = &self.documents[id];
                Hit {
                    server: d.server.clone(),
                    name: d.name.clone(),
                    description: one_line(&d.description),
                    arguments: d.arguments.clone(),
                    score,
                }
            })
            .collect()
    }

    /// How many fields are scored (those of non-zero weight).
    pub fn scored_fields(&self) -> usize {
        self.fields.len()
    }
}

/// The description's first non-empty line, up to its first sentence end when that leaves a
/// useful line, cut to [`ONE_LINE_CHARS`] characters (with `…` when cut).
pub fn one_line(description: &str) -> String {
    let line = description
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = match line.find(". ") {
        Some(end) if end >= 20 => &line[..=end],
        _ => line,
    };
    if line.chars().count() <= ONE_LINE_CHARS {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(ONE_LINE_CHARS - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<(&'static str, Value)> {
        vec![
            (
                "github",
                json!({"name": "get_issue", "description": "Get details of a specific issue in a GitHub repository.",
                       "inputSchema": {"properties": {"owner": {"type": "string"}, "repo": {"type": "string"}, "issue_number": {"type": "number"}}}}),
            ),
            (
                "github",
                json!({"name": "create_pull_request", "description": "Create a new pull request in a GitHub repository.",
                       "inputSchema": {"properties": {"title": {"type": "string"}, "head": {"type": "string", "description": "The branch where your changes are implemented"}}}}),
            ),
            (
                "filesystem",
                json!({"name": "read_text_file", "description": "Read the complete contents of a file from the file system as text.",
                       "inputSchema": {"properties": {"path": {"type": "string"}}}}),
            ),
            (
                "playwright",
                json!({"name": "browser_take_screenshot", "description": "Take a screenshot of the current page.",
                       "inputSchema": {"properties": {"fullPage": {"type": "boolean", "description": "When true, takes a screenshot of the full scrollable page"}}}}),
            ),
            ("broken", json!({"description": "no name"})),
        ]
    }

    fn index(options: &Options) -> Index {
        let t = tools();
        let t: Vec<(&str, &Value)> = t.iter().map(|(s, v)| (*s, v)).collect();
        Index::build(t, options)
    }

    fn top(index: &Index, query: &str) -> Option<String> {
        index.search(query, None, 5).first().map(|h| h.name.clone())
    }

    #[test]
    fn ranks_the_tool_that_does_the_task_first() {
        let i = index(&Options::default());
        assert_eq!(i.len(), 4);
        assert_eq!(i.skipped(), 1);
        assert_eq!(
            top(&i, "open a PR from my branch").as_deref(),
            Some("create_pull_request")
        );
        assert_eq!(top(&i, "show me issue 42").as_deref(), Some("get_issue"));
        assert_eq!(
            top(&i, "screenshot the whole page").as_deref(),
            Some("browser_take_screenshot")
        );
        assert_eq!(
            top(&i, "what is in the file notes.txt").as_deref(),
            Some("read_text_file")
        );
    }

    #[test]
    fn a_hit_carries_its_one_line_description_and_argument_names() {
        let i = index(&Options::default());
        let hits = i.search("issue", None, 1);
        assert_eq!(
            hits,
            [Hit {
                server: "github".into(),
                name: "get_issue".into(),
                description: "Get details of a specific issue in a GitHub repository.".into(),
                arguments: vec!["owner".into(), "repo".into(), "issue_number".into()],
                score: hits[0].score,
            }]
        );
        assert!(hits[0].score > 0.0);
    }

    #[test]
    fn the_server_filter_and_the_limit() {
        let i = index(&Options::default());
        let all = i.search("repository file page", None, 10);
        assert_eq!(all.len(), 4);
        let gh = i.search("repository file page", Some("github"), 10);
        assert_eq!(gh.len(), 2);
        assert!(gh.iter().all(|h| h.server == "github"));
        assert!(i
            .search("repository file page", Some("nope"), 10)
            .is_empty());
        assert_eq!(i.search("repository file page", None, 1).len(), 1);
        assert!(i.search("repository", None, 0).is_empty());
        assert!(i.search("", None, 5).is_empty());
        assert!(
            i.search("zebra", None, 5).is_empty(),
            "no shared term, no hit"
        );
        assert!(i.search("file", None, usize::MAX).len() <= MAX_LIMIT);
    }

    #[test]
    fn name_splitting_is_what_finds_a_name_only_match() {
        let only_names = Weights {
            name: 1.0,
            server: 0.0,
            description: 0.0,
            argument_names: 0.0,
            argument_descriptions: 0.0,
        };
        let split = index(&Options {
            weights: only_names,
            ..Options::default()
        });
        assert_eq!(
            top(&split, "take screenshot").as_deref(),
            Some("browser_take_screenshot")
        );
        let mut whole = Options {
            weights: only_names,
            ..Options::default()
        };
        whole.tokens.split_names = false;
        assert_eq!(top(&index(&whole), "take screenshot"), None);
        assert_eq!(
            top(&index(&whole), "browser_take_screenshot").as_deref(),
            Some("browser_take_screenshot")
        );
    }

    #[test]
    fn argument_fields_count_only_when_weighted() {
        let mut no_args = Options::default();
        no_args.weights.argument_names = 0.0;
        no_args.weights.argument_descriptions = 0.0;
        assert_eq!(index(&no_args).scored_fields(), 3);
        assert_eq!(top(&index(&no_args), "scrollable"), None);
        assert_eq!(
            top(&index(&Options::default()), "scrollable").as_deref(),
            Some("browser_take_screenshot")
        );
    }

    #[test]
    fn long_queries_and_an_empty_index() {
        let i = index(&Options::default());
        let long = "issue ".repeat(MAX_QUERY_BYTES);
        assert_eq!(i.search(&long, None, 1)[0].name, "get_issue");
        let empty = Index::build(std::iter::empty(), &Options::default());
        assert!(empty.is_empty());
        assert!(empty.search("anything", None, 5).is_empty());
    }

    #[test]
    fn one_line_descriptions() {
        assert_eq!(one_line(""), "");
        assert_eq!(one_line("\n\n  Reads a file.\nMore."), "Reads a file.");
        assert_eq!(
            one_line("Reads a file from disk. Only within allowed directories."),
            "Reads a file from disk."
        );
        assert_eq!(one_line("Go. Then more"), "Go. Then more");
        let long = "word ".repeat(100);
        let cut = one_line(&long);
        assert_eq!(cut.chars().count(), ONE_LINE_CHARS);
        assert!(cut.ends_with('…'));
    }
}
