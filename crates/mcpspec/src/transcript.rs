//! A recorded conversation, one `{"from":"client"|"server","message":{...}}` per line in wire
//! order, checked frame by frame.

use crate::{Conversation, Side, Spec};

/// Checks every frame of a transcript; `line N: <problem>` for each problem, none when all are
/// valid.
///
/// # Errors
/// A line that is not a transcript entry, or a definition that does not compile: the message
/// names the line.
pub fn check_transcript(spec: &Spec, text: &str) -> Result<Vec<String>, String> {
    let mut conversation = Conversation::new(spec);
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let entry = schemaval::parse_json(line.as_bytes())
            .map_err(|e| format!("line {n}: invalid JSON: {e}"))?;
        let from = match entry.get("from").and_then(|f| f.as_str()) {
            Some("client") => Side::Client,
            Some("server") => Side::Server,
            _ => {
                return Err(format!(
                    "line {n}: \"from\" must be \"client\" or \"server\""
                ))
            }
        };
        let message = entry
            .get("message")
            .ok_or_else(|| format!("line {n}: no \"message\""))?;
        let lines = conversation
            .check(from, message)
            .map_err(|e| e.to_string())?;
        problems.extend(lines.into_iter().map(|l| format!("line {n}: {l}")));
    }
    Ok(problems)
}
