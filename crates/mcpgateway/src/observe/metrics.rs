//! The gateway's Prometheus metrics, kept with prometheus-client and written in the OpenMetrics
//! text format.
//!
//! Label values are bounded: server names come from the config, outcomes from [`Outcome`], and
//! tool names (which come from the servers, and a server may list thousands, or new ones on
//! every list) are capped at [`MAX_TOOL_LABELS_PER_SERVER`] per server: the tools past the cap
//! are counted under the tool label [`OTHER_TOOL`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

use crate::wire::lock;

/// Distinct tool labels kept per server; the calls to further tools of that server are
/// counted under [`OTHER_TOOL`]. A Prometheus series costs memory in the gateway and in every
/// scraper: a server listing a thousand tools (or renaming them on each list) must not make a
/// thousand series per outcome.
pub const MAX_TOOL_LABELS_PER_SERVER: usize = 100;

/// The tool label of the calls past [`MAX_TOOL_LABELS_PER_SERVER`].
pub const OTHER_TOOL: &str = "other";

/// How a call ended, as counted (`outcome` label) and audited (`verdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Outcome {
    /// The server answered with a result.
    Ok,
    /// The server answered with a result whose `isError` is true.
    ToolError,
    /// The arguments violated the tool's `inputSchema`: nothing was sent.
    Rejected,
    /// The server answered with an error, or could not be reached.
    UpstreamError,
    /// No answer within the call's timeout.
    Timeout,
    /// The client cancelled the call (or its session ended) before the answer.
    Cancelled,
    /// No server has a tool of that name.
    UnknownTool,
}

impl Outcome {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Rejected => "rejected",
            Outcome::UpstreamError => "upstream_error",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::UnknownTool => "unknown_tool",
        }
    }
}

/// A limit that turned a client away or ended something it held, as counted
/// (`mcpx_limited_total{limit=...}`): each names the named constant (or setting) behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// A session's GET stream held more unread than `MAX_UNREAD_STREAM_BYTES`: ended.
    UnreadGetStream,
    /// A POST's response stream held more unread than `MAX_UNREAD_STREAM_BYTES`: ended, its
    /// requests cancelled.
    UnreadPostStream,
    /// A client's sessions at `maxSessionsPerClient`: its least recently active idle one ended,
    /// or the new one refused.
    SessionsPerClient,
    /// The session table full: the least recently active idle session ended, or the new one
    /// refused.
    Sessions,
    /// Connections at `maxConnections` or `maxConnectionsPerAddress`: the longest idle closed,
    /// or the new one refused.
    Connections,
    /// A client's per-session servers, or all of them, at their limit: the call refused.
    SessionServers,
}

impl Limit {
    fn as_str(self) -> &'static str {
        match self {
            Limit::UnreadGetStream => "unread_get_stream",
            Limit::UnreadPostStream => "unread_post_stream",
            Limit::SessionsPerClient => "sessions_per_client",
            Limit::Sessions => "sessions",
            Limit::Connections => "connections",
            Limit::SessionServers => "session_servers",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    server: String,
    tool: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    server: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerLabels {
    server: String,
}

fn latency_buckets() -> Histogram {
    // 50 µs to about 105 s.
    Histogram::new(exponential_buckets(0.000_05, 4.0, 11))
}

fn overhead_buckets() -> Histogram {
    // 10 µs to about 2.6 s.
    Histogram::new(exponential_buckets(0.000_01, 4.0, 10))
}

fn compile_buckets() -> Histogram {
    // 100 µs to about 26 s.
    Histogram::new(exponential_buckets(0.000_1, 4.0, 10))
}

type HistogramFamily = Family<ServerLabels, Histogram, fn() -> Histogram>;

/// The metrics, registered once.
pub(crate) struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    output_warnings: Family<ToolLabels, Counter>,
    refused_answers: Family<ServerLabels, Counter>,
    call_seconds: HistogramFamily,
    overhead_seconds: HistogramFamily,
    in_flight: Gauge,
    sessions: Gauge,
    upstream_up: Family<ServerLabels, Gauge>,
    restarts: Family<ServerLabels, Counter>,
    compile_seconds: HistogramFamily,
    dropped_log_lines: Counter,
    dropped_audit_lines: Counter,
    limited: Family<LimitLabels, Counter>,
    /// The series each server's calls are counted in, by server: found once, not looked up
    /// by their labels on every call.
    series: Mutex<HashMap<String, ServerSeries>>,
}

/// How many call outcomes there are ([`Outcome`]'s variants).
const OUTCOMES: usize = Outcome::UnknownTool as usize + 1;

/// A server's series: its tools' (by the tool labels given out, at most
/// [`MAX_TOOL_LABELS_PER_SERVER`]; the rest counted under [`OTHER_TOOL`]) and its two
/// histograms.
struct ServerSeries {
    tools: HashMap<String, ToolSeries>,
    other: ToolSeries,
    call_seconds: Histogram,
    overhead_seconds: Histogram,
}

/// A tool label's call counters, each outcome's made when first counted (a series appears
/// once something is counted in it).
struct ToolSeries {
    label: String,
    calls: [Option<Counter>; OUTCOMES],
}

impl ToolSeries {
    fn new(label: &str) -> ToolSeries {
        ToolSeries {
            label: label.to_owned(),
            calls: Default::default(),
        }
    }
}

impl ServerSeries {
    /// The series of `tool`'s label: its own while fewer than the cap are given out (or it
    /// has one), else [`OTHER_TOOL`]'s.
    fn tool(&mut self, tool: &str) -> &mut ToolSeries {
        if !self.tools.contains_key(tool) && self.tools.len() < MAX_TOOL_LABELS_PER_SERVER {
            self.tools.insert(tool.to_owned(), ToolSeries::new(tool));
        }
        match self.tools.get_mut(tool) {
            Some(series) => series,
            None => &mut self.other,
        }
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::with_prefix("mcpx");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "calls",
            "Tool calls by server, tool and outcome",
            calls.clone(),
        );
        let output_warnings = Family::<ToolLabels, Counter>::default();
        registry.register(
            "output_warnings",
            "Results whose structuredContent violated the tool's outputSchema (delivered unchanged)",
            output_warnings.clone(),
        );
        let refused_answers = Family::<ServerLabels, Counter>::default();
        registry.register(
            "refused_answers",
            "Client answers to a server's elicitation refused for violating its requestedSchema",
            refused_answers.clone(),
        );
        let call_seconds = HistogramFamily::new_with_constructor(latency_buckets);
        registry.register_with_unit(
            "call_duration",
            "Tool calls from arrival to answer",
            Unit::Seconds,
            call_seconds.clone(),
        );
        let overhead_seconds = HistogramFamily::new_with_constructor(overhead_buckets);
        registry.register_with_unit(
            "gateway_overhead",
            "The part of a tool call's time spent in the gateway (routing, checking, waiting for a turn), not waiting for the server",
            Unit::Seconds,
            overhead_seconds.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "calls_in_flight",
            "Tool calls being answered",
            in_flight.clone(),
        );
        let sessions = Gauge::default();
        registry.register("sessions", "Client sessions open", sessions.clone());
        let upstream_up = Family::<ServerLabels, Gauge>::default();
        registry.register(
            "upstream_up",
            "1 while the server runs, 0 while it starts or is down",
            upstream_up.clone(),
        );
        let restarts = Family::<ServerLabels, Counter>::default();
        registry.register(
            "upstream_restarts",
            "Times the server went down (it is then started again with backoff)",
            restarts.clone(),
        );
        let compile_seconds = HistogramFamily::new_with_constructor(compile_buckets);
        registry.register_with_unit(
            "tool_list_compile",
            "Compiling the schemas of a server's tool list",
            Unit::Seconds,
            compile_seconds.clone(),
        );
        let dropped_log_lines = Counter::default();
        registry.register(
            "dropped_log_lines",
            "Log lines dropped because standard error was not read fast enough",
            dropped_log_lines.clone(),
        );
        let dropped_audit_lines = Counter::default();
        registry.register(
            "dropped_audit_lines",
            "Audit lines dropped because the audit file was not written fast enough",
            dropped_audit_lines.clone(),
        );
        let limited = Family::<LimitLabels, Counter>::default();
        registry.register(
            "limited",
            "Times a limit turned a client away or ended what it held (unread streams, sessions, connections, per-session servers)",
            limited.clone(),
        );
        Metrics {
            limited,
            registry,
            calls,
            output_warnings,
            refused_answers,
            call_seconds,
            overhead_seconds,
            in_flight,
            sessions,
            upstream_up,
            restarts,
            compile_seconds,
            dropped_log_lines,
            dropped_audit_lines,
            series: Mutex::default(),
        }
    }
}

fn server(server: &str) -> ServerLabels {
    ServerLabels {
        server: server.to_owned(),
    }
}

impl Metrics {
    /// `limit` acted once.
    pub(crate) fn limited(&self, limit: Limit) {
        self.limited
            .get_or_create(&LimitLabels {
                limit: limit.as_str().to_owned(),
            })
            .inc();
    }

    /// The metrics in the OpenMetrics text format.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    /// A call ended. `server` and `tool` are empty for a tool no server has.
    pub(crate) fn call(
        &self,
        server_name: &str,
        tool: &str,
        outcome: Outcome,
        warnings: usize,
        total: Duration,
        upstream: Duration,
    ) {
        // A call no server took has no tool label either.
        let tool = if server_name.is_empty() { "" } else { tool };
        let mut servers = lock(&self.series);
        if !servers.contains_key(server_name) {
            let labels = server(server_name);
            let series = ServerSeries {
                tools: HashMap::new(),
                other: ToolSeries::new(OTHER_TOOL),
                call_seconds: self.call_seconds.get_or_create(&labels).clone(),
                overhead_seconds: self.overhead_seconds.get_or_create(&labels).clone(),
            };
            servers.insert(server_name.to_owned(), series);
        }
        let Some(series) = servers.get_mut(server_name) else {
            return;
        };
        let tool_series = series.tool(tool);
        let label = &tool_series.label;
        tool_series.calls[outcome as usize]
            .get_or_insert_with(|| {
                self.calls
                    .get_or_create(&CallLabels {
                        server: server_name.to_owned(),
                        tool: label.clone(),
                        outcome: outcome.as_str().to_owned(),
                    })
                    .clone()
            })
            .inc();
        if warnings > 0 {
            self.output_warnings
                .get_or_create(&ToolLabels {
                    server: server_name.to_owned(),
                    tool: label.clone(),
                })
                .inc_by(warnings as u64);
        }
        series.call_seconds.observe(total.as_secs_f64());
        series
            .overhead_seconds
            .observe(total.saturating_sub(upstream).as_secs_f64());
    }

    pub(crate) fn call_started(&self) {
        self.in_flight.inc();
    }

    pub(crate) fn call_ended(&self) {
        self.in_flight.dec();
    }

    pub(crate) fn refused_answer(&self, server_name: &str) {
        self.refused_answers
            .get_or_create(&server(server_name))
            .inc();
    }

    pub(crate) fn sessions(&self, open: usize) {
        self.sessions.set(i64::try_from(open).unwrap_or(i64::MAX));
    }

    /// Server `name` runs (`up`) or not; `down` when it went down (it restarts).
    pub(crate) fn upstream(&self, name: &str, up: bool, down: bool) {
        let labels = server(name);
        self.upstream_up.get_or_create(&labels).set(i64::from(up));
        // Created at 0 for each server, so that a rate over it starts at the first scrape.
        let restarts = self.restarts.get_or_create(&labels);
        if down {
            restarts.inc();
        }
    }

    pub(crate) fn compiled(&self, name: &str, took: Duration) {
        self.compile_seconds
            .get_or_create(&server(name))
            .observe(took.as_secs_f64());
    }

    pub(crate) fn dropped_log_line(&self) {
        self.dropped_log_lines.inc();
    }

    pub(crate) fn dropped_audit_line(&self) {
        self.dropped_audit_lines.inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    #[test]
    fn tool_labels_past_the_cap_fold_into_other() {
        let metrics = Metrics::default();
        let ms = Duration::from_millis(1);
        for n in 0..MAX_TOOL_LABELS_PER_SERVER + 5 {
            metrics.call("s", &format!("t{n}"), Outcome::Ok, 0, ms, ms);
        }
        // A tool labelled before the cap keeps its label; another server has a cap of its own.
        metrics.call("s", "t0", Outcome::Rejected, 0, ms, Duration::ZERO);
        metrics.call("s2", "t200", Outcome::Ok, 0, ms, ms);
        let text = metrics.encode();
        let calls = line(&text, "mcpx_calls_total{");
        assert_eq!(calls.len(), MAX_TOOL_LABELS_PER_SERVER + 3, "{text}");
        assert!(calls.contains(&r#"mcpx_calls_total{server="s",tool="other",outcome="ok"} 5"#));
        assert!(calls.contains(&r#"mcpx_calls_total{server="s",tool="t0",outcome="rejected"} 1"#));
        assert!(calls.contains(&r#"mcpx_calls_total{server="s2",tool="t200",outcome="ok"} 1"#));
    }

    #[test]
    fn overhead_is_the_time_not_spent_upstream() {
        let metrics = Metrics::default();
        let total = Duration::from_millis(500);
        metrics.call(
            "s",
            "t",
            Outcome::Ok,
            2,
            total,
            total - Duration::from_micros(5),
        );
        let text = metrics.encode();
        assert!(
            text.contains(r#"mcpx_gateway_overhead_seconds_bucket{le="0.00001",server="s"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"mcpx_output_warnings_total{server="s",tool="t"} 2"#));
        assert!(text.contains(r#"mcpx_call_duration_seconds_count{server="s"} 1"#));
    }
}
