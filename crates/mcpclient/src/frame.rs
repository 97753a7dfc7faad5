//! One JSON-RPC frame, kept as the exact text that was sent or received.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use thiserror::Error;

/// Largest frame accepted from a peer, in bytes (64 MiB: room for a tool result carrying a
/// large file, base64-encoded). A longer line is skipped whole, without being held, and
/// reported; the frames after it are still read.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// A JSON-RPC frame: a JSON object (or, for 2025-03-26 batches, an array) as text.
#[derive(Clone)]
pub struct Frame {
    raw: Box<RawValue>,
}

impl PartialEq for Frame {
    fn eq(&self, other: &Frame) -> bool {
        self.text() == other.text()
    }
}

impl Eq for Frame {}

/// Why bytes are not a frame.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FrameError {
    /// Not JSON at all. `excerpt` is the start of the text, for logs.
    #[error("not JSON ({message}): {excerpt}")]
    NotJson {
        /// What the parser objected to.
        message: String,
        /// The first characters of the text.
        excerpt: String,
    },
    /// JSON, but not an object or array.
    #[error("not a JSON-RPC message: {excerpt}")]
    NotAMessage {
        /// The first characters of the text.
        excerpt: String,
    },
    /// Longer than [`MAX_FRAME_BYTES`].
    #[error("frame too large: over {limit} bytes")]
    TooLarge {
        /// The limit it exceeds.
        limit: usize,
    },
}

/// Characters of a bad frame kept in its error.
const EXCERPT_CHARS: usize = 80;

fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Whether `text` may hold a `\uD800`–`\uDFFF` escape (a false positive only costs a check).
fn has_surrogate_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b"\\u").any(|at| {
        bytes.get(at + 2).is_some_and(|b| (b | 0x20) == b'd')
            && bytes
                .get(at + 3)
                .is_some_and(|b| matches!(b | 0x20, b'8'..=b'9' | b'a'..=b'f'))
    })
}

impl Frame {
    /// A frame from JSON text, kept byte for byte (surrounding white space trimmed), except
    /// that a line break between tokens becomes a space: a frame is always one line, as stdio
    /// carries it, whatever an HTTP peer sent (an indenting server, say). Inside strings JSON
    /// has no raw line breaks, so no content changes.
    ///
    /// # Errors
    /// [`FrameError`] when the text is too large, not JSON, or not an object or array.
    pub fn parse(text: &str) -> Result<Frame, FrameError> {
        if text.len() > MAX_FRAME_BYTES {
            return Err(FrameError::TooLarge {
                limit: MAX_FRAME_BYTES,
            });
        }
        let trimmed = text.trim();
        let one_line;
        let trimmed = if memchr::memchr2(b'\n', b'\r', trimmed.as_bytes()).is_some() {
            one_line = trimmed.replace(['\n', '\r'], " ");
            one_line.as_str()
        } else {
            trimmed
        };
        let raw: Box<RawValue> =
            serde_json::from_str(trimmed).map_err(|e| FrameError::NotJson {
                message: e.to_string(),
                excerpt: excerpt(trimmed),
            })?;
        if !(raw.get().starts_with('{') || raw.get().starts_with('[')) {
            return Err(FrameError::NotAMessage {
                excerpt: excerpt(trimmed),
            });
        }
        // Taking the text as a raw value does not check `\u` escapes; a lone surrogate
        // (`"\udcc1"`) would be accepted here and fail every later parse. Only text with a
        // surrogate escape pays for the full check.
        if has_surrogate_escape(trimmed) {
            if let Err(e) = serde_json::from_str::<Value>(trimmed) {
                return Err(FrameError::NotJson {
                    message: e.to_string(),
                    excerpt: excerpt(trimmed),
                });
            }
        }
        Ok(Frame { raw })
    }

    /// A frame from a value (for frames mcpx writes itself).
    pub fn from_value(value: &Value) -> Frame {
        Frame::composed(value)
    }

    /// Request `id` calling `method` with `params` (raw JSON, copied as it is).
    pub fn request(id: u64, method: &str, params: Option<&RawValue>) -> Frame {
        #[derive(Serialize)]
        struct Request<'a> {
            jsonrpc: &'static str,
            id: u64,
            method: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a RawValue>,
        }
        Frame::composed(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
    }

    /// The response to request `id`: its `result`, or its `error`. The parts are JSON already
    /// and are copied as they are, not parsed again (a result may be megabytes).
    pub fn response(id: &RawValue, answer: Result<&RawValue, &RawValue>) -> Frame {
        #[derive(Serialize)]
        struct Response<'a> {
            jsonrpc: &'static str,
            id: &'a RawValue,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a RawValue>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a RawValue>,
        }
        let (result, error) = match answer {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        Frame::composed(&Response {
            jsonrpc: "2.0",
            id,
            result,
            error,
        })
    }

    /// A frame serialized from `message`, an object built by mcpx (serialized once, not parsed
    /// back).
    fn composed<T: Serialize + ?Sized>(message: &T) -> Frame {
        let raw = serde_json::value::to_raw_value(message)
            .expect("a Value or raw JSON parts serialize without error");
        Frame { raw }
    }

    /// The exact text.
    pub fn text(&self) -> &str {
        self.raw.get()
    }

    /// The `method` and `id` of a single message; `None` for a batch or a frame that is not an
    /// object.
    pub fn head(&self) -> Option<Head<'_>> {
        serde_json::from_str(self.raw.get()).ok()
    }

    /// The frame parsed, with numbers kept as written.
    ///
    /// # Errors
    /// None in practice: the text was checked when the frame was made.
    pub fn value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.raw.get())
    }
}

/// What routing needs of a message: its `method` and the exact text of its `id`.
#[derive(Debug, Deserialize)]
#[non_exhaustive]
pub struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    /// The method of a request or notification.
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
}

impl<'a> Head<'a> {
    /// The id's JSON text (`7`, `"abc"`), the key calls are matched by.
    pub fn id_text(&self) -> Option<&'a str> {
        self.id.map(RawValue::get)
    }

    /// The id as JSON, to answer with.
    pub fn id(&self) -> Option<&'a RawValue> {
        self.id
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Frame({})", self.raw.get())
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_kept_byte_for_byte() {
        let text = r#"{"z":1,"a":18446744073709551617,"f":0.100000000000000000000000000001,"e":1E400,"u":{"_meta":{}}}"#;
        assert_eq!(Frame::parse(text).unwrap().text(), text);
        assert_eq!(Frame::parse(&format!("  {text}\r")).unwrap().text(), text);
    }

    #[test]
    fn a_frame_is_one_line_whatever_its_white_space() {
        let indented = "{\n  \"a\": [\r\n    1E2,\n    \"x\\ny\"\n  ]\n}";
        let frame = Frame::parse(indented).unwrap();
        assert_eq!(frame.text(), "{   \"a\": [      1E2,     \"x\\ny\"   ] }");
        assert_eq!(frame.value().unwrap()["a"][1], "x\ny");
    }

    #[test]
    fn a_lone_surrogate_is_not_json() {
        // Found by the `frames` fuzz target: accepted as a raw value, refused by every parse.
        let lone = r#"{"title": "\ud41d\udcc1 Project Files"}"#;
        assert!(matches!(
            Frame::parse(lone),
            Err(FrameError::NotJson { .. })
        ));
        let pair = r#"{"title": "\ud83d\ude00 \\ud800"}"#;
        assert_eq!(
            Frame::parse(pair).unwrap().value().unwrap()["title"],
            "\u{1f600} \\ud800"
        );
    }

    #[test]
    fn a_response_carries_its_parts_byte_for_byte() {
        let id: &RawValue = serde_json::from_str(r#""a\u0062""#).unwrap();
        let result: &RawValue =
            serde_json::from_str(r#"{"z": 18446744073709551617, "a": 1E400}"#).unwrap();
        let answered = Frame::response(id, Ok(result));
        assert_eq!(
            answered.text(),
            r#"{"jsonrpc":"2.0","id":"a\u0062","result":{"z": 18446744073709551617, "a": 1E400}}"#
        );
        assert_eq!(Frame::parse(answered.text()).unwrap(), answered);
        let error: &RawValue = serde_json::from_str(r#"{"code":-32602,"message":"no"}"#).unwrap();
        assert_eq!(
            Frame::response(id, Err(error)).text(),
            r#"{"jsonrpc":"2.0","id":"a\u0062","error":{"code":-32602,"message":"no"}}"#
        );
    }

    #[test]
    fn non_messages_are_typed_errors() {
        assert!(matches!(
            Frame::parse("not json"),
            Err(FrameError::NotJson { .. })
        ));
        assert!(matches!(
            Frame::parse("42"),
            Err(FrameError::NotAMessage { .. })
        ));
        let long = format!("\"{}\"", "x".repeat(200));
        let Err(FrameError::NotAMessage { excerpt }) = Frame::parse(&long) else {
            panic!()
        };
        assert_eq!(excerpt.chars().count(), EXCERPT_CHARS + 1);
    }
}
