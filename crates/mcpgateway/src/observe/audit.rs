//! The audit log: one JSON line per verdict, appended to a file by a thread of its own.
//!
//! A call never waits for the file: a line is queued (at most [`MAX_QUEUED_AUDIT_LINES`]), and
//! past that it is dropped and counted (`mcpx_dropped_audit_lines_total`), as the stderr log
//! does. Argument values are written only when asked for ([`AuditOptions::arguments`]), and
//! then, like every other field, with each secret the caller named (the values of `${VAR}`
//! in the config, the bearer token) replaced by [`REDACTED`] in whatever spelling it came
//! (see [`super::Redactor`]): arguments are redacted as decoded values, not as raw text.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::Redactor;

/// Audit lines waiting for the file at most; more are dropped (and counted), never waited for.
pub const MAX_QUEUED_AUDIT_LINES: usize = 4096;

/// What a secret is replaced with in an audit line, and the shortest secret searched for: the
/// same as in the errors of mcpclient's HTTP transport.
pub use mcpclient::{MIN_SECRET_CHARS, REDACTED};

/// Where the audit log goes and what it holds.
#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    /// The file lines are appended to.
    pub file: PathBuf,
    /// Whether each call's arguments are written (`gateway.audit.arguments`); off by default.
    pub arguments: bool,
    /// What keeps the text that must never appear in a line (the values of `${VAR}` in the
    /// config, the bearer token) out: replaced by [`REDACTED`]. Shared with the log on stderr,
    /// so that a reloaded config's secrets are kept out of both.
    pub redactor: Redactor,
}

/// One verdict.
pub(crate) struct Entry<'a> {
    pub(crate) session: Option<u64>,
    pub(crate) server: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) verdict: &'a str,
    pub(crate) lines: &'a [String],
    /// The arguments' JSON text, when they are audited.
    pub(crate) arguments: Option<&'a str>,
    /// The call's trace, when traced.
    pub(crate) trace_id: Option<String>,
}

/// The queue to the writing thread.
pub(crate) struct Audit {
    lines: SyncSender<String>,
    pending: Arc<AtomicUsize>,
    arguments: bool,
    redactor: Redactor,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Audit {
    /// Opens (creates, appends to) the file and starts the writing thread.
    pub(crate) fn open(options: &AuditOptions) -> std::io::Result<Audit> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&options.file)?;
        let (lines, queued) = sync_channel::<String>(MAX_QUEUED_AUDIT_LINES);
        let pending = Arc::new(AtomicUsize::new(0));
        let written = pending.clone();
        std::thread::Builder::new()
            .name("mcpx-audit".to_owned())
            .spawn(move || {
                for line in queued {
                    if let Err(error) = file.write_all(line.as_bytes()) {
                        tracing::warn!(%error, "cannot write the audit log");
                    }
                    written.fetch_sub(1, Ordering::AcqRel);
                }
            })?;
        Ok(Audit {
            lines,
            pending,
            arguments: options.arguments,
            redactor: options.redactor.clone(),
        })
    }

    /// Whether arguments are audited.
    pub(crate) fn wants_arguments(&self) -> bool {
        self.arguments
    }

    /// Queues `entry`; false when the queue is full (the line is dropped).
    pub(crate) fn write(&self, entry: &Entry<'_>) -> bool {
        let lines: Vec<String> = entry
            .lines
            .iter()
            .map(|l| self.redactor.redact(l).into_owned())
            .collect();
        let mut line = json!({
            "time": rfc3339(SystemTime::now()),
            "session": entry.session,
            "server": entry.server,
            "tool": entry.tool,
            "verdict": entry.verdict,
            "lines": lines,
        });
        if let Some(arguments) = entry.arguments.filter(|_| self.arguments) {
            // Decoded first: a secret written with escapes is the same secret.
            line["arguments"] = match serde_json::from_str::<Value>(arguments) {
                Ok(mut value) => {
                    self.redactor.redact_value(&mut value);
                    value
                }
                Err(_) => Value::from(self.redactor.redact(arguments).into_owned()),
            };
        }
        if let Some(trace) = &entry.trace_id {
            line["trace_id"] = json!(trace);
        }
        let mut text = line.to_string();
        text.push('\n');
        self.pending.fetch_add(1, Ordering::AcqRel);
        if self.lines.try_send(text).is_err() {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Waits until every queued line is written, or `grace` has passed.
    pub(crate) fn flush(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        while self.pending.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// `time` as RFC 3339 in UTC with milliseconds (`2026-12-05T07:50:00.123Z`).
fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The calendar date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_millis(1_709_164_800_123 + 3_723_000);
        assert_eq!(rfc3339(leap), "2024-02-29T01:02:03.123Z");
    }

    #[test]
    fn secrets_never_reach_the_file_in_any_json_form() {
        let dir = tempfile::tempdir().unwrap();
        let options = AuditOptions {
            file: dir.path().join("audit.jsonl"),
            arguments: true,
            redactor: Redactor::new(["s3cr\"et-value".into(), "x".into()]),
        };
        let audit = Audit::open(&options).unwrap();
        let lines = vec!["$.token: got \"s3cr\\\"et-value\", want integer".to_owned()];
        let entry = Entry {
            session: Some(1),
            server: "demo",
            tool: "echo",
            verdict: "rejected",
            lines: &lines,
            arguments: Some(r#"{"token":"s3cr\"et-value","x":1}"#),
            trace_id: None,
        };
        assert!(audit.write(&entry));
        audit.flush(Duration::from_secs(5));
        let text = std::fs::read_to_string(&options.file).unwrap();
        assert!(!text.contains("s3cr"), "{text}");
        let line: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(line["arguments"], json!({"token": REDACTED, "x": 1}));
        assert_eq!(line["session"], 1);
        assert_eq!(
            line["lines"],
            json!([format!("$.token: got \"{REDACTED}\", want integer")])
        );
        assert_eq!(line["verdict"], "rejected");
    }

    #[test]
    fn a_secret_spelt_with_escapes_is_redacted_as_the_value_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let options = AuditOptions {
            file: dir.path().join("audit.jsonl"),
            arguments: true,
            redactor: Redactor::new(["sk-live-12345".to_owned()]),
        };
        let audit = Audit::open(&options).unwrap();
        let lines = vec![r#"$.key: got "sk-live-12345", want integer"#.to_owned()];
        let mut entry = echoed(Some(
            r#"{"key":"sk-live-1234\u0035","\u0073k-live-12345":"k","note":"a \"sk-live-12345\" b"}"#,
        ));
        entry.lines = &lines;
        assert!(audit.write(&entry));
        audit.flush(Duration::from_secs(5));
        let text = std::fs::read_to_string(&options.file).unwrap();
        assert!(!text.contains("1234"), "{text}");
        let line: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(
            line["arguments"],
            json!({"key": REDACTED, REDACTED: "k", "note": format!("a \u{22}{REDACTED}\u{22} b")})
        );
    }

    /// The verdict `ok` of a call to `echo`, with `arguments`.
    fn echoed(arguments: Option<&str>) -> Entry<'_> {
        Entry {
            session: None,
            server: "demo",
            tool: "echo",
            verdict: "ok",
            lines: &[],
            arguments,
            trace_id: None,
        }
    }

    #[test]
    fn a_full_queue_drops_instead_of_waiting() {
        // A queue of two that nobody drains.
        let (lines, _queued) = sync_channel(2);
        let audit = Audit {
            lines,
            pending: Arc::default(),
            arguments: false,
            redactor: Redactor::default(),
        };
        let entry = echoed(None);
        let written: Vec<bool> = (0..5).map(|_| audit.write(&entry)).collect();
        assert_eq!(written, [true, true, false, false, false]);
        // Flushing gives up after its grace instead of waiting for a writer that never comes.
        audit.flush(Duration::from_millis(20));
        let observe = crate::observe::Observe {
            inner: Arc::new(super::super::Inner {
                audit: Some(audit),
                ..super::super::Inner::default()
            }),
        };
        observe.refused_answer(None, "demo", &[]);
        assert!(observe
            .metrics_text()
            .lines()
            .any(|l| l == "mcpx_dropped_audit_lines_total 1"));
    }

    #[test]
    fn arguments_are_left_out_unless_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let options = AuditOptions {
            file: dir.path().join("audit.jsonl"),
            ..AuditOptions::default()
        };
        let audit = Audit::open(&options).unwrap();
        let entry = echoed(Some(r#"{"text":"private"}"#));
        assert!(audit.write(&entry));
        audit.flush(Duration::from_secs(5));
        let text = std::fs::read_to_string(&options.file).unwrap();
        assert!(
            !text.contains("private") && !text.contains("arguments"),
            "{text}"
        );
    }
}
