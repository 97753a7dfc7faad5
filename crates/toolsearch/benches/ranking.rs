//! The ranking measurement over the real-tools fixture (run by scripts/bench): recall@1, recall@5
//! and MRR of the task set for each ranking choice tried, and the footprint of listing every
//! fixture tool against listing the three search-mode tools, in bytes and tokens (o200k_base and
//! cl100k_base, tiktoken-rs). Prints markdown. Not a timing: the figures are deterministic.
//! MISSES=1 also prints the default ranking's misses (both sets). RANKS=FILE writes the default
//! ranking's top 50 for every task of both sets as TSV (set, task line, rank, server/tool,
//! score), for experiments that fuse it with another ranking. ONLY=PREFIX measures only the rows
//! whose label starts with PREFIX.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use serde_json::{json, Value};
use tiktoken_rs::CoreBPE;
use toolsearch::{
    search_mode_tools, search_result, Combine, Options, Stem, TokenOptions, Weights, DEFAULT_LIMIT,
};

fn variants() -> Vec<(String, Options)> {
    let d = Options::default();
    let w = d.weights;
    let t = d.tokens;
    let zero = Weights {
        name: 0,
        server: 0,
        lead: 0,
        description: 0,
        argument_names: 0,
        argument_descriptions: 0,
    };
    let no_syn = Options {
        synonym_weight: 0.0,
        ..d
    };
    let before = common::before();
    let tokens = |tokens: TokenOptions| Options { tokens, ..d };
    let weights = |weights: Weights| Options { weights, ..d };
    let rows: Vec<(&str, Options)> = vec![
        ("default", d),
        (
            "lexical alone (no word table: the default before this row's date)",
            Options::lexical(),
        ),
        ("word table share 0.4", Options { semantic: 0.4, ..d }),
        ("word table share 0.5", Options { semantic: 0.5, ..d }),
        ("word table share 0.7", Options { semantic: 0.7, ..d }),
        ("word table share 0.8", Options { semantic: 0.8, ..d }),
        (
            "a tool sharing no word with the query: a hit from meaning 0.6 (not 0.8)",
            Options {
                meaning_alone: 0.6,
                ..d
            },
        ),
        (
            "a tool sharing no word with the query: a hit from meaning 0.9",
            Options {
                meaning_alone: 0.9,
                ..d
            },
        ),
        (
            "a tool sharing no word with the query: a hit from cosine 0.2 (not 0.3)",
            Options {
                cosine_alone: 0.2,
                ..d
            },
        ),
        (
            "a tool sharing no word with the query: a hit from cosine 0.4",
            Options {
                cosine_alone: 0.4,
                ..d
            },
        ),
        (
            "a tool sharing no word with the query: a hit from cosine 0.5",
            Options {
                cosine_alone: 0.5,
                ..d
            },
        ),
        (
            "before 2026-12-05 (no signals, no lead field, synonyms summed)",
            before,
        ),
        (
            "synonyms summed, not each word's best",
            Options {
                synonym_best: false,
                ..d
            },
        ),
        (
            "no Snowball fallback",
            Options {
                stem_fallback: 0.0,
                ..d
            },
        ),
        (
            "Snowball fallback 0.3",
            Options {
                stem_fallback: 0.3,
                ..d
            },
        ),
        (
            "no server context",
            Options {
                server_context: 0.0,
                ..d
            },
        ),
        (
            "server context 0.4",
            Options {
                server_context: 0.4,
                ..d
            },
        ),
        (
            "no name coverage",
            Options {
                name_coverage: 0.0,
                ..d
            },
        ),
        (
            "name coverage 0.4",
            Options {
                name_coverage: 0.4,
                ..d
            },
        ),
        (
            "no lead field (description weight 2)",
            weights(Weights {
                lead: 0,
                description: 2,
                ..w
            }),
        ),
        ("lead weight 2", weights(Weights { lead: 2, ..w })),
        ("no synonyms", no_syn),
        (
            "synonym weight 0.3",
            Options {
                synonym_weight: 0.3,
                ..d
            },
        ),
        (
            "synonym weight 1 (as the query's own words)",
            Options {
                synonym_weight: 1.0,
                ..d
            },
        ),
        (
            "no name splitting",
            tokens(TokenOptions {
                split_names: false,
                ..t
            }),
        ),
        (
            "no stemming",
            tokens(TokenOptions {
                stem: Stem::None,
                ..t
            }),
        ),
        (
            "Snowball stemming instead of plurals only",
            tokens(TokenOptions {
                stem: Stem::Snowball,
                ..t
            }),
        ),
        (
            "no stop words",
            tokens(TokenOptions {
                stop_words: false,
                ..t
            }),
        ),
        (
            "no synonyms, no name splitting",
            Options {
                tokens: TokenOptions {
                    split_names: false,
                    ..t
                },
                ..no_syn
            },
        ),
        (
            "no synonyms, no stemming",
            Options {
                tokens: TokenOptions {
                    stem: Stem::None,
                    ..t
                },
                ..no_syn
            },
        ),
        (
            "plain BM25 tokens (no splitting, stemming, stop words, synonyms)",
            Options {
                tokens: TokenOptions {
                    split_names: false,
                    stem: Stem::None,
                    stop_words: false,
                },
                ..no_syn
            },
        ),
        (
            "weighted sum of per-field BM25 instead of BM25F",
            Options {
                combine: Combine::FieldSum,
                ..d
            },
        ),
        (
            "per-field sum, no synonyms",
            Options {
                combine: Combine::FieldSum,
                ..no_syn
            },
        ),
        (
            "no argument fields",
            weights(Weights {
                argument_names: 0,
                argument_descriptions: 0,
                ..w
            }),
        ),
        ("no server field", weights(Weights { server: 0, ..w })),
        ("server weight 4", weights(Weights { server: 4, ..w })),
        (
            "all weights 1",
            weights(Weights {
                name: 1,
                server: 1,
                lead: 0,
                description: 1,
                argument_names: 1,
                argument_descriptions: 1,
            }),
        ),
        ("name weight 1", weights(Weights { name: 1, ..w })),
        ("name weight 2", weights(Weights { name: 2, ..w })),
        ("name weight 5", weights(Weights { name: 5, ..w })),
        (
            "description weight 2",
            weights(Weights {
                description: 2,
                ..w
            }),
        ),
        (
            "description weight 4",
            weights(Weights {
                description: 4,
                ..w
            }),
        ),
        (
            "argument weights 2",
            weights(Weights {
                argument_names: 2,
                argument_descriptions: 2,
                ..w
            }),
        ),
        (
            "description only",
            weights(Weights {
                description: 1,
                ..zero
            }),
        ),
        ("name only", weights(Weights { name: 1, ..zero })),
        ("b = 0.3", Options { b: 0.3, ..d }),
        ("b = 0.9", Options { b: 0.9, ..d }),
        ("k1 = 0.8", Options { k1: 0.8, ..d }),
        ("k1 = 1.2 (the usual default)", Options { k1: 1.2, ..d }),
        ("k1 = 3.0", Options { k1: 3.0, ..d }),
    ];
    rows.into_iter().map(|(l, o)| (l.to_owned(), o)).collect()
}

fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_with_special_tokens(text).len()
}

fn main() {
    let tools = common::tools();
    let tasks = common::tasks();
    let held_out = common::held_out();
    let servers: std::collections::BTreeSet<&str> = tools.iter().map(|(s, _)| s.as_str()).collect();
    println!(
        "Fixture: {} servers, {} tools; {} tasks, {} held out.\n",
        servers.len(),
        tools.len(),
        tasks.len(),
        held_out.len()
    );
    let k = common::RECALL_K;
    println!(
        "| ranking | recall@1 | recall@{k} | MRR@{k} | held out: recall@1 | recall@{k} | MRR@{k} |"
    );
    println!("|---|---|---|---|---|---|---|");
    let only = std::env::var("ONLY").unwrap_or_default();
    for (label, options) in variants() {
        if !label.starts_with(only.as_str()) {
            continue;
        }
        let index = common::index(&tools, &options);
        let r = common::measure(&index, &tasks);
        let h = common::measure(&index, &held_out);
        println!(
            "| {label} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
            r.at_1, r.at_k, r.mrr, h.at_1, h.at_k, h.mrr
        );
        if label == "default" && std::env::var_os("MISSES").is_some() {
            let missed = r.misses.iter().map(|m| ("tuning", &tasks, m));
            let missed = missed.chain(h.misses.iter().map(|m| ("held out", &held_out, m)));
            for (set, tasks, (i, hits)) in missed {
                let got: Vec<String> = hits
                    .iter()
                    .map(|h| format!("{}/{}", h.server, h.name))
                    .collect();
                println!(
                    "<!-- miss ({set}): {} (want {:?}) got {:?} -->",
                    tasks[*i].text, tasks[*i].expected, got
                );
            }
        }
    }

    if let Some(path) = std::env::var_os("RANKS") {
        let index = common::index(&tools, &Options::default());
        let mut out = String::from("set\tline\trank\ttool\tscore\n");
        for (set, list) in [("tasks", &tasks), ("heldout", &held_out)] {
            for task in list.iter() {
                for (rank, hit) in index.search(&task.text, None, 50).iter().enumerate() {
                    out.push_str(&format!(
                        "{set}\t{}\t{}\t{}/{}\t{}\n",
                        task.line,
                        rank + 1,
                        hit.server,
                        hit.name,
                        hit.score
                    ));
                }
            }
        }
        std::fs::write(path, out).expect("RANKS file written");
    }

    // Footprint: tools/list results as a client receives them (the gateway's SERVER__TOOL names).
    let all: Vec<Value> = tools
        .iter()
        .map(|(server, tool)| {
            let mut t = tool.clone();
            t["name"] = json!(format!("{server}__{}", tool["name"].as_str().unwrap_or("")));
            t
        })
        .collect();
    let listing_all = serde_json::to_string(&json!({"tools": all})).expect("JSON");
    let listing_search =
        serde_json::to_string(&json!({"tools": search_mode_tools()})).expect("JSON");
    // What a task then costs in search mode: one search result (the default limit) and one
    // describe result (the chosen tool's definition), averaged over the task set.
    let index = common::index(&tools, &Options::default());
    let (mut search_text, mut describe_text) = (String::new(), String::new());
    for task in &tasks {
        let hits = index.search(&task.text, None, DEFAULT_LIMIT);
        let result = serde_json::to_string(&search_result(&hits, |h| {
            format!("{}__{}", h.server, h.name)
        }))
        .expect("JSON");
        search_text.push_str(&result);
        let (s, name) = &task.expected[0];
        let tool = all
            .iter()
            .find(|t| t["name"] == format!("{s}__{name}"))
            .expect("a task's tool is in the fixture");
        let described = serde_json::to_string(&json!({"content": [{"type": "text", "text": tool.to_string()}], "structuredContent": tool})).expect("JSON");
        describe_text.push_str(&described);
    }
    let n = tasks.len().max(1);
    let o200k = tiktoken_rs::o200k_base().expect("o200k_base");
    let cl100k = tiktoken_rs::cl100k_base().expect("cl100k_base");
    println!("\n| tools/list | bytes | tokens (o200k_base) | tokens (cl100k_base) |");
    println!("|---|---|---|---|");
    for (label, text, count) in [
        ("exposure all: every fixture tool", &listing_all, 1),
        (
            "exposure search: search_tools, describe_tool, call_tool",
            &listing_search,
            1,
        ),
        (
            "per task: one search_tools result (5 hits), mean",
            &search_text,
            n,
        ),
        (
            "per task: one describe_tool result, mean",
            &describe_text,
            n,
        ),
    ] {
        println!(
            "| {label} | {} | {} | {} |",
            text.len() / count,
            tokens(&o200k, text) / count,
            tokens(&cl100k, text) / count
        );
    }
}
