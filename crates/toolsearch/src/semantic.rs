//! Meaning beside words: a static word table (`data/words.bin`), distilled from the sentence
//! embedding model all-MiniLM-L6-v2 (each word run through the model alone, reduced to 128
//! dimensions, weighted by how rare the word is in English, quantised to one byte a value; made
//! by `experiments/embeddings/export_table.py`). A text's vector is the sum of its known
//! words' rows; a tool's text is its server, its name and the first sentence of its
//! description. "How high above sea level is Denver" then meets `maps_elevation`, which
//! shares no word with it. The cosine of the query's and a tool's vectors is fused with the
//! lexical score (BENCHMARKS.md has the recall it adds and the choices tried). Nothing is
//! loaded from anywhere at run time: the table is compiled into the binary, read in place.

use std::sync::OnceLock;

use crate::document::{Document, Field};

/// The table, as `export_table.py` writes it: b"MCPXWORDS1", u32 words, u32 dims, u32
/// vocabulary bytes, the sorted words joined by "\n", one f32 scale per word, then one i8 per
/// word and dimension (little-endian).
static TABLE: &[u8] = include_bytes!("../data/words.bin");

const MAGIC: &[u8] = b"MCPXWORDS1";

/// The word table, read in place.
pub(crate) struct Words {
    words: Vec<&'static str>,
    scales: &'static [u8],
    values: &'static [u8],
    dims: usize,
}

/// The table compiled in; `None` if it cannot be read (a build from a damaged checkout), and
/// search is then lexical alone.
pub(crate) fn words() -> Option<&'static Words> {
    static WORDS: OnceLock<Option<Words>> = OnceLock::new();
    WORDS.get_or_init(|| Words::read(TABLE)).as_ref()
}

fn u32_at(bytes: &[u8], at: usize) -> Option<usize> {
    let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(b)).ok()
}

impl Words {
    fn read(table: &'static [u8]) -> Option<Words> {
        let rest = table.strip_prefix(MAGIC)?;
        let (n, dims, text_len) = (u32_at(rest, 0)?, u32_at(rest, 4)?, u32_at(rest, 8)?);
        let text = std::str::from_utf8(rest.get(12..12 + text_len)?).ok()?;
        let words: Vec<&'static str> = text.split('\n').collect();
        let scales_at = 12 + text_len;
        let values_at = scales_at + 4 * n;
        let scales = rest.get(scales_at..values_at)?;
        let values = rest.get(values_at..values_at + n * dims)?;
        (words.len() == n && dims > 0 && words.is_sorted()).then_some(Words {
            words,
            scales,
            values,
            dims,
        })
    }

    /// Adds word `at`'s row to `into`.
    fn add(&self, at: usize, into: &mut [f32]) {
        let Some(scale) = self.scales.get(4 * at..4 * at + 4) else {
            return;
        };
        let scale = f32::from_le_bytes([scale[0], scale[1], scale[2], scale[3]]);
        let Some(row) = self.values.get(at * self.dims..(at + 1) * self.dims) else {
            return;
        };
        for (v, &q) in into.iter_mut().zip(row) {
            *v += scale * f32::from(i8::from_le_bytes([q]));
        }
    }

    /// The unit vector of `text`'s known words; `None` when it has none.
    pub(crate) fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut v = vec![0.0f32; self.dims];
        let mut known = false;
        for word in words_of(text) {
            if let Ok(at) = self.words.binary_search(&word.as_str()) {
                self.add(at, &mut v);
                known = true;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        (known && norm > 0.0).then(|| v.into_iter().map(|x| x / norm).collect())
    }

    /// A tool's vector: its server, its name and its description's first sentence (the
    /// index's lead field).
    pub(crate) fn embed_tool(&self, d: &Document) -> Option<Vec<f32>> {
        self.embed(&format!(
            "{} {}: {}",
            d.server,
            d.name,
            d.field(Field::Lead)
        ))
    }
}

/// The words of `text` as the table was made for them: runs of ASCII letters, split where a
/// name changes case (`getIssue`, `HTTPServer`: get issue, http server), lower-cased. Digits,
/// punctuation and other characters separate words.
pub(crate) fn words_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphabetic() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            continue;
        }
        let before = i.checked_sub(1).map(|p| chars[p]);
        let after = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && before.is_some_and(|b| {
                b.is_ascii_lowercase()
                    || (b.is_ascii_uppercase() && after.is_some_and(|a| a.is_ascii_lowercase()))
            });
        if boundary && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The cosine of two unit vectors.
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_as_the_table_was_made() {
        assert_eq!(
            words_of("getHTTPResponse v2Api snake_case what's"),
            ["get", "http", "response", "v", "api", "snake", "case", "what", "s"]
        );
    }

    #[test]
    fn the_table_is_compiled_in_and_means_something() {
        let words = words().expect("the table reads");
        assert!(words.words.len() > 20_000);
        let q = words.embed("how high above sea level is Denver").unwrap();
        let near = words
            .embed("maps elevation: get the elevation of a location")
            .unwrap();
        let far = words
            .embed("git commit: record changes to the repository")
            .unwrap();
        assert!(
            cosine(&q, &near) > cosine(&q, &far) + 0.1,
            "{} vs {}",
            cosine(&q, &near),
            cosine(&q, &far)
        );
        assert!(words.embed("zzzzqx 123").is_none());
    }
}
