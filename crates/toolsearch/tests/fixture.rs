//! The real-tools fixture and its task set are consistent, and the default ranking keeps the
//! recall measured in BENCHMARKS.md (a quality floor, not a timing).
#![allow(missing_docs)]

mod common;

use std::collections::HashSet;

use common::{Recall, RECALL_K};

/// The floor for the default ranking's recall@5: what it reaches today (0.863, BENCHMARKS.md),
/// less a little. The goal is 0.9, not reached by lexical ranking on this task set.
const MIN_RECALL_AT_K: f64 = 0.83;
/// The task set's size floor (the issue asks for at least 150).
const MIN_TASKS: usize = 150;

#[test]
fn every_task_names_tools_of_the_fixture() {
    let tools = common::tools();
    let known: HashSet<(String, String)> = tools
        .iter()
        .map(|(s, t)| (s.clone(), t["name"].as_str().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(known.len(), tools.len(), "a server lists a tool name twice");
    let tasks = common::tasks();
    assert!(tasks.len() >= MIN_TASKS, "{} tasks", tasks.len());
    let held_out = common::held_out();
    assert!(!held_out.is_empty());
    let mut sentences = HashSet::new();
    for task in tasks.iter().chain(&held_out) {
        assert!(
            sentences.insert(task.text.clone()),
            "tasks.tsv:{}: repeated",
            task.line
        );
        for e in &task.expected {
            assert!(
                known.contains(e),
                "tasks.tsv:{}: no tool {}/{}",
                task.line,
                e.0,
                e.1
            );
        }
    }
}

#[test]
fn the_default_ranking_keeps_its_recall() {
    let tools = common::tools();
    let index = common::index(&tools, &toolsearch::Options::default());
    assert_eq!(index.skipped(), 0);
    let tasks = common::tasks();
    let Recall { at_k, misses, .. } = common::measure(&index, &tasks);
    let missed: Vec<&str> = misses
        .iter()
        .map(|(i, _)| tasks[*i].text.as_str())
        .collect();
    assert!(
        at_k >= MIN_RECALL_AT_K,
        "recall@{RECALL_K} {at_k:.3} < {MIN_RECALL_AT_K}; missed: {missed:#?}"
    );
}
