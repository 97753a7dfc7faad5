//! Text to terms: the one tokenizer that both the indexed fields and the query go through, so a
//! query word and a name part meet as the same term.
//!
//! Identifiers are split where a person would read a word boundary: `get_issue`, `getIssue`,
//! `GetIssue`, `get-issue`, `github__get_issue`, `HTMLParser` (→ html, parser), `base64Encode`
//! (→ base, 64, encode). Terms are lowercased, stop words dropped, and plurals made singular
//! (or, as a choice, words stemmed with the Snowball English stemmer).

use rust_stemmers::{Algorithm, Stemmer};

/// Terms longer than this many bytes are cut: a long base64 blob or URL in a description is no
/// search term, and a bounded term keeps hashing and comparing cheap.
pub const MAX_TERM_BYTES: usize = 64;

/// Words too common in tool descriptions and requests to tell tools apart. BM25's idf already
/// weighs them down; dropping them keeps short queries from matching every long description.
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "could",
    "do",
    "does",
    "for",
    "from",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "my",
    "of",
    "on",
    "or",
    "please",
    "should",
    "so",
    "some",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "to",
    "us",
    "was",
    "we",
    "what",
    "when",
    "which",
    "while",
    "who",
    "will",
    "with",
    "would",
    "you",
    "your",
    "how",
    "where",
    "give",
    "need",
    "want",
    "let",
    "just",
    "all",
    "every",
    "now",
    "yet",
    "already",
    "also",
    "has",
    "have",
    "had",
    "did",
    "been",
    "here",
    "something",
    "anything",
    "everything",
    "thing",
    "things",
    "our",
    "i'm",
];

/// How text becomes terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenOptions {
    /// Split identifiers at `_`, `-`, `.`, case changes and letter/digit changes. Off: an
    /// identifier such as `get_issue` stays one term (only whitespace and punctuation other than
    /// `_` separate terms), as a plain word tokenizer would do.
    pub split_names: bool,
    /// How words are reduced to a stem.
    pub stem: Stem,
    /// Drop common English words.
    pub stop_words: bool,
}

impl Default for TokenOptions {
    fn default() -> Self {
        TokenOptions {
            split_names: true,
            stem: Stem::Plural,
            stop_words: true,
        }
    }
}

/// How words are reduced to a stem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stem {
    /// Not at all.
    None,
    /// Plurals only (Harman's S-stemmer: `issues` → `issue`, `entries` → `entry`): the tools'
    /// words and the users' meet on number without the over-reach of a full stemmer
    /// (`organization` and `organ`).
    Plural,
    /// The Snowball English stemmer.
    Snowball,
}

/// The tokenizer handed to the `bm25` crate's embedders, and used on queries.
pub(crate) struct Tokenizer {
    options: TokenOptions,
    stemmer: Stemmer,
}

impl Tokenizer {
    pub(crate) fn new(options: TokenOptions) -> Self {
        Tokenizer {
            options,
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// The terms of `text`, in order, repeats kept (BM25 counts them).
    pub(crate) fn terms(&self, text: &str) -> Vec<String> {
        self.plain_terms(text)
    }

    fn plain_terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in words(text, self.options.split_names) {
            let mut word = word.to_lowercase();
            if self.options.stop_words && STOP_WORDS.contains(&word.as_str()) {
                continue;
            }
            match self.options.stem {
                Stem::None => {}
                Stem::Plural => word = singular(word),
                Stem::Snowball => word = self.stemmer.stem(&word).into_owned(),
            }
            out.push(head(&word, MAX_TERM_BYTES).to_owned());
        }
        out
    }
}

impl bm25::Tokenizer for Tokenizer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        self.terms(input_text)
    }
}

/// Harman's S-stemmer: `-ies` → `-y` (not `-eies`, `-aies`), else `-s` dropped (not `-us`,
/// `-ss`; its `-es` → `-e` rule drops the same `s`); and, as English spells it, `-sses`, `-xes`,
/// `-zes`, `-ches`, `-shes` lose their `-es` (`processes`, `branches`).
fn singular(mut word: String) -> String {
    let ends = |w: &str, s: &str| w.len() > s.len() + 1 && w.ends_with(s);
    if ["sses", "xes", "zes", "ches", "shes"]
        .iter()
        .any(|e| ends(&word, e))
    {
        word.truncate(word.len() - 2);
    } else if ends(&word, "ies") && !word.ends_with("eies") && !word.ends_with("aies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if ends(&word, "s") && !word.ends_with("us") && !word.ends_with("ss") {
        word.truncate(word.len() - 1);
    }
    word
}

/// The first `max` bytes of `text` at most, cut on a character boundary.
pub(crate) fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The words of `text`: runs of letters and digits (and `_` when names are not split), each
/// split further at case and letter/digit changes when `split` is on.
fn words(text: &str, split: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let joins = |c: char| c.is_alphanumeric() || (!split && c == '_');
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (joins(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                push_word(&text[s..i], split, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        push_word(&text[s..], split, &mut out);
    }
    out
}

/// Pushes `run` (letters and digits only when `split`), split at `aB`, `ABc` (before the `B`),
/// `a1` and `1a`.
fn push_word<'a>(run: &'a str, split: bool, out: &mut Vec<&'a str>) {
    if !split {
        out.push(run);
        return;
    }
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut start = 0;
    for k in 1..chars.len() {
        let (i, c) = chars[k];
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic());
        if boundary {
            out.push(&run[start..i]);
            start = i;
        }
    }
    out.push(&run[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<String> {
        Tokenizer::new(TokenOptions {
            split_names: true,
            stem: Stem::None,
            stop_words: false,
        })
        .terms(text)
    }

    #[test]
    fn identifiers_split_at_every_convention() {
        for name in [
            "get_issue",
            "getIssue",
            "GetIssue",
            "get-issue",
            "GET_ISSUE",
            "get.issue",
        ] {
            assert_eq!(plain(name), ["get", "issue"], "{name}");
        }
        assert_eq!(
            plain("github__get_issue"),
            ["github", "get", "issue"],
            "the gateway's SERVER__TOOL"
        );
        assert_eq!(plain("HTMLParser"), ["html", "parser"]);
        assert_eq!(plain("base64Encode"), ["base", "64", "encode"]);
        assert_eq!(
            plain("browser_take_screenshot"),
            ["browser", "take", "screenshot"]
        );
    }

    #[test]
    fn without_splitting_an_identifier_stays_one_term() {
        let t = Tokenizer::new(TokenOptions {
            split_names: false,
            stem: Stem::None,
            stop_words: false,
        });
        assert_eq!(
            t.terms("get_issue getIssue, get-issue"),
            ["get_issue", "getissue", "get", "issue"]
        );
    }

    #[test]
    fn stems_and_stop_words() {
        let t = Tokenizer::new(TokenOptions::default());
        assert_eq!(
            t.terms("Listing the issues of a repository"),
            ["listing", "issue", "repository"]
        );
        assert_eq!(
            t.terms("entries files processes branches status us toes bus"),
            ["entry", "file", "process", "branch", "status", "toe", "bus"]
        );
        let snowball = Tokenizer::new(TokenOptions {
            stem: Stem::Snowball,
            ..TokenOptions::default()
        });
        assert_eq!(
            snowball.terms("Listing the issues of a repository"),
            ["list", "issu", "repositori"]
        );
    }

    #[test]
    fn long_terms_are_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_TERM_BYTES);
        let terms = plain(&long);
        assert_eq!(terms.len(), 1);
        assert!(terms[0].len() <= MAX_TERM_BYTES);
        assert_eq!(terms[0].chars().count(), MAX_TERM_BYTES / 2);
    }

    #[test]
    fn punctuation_and_empty_text() {
        assert!(plain("").is_empty());
        assert!(plain(" -- __ .. ").is_empty());
        assert_eq!(plain("read (a) file!"), ["read", "a", "file"]);
    }
}
