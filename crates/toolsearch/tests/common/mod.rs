//! The real-tools fixture and its task set, read for the ranking test and the ranking bench.
#![allow(unreachable_pub, dead_code)]

use std::path::PathBuf;

use serde_json::Value;
use toolsearch::{Hit, Index, Options, Weights};

/// Hits looked at for recall@k beyond 1.
pub const RECALL_K: usize = 5;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixture")
}

/// Every fixture tool as (server, tool object), servers in file-name order.
pub fn tools() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture().join("tools"))
        .expect("fixture/tools")
        .map(|e| e.expect("fixture entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let server = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("file name")
            .to_owned();
        let text = std::fs::read_to_string(&path).expect("fixture file");
        let list: Vec<Value> = serde_json::from_str(&text).expect("a JSON array of tools");
        out.extend(list.into_iter().map(|t| (server.clone(), t)));
    }
    out
}

/// One task: its sentence, the tools that do it, its line in tasks.tsv.
pub struct Task {
    pub text: String,
    pub expected: Vec<(String, String)>,
    pub line: usize,
}

/// The task set the ranking choices were made on (fixture/tasks.tsv).
pub fn tasks() -> Vec<Task> {
    tasks_in("tasks.tsv")
}

/// The held-out task set (fixture/tasks-heldout.tsv).
pub fn held_out() -> Vec<Task> {
    tasks_in("tasks-heldout.tsv")
}

fn tasks_in(file: &str) -> Vec<Task> {
    let text = std::fs::read_to_string(fixture().join(file)).expect("a fixture task file");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (expected, sentence) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("{file}:{}: no tab", i + 1));
        let expected = expected
            .split(',')
            .map(|e| {
                let (s, t) = e
                    .split_once('/')
                    .unwrap_or_else(|| panic!("{file}:{}: {e} is not server/tool", i + 1));
                (s.to_owned(), t.to_owned())
            })
            .collect();
        out.push(Task {
            text: sentence.to_owned(),
            expected,
            line: i + 1,
        });
    }
    out
}

/// The index over the given tools.
pub fn index(tools: &[(String, Value)], options: &toolsearch::Options) -> Index {
    Index::build(tools.iter().map(|(s, t)| (s.as_str(), t)), options)
}

/// Recall of one ranking over the task set.
pub struct Recall {
    pub at_1: f64,
    pub at_k: f64,
    /// Mean reciprocal rank of the first right tool within the top [`RECALL_K`].
    pub mrr: f64,
    /// Tasks with no right tool in the top [`RECALL_K`], with what came instead.
    pub misses: Vec<(usize, Vec<Hit>)>,
}

pub fn measure(index: &Index, tasks: &[Task]) -> Recall {
    let (mut at_1, mut at_k, mut rr) = (0usize, 0usize, 0f64);
    let mut misses = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        let hits = index.search(&task.text, None, RECALL_K);
        let rank = hits.iter().position(|h| {
            task.expected
                .iter()
                .any(|(s, t)| *s == h.server && *t == h.name)
        });
        match rank {
            Some(0) => {
                at_1 += 1;
                at_k += 1;
                rr += 1.0;
            }
            Some(r) => {
                at_k += 1;
                rr += 1.0 / (r + 1) as f64;
            }
            None => misses.push((i, hits)),
        }
    }
    let n = tasks.len().max(1) as f64;
    Recall {
        at_1: at_1 as f64 / n,
        at_k: at_k as f64 / n,
        mrr: rr / n,
        misses,
    }
}

/// The default before the server context, name coverage, Snowball fallback, lead field,
/// best-synonym scoring and word table (every one of them off): the benches' baseline.
pub fn before() -> Options {
    let d = Options::default();
    Options {
        weights: Weights {
            lead: 0,
            description: 2,
            ..d.weights
        },
        synonym_best: false,
        stem_fallback: 0.0,
        server_context: 0.0,
        name_coverage: 0.0,
        semantic: 0.0,
        ..d
    }
}
