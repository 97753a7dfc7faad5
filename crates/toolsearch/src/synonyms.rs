//! Query expansion: the words people use for a task and the words tool definitions use for it
//! are often not the same (`folder`/`directory`, `PR`/`pull request`, `forget`/`delete`). A query
//! term from one of these groups also searches for the other members of its group.
//!
//! The groups are general software and web vocabulary, not words of any one server; a member
//! with a space is a phrase, added as its words, and is expanded to but not from (so `pull`
//! alone does not mean `pr`). Only the query is expanded: the index holds the tools' own words.

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

#[cfg(test)]
mod tests {
    use super::*;

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
