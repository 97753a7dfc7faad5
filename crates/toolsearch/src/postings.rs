//! BM25 scoring by postings: for each term, the documents that have it with the term's BM25
//! weight in each (the `bm25` crate's embedder computes the weights: saturated term frequency,
//! length normalized), times BM25's idf as the crate's scorer computes it. A query term costs one
//! lookup and a pass over its postings, where the crate's scorer searches every matching
//! document's whole embedding for each query term.

use std::collections::{HashMap, HashSet};

use bm25::{Embedding, TokenEmbedder};

/// The postings of a set of documents, numbered from 0 in the order given.
pub(crate) struct Postings {
    of: HashMap<u32, Vec<(usize, f32)>>,
    documents: usize,
}

impl Postings {
    pub(crate) fn new(embeddings: impl IntoIterator<Item = Embedding<u32>>) -> Postings {
        let mut of: HashMap<u32, Vec<(usize, f32)>> = HashMap::new();
        let mut documents = 0;
        for (id, embedding) in embeddings.into_iter().enumerate() {
            documents = id + 1;
            // An embedding has an entry for each occurrence of a term, all with the same value.
            let mut seen = HashSet::new();
            for t in embedding.0 {
                if seen.insert(t.index) {
                    of.entry(t.index).or_default().push((id, t.value));
                }
            }
        }
        Postings { of, documents }
    }

    /// Adds `weight` times each document's BM25 score for `terms` (each counted once) to
    /// `scores`, which has a place for every document.
    pub(crate) fn add(&self, terms: &[String], weight: f32, scores: &mut [f32]) {
        let mut seen: Vec<u32> = Vec::with_capacity(terms.len());
        for term in terms {
            let index = <u32 as TokenEmbedder>::embed(term);
            if seen.contains(&index) {
                continue;
            }
            seen.push(index);
            let Some(postings) = self.of.get(&index) else {
                continue;
            };
            let n = self.documents as f32;
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(id, value) in postings {
                scores[id] += weight * idf * value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bm25::{EmbedderBuilder, Scorer};

    #[test]
    fn scores_as_the_bm25_crates_scorer_does() {
        let corpus = [
            "get issue from a repository",
            "create issue",
            "read file file file",
            "",
        ];
        let embedder = EmbedderBuilder::<u32, Whitespace>::with_tokenizer_and_fit_to_corpus(
            Whitespace, &corpus,
        )
        .build();
        let postings = Postings::new(corpus.iter().map(|t| embedder.embed(t)));
        let mut scorer = Scorer::<usize, u32>::new();
        for (id, t) in corpus.iter().enumerate() {
            scorer.upsert(&id, embedder.embed(t));
        }
        for query in ["issue", "file issue", "repository get", "nothing"] {
            let terms: Vec<String> = query.split(' ').map(str::to_owned).collect();
            let mut ours = vec![0.0; corpus.len()];
            postings.add(&terms, 1.0, &mut ours);
            let theirs = embedder.embed(query);
            for (id, score) in ours.iter().enumerate() {
                let want = scorer.score(&id, &theirs).unwrap_or(0.0);
                assert!(
                    (score - want).abs() < 1e-5,
                    "{query}: {id}: {score} != {want}"
                );
            }
        }
        let mut twice = vec![0.0; corpus.len()];
        postings.add(&["issue".into(), "issue".into()], 2.0, &mut twice);
        let mut once = vec![0.0; corpus.len()];
        postings.add(&["issue".into()], 1.0, &mut once);
        assert_eq!(twice, once.iter().map(|s| s * 2.0).collect::<Vec<_>>());
    }

    struct Whitespace;

    impl bm25::Tokenizer for Whitespace {
        fn tokenize(&self, text: &str) -> Vec<String> {
            text.split_whitespace().map(str::to_owned).collect()
        }
    }
}
