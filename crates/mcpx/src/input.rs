//! Reading the files a command is given, bounded in size.

use std::io::Read;

use anyhow::Context;
use serde_json::Value;

use crate::cli::Source;

/// Largest input file read, in bytes (64 MiB). A schema is further bounded by
/// `schemaval::MAX_SCHEMA_BYTES`; this bounds instances.
pub(crate) const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Reads a whole source, refusing one over [`MAX_INPUT_BYTES`]. Errors do not name the source:
/// the caller does, in the form its output uses.
pub(crate) fn read(source: &Source) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let reader: Box<dyn Read> = match source {
        Source::Stdin => Box::new(std::io::stdin().lock()),
        Source::File(path) => Box::new(std::fs::File::open(path).context("cannot read")?),
    };
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("cannot read")?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_INPUT_BYTES,
        "larger than {MAX_INPUT_BYTES} bytes"
    );
    Ok(bytes)
}

/// A tool call's arguments from the command line: `-` or `@FILE` read as one JSON value, else
/// [`mcpx::arguments::arguments`] (a JSON object, or `key=value` pairs typed by `schema`).
pub(crate) fn call_arguments(words: &[String], schema: &Value) -> anyhow::Result<Value> {
    let source = match words {
        [only] if only == "-" => Source::Stdin,
        [only] if only.starts_with('@') => Source::File(only[1..].into()),
        _ => return mcpx::arguments::arguments(words, schema),
    };
    let text = read(&source).with_context(|| source.name())?;
    serde_json::from_slice(&text).with_context(|| format!("{}: not JSON", source.name()))
}
