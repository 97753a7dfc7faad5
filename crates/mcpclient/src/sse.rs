//! Server-sent events read from an HTTP response body, each event bounded in size.
//!
//! The parsing is `sse-stream`'s; what this adds is the bound: the parser buffers an event until
//! its blank line, so a server that never sends one would grow it without limit. Here an event
//! (the bytes between blank lines) longer than [`MAX_SSE_EVENT_BYTES`] ends the stream with
//! [`SseError::TooLarge`].

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sse_stream::SseByteStream;

use crate::MAX_FRAME_BYTES;

/// Room for the `data:` prefixes and other fields of an SSE event around its frame.
const SSE_EVENT_OVERHEAD: usize = 64 * 1024;

/// The longest event read: a frame of [`MAX_FRAME_BYTES`] and its field names.
pub const MAX_SSE_EVENT_BYTES: usize = MAX_FRAME_BYTES + SSE_EVENT_OVERHEAD;

/// One event of the stream, its fields as sent (`data` lines joined by `\n`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `id` field, which a resumed stream names in `Last-Event-ID`.
    pub id: Option<String>,
    /// The `event` field; none means `message`.
    pub event: Option<String>,
    /// The `data` lines.
    pub data: Option<String>,
    /// The `retry` field, in milliseconds.
    pub retry: Option<u64>,
}

/// Why a stream of events ended early.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// An event was longer than [`MAX_SSE_EVENT_BYTES`].
    #[error("an event of the stream is over {limit} bytes")]
    TooLarge {
        /// The limit, [`MAX_SSE_EVENT_BYTES`].
        limit: usize,
    },
    /// The body broke, or held what is not an event stream (not UTF-8).
    #[error("the event stream broke: {0}")]
    Broken(String),
}

/// The events of `body`, a stream of byte chunks however they are cut. The stream ends after the
/// first error.
pub fn sse_events<S, E>(body: S) -> impl Stream<Item = Result<SseEvent, SseError>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut bound = EventBound::default();
    let bytes = body.map(move |chunk| match chunk {
        Ok(chunk) => bound.check(&chunk).map(|()| chunk),
        Err(e) => Err(BodyError::Body(e.to_string())),
    });
    let mut ended = false;
    SseByteStream::new(bytes).filter_map(move |event| {
        let item = if ended {
            None
        } else {
            Some(match event {
                Ok(event) => Ok(SseEvent {
                    id: event.id,
                    event: event.event,
                    data: event.data,
                    retry: event.retry,
                }),
                Err(sse_stream::Error::Body(e))
                    if matches!(e.downcast_ref(), Some(BodyError::TooLarge)) =>
                {
                    ended = true;
                    Err(SseError::TooLarge {
                        limit: MAX_SSE_EVENT_BYTES,
                    })
                }
                Err(e) => {
                    ended = true;
                    Err(SseError::Broken(e.to_string()))
                }
            })
        };
        std::future::ready(item)
    })
}

#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("{0}")]
    Body(String),
    #[error("an event is over the size limit")]
    TooLarge,
}

/// Bounds the size of one SSE event (the bytes between blank lines).
struct EventBound {
    since_boundary: usize,
    at_line_start: bool,
    previous: u8,
}

impl Default for EventBound {
    fn default() -> EventBound {
        EventBound {
            since_boundary: 0,
            at_line_start: true,
            previous: 0,
        }
    }
}

impl EventBound {
    fn check(&mut self, chunk: &[u8]) -> Result<(), BodyError> {
        for &byte in chunk {
            match byte {
                // The second half of a CRLF ends nothing new.
                b'\n' if self.previous == b'\r' => {}
                b'\n' | b'\r' => {
                    if self.at_line_start {
                        self.since_boundary = 0;
                    }
                    self.at_line_start = true;
                }
                _ => self.at_line_start = false,
            }
            self.previous = byte;
            self.since_boundary += 1;
            if self.since_boundary > MAX_SSE_EVENT_BYTES {
                return Err(BodyError::TooLarge);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_bound_resets_at_blank_lines_of_any_line_ending() {
        for blank in ["\n\n", "\r\n\r\n", "\r\r"] {
            let mut bound = EventBound::default();
            let event = format!("data: {}{blank}", "x".repeat(MAX_FRAME_BYTES));
            for _ in 0..3 {
                assert!(bound.check(event.as_bytes()).is_ok(), "{blank:?}");
            }
        }
    }

    #[test]
    fn an_endless_event_is_cut() {
        let mut bound = EventBound::default();
        let line = format!("data: {}\n", "x".repeat(1024));
        let over = MAX_SSE_EVENT_BYTES / line.len() + 1;
        let results: Vec<_> = (0..over)
            .map(|_| bound.check(line.as_bytes()).is_ok())
            .collect();
        assert!(results[..over - 1].iter().all(|ok| *ok));
        assert!(!results[over - 1]);
    }

    fn events_of(chunks: &[&str]) -> Vec<Result<SseEvent, String>> {
        let body = futures_util::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::copy_from_slice(c.as_bytes())))
                .collect::<Vec<_>>(),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(
            sse_events(body)
                .map(|e| e.map_err(|e| e.to_string()))
                .collect(),
        )
    }

    #[test]
    fn events_do_not_depend_on_how_the_body_is_cut() {
        let text = "id: 7\r\nretry: 250\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: comment\n\nevent: other\ndata: x\n\n";
        let whole = events_of(&[text]);
        assert_eq!(whole.len(), 2, "{whole:?}");
        assert_eq!(
            whole[0].as_ref().unwrap(),
            &SseEvent {
                id: Some("7".into()),
                event: None,
                data: Some("{\"a\":\n1}".into()),
                retry: Some(250),
            }
        );
        let bytes: Vec<String> = text.chars().map(String::from).collect();
        let one_by_one: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(events_of(&one_by_one), whole);
    }

    #[test]
    fn an_endless_event_ends_the_stream_with_a_typed_error() {
        let line = format!("data: {}\n", "x".repeat(1024 * 1024));
        let lines = MAX_SSE_EVENT_BYTES / line.len() + 2;
        let chunks: Vec<&str> = std::iter::repeat_n(line.as_str(), lines).collect();
        let events = events_of(&chunks);
        assert_eq!(events.len(), 1, "one error, then nothing");
        assert!(events[0].as_ref().unwrap_err().contains("over"));
    }
}
