//! Query expansion: the words people use for a task and the words tool definitions use for it
//! are often not the same (`folder`/`directory`, `PR`/`pull request`, `forget`/`delete`). A query
//! term from one of these groups also searches for the other members of its group.
//!
//! The groups are general software and web vocabulary, not words of any one server; a member
//! with a space is a phrase, added as its words, and is expanded to but not from (so `pull`
//! alone does not mean `pr`). Only the query is expanded: the index holds the tools' own words.

use std::collections::HashMap;

use crate::tokens::Tokenizer;

/// Groups of words (or phrases) that name the same thing in a task.
pub(crate) const GROUPS: &[&[&str]] = &[
    &[
        "delete", "remove", "drop", "erase", "forget", "discard", "destroy",
    ],
    &["create", "make", "new", "add"],
    &["find", "search", "look", "lookup", "locate"],
    &["show", "display", "view", "see", "get", "read", "retrieve"],
    &["list", "enumerate"],
    &["update", "change", "edit", "modify", "patch"],
    &["rename", "move"],
    &["folder", "directory", "dir"],
    &["repo", "repository", "project"],
    &["pr", "pull request", "merge request"],
    &["mr", "merge request"],
    &["picture", "image", "photo", "screenshot", "png", "jpg"],
    &["db", "database"],
    &["docs", "documentation", "doc"],
    &["website", "site", "web", "webpage", "page", "url"],
    &["message", "msg", "post", "send", "chat"],
    &["reply", "respond", "answer"],
    &["bug", "issue", "ticket"],
    &["error", "exception", "crash", "failure"],
    &["type", "fill", "enter", "input"],
    &["click", "press", "tap"],
    &["hover", "mouse"],
    &["go", "navigate", "visit", "browse", "open"],
    &["run", "execute", "launch", "start"],
    &["terminal", "shell", "command", "process"],
    &["remember", "memorize", "memory", "recall"],
    &["chart", "graph", "plot", "diagram", "visualize", "draw"],
    &["row", "record", "document", "entry"],
    &["sql", "query"],
    &["video", "screencast", "recording"],
    &["slow", "performance", "speed", "profile", "trace"],
    &["download", "fetch", "grab"],
    &["upload", "attach"],
    &["paper", "article", "preprint", "publication"],
    &["summary", "abstract", "summarize", "tldr"],
    &["cite", "citation", "reference", "bibtex"],
    &["watch", "monitor", "follow", "track", "subscribe"],
    &["size", "big", "large", "bytes", "storage"],
    &["stats", "statistics", "metrics", "usage"],
    &["user", "member", "people", "person"],
    &["diff", "compare", "difference", "changes"],
    &["tab", "page"],
    &["dialog", "popup", "confirm", "prompt"],
    &["directions", "route", "drive", "driving"],
    &["distance", "far", "travel time"],
    &["elevation", "altitude", "height"],
    &[
        "coordinates",
        "latitude",
        "longitude",
        "geocode",
        "address",
        "location",
    ],
    &[
        "place",
        "restaurant",
        "shop",
        "store",
        "business",
        "nearby",
        "near",
    ],
    &["emulate", "simulate", "pretend", "throttle"],
    &["crawl", "spider"],
    &["research", "investigate", "investigation"],
    &["credit", "balance", "quota"],
    &["k8s", "kubernetes", "kubectl"],
    &["mongo", "mongodb"],
    &["postgres", "postgresql", "psql"],
    &["gh", "github"],
    &["stage", "add"],
    &["unstage", "reset"],
    &["count", "many", "how many"],
    &["note", "comment"],
    &["approve", "review"],
    &["kill", "terminate", "stop"],
    &["javascript", "js", "script"],
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
