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
use toolsearch::{Options, DEFAULT_LIMIT};

fn search(c: &mut Criterion) {
    let tools = common::tools();
    let tasks = common::tasks();
    let mut g = c.benchmark_group(format!("search/{}-tasks", tasks.len()));
    for (label, options) in [
        ("before", common::before()),
        ("lexical", Options::lexical()),
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
        ("before", common::before()),
        ("lexical", Options::lexical()),
        ("default", Options::default()),
    ] {
        g.bench_function(label, |b| b.iter(|| common::index(&tools, &options).len()));
    }
    g.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
