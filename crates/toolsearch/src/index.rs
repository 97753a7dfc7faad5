//! The index: tools scored by BM25 (the `bm25` crate's term weights), either as BM25F (each tool
//! one document in which every field's text is repeated as often as its weight: term frequencies
//! add up across fields before they saturate, and the tool's whole length normalizes them) or as
//! a weighted sum of one BM25 per field. BM25F is the default: it ranked better on the real-tools
//! fixture (BENCHMARKS.md). A second BM25F over Snowball stems adds to the first; the sum,
//! divided by the best tool's, then gets the server context and the name coverage (`signals`).
//! Built once from a tool list; a changed list builds a new index (about half a second for the
//! fixture's 485 tools, release build), so no update path can drift from a fresh build.

use std::collections::HashSet;

use bm25::EmbedderBuilder;
use serde_json::Value;

use crate::document::{Document, Field};
use crate::postings::Postings;
use crate::semantic::{self, Words};
use crate::signals::{Names, Servers};
use crate::synonyms::{Query, Synonyms};
use crate::tokens::{head, Stem, TokenOptions, Tokenizer};

/// The most hits one search returns, whatever limit is asked for.
pub const MAX_LIMIT: usize = 50;

/// Bytes of a query that are read; the rest is ignored. A task sentence is far shorter.
pub const MAX_QUERY_BYTES: usize = 1024;

/// Characters of the one-line description of a hit (the description's first line, cut at a
/// sentence end when one comes early enough).
pub const ONE_LINE_CHARS: usize = 160;

/// The most a field's weight counts: in BM25F a weight is how many times the field's text is
/// repeated in the combined document, so it also bounds the index's size.
pub const MAX_WEIGHT: u8 = 8;

/// How much each field counts (0 leaves it out, more than [`MAX_WEIGHT`] counts as that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    /// The tool's name and title.
    pub name: u8,
    /// The server's name.
    pub server: u8,
    /// The description's first sentence (what the tool does, before usage notes and examples),
    /// on top of its place in the whole description.
    pub lead: u8,
    /// The tool's description.
    pub description: u8,
    /// Argument names (top level and nested).
    pub argument_names: u8,
    /// Argument descriptions.
    pub argument_descriptions: u8,
}

impl Weights {
    fn of(&self, field: Field) -> u8 {
        let w = match field {
            Field::Name => self.name,
            Field::Server => self.server,
            Field::Lead => self.lead,
            Field::Description => self.description,
            Field::ArgumentNames => self.argument_names,
            Field::ArgumentDescriptions => self.argument_descriptions,
        };
        w.min(MAX_WEIGHT)
    }
}

impl Default for Weights {
    /// Chosen on the real-tools fixture's task set (BENCHMARKS.md shows the others tried).
    fn default() -> Self {
        Weights {
            name: 3,
            server: 2,
            lead: 1,
            description: 1,
            argument_names: 1,
            argument_descriptions: 1,
        }
    }
}

/// How the fields' weights combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// BM25F: one document per tool in which each field's text appears as many times as its
    /// weight, so a term's frequency is the weighted sum over the fields and the length
    /// normalization is the whole tool's (BM25F with one `b` for all fields).
    Bm25f,
    /// One BM25 per field (its own idf and average length), the scores summed times the weights.
    FieldSum,
}

/// The ranking choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How text becomes terms.
    pub tokens: TokenOptions,
    /// Field weights.
    pub weights: Weights,
    /// How the weighted fields combine.
    pub combine: Combine,
    /// BM25's term-frequency saturation (2.0 here, not the usual 1.2: a field repeated by its
    /// weight needs more room before a term saturates; it ranked better on the fixture).
    pub k1: f32,
    /// BM25's length normalization (0: none, 1: full).
    pub b: f32,
    /// How much a query's synonyms count against its own words (0: synonyms off).
    pub synonym_weight: f32,
    /// Each query word's synonyms count by the one that scores best for a tool, not summed: a
    /// word of a large group (`show`: get, read, view, display, ...) then weighs no more than a
    /// word with one synonym.
    pub synonym_best: bool,
    /// How much a second BM25 over Snowball-stemmed terms adds to the first (0: off), so
    /// `deployed` meets `deployment` without the stemmer's over-reach deciding alone.
    pub stem_fallback: f32,
    /// How much the server's own score adds, against the best tool's score as 1 (0: off).
    pub server_context: f32,
    /// How much the name's coverage by the query adds, against the best tool's score as 1
    /// (0: off).
    pub name_coverage: f32,
    /// The share of the meaning score (the static word table's cosine, scaled to 0..1 over
    /// the tools) in the final score, the lexical score (scaled to its best) having the rest
    /// (0: lexical alone).
    pub semantic: f32,
    /// A tool that shares no word with the query is a hit only when its meaning score (0..1
    /// over the tools) is at least this: the few nearest in meaning, not every tool but the
    /// farthest.
    pub meaning_alone: f32,
    /// And only when its cosine with the query is at least this: the nearest tool in meaning
    /// to a query about nothing the tools do ("zebra giraffe") is still far from it.
    pub cosine_alone: f32,
}

impl Default for Options {
    /// Chosen on the fixture's tuning tasks alone (`tasks.tsv`); BENCHMARKS.md gives each
    /// choice's recall there and on the held-out tasks.
    fn default() -> Self {
        Options {
            tokens: TokenOptions::default(),
            weights: Weights::default(),
            combine: Combine::Bm25f,
            k1: 2.0,
            b: 0.75,
            synonym_weight: 0.5,
            synonym_best: true,
            stem_fallback: 1.0,
            server_context: 0.2,
            name_coverage: 0.2,
            semantic: 0.6,
            meaning_alone: 0.8,
            cosine_alone: 0.3,
        }
    }
}

impl Options {
    /// The default without the word table: lexical ranking alone (half the search's time).
    pub fn lexical() -> Options {
        Options {
            semantic: 0.0,
            ..Options::default()
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

/// One BM25 scorer: over one field, or over the combined fields.
struct Scored {
    /// The multiplier of its scores.
    weight: f32,
    postings: Postings,
}

/// The tools' BM25 scores under one tokenizer, and the query's terms and synonyms under it.
struct Lexical {
    scored: Vec<Scored>,
    tokenizer: Tokenizer,
    synonyms: Synonyms,
}

impl Lexical {
    fn build(documents: &[Document], tokens: TokenOptions, options: &Options) -> Lexical {
        let corpora: Vec<(f32, Vec<String>)> = match options.combine {
            Combine::Bm25f => {
                let combined = documents
                    .iter()
                    .map(|d| {
                        let mut text = String::new();
                        for field in Field::ALL {
                            for _ in 0..options.weights.of(field) {
                                text.push_str(d.field(field));
                                text.push('\n');
                            }
                        }
                        text
                    })
                    .collect();
                vec![(1.0, combined)]
            }
            Combine::FieldSum => Field::ALL
                .into_iter()
                .filter(|f| options.weights.of(*f) > 0)
                .map(|f| {
                    let texts = documents.iter().map(|d| d.field(f).to_owned()).collect();
                    (f32::from(options.weights.of(f)), texts)
                })
                .collect(),
        };
        let mut scored = Vec::new();
        for (weight, texts) in corpora {
            let corpus: Vec<&str> = texts.iter().map(String::as_str).collect();
            let embedder = EmbedderBuilder::<u32, Tokenizer>::with_tokenizer_and_fit_to_corpus(
                Tokenizer::new(tokens),
                &corpus,
            )
            .k1(options.k1)
            .b(options.b)
            .build();
            let postings = Postings::new(corpus.iter().map(|text| embedder.embed(text)));
            scored.push(Scored { weight, postings });
        }
        let tokenizer = Tokenizer::new(tokens);
        let synonyms = Synonyms::new(&tokenizer);
        Lexical {
            scored,
            tokenizer,
            synonyms,
        }
    }

    fn query(&self, text: &str) -> Query {
        self.synonyms.query(&self.tokenizer, text)
    }

    /// Adds `weight` times each matching tool's score for `terms` to `scores`.
    fn add(&self, terms: &[String], weight: f32, scores: &mut [f32]) {
        if terms.is_empty() || weight <= 0.0 {
            return;
        }
        for s in &self.scored {
            s.postings.add(terms, weight * s.weight, scores);
        }
    }

    /// Adds `weight` times each tool's score for `query` to `scores`: its own terms, and its
    /// synonyms at [`Options::synonym_weight`], either all summed or, with
    /// [`Options::synonym_best`], each own term's best-scoring synonym alone.
    fn add_scores(&self, query: &Query, weight: f32, options: &Options, scores: &mut [f32]) {
        self.add(&query.own, weight, scores);
        let synonym_weight = weight * options.synonym_weight;
        if synonym_weight <= 0.0 {
            return;
        }
        if !options.synonym_best {
            self.add(&query.synonym_terms(), synonym_weight, scores);
            return;
        }
        let mut best = vec![0.0f32; scores.len()];
        let mut one = vec![0.0f32; scores.len()];
        for members in &query.synonyms {
            best.iter_mut().for_each(|b| *b = 0.0);
            for member in members {
                one.iter_mut().for_each(|o| *o = 0.0);
                self.add(member, 1.0, &mut one);
                for (b, o) in best.iter_mut().zip(&one) {
                    *b = b.max(*o);
                }
            }
            for (s, b) in scores.iter_mut().zip(&best) {
                *s += synonym_weight * b;
            }
        }
    }
}

/// A search index over tool definitions from any number of servers.
pub struct Index {
    documents: Vec<Document>,
    lexical: Lexical,
    /// The BM25 over Snowball-stemmed terms, and its weight.
    fallback: Option<(f32, Lexical)>,
    servers: Option<(f32, Servers)>,
    names: Option<(f32, Names)>,
    /// The word table, and each tool's vector (none for a tool with no known word).
    meaning: Option<(&'static Words, Vec<Option<Vec<f32>>>)>,
    options: Options,
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
        let lexical = Lexical::build(&documents, options.tokens, options);
        let fallback = (options.stem_fallback > 0.0).then(|| {
            let snowball = TokenOptions {
                stem: Stem::Snowball,
                ..options.tokens
            };
            (
                options.stem_fallback,
                Lexical::build(&documents, snowball, options),
            )
        });
        let servers = (options.server_context > 0.0).then(|| {
            (
                options.server_context,
                Servers::build(&documents, options.tokens, options.k1, options.b),
            )
        });
        let names = (options.name_coverage > 0.0).then(|| {
            (
                options.name_coverage,
                Names::build(&documents, &lexical.tokenizer),
            )
        });
        let meaning = (options.semantic > 0.0)
            .then(semantic::words)
            .flatten()
            .map(|words| {
                (
                    words,
                    documents.iter().map(|d| words.embed_tool(d)).collect(),
                )
            });
        Index {
            documents,
            lexical,
            fallback,
            servers,
            names,
            meaning,
            options: *options,
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
        let mut scores = vec![0.0f32; self.documents.len()];
        let terms = self.lexical.query(query);
        self.lexical
            .add_scores(&terms, 1.0, &self.options, &mut scores);
        if let Some((weight, fallback)) = &self.fallback {
            fallback.add_scores(&fallback.query(query), *weight, &self.options, &mut scores);
        }
        let best = scores.iter().copied().fold(0.0, f32::max);
        if best > 0.0 {
            for s in &mut scores {
                *s /= best;
            }
        }
        let synonym_terms = terms.synonym_terms();
        if let Some((weight, servers)) = &self.servers {
            let queries = [
                (1.0, terms.own.as_slice()),
                (self.options.synonym_weight, synonym_terms.as_slice()),
            ];
            for (s, context) in scores.iter_mut().zip(servers.scores(&queries)) {
                if *s > 0.0 {
                    *s += weight * context;
                }
            }
        }
        if let Some((weight, names)) = &self.names {
            let own: HashSet<&str> = terms.own.iter().map(String::as_str).collect();
            let synonyms: HashSet<&str> = synonym_terms.iter().map(String::as_str).collect();
            for (id, s) in scores.iter_mut().enumerate() {
                if *s > 0.0 {
                    *s += weight * names.coverage(id, &own, &synonyms, self.options.synonym_weight);
                }
            }
        }
        self.add_meaning(query, &mut scores);
        let mut ranked: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
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
}

impl Index {
    /// Fuses `scores` (lexical) with the meaning score: each scaled to 0..1 over the tools
    /// (the lexical score by its best, the cosine between its lowest and its highest), then
    /// weighted by [`Options::semantic`] and the rest. Nothing changes when the query has no
    /// word the table knows.
    fn add_meaning(&self, query: &str, scores: &mut [f32]) {
        let Some((words, vectors)) = &self.meaning else {
            return;
        };
        let Some(q) = words.embed(query) else { return };
        let cosines: Vec<f32> = vectors
            .iter()
            .map(|v| v.as_ref().map_or(0.0, |v| semantic::cosine(&q, v)))
            .collect();
        let low = cosines.iter().copied().fold(f32::INFINITY, f32::min);
        let high = cosines.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let span = high - low;
        if span.is_nan() || span <= 0.0 {
            return;
        }
        let best = scores.iter().copied().fold(0.0, f32::max);
        let w = self.options.semantic.clamp(0.0, 1.0);
        for (s, c) in scores.iter_mut().zip(cosines) {
            let lexical = if best > 0.0 { *s / best } else { 0.0 };
            let meaning = (c - low) / span;
            let alone = meaning >= self.options.meaning_alone && c >= self.options.cosine_alone;
            *s = if lexical > 0.0 || alone {
                (1.0 - w) * lexical + w * meaning
            } else {
                0.0
            };
        }
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

    #[test]
    fn meaning_finds_a_tool_that_shares_no_word_with_the_task() {
        let tools = [
            (
                "google-maps",
                json!({"name": "maps_elevation", "description": "Get the elevation data for locations on the earth."}),
            ),
            (
                "git",
                json!({"name": "git_commit", "description": "Records changes to the repository."}),
            ),
            (
                "filesystem",
                json!({"name": "read_text_file", "description": "Read the complete contents of a file."}),
            ),
        ];
        let build = |options: &Options| Index::build(tools.iter().map(|(s, v)| (*s, v)), options);
        let task = "how high above sea level is Denver";
        assert!(build(&Options::lexical()).search(task, None, 5).is_empty());
        let hits = build(&Options::default()).search(task, None, 5);
        assert_eq!(
            hits.first().map(|h| h.name.as_str()),
            Some("maps_elevation")
        );
        // A query about nothing the tools do finds nothing, though one tool is the nearest.
        assert!(build(&Options::default())
            .search("zebra giraffe", None, 5)
            .is_empty());
        // A query the table knows no word of is ranked by its words alone.
        assert!(build(&Options::default())
            .search("qzxv", None, 5)
            .is_empty());
        let fused = build(&Options::default()).search("git_commit qzxv", None, 5);
        assert_eq!(fused.first().map(|h| h.name.as_str()), Some("git_commit"));
    }

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
        let i = index(&Options::lexical());
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
        let i = index(&Options::lexical());
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
        let i = index(&Options::lexical());
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

    const ONLY_NAMES: Weights = Weights {
        name: 1,
        server: 0,
        lead: 0,
        description: 0,
        argument_names: 0,
        argument_descriptions: 0,
    };

    #[test]
    fn name_splitting_is_what_finds_a_name_only_match() {
        for combine in [Combine::Bm25f, Combine::FieldSum] {
            let mut split = Options {
                weights: ONLY_NAMES,
                combine,
                ..Options::lexical()
            };
            split.synonym_weight = 0.0;
            assert_eq!(
                top(&index(&split), "take screenshot").as_deref(),
                Some("browser_take_screenshot")
            );
            let mut whole = split;
            whole.tokens.split_names = false;
            assert_eq!(top(&index(&whole), "take screenshot"), None);
            assert_eq!(
                top(&index(&whole), "browser_take_screenshot").as_deref(),
                Some("browser_take_screenshot")
            );
        }
    }

    #[test]
    fn argument_fields_count_only_when_weighted() {
        for combine in [Combine::Bm25f, Combine::FieldSum] {
            let mut no_args = Options {
                combine,
                ..Options::lexical()
            };
            no_args.weights.argument_names = 0;
            no_args.weights.argument_descriptions = 0;
            assert_eq!(top(&index(&no_args), "scrollable"), None);
            let with = Options {
                combine,
                ..Options::lexical()
            };
            assert_eq!(
                top(&index(&with), "scrollable").as_deref(),
                Some("browser_take_screenshot")
            );
        }
    }

    #[test]
    fn synonyms_find_a_tool_by_words_it_does_not_use() {
        let on = index(&Options::lexical());
        assert_eq!(
            top(&on, "grab a picture of the site").as_deref(),
            Some("browser_take_screenshot")
        );
        let off = Options {
            synonym_weight: 0.0,
            ..Options::lexical()
        };
        assert_eq!(top(&index(&off), "grab a picture of the site"), None);
    }

    #[test]
    fn weights_above_the_limit_count_as_the_limit() {
        let heavy = Options {
            weights: Weights {
                name: u8::MAX,
                ..ONLY_NAMES
            },
            ..Options::lexical()
        };
        let capped = Options {
            weights: Weights {
                name: MAX_WEIGHT,
                ..ONLY_NAMES
            },
            ..Options::lexical()
        };
        assert_eq!(
            index(&heavy).search("issue", None, 5),
            index(&capped).search("issue", None, 5)
        );
    }

    fn build(tools: &[(&str, Value)], options: &Options) -> Index {
        Index::build(tools.iter().map(|(s, v)| (*s, v)), options)
    }

    fn names(hits: &[Hit]) -> Vec<String> {
        hits.iter()
            .map(|h| format!("{}/{}", h.server, h.name))
            .collect()
    }

    #[test]
    fn the_snowball_fallback_meets_other_forms_of_a_word() {
        let tools = [(
            "k8s",
            json!({"name": "rollout", "description": "Manage the deployment of a workload."}),
        )];
        let off = Options {
            stem_fallback: 0.0,
            ..Options::lexical()
        };
        assert!(build(&tools, &off).search("deployed", None, 5).is_empty());
        assert_eq!(
            top(&build(&tools, &Options::lexical()), "deployed").as_deref(),
            Some("rollout")
        );
    }

    #[test]
    fn the_server_context_prefers_the_server_whose_tools_speak_the_query() {
        let tools = [
            (
                "web",
                json!({"name": "count", "description": "Count them."}),
            ),
            ("db", json!({"name": "count", "description": "Count them."})),
            (
                "db",
                json!({"name": "find", "description": "Find documents in a collection."}),
            ),
        ];
        let off = Options {
            server_context: 0.0,
            ..Options::lexical()
        };
        let query = "count in a collection";
        let order = |options: &Options| {
            let hits = names(&build(&tools, options).search(query, None, 5));
            let at = |n: &str| hits.iter().position(|h| h == n);
            (at("web/count"), at("db/count"))
        };
        let (web, db) = order(&off);
        assert!(web < db, "equal scores keep the given order");
        let (web, db) = order(&Options::lexical());
        assert!(db < web, "the collection's server first");
    }

    #[test]
    fn a_word_with_many_synonyms_counts_once_with_the_best_of_them() {
        let documents: Vec<Document> = [
            json!({"name": "a", "description": "get read view"}),
            json!({"name": "b", "description": "display"}),
        ]
        .iter()
        .filter_map(|t| Document::read("s", t))
        .collect();
        let options = Options::lexical();
        let lexical = Lexical::build(&documents, options.tokens, &options);
        let query = lexical.query("show");
        let scores = |best: bool| {
            let mut scores = vec![0.0; documents.len()];
            let options = Options {
                synonym_best: best,
                ..options
            };
            lexical.add_scores(&query, 1.0, &options, &mut scores);
            scores
        };
        let (best, sum) = (scores(true), scores(false));
        assert!(best[0] > 0.0 && best[0] < sum[0], "{best:?} {sum:?}");
        assert_eq!(best[1], sum[1], "one synonym matched: the same either way");
    }

    #[test]
    fn long_queries_and_an_empty_index() {
        let i = index(&Options::lexical());
        let long = "issue ".repeat(MAX_QUERY_BYTES);
        assert_eq!(i.search(&long, None, 1)[0].name, "get_issue");
        let empty = Index::build(std::iter::empty(), &Options::lexical());
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
