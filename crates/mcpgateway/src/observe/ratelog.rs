//! A warning that may come in floods (a client hammering a limit) logged at a bounded rate: at
//! most [`MAX_LINES_PER_WINDOW`] lines per [`LOG_WINDOW`], the rest counted and reported with
//! the next line that is written.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The window over which [`MAX_LINES_PER_WINDOW`] lines of one kind are written.
pub const LOG_WINDOW: Duration = Duration::from_secs(10);

/// Lines of one kind written per [`LOG_WINDOW`]; more are counted, not written.
pub const MAX_LINES_PER_WINDOW: u32 = 10;

pub(crate) struct RateLimitedLog {
    what: &'static str,
    state: Mutex<Window>,
}

struct Window {
    started: Instant,
    written: u32,
    suppressed: u64,
}

impl RateLimitedLog {
    pub(crate) fn new(what: &'static str) -> RateLimitedLog {
        RateLimitedLog {
            what,
            state: Mutex::new(Window {
                started: Instant::now(),
                written: 0,
                suppressed: 0,
            }),
        }
    }

    /// Logs `reason` as a warning, unless this window's lines are used up.
    pub(crate) fn note(&self, reason: &str) {
        let mut window = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if window.started.elapsed() >= LOG_WINDOW {
            window.started = Instant::now();
            window.written = 0;
        }
        if window.written >= MAX_LINES_PER_WINDOW {
            window.suppressed += 1;
            return;
        }
        window.written += 1;
        let suppressed = std::mem::take(&mut window.suppressed);
        drop(window);
        if suppressed > 0 {
            tracing::warn!(
                reason,
                suppressed,
                "{} (and {suppressed} more not logged)",
                self.what
            );
        } else {
            tracing::warn!(reason, "{}", self.what);
        }
    }

    /// How many lines were not written since the last one that was.
    #[cfg(test)]
    fn suppressed(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_counted_not_written() {
        let log = RateLimitedLog::new("refused");
        for _ in 0..1000 {
            log.note("too many");
        }
        assert_eq!(log.suppressed(), 1000 - u64::from(MAX_LINES_PER_WINDOW));
    }
}
