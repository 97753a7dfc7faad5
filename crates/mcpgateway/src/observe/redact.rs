//! Secrets kept out of what mcpx writes (the audit log, the log on stderr, error lines), in
//! every spelling.
//!
//! A secret reaches text as its client or server wrote it, and JSON lets each of its characters
//! be written several ways: `5` or `\u0035`, `/` or `\/`, a quote as `\"`, an emoji as a
//! surrogate pair; text logged as a JSON string inside a JSON string escapes the escapes once
//! more. Searching the raw text for the secret misses all of these. So the text is read the way
//! a reader would: each escape decoded (up to [`MAX_ESCAPE_LEVELS`] levels), every character of
//! the decoded view remembering the raw bytes it came from. A secret found in any view is
//! replaced by [`REDACTED`] over those bytes, whole escapes and all, so the text stays valid
//! JSON where it was.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

use super::audit::{MIN_SECRET_CHARS, REDACTED};

/// How many levels of escaping are read through: text, a JSON string of it, and a JSON string
/// of that (a frame logged inside a JSON log line).
pub const MAX_ESCAPE_LEVELS: usize = 3;

/// The secrets to keep out of text; cheap to clone. Its clones share the secrets: those
/// [`Redactor::add`]ed later (a reloaded config's) are kept out by every clone from then on.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so that a secret holding another is replaced whole.
    secrets: Arc<RwLock<Arc<[String]>>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.current().len())
            .finish()
    }
}

/// One character of a decoded view, and the raw bytes it came from (offsets as `u32`: a view is
/// made of one log line or one string, far below 4 GiB, and is 12 bytes a character).
#[derive(Clone, Copy)]
struct Origin {
    /// Where the character starts in the view's text.
    at: u32,
    /// Its raw bytes in the original text.
    raw: (u32, u32),
}

/// A reading of the text: its characters, each with the raw bytes it came from.
struct View {
    text: String,
    origins: Vec<Origin>,
}

impl Redactor {
    /// Keeps `secrets` out of text; those shorter than [`MIN_SECRET_CHARS`] are not searched for
    /// (a `${DEBUG}` of `1` would blank every digit).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let redactor = Redactor::default();
        redactor.add(secrets);
        redactor
    }

    /// Keeps `more` out as well, in this redactor and every clone of it (a secret once kept out
    /// stays out: a line about a server removed by a reload still names its old secret).
    pub fn add(&self, more: impl IntoIterator<Item = String>) {
        let mut secrets = self.secrets.write().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<String> = secrets.iter().cloned().collect();
        all.extend(
            more.into_iter()
                .filter(|s| s.chars().count() >= MIN_SECRET_CHARS),
        );
        // Longest first; by value within a length, so that equal ones are adjacent.
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        *secrets = all.into();
    }

    /// The secrets now, longest first.
    fn current(&self) -> Arc<[String]> {
        self.secrets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether there is nothing to keep out.
    pub fn is_empty(&self) -> bool {
        self.current().is_empty()
    }

    /// `value` with every secret replaced in its strings and member names (decoded already
    /// by the parse; escapes written inside them are read through as in [`Redactor::redact`]).
    pub fn redact_value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if self.is_empty() {
            return;
        }
        let mut stack = vec![value];
        while let Some(node) = stack.pop() {
            match node {
                Value::String(s) => {
                    if let Cow::Owned(clean) = self.redact(s) {
                        *s = clean;
                    }
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => {
                    let renamed: Vec<(String, String)> = map
                        .keys()
                        .filter_map(|k| match self.redact(k) {
                            Cow::Owned(clean) => Some((k.clone(), clean)),
                            Cow::Borrowed(_) => None,
                        })
                        .collect();
                    for (old, new) in renamed {
                        if let Some(v) = map.remove(&old) {
                            map.insert(new, v);
                        }
                    }
                    stack.extend(map.values_mut());
                }
                _ => {}
            }
        }
    }

    /// `text` with every secret replaced by [`REDACTED`], however it is spelt.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let secrets = self.current();
        if secrets.is_empty() || u32::try_from(text.len()).is_err() {
            // Past 4 GiB no text is made here; nothing that long is logged.
            return Cow::Borrowed(text);
        }
        // Most text has no escape: the secrets are searched for as they are.
        if !text.contains('\\') {
            if !secrets.iter().any(|s| text.contains(s.as_str())) {
                return Cow::Borrowed(text);
            }
            let mut out = text.to_owned();
            for secret in secrets.iter() {
                out = out.replace(secret.as_str(), REDACTED);
            }
            return Cow::Owned(out);
        }
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut view = View::of(text);
        for level in 0..=MAX_ESCAPE_LEVELS {
            let next =
                (level < MAX_ESCAPE_LEVELS && view.text.contains('\\')).then(|| view.decoded());
            Redactor::find(&secrets, &view, next.as_ref(), &mut ranges);
            match next {
                Some(next) => view = next,
                None => break,
            }
        }
        if ranges.is_empty() {
            return Cow::Borrowed(text);
        }
        ranges.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in ranges {
            if end <= at {
                continue;
            }
            out.push_str(&text[at..start.max(at)]);
            if start >= at {
                out.push_str(REDACTED);
            }
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Adds the raw ranges of every secret found in `view`. Where `view` is read once more
    /// (`next`), a range is widened to whole characters of that reading: a secret found letter
    /// for letter from the middle of an escape (`n` of `\\n`, a quote after a backslash) takes
    /// the whole escape with it, so that no half escape is left behind.
    fn find(
        secrets: &[String],
        view: &View,
        next: Option<&View>,
        ranges: &mut Vec<(usize, usize)>,
    ) {
        for secret in secrets {
            for (start, found) in view.text.match_indices(secret.as_str()) {
                let end = start + found.len();
                let first = view.origins.partition_point(|o| (o.at as usize) < start);
                let last = view.origins.partition_point(|o| (o.at as usize) < end);
                if let (Some(first), Some(last)) = (
                    view.origins.get(first),
                    view.origins.get(last.wrapping_sub(1)),
                ) {
                    let (mut start, mut end) = (first.raw.0, last.raw.1);
                    if let Some(next) = next {
                        let from = next.origins.partition_point(|o| o.raw.1 <= start);
                        let to = next.origins.partition_point(|o| o.raw.1 < end);
                        start = next.origins.get(from).map_or(start, |o| o.raw.0.min(start));
                        end = next.origins.get(to).map_or(end, |o| o.raw.1.max(end));
                    }
                    ranges.push((start as usize, end as usize));
                }
            }
        }
    }
}

impl View {
    /// The text as it is, each character its own raw bytes.
    fn of(text: &str) -> View {
        View {
            text: text.to_owned(),
            // Offsets fit: `redact` takes no text of 4 GiB or more.
            origins: text
                .char_indices()
                .map(|(at, c)| Origin {
                    at: at as u32,
                    raw: (at as u32, (at + c.len_utf8()) as u32),
                })
                .collect(),
        }
    }

    /// This view with JSON's escapes decoded once: each decoded character spans the raw bytes
    /// of all the characters it was written with.
    fn decoded(&self) -> View {
        let chars: Vec<(char, Origin)> = self
            .origins
            .iter()
            .zip(self.text.chars())
            .map(|(o, c)| (c, *o))
            .collect();
        let mut text = String::with_capacity(self.text.len());
        let mut origins = Vec::with_capacity(chars.len());
        let mut i = 0;
        while i < chars.len() {
            let (c, origin) = chars[i];
            let (decoded, used) = if c == '\\' {
                escape(&chars[i..])
            } else {
                (Some(c), 1)
            };
            let decoded = decoded.unwrap_or(c);
            let used = used.max(1);
            let raw = (origin.raw.0, chars[i + used - 1].1.raw.1);
            origins.push(Origin {
                at: text.len() as u32,
                raw,
            });
            text.push(decoded);
            i += used;
        }
        View { text, origins }
    }
}

/// The character the escape at the start of `chars` (a backslash) stands for, and how many
/// characters it takes; `None` for a backslash that starts no escape (taken as it is).
fn escape(chars: &[(char, Origin)]) -> (Option<char>, usize) {
    let simple = match chars.get(1).map(|c| c.0) {
        Some('"') => Some('"'),
        Some('\\') => Some('\\'),
        Some('/') => Some('/'),
        Some('b') => Some('\u{8}'),
        Some('f') => Some('\u{c}'),
        Some('n') => Some('\n'),
        Some('r') => Some('\r'),
        Some('t') => Some('\t'),
        Some('u') => None,
        _ => return (None, 1),
    };
    if let Some(c) = simple {
        return (Some(c), 2);
    }
    let Some(high) = hex4(&chars[2..]) else {
        return (None, 1);
    };
    if (0xD800..0xDC00).contains(&high) {
        // A surrogate pair: the low half must follow as an escape of its own.
        let low = chars
            .get(6..8)
            .filter(|p| p[0].0 == '\\' && p[1].0 == 'u')
            .and_then(|_| hex4(&chars[8..]))
            .filter(|low| (0xDC00..0xE000).contains(low));
        if let Some(low) = low {
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return (char::from_u32(code), 12);
        }
    }
    (char::from_u32(high), 6)
}

/// The value of four hex digits at the start of `chars`.
fn hex4(chars: &[(char, Origin)]) -> Option<u32> {
    let digits = chars.get(..4)?;
    digits
        .iter()
        .try_fold(0u32, |n, (c, _)| Some(n * 16 + c.to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SECRET: &str = "sk-live-12345";

    fn redactor() -> Redactor {
        Redactor::new([SECRET.to_owned(), "x".to_owned()])
    }

    #[test]
    fn a_secret_added_later_is_kept_out_by_every_clone() {
        let first = redactor();
        let clone = first.clone();
        assert_eq!(
            clone.redact("new-key-678 and sk-live-12345"),
            "new-key-678 and [redacted]"
        );
        first.add(["new-key-678".to_owned(), "ab".to_owned(), SECRET.to_owned()]);
        assert_eq!(
            clone.redact("new-key-678 and sk-live-12345"),
            "[redacted] and [redacted]"
        );
        // Too short to search for, and no duplicate kept.
        assert_eq!(format!("{clone:?}"), "Redactor { secrets: 2 }");
    }

    #[test]
    fn plain_and_escaped_spellings_are_redacted() {
        let r = redactor();
        for text in [
            r#"{"k":"sk-live-12345"}"#,
            r#"{"k":"sk-live-1234\u0035"}"#,
            r#"{"k":"\u0073k-live-12345"}"#,
            r#"{"k":"sk\u002dlive\u002D1234\u0035"}"#,
            r#"{"k":"\"{\\\"t\\\":\\\"sk-live-1234\\u0035\\\"}\""}"#,
        ] {
            let out = r.redact(text);
            assert!(
                !out.contains("sk-live") && !out.contains("1234"),
                "{text} -> {out}"
            );
            assert!(out.contains(REDACTED), "{out}");
            serde_json::from_str::<serde_json::Value>(&out).unwrap();
        }
        assert_eq!(r.redact("nothing here"), "nothing here");
        assert_eq!(
            r.redact("x marks"),
            "x marks",
            "short secrets are not searched for"
        );
    }

    #[test]
    fn the_rest_of_the_text_is_kept_as_it_was() {
        let r = redactor();
        assert_eq!(
            r.redact(r#"a \u0041 sk-live-1234\u0035 \n b"#),
            format!(r#"a \u0041 {REDACTED} \n b"#)
        );
        assert_eq!(
            r.redact("before sk-live-12345 after sk-live-12345"),
            format!("before {REDACTED} after {REDACTED}")
        );
    }

    /// One character of a secret, spelt as JSON may spell it inside a string.
    fn spell(c: char, how: u8) -> String {
        let plain = match c {
            '"' => "\\\"".to_owned(),
            '\\' => "\\\\".to_owned(),
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
            c => c.to_string(),
        };
        match how % 4 {
            0 => plain,
            1 | 2 => {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units)
                    .iter()
                    .map(|u| {
                        if how % 4 == 1 {
                            format!("\\u{u:04x}")
                        } else {
                            format!("\\u{u:04X}")
                        }
                    })
                    .collect()
            }
            _ if c == '/' => "\\/".to_owned(),
            _ => plain,
        }
    }

    #[test]
    fn a_secret_of_escape_characters_is_blanked_where_it_stands_letter_for_letter() {
        // Found by `no_spelling_survives` before its secrets were made to start and end with a
        // letter or digit: the secret is backslash, backslash, quote, backslash, quote, spelt
        // with escapes in a JSON string that is itself logged as a JSON string. Letter for
        // letter, it also stands in the outer text, ending on the inner string's closing quote.
        let secret = r#"\\"\""#.to_owned();
        let text = r#""{\"arg\":\"npti  x \\u005C\\u005c\\u0022\\u005C\\\"\"}""#;
        let out = Redactor::new([secret.clone()]).redact(text);
        assert!(!out.contains(&secret), "{text} -> {out}");
        assert!(out.contains(REDACTED), "{out}");
        // The outer JSON stays whole; the inner cannot (see `no_spelling_survives`).
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
    }

    #[test]
    fn a_secret_found_from_the_middle_of_an_escape_takes_the_whole_escape() {
        // `\n` then `secret1`: the text holds "nsecret1" letter for letter. Blanking from the
        // `n` on would leave a lone backslash, and the JSON broken.
        let r = Redactor::new(["nsecret1".to_owned()]);
        let out = r.redact(r#"{"k":"a\nsecret1 b"}"#);
        assert_eq!(out, format!(r#"{{"k":"a{REDACTED} b"}}"#));
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// However a secret's characters are spelt (as they are, as escapes, mixed, split by
        /// escapes), and whatever surrounds it, no spelling of it survives, and the text stays
        /// valid JSON. The secret starts and ends with a letter or digit: one that starts or
        /// ends with JSON's own escape characters (`\\`, `"`) can stand, letter for letter, in
        /// the escaped spelling of what surrounds it (one of backslashes and quotes, in a JSON
        /// string logged as a string, can end on the escaped closing quote), and there blanking
        /// it keeps the secret out but cannot also keep the inner JSON whole: see
        /// `a_secret_of_escape_characters_is_blanked_where_it_stands_letter_for_letter`.
        #[test]
        fn no_spelling_survives(
            secret in "[a-zA-Z0-9][a-zA-Z0-9/\"\\\\é😀 -]{2,14}[a-zA-Z0-9]",
            hows in proptest::collection::vec(any::<u8>(), 16),
            before in "[a-z ]{0,8}",
            after in "[a-z ]{0,8}",
            nested in any::<bool>(),
        ) {
            let redactor = Redactor::new([secret.clone()]);
            let spelt: String = secret
                .chars()
                .zip(hows.iter().cycle())
                .map(|(c, how)| spell(c, *how))
                .collect();
            let inner = format!(r#"{{"arg":"{before}{spelt}{after}"}}"#);
            let text = if nested {
                serde_json::Value::from(inner.clone()).to_string()
            } else {
                inner
            };
            let out = redactor.redact(&text);
            let mut decoded: serde_json::Value = serde_json::from_str(&out).unwrap();
            if nested {
                decoded = serde_json::from_str(decoded.as_str().unwrap()).unwrap();
            }
            let value = decoded["arg"].as_str().unwrap().to_owned();
            prop_assert!(!value.contains(&secret), "{text} -> {out}");
            prop_assert!(value.contains(REDACTED));
        }
    }
}
