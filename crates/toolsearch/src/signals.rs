//! Signals beside a tool's own BM25 score, each in 0..=1, that the index adds to the normalized
//! BM25 score with its weight:
//! - the server's score: BM25 over one document per server (its name, and its tools' names and
//!   descriptions), so the words of a domain ("collection", "commit", "channel") lead to the server
//!   whose tools speak it even when the one right tool does not use that word;
//! - the name's coverage: how much of a tool's name (weighted by how rare each name term is) the
//!   query's terms cover, since a name such as `take_screenshot` says what a tool does in fewer,
//!   surer words than its description.

use std::collections::{HashMap, HashSet};

use bm25::{EmbedderBuilder, Scorer};

use crate::document::{Document, Field};
use crate::tokens::{TokenOptions, Tokenizer};

/// How many times a server's name is repeated in its document: a server has dozens of tools'
/// texts, and its name should weigh like a few of them.
const SERVER_NAME_REPEAT: usize = 3;

/// Scores of the servers, by a query.
pub(crate) struct Servers {
    /// Each tool's server, an index into the scorer's documents.
    of_tool: Vec<usize>,
    scorer: Scorer<usize, u32>,
}

impl Servers {
    pub(crate) fn build(documents: &[Document], tokens: TokenOptions, k1: f32, b: f32) -> Servers {
        let mut names: Vec<&str> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        let mut of_tool = Vec::with_capacity(documents.len());
        for d in documents {
            let i = match names.iter().position(|n| *n == d.server) {
                Some(i) => i,
                None => {
                    names.push(&d.server);
                    texts.push(format!("{}\n", d.server).repeat(SERVER_NAME_REPEAT));
                    names.len() - 1
                }
            };
            of_tool.push(i);
            for field in [Field::Name, Field::Description] {
                texts[i].push_str(d.field(field));
                texts[i].push('\n');
            }
        }
        let corpus: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::<u32, Tokenizer>::with_tokenizer_and_fit_to_corpus(
            Tokenizer::new(tokens),
            &corpus,
        )
        .k1(k1)
        .b(b)
        .build();
        let mut scorer = Scorer::new();
        for (id, text) in corpus.iter().enumerate() {
            scorer.upsert(&id, embedder.embed(text));
        }
        Servers { of_tool, scorer }
    }

    /// Each tool's server score for the weighted query embeddings, divided by the best server's
    /// (all 0 when no server matches).
    pub(crate) fn scores(&self, queries: &[(f32, bm25::Embedding<u32>)]) -> Vec<f32> {
        let mut by_server: HashMap<usize, f32> = HashMap::new();
        for (weight, q) in queries {
            for m in self.scorer.matches(q) {
                *by_server.entry(m.id).or_default() += weight * m.score;
            }
        }
        let best = by_server.values().copied().fold(0.0, f32::max);
        self.of_tool
            .iter()
            .map(|s| match by_server.get(s) {
                Some(score) if best > 0.0 => score / best,
                _ => 0.0,
            })
            .collect()
    }
}

/// The terms of every tool's name, each with its idf over the names.
pub(crate) struct Names {
    terms: Vec<Vec<(String, f32)>>,
}

impl Names {
    pub(crate) fn build(documents: &[Document], tokenizer: &Tokenizer) -> Names {
        let sets: Vec<Vec<String>> = documents
            .iter()
            .map(|d| {
                let mut seen = HashSet::new();
                tokenizer
                    .terms(&d.name)
                    .into_iter()
                    .filter(|t| seen.insert(t.clone()))
                    .collect()
            })
            .collect();
        let mut df: HashMap<&str, usize> = HashMap::new();
        for set in &sets {
            for t in set {
                *df.entry(t).or_default() += 1;
            }
        }
        let n = sets.len() as f32;
        let idf = |t: &str| {
            let df = df.get(t).copied().unwrap_or(0) as f32;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        };
        let terms = sets
            .iter()
            .map(|set| set.iter().map(|t| (t.clone(), idf(t))).collect())
            .collect();
        Names { terms }
    }

    /// The idf-weighted share of `tool`'s name terms among the query's own terms (each counting
    /// 1) and its synonyms (each counting `synonym_weight`).
    pub(crate) fn coverage(
        &self,
        tool: usize,
        own: &HashSet<&str>,
        synonyms: &HashSet<&str>,
        synonym_weight: f32,
    ) -> f32 {
        let (mut covered, mut all) = (0.0, 0.0);
        for (t, idf) in &self.terms[tool] {
            all += idf;
            if own.contains(t.as_str()) {
                covered += idf;
            } else if synonyms.contains(t.as_str()) {
                covered += idf * synonym_weight;
            }
        }
        if all > 0.0 {
            covered / all
        } else {
            0.0
        }
    }
}
