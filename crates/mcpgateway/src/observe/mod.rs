//! What the gateway tells its operators besides its log: Prometheus metrics, an audit log of
//! its verdicts, and OpenTelemetry traces of its calls.
//!
//! The request paths only say what happened where they know it (a call arrived, was routed,
//! went to its server, came back with this verdict; a server started or went down; a client's
//! answer was refused) through an [`Observe`] handle and the per-call [`Call`] guard; this
//! module turns that into the three outputs. None of them ever holds a call up: metrics are
//! atomic counters, audit lines go through a bounded queue to a thread of their own (dropped
//! and counted when it is full), and spans are batched by the OpenTelemetry SDK's thread.
//!
//! A call ends where its guard drops, so a call whose task is aborted (the client cancelled
//! it, or its session ended) is counted too, as `cancelled`.

mod audit;
mod endpoint;
mod metrics;
pub(crate) mod observed;
pub(crate) mod ratelog;
mod redact;
mod traces;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mcpclient::{CallOutcome, ClientError, RawParams, RpcError};

pub use audit::{AuditOptions, MAX_QUEUED_AUDIT_LINES, MIN_SECRET_CHARS, REDACTED};
pub use endpoint::{serve_metrics, METRICS_CONTENT_TYPE, METRICS_PATH};
pub use metrics::{Limit, MAX_TOOL_LABELS_PER_SERVER, OTHER_TOOL};
pub use redact::{Redactor, MAX_ESCAPE_LEVELS};
pub use traces::{TracesError, EXPORT_TIMEOUT, TRACES_FLUSH_GRACE};

use audit::{Audit, Entry};
use metrics::{Metrics, Outcome};
use traces::{CallSpan, Traces};

/// How long stopping waits for queued audit lines to be written.
pub const AUDIT_FLUSH_GRACE: Duration = Duration::from_secs(2);

/// Why observing cannot start as configured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// The audit file cannot be opened (or its writer started).
    #[error("audit log {path}: {source}")]
    Audit {
        /// The file configured.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Traces cannot be exported.
    #[error(transparent)]
    Traces(#[from] TracesError),
}

/// The gateway's metrics, audit log and tracer. Cloning gives another handle to the same ones;
/// the default has metrics only.
#[derive(Clone, Default)]
pub struct Observe {
    pub(super) inner: Arc<Inner>,
}

#[derive(Default)]
pub(super) struct Inner {
    metrics: Metrics,
    audit: Option<Audit>,
    traces: Option<Traces>,
    /// The last tool listing observed, by server.
    listings: std::sync::Mutex<HashMap<String, u64>>,
}

impl std::fmt::Debug for Observe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observe")
            .field("audit", &self.inner.audit)
            .field("traces", &self.inner.traces)
            .finish_non_exhaustive()
    }
}

impl Observe {
    /// Metrics, and an audit log when `audit` is given, and traces sent to `otlp_endpoint`
    /// (OTLP over HTTP with protobuf, the full URL: `http://127.0.0.1:4318/v1/traces`) when it
    /// is given. Call it before the async runtime runs: the exporter's HTTP client is a
    /// blocking one, on a thread of its own.
    ///
    /// # Errors
    /// The audit file cannot be opened; the exporter cannot be built.
    pub fn new(
        audit: Option<&AuditOptions>,
        otlp_endpoint: Option<&str>,
    ) -> Result<Observe, ObserveError> {
        let audit = audit
            .map(|options| {
                Audit::open(options).map_err(|source| ObserveError::Audit {
                    path: options.file.display().to_string(),
                    source,
                })
            })
            .transpose()?;
        let traces = otlp_endpoint.map(Traces::otlp).transpose()?;
        Ok(Observe {
            inner: Arc::new(Inner {
                metrics: Metrics::default(),
                audit,
                traces,
                listings: std::sync::Mutex::default(),
            }),
        })
    }

    /// The metrics in the OpenMetrics text format ([`METRICS_CONTENT_TYPE`]).
    pub fn metrics_text(&self) -> String {
        self.inner.metrics.encode()
    }

    /// `limit` turned a client away or ended what it held: counted in `mcpx_limited_total`.
    pub fn limited(&self, limit: Limit) {
        self.inner.metrics.limited(limit);
    }

    /// A log line was dropped (its queue was full): counted in `mcpx_dropped_log_lines_total`.
    pub fn dropped_log_line(&self) {
        self.inner.metrics.dropped_log_line();
    }

    /// Writes what is queued (audit lines, spans), each within its grace; the gateway is
    /// stopping. Call it outside the async runtime.
    pub fn flush(&self) {
        if let Some(audit) = &self.inner.audit {
            audit.flush(AUDIT_FLUSH_GRACE);
        }
        if let Some(traces) = &self.inner.traces {
            traces.shutdown();
        }
    }

    /// A `tools/call` of session `session` to `exposed` arrived with `params`.
    pub(crate) fn call(&self, session: u64, exposed: &str, params: &RawParams) -> Call {
        self.inner.metrics.call_started();
        let span = self
            .inner
            .traces
            .as_ref()
            .map(|traces| traces.call(exposed, trace_meta(params)));
        let arguments = self
            .inner
            .audit
            .as_ref()
            .filter(|a| a.wants_arguments())
            .map(|_| {
                params
                    .get("arguments")
                    .map_or_else(|| "{}".to_owned(), |a| a.get().to_owned())
            });
        Call {
            inner: self.inner.clone(),
            session,
            server: String::new(),
            tool: exposed.to_owned(),
            started: Instant::now(),
            sent: None,
            returned: None,
            outcome: None,
            lines: Vec::new(),
            warnings: 0,
            arguments,
            span,
        }
    }

    /// A client's answer to server `server`'s elicitation was refused: it violated the
    /// `requestedSchema` (`lines`).
    pub(crate) fn refused_answer(&self, session: Option<u64>, server: &str, lines: &[String]) {
        self.inner.metrics.refused_answer(server);
        self.audit(&Entry {
            session,
            server,
            tool: "",
            verdict: "answer_refused",
            lines,
            arguments: None,
            trace_id: None,
        });
    }

    /// `open` client sessions now.
    pub(crate) fn sessions(&self, open: usize) {
        self.inner.metrics.sessions(open);
    }

    /// Server `name` runs (`up`), or went down (`!up`: it restarts with backoff).
    pub(crate) fn upstream(&self, name: &str, up: bool) {
        self.inner.metrics.upstream(name, up, !up);
    }

    /// Server `name` is configured; it is not running yet.
    pub(crate) fn upstream_known(&self, name: &str) {
        self.inner.metrics.upstream(name, false, false);
    }

    /// Server `name`'s tool list number `listing` compiled in `took`: observed once per listing
    /// of a connection (`connected`: the first of a new connection, whose numbers start over).
    pub(crate) fn compiled(&self, name: &str, listing: u64, took: Duration, connected: bool) {
        let mut seen = crate::wire::lock(&self.inner.listings);
        if listing == 0 || (!connected && seen.get(name) == Some(&listing)) {
            return;
        }
        seen.insert(name.to_owned(), listing);
        drop(seen);
        self.inner.metrics.compiled(name, took);
    }

    fn audit(&self, entry: &Entry<'_>) {
        if let Some(audit) = &self.inner.audit {
            if !audit.write(entry) {
                self.inner.metrics.dropped_audit_line();
            }
        }
    }
}

/// `traceparent` and `tracestate` of the call's `_meta`, for the propagator.
fn trace_meta(params: &RawParams) -> HashMap<String, String> {
    let Some(meta) = params.get("_meta").and_then(|m| RawParams::parse(m).ok()) else {
        return HashMap::new();
    };
    ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), meta.get_str(key)?)))
        .collect()
}

/// One `tools/call` being answered: told what happens to it, it counts, audits and traces the
/// call when it drops.
pub(crate) struct Call {
    inner: Arc<Inner>,
    session: u64,
    server: String,
    /// The server's name for the tool once routed; the exposed name until then.
    tool: String,
    started: Instant,
    sent: Option<(Instant, SystemTime)>,
    returned: Option<(Instant, SystemTime)>,
    outcome: Option<Outcome>,
    lines: Vec<String>,
    warnings: usize,
    arguments: Option<String>,
    span: Option<CallSpan>,
}

impl Call {
    /// No running server has the tool.
    pub(crate) fn unrouted(&mut self) {
        self.outcome = Some(Outcome::UnknownTool);
    }

    /// The call goes to `server`'s tool `tool`.
    pub(crate) fn routed(&mut self, server: &str, tool: &str) {
        server.clone_into(&mut self.server);
        tool.clone_into(&mut self.tool);
        if let Some(span) = &mut self.span {
            span.routed(server, tool);
        }
    }

    /// The server could not be reached.
    pub(crate) fn unreachable(&mut self) {
        self.outcome = Some(Outcome::UpstreamError);
    }

    /// The call is handed to the server's client (which checks the arguments, then sends).
    pub(crate) fn sending(&mut self) {
        self.sent = Some((Instant::now(), SystemTime::now()));
    }

    /// The server's client returned `outcome`: the verdict.
    pub(crate) fn returned(&mut self, outcome: &Result<CallOutcome, ClientError>) {
        self.returned = Some((Instant::now(), SystemTime::now()));
        let verdict = match outcome {
            Ok(answered) => {
                self.warnings = answered.warnings.len();
                self.lines = answered
                    .warnings
                    .iter()
                    .flat_map(|w| w.lines.iter().cloned())
                    .collect();
                if answered.is_error {
                    Outcome::ToolError
                } else {
                    Outcome::Ok
                }
            }
            Err(ClientError::InvalidArguments { violations, .. }) => {
                self.lines.clone_from(violations);
                Outcome::Rejected
            }
            Err(ClientError::UnusableInputSchema { error, .. }) => {
                self.lines = vec![format!(
                    "$: the tool's inputSchema does not compile: {error}"
                )];
                Outcome::Rejected
            }
            Err(ClientError::Rpc(RpcError::Timeout { .. })) => Outcome::Timeout,
            Err(other) => {
                self.lines = vec![other.to_string()];
                Outcome::UpstreamError
            }
        };
        self.outcome = Some(verdict);
    }

    /// The verdict as audited: `output_invalid` for a result that violated its
    /// `outputSchema` (delivered unchanged, and counted as `ok` or `tool_error`).
    fn verdict(&self, outcome: Outcome) -> &'static str {
        if self.warnings > 0 {
            "output_invalid"
        } else {
            outcome.as_str()
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let outcome = self.outcome.unwrap_or(Outcome::Cancelled);
        let total = self.started.elapsed();
        // A rejected call never left: its time is all the gateway's.
        let upstream = match (self.sent, self.returned, outcome) {
            (_, _, Outcome::Rejected) => None,
            (Some(sent), Some(returned), _) => Some((sent, returned)),
            (Some(sent), None, _) => Some((sent, (Instant::now(), SystemTime::now()))),
            _ => None,
        };
        let upstream_time = upstream.map_or(Duration::ZERO, |(s, r)| r.0 - s.0);
        let metrics = &self.inner.metrics;
        metrics.call_ended();
        metrics.call(
            &self.server,
            &self.tool,
            outcome,
            self.warnings,
            total,
            upstream_time,
        );
        let verdict = self.verdict(outcome);
        let mut trace_id = None;
        if let Some(mut span) = self.span.take() {
            if let Some(((_, sent), (_, returned))) = upstream {
                span.upstream(&self.server, &self.tool, sent, returned);
            }
            let failed = !matches!(outcome, Outcome::Ok);
            span.verdict(verdict, &self.lines, failed);
            trace_id = Some(span.trace_id());
            span.end();
        }
        let observe = Observe {
            inner: self.inner.clone(),
        };
        observe.audit(&Entry {
            session: Some(self.session),
            server: &self.server,
            tool: &self.tool,
            verdict,
            lines: &self.lines,
            arguments: self.arguments.as_deref(),
            trace_id,
        });
    }
}
