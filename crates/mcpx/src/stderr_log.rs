//! The gateway's log on standard error, written by a thread of its own so that logging never
//! waits for the reader.
//!
//! A client that spawns `mcpx serve` may pipe its standard error and never read it. Written
//! directly, the log would fill the pipe (64 KiB: a few hundred warnings) and the next log line
//! would block the gateway for good. Here a line is queued, at most [`MAX_QUEUED_LOG_LINES`] of
//! them; past that, lines are dropped and counted, and the calls go on.

use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// Log lines waiting for standard error at most; more are dropped (and counted), never waited
/// for.
pub(crate) const MAX_QUEUED_LOG_LINES: usize = 1024;

/// How long the gateway waits, when it stops, for queued log lines to be written.
pub(crate) const LOG_FLUSH_GRACE: Duration = Duration::from_secs(1);

/// The queue to the writing thread; a `MakeWriter` for the log.
#[derive(Clone)]
pub(crate) struct StderrLog {
    lines: SyncSender<Vec<u8>>,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    /// Lines queued and not yet written.
    pending: AtomicUsize,
    /// Lines dropped because the queue was full.
    dropped: AtomicU64,
    /// Where dropped lines are counted too (`mcpx_dropped_log_lines_total`).
    metrics: std::sync::OnceLock<mcpgateway::Observe>,
    /// The secrets no line may show, in any spelling (set once the config is read).
    redactor: std::sync::OnceLock<mcpgateway::Redactor>,
}

impl StderrLog {
    /// Starts the writing thread.
    pub(crate) fn start() -> StderrLog {
        let (lines, queued) = sync_channel::<Vec<u8>>(MAX_QUEUED_LOG_LINES);
        let state = Arc::new(State::default());
        let writer_state = state.clone();
        // Without the thread (the system refused one), the queue has no reader: every line
        // counts as dropped, and the gateway still serves.
        let _ = std::thread::Builder::new()
            .name("mcpx-log".to_owned())
            .spawn(move || {
                let mut stderr = std::io::stderr();
                for line in queued {
                    // Redacted here, off the gateway's threads.
                    match writer_state.redactor.get() {
                        Some(redactor) if !redactor.is_empty() => {
                            let text = String::from_utf8_lossy(&line);
                            let _ = stderr.write_all(redactor.redact(&text).as_bytes());
                        }
                        _ => {
                            let _ = stderr.write_all(&line);
                        }
                    }
                    writer_state.pending.fetch_sub(1, Ordering::AcqRel);
                }
            });
        StderrLog { lines, state }
    }

    /// Keeps `redactor`'s secrets out of every line written from now on.
    pub(crate) fn redact_with(&self, redactor: mcpgateway::Redactor) {
        let _ = self.state.redactor.set(redactor);
    }

    /// Counts the lines dropped from now on in `observe`'s metrics too.
    pub(crate) fn count_drops_in(&self, observe: &mcpgateway::Observe) {
        let _ = self.state.metrics.set(observe.clone());
    }

    /// Lines dropped so far because standard error was not read fast enough.
    pub(crate) fn dropped(&self) -> u64 {
        self.state.dropped.load(Ordering::Relaxed)
    }

    /// Waits until every queued line is written, or `grace` has passed.
    pub(crate) fn flush(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        while self.state.pending.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn queue(&self, line: Vec<u8>) {
        self.state.pending.fetch_add(1, Ordering::AcqRel);
        if self.lines.try_send(line).is_err() {
            self.state.pending.fetch_sub(1, Ordering::AcqRel);
            self.state.dropped.fetch_add(1, Ordering::Relaxed);
            if let Some(observe) = self.state.metrics.get() {
                observe.dropped_log_line();
            }
        }
    }
}

/// One log line being formatted; queued whole when the formatter is done with it.
pub(crate) struct Line<'a> {
    text: Vec<u8>,
    log: &'a StderrLog,
}

impl Write for Line<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line<'_> {
    fn drop(&mut self) {
        if !self.text.is_empty() {
            self.log.queue(std::mem::take(&mut self.text));
        }
    }
}

impl<'a> MakeWriter<'a> for StderrLog {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line {
            text: Vec::new(),
            log: self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log whose queue holds `capacity` lines and is drained by the test, not by a thread.
    fn undrained(capacity: usize) -> (StderrLog, std::sync::mpsc::Receiver<Vec<u8>>) {
        let (lines, queued) = sync_channel::<Vec<u8>>(capacity);
        let log = StderrLog {
            lines,
            state: Arc::default(),
        };
        (log, queued)
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (log, _queued) = undrained(2);
        for _ in 0..5 {
            let mut line = log.make_writer();
            line.write_all(b"a line\n").unwrap();
        }
        assert_eq!(log.dropped(), 3);
        assert_eq!(log.state.pending.load(Ordering::Acquire), 2);
        // Flushing gives up after its grace instead of waiting for a reader that never comes.
        log.flush(Duration::from_millis(20));
    }

    #[test]
    fn queued_lines_are_written_whole() {
        let (log, queued) = undrained(4);
        {
            let mut line = log.make_writer();
            line.write_all(b"two ").unwrap();
            line.write_all(b"parts\n").unwrap();
        }
        assert_eq!(queued.try_recv().unwrap(), b"two parts\n");
        assert!(queued.try_recv().is_err());
    }
}
