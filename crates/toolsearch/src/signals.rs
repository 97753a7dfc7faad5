//! Signals beside a tool's own BM25 score, each in 0..=1, that the index adds to the normalized
//! BM25 score with its weight:
//! - the server's score: BM25 over one document per server (its name, and its tools' names and
//!   descriptions), so the words of a domain ("collection", "commit", "channel") lead to the server
//!   whose tools speak it even when the one right tool does not use that word;
//! - the name's coverage: how much of a tool's name (weighted by how rare each name term is) the
//!   query's terms cover, since a name such as `take_screenshot` says what a tool does in fewer,
//!   surer words than its description.

use std::collections::{HashMap, HashSet};

use bm25::EmbedderBuilder;

use crate::document::{Document, Field};
use crate::postings::Postings;
use crate::tokens::{TokenOptions, Tokenizer};

/// How many times a server's name is repeated in its document: a server has dozens of tools'
/// texts, and its name should weigh like a few of them.
const SERVER_NAME_REPEAT: usize = 3;

/// Scores of the servers, by a query.
pub(crate) struct Servers {
    /// Each tool's server, an index into the scorer's documents.
    of_tool: Vec<usize>,
    postings: Postings,
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
        let postings = Postings::new(corpus.iter().map(|text| embedder.embed(text)));
        Servers { of_tool, postings }
    }

    /// Each tool's server score for the weighted query terms, divided by the best server's (all
    /// 0 when no server matches).
    pub(crate) fn scores(&self, queries: &[(f32, &[String])]) -> Vec<f32> {
        let servers = self.of_tool.iter().max().map_or(0, |m| m + 1);
        let mut by_server = vec![0.0f32; servers];
        for (weight, terms) in queries {
            self.postings.add(terms, *weight, &mut by_server);
        }
        let best = by_server.iter().copied().fold(0.0, f32::max);
        self.of_tool
            .iter()
            .map(|&s| if best > 0.0 { by_server[s] / best } else { 0.0 })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn documents(tools: &[(&str, serde_json::Value)]) -> Vec<Document> {
        tools
            .iter()
            .filter_map(|(s, t)| Document::read(s, t))
            .collect()
    }

    #[test]
    fn servers_score_by_their_tools_words_relative_to_the_best() {
        let docs = documents(&[
            (
                "db",
                json!({"name": "find", "description": "Find documents in a collection."}),
            ),
            ("db", json!({"name": "count"})),
            (
                "web",
                json!({"name": "fetch", "description": "Fetch a page."}),
            ),
        ]);
        let servers = Servers::build(&docs, TokenOptions::default(), 2.0, 0.75);
        let tokenizer = Tokenizer::new(TokenOptions::default());
        let terms = tokenizer.terms("collection");
        assert_eq!(servers.scores(&[(1.0, terms.as_slice())]), [1.0, 1.0, 0.0]);
        assert_eq!(servers.scores(&[(1.0, &[])]), [0.0; 3]);
    }

    #[test]
    fn name_coverage_weighs_rare_name_terms_more() {
        let docs = documents(&[
            ("s", json!({"name": "take_screenshot"})),
            ("s", json!({"name": "take_snapshot"})),
            ("s", json!({"name": "take_note"})),
            ("s", json!({"name": "x"})),
        ]);
        let tokenizer = Tokenizer::new(TokenOptions::default());
        let names = Names::build(&docs, &tokenizer);
        let set = |words: &[&'static str]| words.iter().copied().collect::<HashSet<&str>>();
        let none = set(&[]);
        assert_eq!(
            names.coverage(0, &set(&["take", "screenshot"]), &none, 0.5),
            1.0
        );
        let rare = names.coverage(0, &set(&["screenshot"]), &none, 0.5);
        let common = names.coverage(0, &set(&["take"]), &none, 0.5);
        assert!(rare > 0.5 && common < 0.5 && (rare + common - 1.0).abs() < 1e-6);
        let by_synonym = names.coverage(0, &none, &set(&["screenshot"]), 0.5);
        assert!((by_synonym - rare * 0.5).abs() < 1e-6);
        assert_eq!(names.coverage(3, &set(&["take"]), &none, 0.5), 0.0);
    }
}
