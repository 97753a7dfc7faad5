//! Newline-delimited frames, as stdio carries them: read under a size bound, written whole.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::{Frame, FrameError, FrameSource, TransportError, MAX_FRAME_BYTES};

/// Reads frames, one per line, from a byte stream (a child's stdout, a gateway's stdin).
///
/// Lines longer than [`MAX_FRAME_BYTES`] are skipped without being held and reported as
/// [`FrameError::TooLarge`]; blank lines are skipped; a line that is not JSON is a
/// [`TransportError::BadFrame`], and reading goes on after it. Cancel-safe: a `next` dropped
/// mid-line loses nothing.
pub struct FrameReader<R> {
    reader: BufReader<R>,
    /// The line being read, kept here so that a cancelled `next` loses nothing.
    partial: Partial,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Frames from `reader`.
    pub fn new(reader: R) -> FrameReader<R> {
        FrameReader {
            reader: BufReader::new(reader),
            partial: Partial::default(),
        }
    }

    /// The next frame; `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Result<Frame, TransportError>> {
        loop {
            return match read_line(&mut self.reader, &mut self.partial, MAX_FRAME_BYTES).await {
                Err(err) => Some(Err(err.into())),
                Ok(Line::End) => None,
                Ok(Line::TooLarge) => Some(Err(FrameError::TooLarge {
                    limit: MAX_FRAME_BYTES,
                }
                .into())),
                Ok(Line::Text(bytes)) => {
                    // Valid UTF-8 is taken without a copy; invalid bytes become U+FFFD, and
                    // the frame is then refused or kept as the peer sent it, lossily.
                    let text = String::from_utf8(bytes)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                    if text.trim().is_empty() {
                        continue;
                    }
                    Some(Frame::parse_owned(text).map_err(TransportError::from))
                }
            };
        }
    }
}

impl<R: AsyncRead + Unpin + Send> FrameSource for FrameReader<R> {
    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        self.next().await
    }
}

/// Bytes of small frames gathered into one write: frames that come together (answers to
/// pipelined requests) cost one system call, and the peer wakes once for them.
pub const MAX_BATCH_BYTES: usize = 64 * 1024;

/// Most frames taken from a queue for one write (see [`gather`]).
pub const MAX_BATCH_FRAMES: usize = 64;

/// Writes frames, each with its newline, and flushes. Small frames (and the small pieces of a
/// forwarded response, [`Frame::chunks`]) are gathered into writes of up to
/// [`MAX_BATCH_BYTES`]; a larger piece is written from where it is, never copied.
///
/// # Errors
/// The writer's error.
pub async fn write_frames<W: AsyncWrite + Unpin>(
    writer: &mut W,
    frames: &[Frame],
) -> std::io::Result<()> {
    let mut batch = Vec::new();
    for frame in frames {
        for chunk in frame.chunks().map(str::as_bytes) {
            if batch.len() + chunk.len() > MAX_BATCH_BYTES {
                if !batch.is_empty() {
                    writer.write_all(&batch).await?;
                    batch.clear();
                }
                if chunk.len() > MAX_BATCH_BYTES {
                    writer.write_all(chunk).await?;
                    continue;
                }
            }
            batch.extend_from_slice(chunk);
        }
        batch.push(b'\n');
    }
    if !batch.is_empty() {
        writer.write_all(&batch).await?;
    }
    writer.flush().await
}

/// `first` and what `next` has ready at once, up to [`MAX_BATCH_FRAMES`]: the frames for one
/// [`write_frames`].
pub fn gather(first: Frame, mut next: impl FnMut() -> Option<Frame>) -> Vec<Frame> {
    let mut frames = vec![first];
    while frames.len() < MAX_BATCH_FRAMES {
        match next() {
            Some(frame) => frames.push(frame),
            None => break,
        }
    }
    frames
}

/// One line read under the size bound.
enum Line {
    Text(Vec<u8>),
    TooLarge,
    End,
}

/// A line read so far: its bytes, or the note that it is already over the limit.
#[derive(Default)]
struct Partial {
    line: Vec<u8>,
    over: bool,
}

impl Partial {
    fn finish(&mut self) -> Line {
        let over = std::mem::take(&mut self.over);
        let line = std::mem::take(&mut self.line);
        if over {
            Line::TooLarge
        } else {
            Line::Text(line)
        }
    }
}

/// Reads one newline-terminated line, never holding more than `limit` bytes of it: a longer
/// line is consumed to its end and reported as too large. Cancel-safe: what was read before a
/// cancelled call stays in `partial`.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    partial: &mut Partial,
    limit: usize,
) -> std::io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if !partial.over && partial.line.is_empty() {
                return Ok(Line::End);
            }
            return Ok(partial.finish());
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        if !partial.over {
            if partial.line.len() + chunk.len() > limit {
                partial.over = true;
                partial.line = Vec::new();
            } else {
                partial.line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(partial.finish());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_without_losing_the_next() {
        let input = format!("{}\n{{\"a\":1}}\nshort\n", "x".repeat(100));
        let mut reader = BufReader::with_capacity(16, input.as_bytes());
        let mut p = Partial::default();
        assert!(matches!(
            read_line(&mut reader, &mut p, 50).await.unwrap(),
            Line::TooLarge
        ));
        let Line::Text(next) = read_line(&mut reader, &mut p, 50).await.unwrap() else {
            panic!()
        };
        assert_eq!(next, b"{\"a\":1}");
        let Line::Text(last) = read_line(&mut reader, &mut p, 50).await.unwrap() else {
            panic!()
        };
        assert_eq!(last, b"short");
        assert!(matches!(
            read_line(&mut reader, &mut p, 50).await.unwrap(),
            Line::End
        ));
    }

    /// A writer that keeps what it is given and counts the writes.
    #[derive(Default)]
    struct Recorder {
        bytes: Vec<u8>,
        writes: usize,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    use serde_json::value::RawValue;

    #[tokio::test]
    async fn small_frames_are_written_together_and_large_ones_from_where_they_are() {
        let small = |n: usize| Frame::parse(&format!(r#"{{"id":{n}}}"#)).unwrap();
        let large = Frame::parse(&format!(r#"{{"x":"{}"}}"#, "x".repeat(MAX_BATCH_BYTES))).unwrap();
        // A forwarded response: its head and tail are small, its result is large.
        let result = format!(r#"{{"y":"{}"}}"#, "y".repeat(MAX_BATCH_BYTES));
        let source = Frame::parse(&format!(r#"{{"id":9,"result":{result}}}"#)).unwrap();
        let id: Box<RawValue> = RawValue::from_string("\"a\"".to_owned()).unwrap();
        let (start, end) = source.members().unwrap().result.unwrap();
        assert_eq!((end - start) as usize, result.len());
        let forwarded = Frame::answering(&id, source, start as usize..end as usize, Vec::new());
        assert_eq!(
            forwarded.text(),
            format!(r#"{{"jsonrpc":"2.0","id":"a","result":{result}}}"#)
        );
        let frames = [
            small(1),
            small(2),
            small(3),
            large.clone(),
            small(4),
            forwarded.clone(),
            small(5),
        ];
        let mut out = Recorder::default();
        write_frames(&mut out, &frames).await.unwrap();
        // The three small ones; the large one; its newline, the fourth small one and the
        // forwarded response's head; its result; its tail and newline with the last small one.
        assert_eq!(out.writes, 5);
        let mut reader = FrameReader::new(out.bytes.as_slice());
        for frame in &frames {
            assert_eq!(&reader.next().await.unwrap().unwrap(), frame);
        }
        assert!(reader.next().await.is_none());
    }

    #[test]
    fn gather_takes_what_is_ready_up_to_the_limit() {
        let frame = Frame::parse("{}").unwrap();
        let mut ready = 2;
        let frames = gather(frame.clone(), || {
            ready -= 1;
            (ready >= 0).then(|| frame.clone())
        });
        assert_eq!(frames.len(), 3);
        assert_eq!(
            gather(frame.clone(), || Some(frame.clone())).len(),
            MAX_BATCH_FRAMES
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_is_kept() {
        let input = format!("{}\n", "y".repeat(50));
        let mut reader = BufReader::with_capacity(7, input.as_bytes());
        let mut p = Partial::default();
        let Line::Text(line) = read_line(&mut reader, &mut p, 50).await.unwrap() else {
            panic!()
        };
        assert_eq!(line.len(), 50);
    }
}
