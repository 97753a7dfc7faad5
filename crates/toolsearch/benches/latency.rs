//! The search's latency over the real-tools fixture (485 tools): building the index, and one
//! search of a task sentence (each iteration searches every sentence of tasks.tsv once, so the
//! time per search is the median divided by their count). The current default against the
//! ranking before the 2026-12-05 signals, in the same run, so the change reads as a ratio.
//!
//! `cargo bench -p toolsearch --bench latency`

#![allow(missing_docs)] // criterion's macros generate undocumented items

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use toolsearch::{Options, Weights, DEFAULT_LIMIT};

/// The default before the server context, name coverage, Snowball fallback, lead field and
/// best-synonym scoring (every one of them off).
fn before() -> Options {
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

/// The default without the word table (lexical alone).
fn lexical() -> Options {
    Options {
        semantic: 0.0,
        ..Options::default()
    }
}

fn search(c: &mut Criterion) {
    let tools = common::tools();
    let tasks = common::tasks();
    let mut g = c.benchmark_group(format!("search/{}-tasks", tasks.len()));
    for (label, options) in [
        ("before", before()),
        ("lexical", lexical()),
        ("default", Options::default()),
    ] {
        let index = common::index(&tools, &options);
        g.bench_function(label, |b| {
            b.iter(|| {
                tasks
                    .iter()
                    .map(|t| index.search(&t.text, None, DEFAULT_LIMIT).len())
                    .sum::<usize>()
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("build");
    for (label, options) in [
        ("before", before()),
        ("lexical", lexical()),
        ("default", Options::default()),
    ] {
        g.bench_function(label, |b| b.iter(|| common::index(&tools, &options).len()));
    }
    g.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
