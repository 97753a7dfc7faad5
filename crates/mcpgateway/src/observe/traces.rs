//! OpenTelemetry spans of each tool call, exported over OTLP (HTTP, protobuf) when an endpoint
//! is configured; without one no tracer exists and nothing is sent.
//!
//! A call gets a gateway span (kind server) from its arrival to its answer, and an upstream
//! span (kind client) for the time it was with the server; the check of its arguments and of
//! its result is an event (`validation`) on the gateway span. A `traceparent` (and
//! `tracestate`) in the client's `_meta` makes the gateway span a child of the client's span;
//! the server still gets the client's `_meta` unchanged (what mcpx does not own passes
//! through), so it continues the client's trace, not the gateway's.
//!
//! Spans are batched and sent by the SDK's own thread: a call never waits for the collector.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{
    Span as _, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, Span};
use opentelemetry_sdk::Resource;

/// How long the exporter waits for the collector to take one batch.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long stopping waits for the last spans to be sent.
pub const TRACES_FLUSH_GRACE: Duration = Duration::from_secs(5);

/// Why traces cannot be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TracesError {
    /// The OTLP exporter cannot be built (a malformed endpoint, no thread for its client).
    #[error("gateway.traces.endpoint {endpoint}: {reason}")]
    Exporter {
        /// The endpoint configured.
        endpoint: String,
        /// Why.
        reason: String,
    },
}

/// The tracer of a gateway whose traces are exported.
pub(crate) struct Traces {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traces").finish_non_exhaustive()
    }
}

impl Traces {
    /// Spans to `endpoint` (the full URL, `http://collector:4318/v1/traces`).
    pub(crate) fn otlp(endpoint: &str) -> Result<Traces, TracesError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| TracesError::Exporter {
                endpoint: endpoint.to_owned(),
                reason: e.to_string(),
            })?;
        // An empty resource but the service name: nothing read from the environment.
        let resource = Resource::builder_empty()
            .with_service_name("mcpx")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("mcpx-gateway");
        Ok(Traces { provider, tracer })
    }

    /// Sends what is batched, and stops the exporter.
    pub(crate) fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown_with_timeout(TRACES_FLUSH_GRACE) {
            tracing::warn!(%error, "the last spans were not all exported");
        }
    }

    /// The gateway span of a call to `exposed`, a child of the client's span when `meta` (the
    /// call's `_meta` members) carries a valid `traceparent`.
    pub(crate) fn call(&self, exposed: &str, meta: HashMap<String, String>) -> CallSpan {
        use opentelemetry::propagation::TextMapPropagator;
        let parent = TraceContextPropagator::new().extract_with_context(&Context::new(), &meta);
        let span = self
            .tracer
            .span_builder(format!("tools/call {exposed}"))
            .with_kind(SpanKind::Server)
            .with_attributes([
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("mcpx.exposed_tool", exposed.to_owned()),
            ])
            .start_with_context(&self.tracer, &parent);
        CallSpan {
            span,
            tracer: self.tracer.clone(),
        }
    }
}

/// The spans of one call.
pub(crate) struct CallSpan {
    span: Span,
    tracer: SdkTracer,
}

impl CallSpan {
    /// The call's trace id, in hex.
    pub(crate) fn trace_id(&self) -> String {
        self.span.span_context().trace_id().to_string()
    }

    pub(crate) fn routed(&mut self, server: &str, tool: &str) {
        self.span
            .set_attribute(KeyValue::new("mcpx.server", server.to_owned()));
        self.span
            .set_attribute(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
    }

    /// The call was with the server from `sent` until `returned`.
    pub(crate) fn upstream(
        &self,
        server: &str,
        tool: &str,
        sent: SystemTime,
        returned: SystemTime,
    ) {
        let parent = Context::new().with_remote_span_context(self.span.span_context().clone());
        let mut span = self
            .tracer
            .span_builder(format!("tools/call {tool}"))
            .with_kind(SpanKind::Client)
            .with_start_time(sent)
            .with_attributes([
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("mcpx.server", server.to_owned()),
                KeyValue::new("gen_ai.tool.name", tool.to_owned()),
            ])
            .start_with_context(&self.tracer, &parent);
        span.end_with_timestamp(returned);
    }

    /// The call's verdict: the `validation` event with its lines, and the span's status.
    pub(crate) fn verdict(&mut self, verdict: &str, lines: &[String], failed: bool) {
        let mut attributes = vec![KeyValue::new("mcpx.verdict", verdict.to_owned())];
        if !lines.is_empty() {
            attributes.push(KeyValue::new("mcpx.violations", lines.join("\n")));
        }
        self.span.add_event("validation", attributes);
        self.span
            .set_attribute(KeyValue::new("mcpx.verdict", verdict.to_owned()));
        if failed {
            self.span.set_status(Status::error(verdict.to_owned()));
        }
    }

    pub(crate) fn end(mut self) {
        self.span.end();
    }
}
