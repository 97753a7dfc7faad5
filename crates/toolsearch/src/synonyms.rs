//! Query expansion: the words people use for a task and the words tool definitions use for it
//! are often not the same (`folder`/`directory`, `PR`/`pull request`, `forget`/`delete`). A query
//! term from one of these groups also searches for the other members of its group.
//!
//! The groups are general software and web vocabulary, not words of any one server; a member
//! with a space is a phrase, added as its words, and is expanded to but not from (so `pull`
//! alone does not mean `pr`). Only the query is expanded: the index holds the tools' own words.

use std::collections::HashMap;

use crate::tokens::Tokenizer;

/// Groups of words (or phrases) that name the same thing in a task, by domain. Written from
/// the general vocabulary of software, the web and the services MCP servers wrap, not from any
/// task sentence of the fixture (BENCHMARKS.md measures them on held-out tasks too).
pub(crate) const GROUPS: &[&[&str]] = &[
    // What a person asks a tool to do.
    &[
        "get", "fetch", "retrieve", "read", "show", "view", "display", "see", "open", "load",
    ],
    &["list", "enumerate", "browse"],
    &[
        "find", "search", "look", "lookup", "locate", "query", "discover",
    ],
    &["create", "add", "new", "make", "insert"],
    &[
        "delete", "remove", "drop", "erase", "destroy", "discard", "purge", "forget", "trash",
    ],
    &[
        "update", "edit", "modify", "change", "patch", "alter", "amend", "set",
    ],
    &["rename", "move", "relocate"],
    &["copy", "duplicate", "clone"],
    &["write", "save", "store", "persist"],
    &["send", "post", "publish", "share", "notify", "tell"],
    &["reply", "respond", "answer"],
    &["run", "execute", "launch", "start", "invoke", "trigger"],
    &[
        "stop",
        "kill",
        "terminate",
        "cancel",
        "abort",
        "halt",
        "end",
    ],
    &["download", "fetch", "save"],
    &["upload", "attach"],
    &["compare", "diff", "difference"],
    &["convert", "transform", "translate"],
    &["summarize", "summary", "abstract", "overview", "tldr"],
    &["count", "number", "total", "how many"],
    &[
        "watch",
        "monitor",
        "track",
        "follow",
        "subscribe",
        "observe",
    ],
    &["remember", "memorize", "memory", "knowledge"],
    &["approve", "review", "accept"],
    &["merge", "combine", "join"],
    &["research", "investigate", "analyze", "study"],
    // Web pages and browsers.
    &["website", "site", "webpage", "web", "page", "url", "link"],
    &["browser", "chrome", "tab", "window"],
    &["navigate", "go", "visit", "open", "load"],
    &["screenshot", "capture", "picture", "image", "photo"],
    &["image", "picture", "photo", "png", "jpg", "jpeg", "icon"],
    &["click", "press", "tap", "hit"],
    &["type", "enter", "input", "fill"],
    &["form", "field", "input", "textbox", "box"],
    &["dropdown", "select", "option", "menu", "combobox"],
    &["dialog", "popup", "alert", "modal", "confirm", "prompt"],
    &["hover", "mouse", "pointer"],
    &["video", "screencast", "recording"],
    &[
        "performance",
        "slow",
        "speed",
        "profile",
        "trace",
        "latency",
    ],
    &["crawl", "spider", "scrape"],
    &["extract", "scrape", "parse"],
    &["javascript", "js", "script"],
    // Files, processes and machines.
    &["file", "document"],
    &["folder", "directory", "dir"],
    &["process", "program", "app", "application"],
    &["terminal", "shell", "console", "command", "cli", "bash"],
    &["log", "logs", "output"],
    &["size", "big", "large", "bytes", "storage", "space", "disk"],
    &[
        "settings",
        "config",
        "configuration",
        "preferences",
        "options",
    ],
    &["environment", "env", "variables"],
    &["permission", "access", "allowed", "restriction", "rights"],
    // Code hosting, tickets and CI.
    &["repo", "repository", "project", "codebase"],
    &["pr", "pull request", "merge request"],
    &["mr", "merge request"],
    &["issue", "ticket", "bug"],
    &["error", "exception", "crash", "failure", "problem"],
    &["comment", "note", "remark", "feedback"],
    &["commit", "revision", "changeset"],
    &["version", "release"],
    &["stage", "add", "staging"],
    &["unstage", "reset"],
    &["ci", "pipeline", "build", "workflow", "job"],
    &["test", "tests", "spec"],
    &["deploy", "deployment", "rollout", "release"],
    &["k8s", "kubernetes", "kubectl"],
    &["pod", "container"],
    &["gh", "github"],
    // Data.
    &["sql", "query", "select"],
    &["db", "database"],
    &["table", "collection"],
    &["row", "record", "document", "entry", "item"],
    &["schema", "structure", "fields", "columns"],
    &["table", "spreadsheet", "sheet", "csv"],
    &["stats", "statistics", "metrics", "usage", "analytics"],
    &["mongo", "mongodb"],
    &["postgres", "postgresql", "psql"],
    // People and messages.
    &["user", "member", "people", "person", "account", "teammate"],
    &["message", "msg", "chat", "dm", "post"],
    &["thread", "conversation", "replies"],
    &["emoji", "reaction"],
    &["workspace", "team", "organization", "org", "company"],
    &["status", "state", "progress"],
    // Documents, papers and charts.
    &[
        "docs",
        "documentation",
        "doc",
        "manual",
        "reference",
        "guide",
    ],
    &["paper", "article", "preprint", "publication"],
    &["citation", "cite", "reference", "bibtex", "bibliography"],
    &[
        "chart",
        "graph",
        "plot",
        "diagram",
        "visualize",
        "draw",
        "visualization",
    ],
    // Places and time.
    &[
        "map",
        "location",
        "place",
        "address",
        "coordinates",
        "latitude",
        "longitude",
        "geocode",
        "position",
    ],
    &["directions", "route", "navigation", "path"],
    &["distance", "far", "travel"],
    &["elevation", "height"],
    &["time", "clock", "timezone"],
    &["credit", "quota", "billing", "balance"],
];

/// A query as terms: its own, and the synonyms of each.
pub(crate) struct Query {
    /// The query's terms, each once.
    pub(crate) own: Vec<String>,
    /// For each own term that has synonyms, those synonyms, each a word's (or a phrase's) terms,
    /// less the query's own terms.
    pub(crate) synonyms: Vec<Vec<Vec<String>>>,
}

impl Query {
    /// Every synonym term, each once.
    pub(crate) fn synonym_terms(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for term in self.synonyms.iter().flatten().flatten() {
            if !out.contains(term) {
                out.push(term.clone());
            }
        }
        out
    }
}

/// The groups as terms: for each term a word of a group gives, the other members' terms.
pub(crate) struct Synonyms {
    of: HashMap<String, Vec<Vec<String>>>,
}

impl Synonyms {
    /// The groups' words as `tokenizer` makes terms of them (a stop word expands nothing).
    pub(crate) fn new(tokenizer: &Tokenizer) -> Synonyms {
        let mut of: HashMap<String, Vec<Vec<String>>> = HashMap::new();
        for group in GROUPS {
            for from in group.iter().filter(|w| !w.contains(' ')) {
                let Some(key) = tokenizer.terms(from).pop() else {
                    continue;
                };
                let to = of.entry(key.clone()).or_default();
                for member in group.iter().map(|w| tokenizer.terms(w)) {
                    if !member.is_empty() && member != [key.as_str()] && !to.contains(&member) {
                        to.push(member);
                    }
                }
            }
        }
        Synonyms { of }
    }

    /// `text`'s terms by `tokenizer` and their synonyms.
    pub(crate) fn query(&self, tokenizer: &Tokenizer, text: &str) -> Query {
        let mut own: Vec<String> = Vec::new();
        for term in tokenizer.terms(text) {
            if !own.contains(&term) {
                own.push(term);
            }
        }
        let synonyms = own
            .iter()
            .filter_map(|term| self.of.get(term))
            .map(|members| {
                members
                    .iter()
                    .map(|m| m.iter().filter(|t| !own.contains(t)).cloned().collect())
                    .filter(|m: &Vec<String>| !m.is_empty())
                    .collect()
            })
            .collect();
        Query { own, synonyms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::TokenOptions;

    #[test]
    fn synonyms_of_a_query_are_the_other_words_of_its_groups() {
        let tokenizer = Tokenizer::new(TokenOptions::default());
        let synonyms = Synonyms::new(&tokenizer);
        let q = synonyms.query(&tokenizer, "delete the folder");
        assert_eq!(q.own, ["delete", "folder"]);
        let terms = q.synonym_terms();
        for t in ["remove", "drop", "directory"] {
            assert!(terms.contains(&t.to_owned()), "{t} in {terms:?}");
        }
        assert!(
            !terms.contains(&"delete".to_owned()),
            "not the query's own terms"
        );
        assert_eq!(q.synonyms.len(), 2, "one list for each term with synonyms");
        let pr = synonyms.query(&tokenizer, "open a PR");
        assert!(
            pr.synonyms
                .iter()
                .flatten()
                .any(|member| member == &["pull", "request"]),
            "a phrase stays one synonym"
        );
        assert!(
            !synonyms
                .query(&tokenizer, "pull")
                .synonym_terms()
                .contains(&"pr".to_owned()),
            "a phrase is expanded to, not from"
        );
        assert!(synonyms.query(&tokenizer, "zebra").synonyms.is_empty());
    }

    #[test]
    fn every_group_has_a_single_word_to_expand_from() {
        for group in GROUPS {
            assert!(group.len() >= 2, "{group:?}");
            assert!(group.iter().any(|w| !w.contains(' ')), "{group:?}");
            for w in *group {
                assert_eq!(*w, w.to_lowercase(), "{group:?}");
            }
        }
    }
}
