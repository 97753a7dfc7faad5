//! Hints: after a flat line, what would be right, where that is certain.
//!
//! A hint is given only when one answer stands out: a string that is exactly the text of the
//! wanted number or boolean, the one nearest enum value or property name (ties give none), a
//! missing property whose schema names its type, the bounds of an out-of-range number. The line
//! itself never changes; the hint is a separate text beside it.
//!
//! The schema location of a failed keyword is looked up in the schema document, and a hint is
//! given only when what is found there is what failed (the keyword is there, with the property
//! or bound the line names), so a location the lookup cannot follow gives no hint, never a
//! wrong one. Work is bounded: names and strings over [`MAX_HINT_CHARS`] characters and lists
//! over [`MAX_HINT_CANDIDATES`] entries are not compared.
//!
//! Hints are lazy: when an error is found only its [`Seed`] is kept (the location, the string or
//! names the hint compares, a shared handle on the document); the lookup and the edit-distance
//! search run when a caller asks for the hint, so a caller that wants only the lines pays
//! nothing for them.

use std::sync::Arc;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

use crate::render::{is_integral, quote_key, render};
use crate::{MAX_HINT_CANDIDATES, MAX_HINT_CHARS, MAX_HINT_EDITS, MAX_HINT_REF_HOPS};

/// Before each hint in [`with_hints`]'s text.
const HINT_PREFIX: &str = "  hint: ";

/// Flat lines as text, one a line, each line's hint (same order as `lines`, `None` for none) on
/// the line after it as `  hint: …`; the lines themselves unchanged, so a reader that takes
/// the lines starting with `$` still finds exactly them.
pub fn with_hints(lines: &[String], hints: &[Option<String>]) -> String {
    let mut text = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(line);
        if let Some(Some(hint)) = hints.get(i) {
            text.push('\n');
            text.push_str(HINT_PREFIX);
            text.push_str(hint);
        }
    }
    text
}

/// What a hint needs of one error, taken when the error is found (a few small copies) so that
/// the hint itself is worked out only when a caller asks for it ([`Seed::hint`]): the lines
/// alone cost nothing more.
#[derive(Debug)]
pub(crate) struct Seed {
    /// The schema document the error's location points into.
    document: Arc<Value>,
    /// The failed keyword's schema location (a JSON pointer).
    location: String,
    kind: SeedKind,
}

#[derive(Debug)]
enum SeedKind {
    /// A string where a scalar is wanted: its text, and which scalars are wanted.
    Quoted {
        text: String,
        boolean: bool,
        integer: bool,
        number: bool,
    },
    /// A string that is not the `enum` or `const` value.
    Value { keyword: &'static str, got: String },
    /// Unexpected properties (one line each): their names, and the names the instance has.
    Misspelt {
        keyword: &'static str,
        unexpected: Vec<String>,
        present: Vec<String>,
    },
    /// A missing property.
    Missing { name: String },
    /// A number out of its bounds.
    Range,
}

/// The seed of an error's hints, if its kind can have one. `document` is the document the
/// error's schema path points into.
pub(crate) fn seed(
    document: &Arc<Value>,
    error: &jsonschema::ValidationError<'_>,
) -> Option<Arc<Seed>> {
    use ValidationErrorKind as K;
    let instance = error.instance().as_ref();
    let short = |v: &Value| {
        v.as_str()
            .filter(|t| t.chars().count() <= MAX_HINT_CHARS)
            .map(str::to_owned)
    };
    let kind = match error.kind() {
        K::Type { kind } => SeedKind::Quoted {
            text: short(instance)?,
            boolean: wants_type(kind, "boolean"),
            integer: wants_type(kind, "integer"),
            number: wants_type(kind, "number"),
        },
        K::Enum { .. } => SeedKind::Value {
            keyword: "enum",
            got: short(instance)?,
        },
        K::Constant { .. } => SeedKind::Value {
            keyword: "const",
            got: short(instance)?,
        },
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            // Over the bound, which names are present cannot be kept: no hint, never a name
            // the instance already has.
            let present = instance.as_object()?;
            if present.len() > MAX_HINT_CANDIDATES {
                return None;
            }
            SeedKind::Misspelt {
                keyword: match error.kind() {
                    K::AdditionalProperties { .. } => "additionalProperties",
                    _ => "unevaluatedProperties",
                },
                unexpected: unexpected.clone(),
                present: present.keys().cloned().collect(),
            }
        }
        K::Required { property } => SeedKind::Missing {
            name: property.as_str()?.to_owned(),
        },
        K::Minimum { .. }
        | K::Maximum { .. }
        | K::ExclusiveMinimum { .. }
        | K::ExclusiveMaximum { .. } => SeedKind::Range,
        _ => return None,
    };
    Some(Arc::new(Seed {
        document: document.clone(),
        location: error.schema_path().as_str().to_owned(),
        kind,
    }))
}

impl Seed {
    /// The hint for the `nth` line its error stands for (one line per unexpected property,
    /// otherwise one), if one is certain.
    pub(crate) fn hint(&self, nth: usize) -> Option<String> {
        let schema = &*self.document;
        let at = self.location.as_str();
        match &self.kind {
            SeedKind::Quoted {
                text,
                boolean,
                integer,
                number,
            } => quoted_scalar(text, *boolean, *integer, *number),
            SeedKind::Value { keyword, got } => {
                let wanted = owner(schema, at, keyword)?.get(*keyword)?;
                match wanted {
                    Value::Array(options) if *keyword == "enum" => nearest_value(got, options),
                    single => nearest_value(got, std::slice::from_ref(single)),
                }
            }
            SeedKind::Misspelt {
                keyword,
                unexpected,
                present,
            } => {
                let owner = owner(schema, at, keyword)?;
                misspelt_property(owner, present, unexpected.get(nth)?)
            }
            SeedKind::Missing { name } => {
                let owner = ["required", "dependentRequired", "dependencies"]
                    .iter()
                    .find_map(|k| owner(schema, at, k))?;
                missing_type(schema, owner, name)
            }
            SeedKind::Range => {
                let owner = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
                    .iter()
                    .find_map(|k| owner(schema, at, k))?;
                range(owner)
            }
        }
    }
}

/// The schema object holding `keyword` at the keyword location `at` (a JSON pointer ending in
/// `/keyword`, perhaps with more after it), if the document has it there.
fn owner<'s>(schema: &'s Value, at: &str, keyword: &str) -> Option<&'s Map<String, Value>> {
    // The rightmost segment that is the keyword.
    let mut end = at.len();
    loop {
        let start = at[..end].rfind('/')?;
        if &at[start + 1..end] == keyword {
            let object = schema.pointer(&at[..start])?.as_object()?;
            return object.contains_key(keyword).then_some(object);
        }
        end = start;
    }
}

/// `"3"` where an integer is wanted: the string is exactly the wanted scalar's JSON text.
fn quoted_scalar(text: &str, boolean: bool, integer: bool, number: bool) -> Option<String> {
    let fits = match crate::parse_json(text.as_bytes()).ok()? {
        Value::Bool(_) => boolean,
        Value::Number(n) if plain_integer(&n, text) => integer || number,
        Value::Number(_) => number,
        _ => false,
    };
    fits.then(|| format!("did you mean {text}, without quotes?"))
}

/// Whether a `type` keyword's set of types holds `name`.
pub(crate) fn wants_type(kind: &TypeKind, name: &str) -> bool {
    match kind {
        TypeKind::Single(t) => t.as_str() == name,
        TypeKind::Multiple(set) => set.iter().any(|t| t.as_str() == name),
    }
}

/// Whether `n`, parsed from `text`, is an integer written as plain digits: `3.0` or `3e0` as
/// an integer depends on the dialect, so only `3` counts.
pub(crate) fn plain_integer(n: &serde_json::Number, text: &str) -> bool {
    is_integral(n) && text.bytes().all(|b| b == b'-' || b.is_ascii_digit())
}

/// The one string option nearest a string instance, if near enough.
fn nearest_value(got: &str, options: &[Value]) -> Option<String> {
    let candidates = options
        .iter()
        .take(MAX_HINT_CANDIDATES)
        .filter_map(Value::as_str);
    let best = nearest(got, candidates)?;
    Some(format!(
        "did you mean {}?",
        render(&Value::String(best.to_owned()))
    ))
}

/// The one declared property the unexpected `name` is a near miss of, among those the instance
/// does not already have.
fn misspelt_property(owner: &Map<String, Value>, present: &[String], name: &str) -> Option<String> {
    let declared = owner.get("properties")?.as_object()?;
    if declared.contains_key(name) {
        return None;
    }
    let candidates = declared
        .keys()
        .take(MAX_HINT_CANDIDATES)
        .filter(|k| !present.contains(k))
        .map(String::as_str);
    let best = nearest(name, candidates)?;
    Some(format!("did you mean {}?", quote_key(best)))
}

/// `add 'name' (string)`: the type the missing property's schema declares.
fn missing_type(schema: &Value, owner: &Map<String, Value>, name: &str) -> Option<String> {
    let property = owner.get("properties")?.as_object()?.get(name)?;
    let property = follow_refs(schema, property)?;
    let types = match property.get("type")? {
        Value::String(t) => t.clone(),
        Value::Array(ts) => {
            let names: Option<Vec<&str>> = ts.iter().map(Value::as_str).collect();
            names?.join(" or ")
        }
        _ => return None,
    };
    Some(format!("add {} ({types})", quote_key(name)))
}

/// A subschema with its local references (`#`, `#/…`) followed, a bounded number of times.
fn follow_refs<'s>(schema: &'s Value, mut node: &'s Value) -> Option<&'s Value> {
    for _ in 0..MAX_HINT_REF_HOPS {
        let Some(reference) = node.get("$ref") else {
            return Some(node);
        };
        let pointer = reference.as_str()?.strip_prefix('#')?;
        node = schema.pointer(pointer)?;
    }
    None
}

/// `allowed: 1 <= value <= 100`, from the bounds beside the one that failed (draft-04 boolean
/// exclusive bounds read as such).
fn range(owner: &Map<String, Value>) -> Option<String> {
    let number = |k: &str| owner.get(k).filter(|v| v.is_number());
    let flag = |k: &str| owner.get(k).and_then(Value::as_bool) == Some(true);
    let lower = match (number("exclusiveMinimum"), number("minimum")) {
        (Some(limit), _) => Some((limit, "<")),
        (None, Some(limit)) if flag("exclusiveMinimum") => Some((limit, "<")),
        (None, Some(limit)) => Some((limit, "<=")),
        (None, None) => None,
    };
    let upper = match (number("exclusiveMaximum"), number("maximum")) {
        (Some(limit), _) => Some((limit, "<")),
        (None, Some(limit)) if flag("exclusiveMaximum") => Some((limit, "<")),
        (None, Some(limit)) => Some((limit, "<=")),
        (None, None) => None,
    };
    let text = match (lower, upper) {
        (Some((lo, a)), Some((hi, b))) => format!("{lo} {a} value {b} {hi}"),
        (Some((lo, a)), None) => format!("value {} {lo}", if a == "<" { ">" } else { ">=" }),
        (None, Some((hi, b))) => format!("value {b} {hi}"),
        (None, None) => return None,
    };
    Some(format!("allowed: {text}"))
}

/// The one candidate nearest `got` by edit distance (letter case ignored, a swap of two
/// neighbours one edit), if it is within [`MAX_HINT_EDITS`] and at most half its own length
/// away; none on a tie, or for text over [`MAX_HINT_CHARS`].
fn nearest<'c>(got: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    let mut folded_got = Vec::new();
    fold(got, &mut folded_got)?;
    let mut chars = Vec::new();
    let mut best: Option<(&str, usize)> = None;
    let mut tied = false;
    let ascii = got.is_ascii();
    for candidate in candidates {
        // Lengths differing by more than the edits allowed: skipped unread (exact for ASCII).
        if ascii && candidate.is_ascii() && candidate.len().abs_diff(got.len()) > MAX_HINT_EDITS {
            continue;
        }
        if fold(candidate, &mut chars).is_none()
            || chars.len().abs_diff(folded_got.len()) > MAX_HINT_EDITS
        {
            continue;
        }
        let Some(d) = distance_within(&folded_got, &chars, MAX_HINT_EDITS) else {
            continue;
        };
        if 2 * d > chars.len() {
            continue;
        }
        match best {
            Some((_, b)) if d > b => {}
            Some((_, b)) if d == b => tied = true,
            _ => {
                best = Some((candidate, d));
                tied = false;
            }
        }
    }
    match best {
        Some((candidate, _)) if !tied && candidate != got => Some(candidate),
        _ => None,
    }
}

/// `text` in lower case into `out`; `None` (and `out` unusable) for text over [`MAX_HINT_CHARS`].
fn fold(text: &str, out: &mut Vec<char>) -> Option<()> {
    out.clear();
    for c in text.chars() {
        out.extend(c.to_lowercase());
        if out.len() > MAX_HINT_CHARS {
            return None;
        }
    }
    Some(())
}

/// The optimal string alignment distance of `a` and `b` (insertions, deletions, substitutions
/// and swaps of two neighbours, each one edit) if it is at most `max`. Three rows on the stack:
/// both are at most [`MAX_HINT_CHARS`] long.
fn distance_within(a: &[char], b: &[char], max: usize) -> Option<usize> {
    const WIDTH: usize = MAX_HINT_CHARS + 1;
    const _: () = assert!(MAX_HINT_CHARS < u8::MAX as usize);
    if a.len() > MAX_HINT_CHARS || b.len() > MAX_HINT_CHARS {
        return None;
    }
    // Distances never exceed MAX_HINT_CHARS, so a byte holds each.
    let mut before = [0u8; WIDTH];
    let mut previous = [0u8; WIDTH];
    let mut current = [0u8; WIDTH];
    for (j, cell) in (0u8..).zip(previous.iter_mut().take(b.len() + 1)) {
        *cell = j;
    }
    for (i, first) in (1..=a.len()).zip(1u8..) {
        current[0] = first;
        let mut row_min = first;
        for j in 1..=b.len() {
            let cost = u8::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            current[j] = d;
            row_min = row_min.min(d);
        }
        if usize::from(row_min) > max {
            return None;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    Some(usize::from(previous[b.len()])).filter(|d| *d <= max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(a: &str, b: &str, max: usize) -> Option<usize> {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        distance_within(&chars(a), &chars(b), max)
    }

    #[test]
    fn distance_counts_edits_up_to_a_bound() {
        assert_eq!(dist("colour", "color", 2), Some(1));
        assert_eq!(dist("nmae", "name", 2), Some(1));
        assert_eq!(dist("ca", "abc", 3), Some(3));
        assert_eq!(dist("", "abc", 3), Some(3));
        assert_eq!(dist("kitten", "sitting", 3), Some(3));
        assert_eq!(dist("kitten", "sitting", 2), None);
        assert_eq!(dist("same", "same", 0), Some(0));
        assert_eq!(dist(&"a".repeat(MAX_HINT_CHARS + 1), "a", 99), None);
    }

    #[test]
    fn nearest_is_unique_and_near() {
        let names = ["color", "size", "name"];
        assert_eq!(nearest("colour", names.into_iter()), Some("color"));
        assert_eq!(nearest("Size", names.into_iter()), Some("size"));
        // Too far from anything, and a tie.
        assert_eq!(nearest("weight", names.into_iter()), None);
        assert_eq!(nearest("c", ["a", "b"].into_iter()), None);
        assert_eq!(nearest("ab", ["ac", "bb"].into_iter()), None);
    }

    #[test]
    fn hints_follow_their_lines() {
        let lines = ["$.a: x".to_owned(), "$.b: y".to_owned()];
        let text = with_hints(
            &lines,
            &[Some("did you mean 3, without quotes?".into()), None],
        );
        assert_eq!(
            text,
            "$.a: x\n  hint: did you mean 3, without quotes?\n$.b: y"
        );
        assert_eq!(with_hints(&lines, &[]), "$.a: x\n$.b: y");
    }

    #[test]
    fn owner_takes_whole_segments() {
        let schema = serde_json::json!({"properties": {"required": {"required": ["a"]}}});
        let owner = owner(&schema, "/properties/required/required", "required").unwrap();
        assert!(owner.contains_key("required") && !owner.contains_key("properties"));
        assert!(super::owner(&schema, "/requiredness", "required").is_none());
    }
}
