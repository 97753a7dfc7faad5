//! One JSON-RPC frame, kept as the exact text that was sent or received.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use thiserror::Error;

/// Largest frame accepted from a peer, in bytes (64 MiB: room for a tool result carrying a
/// large file, base64-encoded). A longer line is skipped whole, without being held, and
/// reported; the frames after it are still read.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// Deepest nesting of arrays and objects a frame may have, the message itself counting one: a
/// frame nested deeper is refused whoever sent it (a client's request is answered with an
/// error, a server's answer becomes an error for the call it answers), never forwarded. Real
/// traffic nests a few dozen levels at most; peers' parsers (Python's recursion limit,
/// serde_json's own 128) fail past about this, and a frame that kills a peer must not travel.
pub const MAX_FRAME_DEPTH: usize = 128;

/// A JSON-RPC frame: a JSON object (or, for 2025-03-26 batches, an array) as text.
///
/// A frame read from a peer remembers where its members are (`id`, `method`, `params`,
/// `result`, `error`), found by the one parse that checked it, so that routing it, matching it
/// to its request and locating its result never parse it again. A response mcpx forwards is
/// written around the result's bytes as they arrived
/// ([`Response::into_answer`](crate::Response::into_answer)), not copied.
#[derive(Clone)]
pub struct Frame {
    text: Text,
    members: Option<Members>,
}

impl PartialEq for Frame {
    fn eq(&self, other: &Frame) -> bool {
        fn bytes(frame: &Frame) -> impl Iterator<Item = u8> + '_ {
            frame.chunks().into_iter().flat_map(str::bytes)
        }
        match (&self.text, &other.text) {
            (Text::Whole(a), Text::Whole(b)) => a == b,
            _ => self.len() == other.len() && bytes(self).eq(bytes(other)),
        }
    }
}

impl Eq for Frame {}

/// A frame's bytes: its own text, or a text written around a part of another frame's.
#[derive(Clone)]
enum Text {
    Whole(Box<str>),
    Spliced(Box<Spliced>),
}

/// Most texts a response written around a forwarded result writes into it
/// ([`Response::into_answer_with`](crate::Response::into_answer_with)).
pub const MAX_INSERTS: usize = 2;

/// How many pieces a frame's text comes in ([`Frame::chunks`]): the head, the result cut at
/// each text written into it with that text between, the tail (unused ones empty).
pub const CHUNKS: usize = 3 + 2 * MAX_INSERTS;

/// `head`, then `source[range]` with `inserts` written into it, then `tail`: a response around a
/// result it does not copy.
#[derive(Clone)]
struct Spliced {
    head: String,
    source: Box<str>,
    range: Range<usize>,
    /// Texts written into the result, each before the byte of `source` it names: in order,
    /// within `range`, on character boundaries, at most [`MAX_INSERTS`].
    inserts: Vec<(usize, String)>,
    tail: &'static str,
    /// The text in one piece, made only when something asks for it as one `&str` (a log, a
    /// test); writers take [`Frame::chunks`].
    joined: OnceLock<Box<str>>,
}

/// A member's place in the frame's text: start and end byte.
pub(crate) type Span = Option<(u32, u32)>;

/// Where a single message's top-level members are in its text.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Members {
    pub(crate) id: Span,
    pub(crate) method: Span,
    pub(crate) params: Span,
    pub(crate) result: Span,
    pub(crate) error: Span,
}

/// What one parse of a single message reads: its members as written (`null` included where
/// JSON-RPC gives it a meaning), every other member checked and skipped.
#[derive(Deserialize)]
pub(crate) struct Wire<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) error: Option<&'a RawValue>,
}

/// A member that is there, `null` included (serde's `Option` would read `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

impl Members {
    /// The places of `wire`'s members in `text`, which they borrow from.
    pub(crate) fn of(text: &str, wire: &Wire<'_>) -> Members {
        let span = |member: Option<&RawValue>| {
            member.and_then(|m| {
                let start = (m.get().as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
                let end = start + m.get().len();
                Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
            })
        };
        Members {
            id: span(wire.id),
            method: span(wire.method),
            params: span(wire.params),
            result: span(wire.result),
            error: span(wire.error),
        }
    }
}

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
    /// Arrays and objects nested deeper than [`MAX_FRAME_DEPTH`].
    #[error("the message nests arrays and objects deeper than {limit} levels")]
    TooDeep {
        /// The limit it exceeds.
        limit: usize,
        /// The message's `id` (JSON text), when it is a single message with a readable one:
        /// the request it belongs to can still be answered.
        id: Option<String>,
    },
}

impl FrameError {
    /// The `id` (JSON text) of the message that could not be taken, when one was read.
    pub fn id(&self) -> Option<&str> {
        match self {
            FrameError::TooDeep { id, .. } => id.as_deref(),
            _ => None,
        }
    }
}

/// What one pass over a frame's text finds that reading it as raw values does not check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scanned {
    /// Arrays and objects nest deeper than the limit (the scan stops there).
    TooDeep,
    /// Within the limit; `surrogate`: a string may hold a `\uD800`–`\uDFFF` escape (a false
    /// positive only costs a full check).
    Within { surrogate: bool },
}

/// One pass over `text` (JSON, or nearly) that jumps over strings (where most of a large
/// frame's bytes are), counts brackets outside them without recursion, and looks at each
/// escape inside them: whether it nests deeper than `limit`, and whether it may hold a
/// surrogate escape.
fn scan(text: &str, limit: usize) -> Scanned {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut surrogate = false;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        at += 1;
        match b {
            b'"' => loop {
                let Some(found) = memchr::memchr2(b'"', b'\\', &bytes[at..]) else {
                    return Scanned::Within { surrogate };
                };
                at += found;
                // An escape takes the byte after it along (and a `\u` its four digits, of
                // which the first two tell a surrogate); a quote ends the string.
                if bytes[at] == b'\\' {
                    if bytes.get(at + 1) == Some(&b'u')
                        && bytes.get(at + 2).is_some_and(|b| (b | 0x20) == b'd')
                        && bytes
                            .get(at + 3)
                            .is_some_and(|b| matches!(b | 0x20, b'8'..=b'9' | b'a'..=b'f'))
                    {
                        surrogate = true;
                    }
                    at += 2;
                } else {
                    at += 1;
                    break;
                }
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Scanned::TooDeep;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Scanned::Within { surrogate }
}

/// Characters of a bad frame kept in its error.
const EXCERPT_CHARS: usize = 80;

fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
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
        Frame::checked(Cow::Borrowed(text))
    }

    /// [`Frame::parse`] of text the caller gives up (a line just read): kept without a copy
    /// when it is one line with no white space around it, as peers write frames.
    ///
    /// # Errors
    /// As [`Frame::parse`].
    pub fn parse_owned(text: String) -> Result<Frame, FrameError> {
        Frame::checked(Cow::Owned(text))
    }

    fn checked(text: Cow<'_, str>) -> Result<Frame, FrameError> {
        if text.len() > MAX_FRAME_BYTES {
            return Err(FrameError::TooLarge {
                limit: MAX_FRAME_BYTES,
            });
        }
        let one_line = |t: &str| -> Option<String> {
            let trimmed = t.trim();
            if memchr::memchr2(b'\n', b'\r', trimmed.as_bytes()).is_some() {
                Some(trimmed.replace(['\n', '\r'], " "))
            } else if trimmed.len() != t.len() {
                Some(trimmed.to_owned())
            } else {
                None
            }
        };
        let text: String = match (one_line(&text), text) {
            (Some(line), _) => line,
            (None, Cow::Owned(text)) => text,
            (None, Cow::Borrowed(text)) => text.to_owned(),
        };
        let not_json = |e: serde_json::Error| FrameError::NotJson {
            message: e.to_string(),
            excerpt: excerpt(&text),
        };
        // One parse checks the whole text and finds a single message's members; a batch, or
        // an object whose members JSON-RPC cannot read (a duplicate, say), is checked whole
        // and decoded later.
        let members = if text.starts_with('{') {
            match serde_json::from_str::<Wire<'_>>(&text) {
                Ok(wire) => Some(Members::of(&text, &wire)),
                Err(_) => {
                    serde_json::from_str::<&RawValue>(&text).map_err(not_json)?;
                    None
                }
            }
        } else {
            let raw = serde_json::from_str::<&RawValue>(&text).map_err(not_json)?;
            if !raw.get().starts_with('[') {
                return Err(FrameError::NotAMessage {
                    excerpt: excerpt(&text),
                });
            }
            None
        };
        // Reading raw values does not recurse, so depth is not bounded by the parse: a frame
        // nested deeper than peers can read is refused here, with its id when it has one.
        match scan(&text, MAX_FRAME_DEPTH) {
            Scanned::TooDeep => {
                let id = members.and_then(|m| m.id).and_then(|(start, end)| {
                    let id = text.get(start as usize..end as usize)?;
                    (!id.starts_with(['{', '['])).then(|| id.to_owned())
                });
                return Err(FrameError::TooDeep {
                    limit: MAX_FRAME_DEPTH,
                    id,
                });
            }
            // Reading the text as raw values does not check `\u` escapes; a lone surrogate
            // (`"\udcc1"`) would be accepted here and fail every later parse. Only text with a
            // surrogate escape pays for the full check.
            Scanned::Within { surrogate: true } => {
                serde_json::from_str::<Value>(&text).map_err(not_json)?;
            }
            Scanned::Within { surrogate: false } => {}
        }
        Ok(Frame {
            text: Text::Whole(text.into_boxed_str()),
            members,
        })
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
        let text = serde_json::to_string(message)
            .expect("a Value or raw JSON parts serialize without error");
        Frame {
            text: Text::Whole(text.into_boxed_str()),
            members: None,
        }
    }

    /// The response to request `id` whose result is `source[result]`, the result of another
    /// frame as it arrived, with `inserts` written into it (each text before the byte of the
    /// result it names): written around those bytes, which are neither copied nor parsed.
    /// Inserts out of order, past the result, inside a character or more than [`MAX_INSERTS`]
    /// are written into a copy instead ([`written_into`]).
    pub(crate) fn answering(
        id: &RawValue,
        source: Frame,
        result: Range<usize>,
        inserts: Vec<(usize, String)>,
    ) -> Frame {
        let head = format!(r#"{{"jsonrpc":"2.0","id":{},"result":"#, id.get());
        let source = match source.text {
            Text::Whole(text) => text,
            Text::Spliced(_) => source.text().into(),
        };
        let Some(text) = source.get(result.clone()) else {
            return Frame::response(id, Ok(null()));
        };
        let mut from = 0;
        let in_place = inserts.len() <= MAX_INSERTS
            && inserts.iter().all(|(at, _)| {
                let fits = (from..=text.len()).contains(at) && text.is_char_boundary(*at);
                from = *at;
                fits
            });
        if !in_place {
            let whole = [head.as_str(), &written_into(text, &inserts), "}"].concat();
            return Frame {
                text: Text::Whole(whole.into_boxed_str()),
                members: None,
            };
        }
        let inserts = inserts
            .into_iter()
            .map(|(at, insert)| (result.start + at, insert))
            .collect();
        Frame {
            text: Text::Spliced(Box::new(Spliced {
                head,
                source,
                range: result,
                inserts,
                tail: "}",
                joined: OnceLock::new(),
            })),
            members: None,
        }
    }

    /// The exact text. A forwarded response
    /// ([`Response::into_answer`](crate::Response::into_answer)) is joined into one piece
    /// for this, once; writers take [`Frame::chunks`] instead.
    pub fn text(&self) -> &str {
        match &self.text {
            Text::Whole(text) => text,
            Text::Spliced(spliced) => spliced
                .joined
                .get_or_init(|| spliced.pieces().concat().into_boxed_str()),
        }
    }

    /// The text in up to [`CHUNKS`] pieces, to be written one after the other (the pieces of
    /// a forwarded response; otherwise the whole text, then empty pieces).
    pub fn chunks(&self) -> [&str; CHUNKS] {
        match &self.text {
            Text::Whole(text) => {
                let mut chunks = [""; CHUNKS];
                chunks[0] = text;
                chunks
            }
            Text::Spliced(spliced) => spliced.pieces(),
        }
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.chunks().iter().map(|c| c.len()).sum()
    }

    /// Whether the text is empty (never, for a frame).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text's pieces ([`Frame::chunks`]), owned, for a writer that keeps them (an HTTP
    /// body): nothing is copied.
    pub fn into_chunks(self) -> Vec<bytes::Bytes> {
        match self.text {
            Text::Whole(text) => vec![bytes::Bytes::from(text.into_boxed_bytes())],
            Text::Spliced(spliced) => {
                let Spliced {
                    head,
                    source,
                    range,
                    inserts,
                    tail,
                    ..
                } = *spliced;
                let source = bytes::Bytes::from(source.into_boxed_bytes());
                let mut chunks = Vec::with_capacity(3 + 2 * inserts.len());
                chunks.push(bytes::Bytes::from(head));
                let mut from = range.start;
                for (at, insert) in inserts {
                    chunks.push(source.slice(from..at));
                    chunks.push(bytes::Bytes::from(insert));
                    from = at;
                }
                chunks.push(source.slice(from..range.end));
                chunks.push(bytes::Bytes::from_static(tail.as_bytes()));
                chunks
            }
        }
    }

    /// Where a single message's members are, when the parse that checked it found them.
    pub(crate) fn members(&self) -> Option<&Members> {
        self.members.as_ref()
    }

    /// The text of a member at `span`.
    pub(crate) fn member(&self, span: Span) -> Option<&str> {
        let (start, end) = span?;
        self.text().get(start as usize..end as usize)
    }

    /// The `method` and `id` of a single message; `None` for a batch or a frame that is not an
    /// object.
    pub fn head(&self) -> Option<Head<'_>> {
        match &self.members {
            Some(members) => Some(Head {
                id: self
                    .member(members.id)
                    .and_then(|id| serde_json::from_str(id).ok()),
                method: self
                    .member(members.method)
                    .and_then(|method| serde_json::from_str(method).ok()),
            }),
            None => serde_json::from_str(self.text()).ok(),
        }
    }

    /// The frame parsed, with numbers kept as written.
    ///
    /// # Errors
    /// None in practice: the text was checked when the frame was made.
    pub fn value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.text())
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

impl Spliced {
    fn pieces(&self) -> [&str; CHUNKS] {
        let mut pieces = [""; CHUNKS];
        pieces[0] = &self.head;
        pieces[CHUNKS - 1] = self.tail;
        // (Checked when made: the ranges are in the text and on character boundaries.)
        let mut from = self.range.start;
        let mut next = 1;
        for (at, insert) in &self.inserts {
            pieces[next] = self.source.get(from..*at).unwrap_or_default();
            pieces[next + 1] = insert;
            next += 2;
            from = *at;
        }
        pieces[next] = self.source.get(from..self.range.end).unwrap_or("null");
        pieces
    }
}

/// `text` with `inserts` written into it, each text before the byte it names: taken in order,
/// a place before the previous one or past the end moved to it, a place inside a character
/// moved to the character's end (never splitting one).
pub fn written_into(text: &str, inserts: &[(usize, String)]) -> String {
    let added: usize = inserts.iter().map(|(_, insert)| insert.len()).sum();
    let mut out = String::with_capacity(text.len() + added);
    let mut from = 0;
    for (at, insert) in inserts {
        let mut at = (*at).clamp(from, text.len());
        while !text.is_char_boundary(at) {
            at += 1;
        }
        out.push_str(&text[from..at]);
        out.push_str(insert);
        from = at;
    }
    out.push_str(&text[from..]);
    out
}

/// JSON `null` (for a result that cannot be read, or one whose presence is all that matters).
pub(crate) fn null() -> &'static RawValue {
    serde_json::from_str("null").expect("null is JSON")
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Frame({})", self.text())
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
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
    fn one_scan_finds_depth_and_surrogate_escapes_as_a_parser_reads_them() {
        let within = |surrogate| Scanned::Within { surrogate };
        assert_eq!(scan(r#"{"a":[1,{"b":"x"}]}"#, 3), within(false));
        assert_eq!(scan(r#"{"a":[1,{"b":[]}]}"#, 3), Scanned::TooDeep);
        // Brackets and quotes inside strings do not count, escaped or not.
        assert_eq!(scan(r#"{"a":"[[[[\"{{{{"}"#, 1), within(false));
        // A surrogate escape, in either case; not an escaped backslash before `u`.
        assert_eq!(scan(r#"{"a":"\uD83D\uDE00"}"#, 2), within(true));
        assert_eq!(scan(r#"{"a":"\udcc1"}"#, 2), within(true));
        assert_eq!(scan(r#"{"a":"\\ud800 \u00e9 \ue000"}"#, 2), within(false));
        assert_eq!(scan(r#"{"a":"\\\ud800"}"#, 2), within(true));
        // In a name too.
        assert_eq!(scan(r#"{"\udfff":1}"#, 1), within(true));
        // An unfinished string ends the scan (the parse refused such text already).
        assert_eq!(scan(r#"{"a":"\ud8"#, 1), within(true));
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
    fn the_parse_that_checks_a_frame_finds_its_members() {
        let text =
            r#"{"jsonrpc":"2.0", "x":[1,{"id":2}], "id" : "a\u0062", "result": {"k": "}"} }"#;
        let frame = Frame::parse(text).unwrap();
        let members = *frame.members().unwrap();
        assert_eq!(frame.member(members.id), Some(r#""a\u0062""#));
        assert_eq!(frame.member(members.result), Some(r#"{"k": "}"}"#));
        assert_eq!(
            (members.method, members.params, members.error),
            (None, None, None)
        );
        let head = frame.head().unwrap();
        assert_eq!((head.id_text(), head.method), (Some(r#""a\u0062""#), None));
        // A duplicated member: checked whole, members left for later (and routing refuses it).
        let twice = Frame::parse(r#"{"id":1,"id":2,"method":"m"}"#).unwrap();
        assert!(twice.members().is_none());
        assert!(twice.head().is_none());
        // `null` is a member that is there.
        let null_id = Frame::parse(r#"{"id":null,"error":{"code":1,"message":"m"}}"#).unwrap();
        assert_eq!(null_id.head().unwrap().id_text(), Some("null"));
        // Taken without a copy, and the same frame either way.
        let owned = Frame::parse_owned(text.to_owned()).unwrap();
        assert_eq!(owned, frame);
        assert_eq!(
            Frame::parse_owned(format!(" {text}\n")).unwrap().text(),
            text
        );
    }

    #[test]
    fn a_forwarded_result_is_written_around_not_copied() {
        let source =
            Frame::parse(r#"{"jsonrpc":"2.0","id":7,"result":{"n":18446744073709551617}}"#)
                .unwrap();
        let (start, end) = source.members().unwrap().result.unwrap();
        let id: &RawValue = serde_json::from_str(r#""c-1""#).unwrap();
        let answer = Frame::answering(id, source, start as usize..end as usize, Vec::new());
        let expected = r#"{"jsonrpc":"2.0","id":"c-1","result":{"n":18446744073709551617}}"#;
        assert_eq!(answer.chunks().concat(), expected);
        assert_eq!(answer.len(), expected.len());
        assert_eq!(answer.text(), expected);
        let pieces: Vec<u8> = answer.into_chunks().concat();
        assert_eq!(pieces, expected.as_bytes());
    }

    #[test]
    fn texts_written_into_a_forwarded_result_leave_the_rest_uncopied() {
        let text = r#"{"jsonrpc":"2.0","id":7,"result":{"é":1,"_meta":{"a":2}}}"#;
        let (start, end) = Frame::parse(text)
            .unwrap()
            .members()
            .unwrap()
            .result
            .unwrap();
        let (start, end) = (start as usize, end as usize);
        let result = &text[start..end];
        let id: &RawValue = serde_json::from_str("3").unwrap();
        // Places in the result's text.
        let meta_close = result.find("}}").unwrap();
        let answer = |inserts: Vec<(usize, String)>| {
            Frame::answering(id, Frame::parse(text).unwrap(), start..end, inserts)
        };
        let into_meta = (meta_close, r#","b":3"#.to_owned());
        let at_the_end = (result.len() - 1, r#","c":4"#.to_owned());
        let expected = r#"{"jsonrpc":"2.0","id":3,"result":{"é":1,"_meta":{"a":2,"b":3},"c":4}}"#;
        let two = answer(vec![into_meta.clone(), at_the_end.clone()]);
        assert!(matches!(two.text, Text::Spliced(_)), "written around");
        assert_eq!(two.chunks().concat(), expected);
        assert_eq!(two.len(), expected.len());
        assert_eq!(two.text(), expected);
        assert_eq!(two.clone().into_chunks().concat(), expected.as_bytes());
        assert_eq!(two, Frame::parse(expected).unwrap());
        // More than MAX_INSERTS, or out of order: written into a copy (`written_into`).
        let three = answer(vec![
            into_meta.clone(),
            (result.len() - 1, r#","c":4"#.to_owned()),
            (result.len() - 1, r#","d":5"#.to_owned()),
        ]);
        assert!(matches!(three.text, Text::Whole(_)), "copied");
        assert_eq!(
            three.text(),
            r#"{"jsonrpc":"2.0","id":3,"result":{"é":1,"_meta":{"a":2,"b":3},"c":4,"d":5}}"#
        );
        // (An earlier place after a later one is taken where the later one was.)
        let backwards = answer(vec![at_the_end, into_meta]);
        assert!(matches!(backwards.text, Text::Whole(_)), "copied");
        assert_eq!(
            backwards.text(),
            r#"{"jsonrpc":"2.0","id":3,"result":{"é":1,"_meta":{"a":2},"c":4,"b":3}}"#
        );
        // Inside a character (é is bytes 2 and 3 of the result): after it, never into it.
        let inside = answer(vec![(3, "X".to_owned())]);
        assert!(matches!(inside.text, Text::Whole(_)), "copied");
        assert_eq!(
            inside.text(),
            r#"{"jsonrpc":"2.0","id":3,"result":{"éX":1,"_meta":{"a":2}}}"#
        );
        // Past the end: at the end.
        assert_eq!(written_into("ab", &[(9, "X".to_owned())]), "abX");
    }

    #[test]
    fn a_response_reads_the_same_found_by_the_parse_or_decoded_later() {
        let text = r#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":null}"#;
        let parsed = Frame::parse(text).unwrap();
        assert!(parsed.members().is_some());
        let composed = Frame::from_value(&serde_json::from_str(text).unwrap());
        assert!(composed.members().is_none());
        for frame in [parsed, composed] {
            let response = crate::Response::from_frame(frame).unwrap();
            assert_eq!(response.result_text(), r#"{"a":1}"#);
        }
        let neither = Frame::parse(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert!(crate::Response::from_frame(neither).is_err());
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

    #[test]
    fn nesting_past_the_limit_is_refused_with_the_message_id() {
        let within = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        // The message counts one level, `result` another.
        let ok = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{}}}"#,
            within(MAX_FRAME_DEPTH - 1)
        );
        assert!(Frame::parse(&ok).is_ok());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"a","result":{}}}"#,
            within(MAX_FRAME_DEPTH)
        );
        let refused = Frame::parse(&deep).unwrap_err();
        assert_eq!(refused.id(), Some(r#""a""#));
        assert_eq!(
            refused.to_string(),
            "the message nests arrays and objects deeper than 128 levels"
        );
        // Brackets inside strings, escaped quotes included, do not count.
        let strings = format!(
            r#"{{"id":1,"s":"\"{}","t":"{}"}}"#,
            "[".repeat(1000),
            "{".repeat(1000)
        );
        assert!(Frame::parse(&strings).is_ok());
        // A batch has no one id; a million levels are refused without recursion.
        let batch = format!("[{}]", within(1_000_000));
        assert_eq!(Frame::parse(&batch).unwrap_err().id(), None);
    }
}
