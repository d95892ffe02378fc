//! OpenTelemetry traces: the W3C trace context carried through Temporal, and, with
//! `[trace] endpoint` or OpenTelemetry's own variables set, spans exported over OTLP/HTTP, as
//! OpenTelemetry's conventions say: `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name the
//! service, `OTEL_EXPORTER_OTLP_HEADERS` add headers, `OTEL_TRACES_SAMPLER` samples.
//!
//! Every Temporal client of the process carries the SDK's OpenTelemetry plugin
//! ([`client_options`]): it puts the trace context in the `_tracer-data` header of every workflow
//! start, update, signal and activity, which history keeps, so it survives replay and worker
//! restarts; its workflow spans take their ids from the workflow's own randomness, so a replay
//! makes the same ones and exports none of them. The gateway and the A2A client carry the
//! context from and to `traceparent`. Without an endpoint there is no tracer provider: the spans
//! are no-ops that pass the caller's context on unchanged.
//!
//! Export never holds up a task: spans are queued (bounded, dropped beyond it) and sent in
//! batches from a thread of their own, each request bounded; [`shutdown`] sends what is left
//! within a bound.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use baton_config::{RootSampler, TraceSampler, TraceSettings};
use opentelemetry::trace::{Link, SpanBuilder, SpanKind, TraceContextExt, TraceId, Tracer};
use opentelemetry::{Context, KeyValue, global};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SamplingDecision, SamplingResult,
    SdkTracerProvider, ShouldSample, SpanData, SpanExporter,
};
use temporalio_client::ClientOptions;
use temporalio_sdk::opentelemetry::{OpenTelemetryPlugin, WorkflowIdGenerator};

/// The longest one export request may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest shutdown waits for the spans still queued to be sent.
pub const FLUSH_BOUND: Duration = Duration::from_secs(5);
/// Spans waiting to be sent at most; more are dropped.
const MAX_QUEUED_SPANS: usize = 2048;
/// Spans in one export request at most.
const MAX_BATCH: usize = 512;
/// How often the queue is sent.
const EXPORT_EVERY: Duration = Duration::from_secs(1);
/// The instrumentation scope of Baton's own spans.
const SCOPE: &str = "baton";

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// The options of a Temporal client of the namespace that carries trace context in Temporal
/// headers, for itself and for the workers built on it.
pub fn client_options(namespace: String) -> ClientOptions {
    ClientOptions::new(namespace)
        .plugin(OpenTelemetryPlugin::builder().build())
        .build()
}

/// Starts exporting spans to `trace.endpoint` (or `OTEL_EXPORTER_OTLP_*`), if set, as service
/// `service` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names it. Once per
/// process; a second call keeps the first exporter.
pub fn start(trace: &TraceSettings, service: &str) -> anyhow::Result<()> {
    let Some(url) = trace.traces_url() else {
        return Ok(());
    };
    if PROVIDER.get().is_some() {
        return Ok(());
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .with_context(|| format!("trace.endpoint: cannot export spans to {url}"))?;
    let batches = BatchConfigBuilder::default()
        .with_max_queue_size(MAX_QUEUED_SPANS)
        .with_max_export_batch_size(MAX_BATCH)
        .with_scheduled_delay(EXPORT_EVERY)
        .build();
    let processor = BatchSpanProcessor::builder(Reporting::new(exporter, url.clone()))
        .with_batch_config(batches)
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_id_generator(WorkflowIdGenerator::default())
        .with_sampler(WithoutPolls(sampler(trace.sampler)))
        .with_resource(resource(service, &|name| std::env::var(name).ok()))
        .build();
    if PROVIDER.set(provider.clone()).is_err() {
        return Ok(());
    }
    global::set_tracer_provider(provider);
    EXPORTING.store(true, Ordering::Relaxed);
    tracing::info!(endpoint = %url, "exporting traces to {url}");
    Ok(())
}

/// OpenTelemetry's sampler for `setting`.
fn sampler(setting: TraceSampler) -> Sampler {
    let root = match setting.root {
        RootSampler::AlwaysOn => Sampler::AlwaysOn,
        RootSampler::AlwaysOff => Sampler::AlwaysOff,
        RootSampler::TraceIdRatio(millionths) => {
            Sampler::TraceIdRatioBased(f64::from(millionths) / 1_000_000.0)
        }
    };
    if setting.parent_based {
        Sampler::ParentBased(Box::new(root))
    } else {
        root
    }
}

/// The process's resource: OpenTelemetry's detectors (`OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, the SDK's own), Baton's version, and `service` as the service's
/// name when the environment names none.
fn resource(service: &str, env: &dyn Fn(&str) -> Option<String>) -> Resource {
    let named_by_env = env("OTEL_SERVICE_NAME").is_some_and(|name| !name.trim().is_empty())
        || env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|attributes| {
            attributes
                .split(',')
                .any(|pair| pair.trim_start().starts_with("service.name="))
        });
    let builder = Resource::builder()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if named_by_env {
        builder.build()
    } else {
        builder.with_service_name(service.to_string()).build()
    }
}

/// Whether spans are exported: Baton's `tracing` spans become OpenTelemetry spans only then.
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Sends the spans still queued, waiting at most [`FLUSH_BOUND`], and stops exporting.
pub async fn shutdown() {
    let Some(provider) = PROVIDER.get().cloned() else {
        return;
    };
    EXPORTING.store(false, Ordering::Relaxed);
    // The export thread is waited on from a thread that may block.
    let flushed =
        tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(FLUSH_BOUND)).await;
    if let Ok(Err(error)) = flushed {
        tracing::warn!(
            "traces: the last spans were not all sent within {}s: {error}",
            FLUSH_BOUND.as_secs()
        );
    }
}

/// The tracer of the process's provider at the time of each span: the OpenTelemetry layer of
/// the log subscriber is built before the settings are read, and the provider after.
#[derive(Debug, Clone, Copy)]
pub struct GlobalTracer;

impl Tracer for GlobalTracer {
    type Span = global::BoxedSpan;

    fn build_with_context(&self, builder: SpanBuilder, parent_cx: &Context) -> Self::Span {
        global::tracer(Cow::Borrowed(SCOPE)).build_with_context(builder, parent_cx)
    }
}

/// Samples as the caller asked (a new trace is sampled), except the reads that poll a task:
/// a gateway stream or a waiting call queries its workflow every few hundred milliseconds, and
/// a span for each would bury the trace.
#[derive(Debug, Clone)]
struct WithoutPolls(Sampler);

/// Span names of the Temporal plugin for reads of a workflow.
fn is_poll(name: &str) -> bool {
    name.starts_with("QueryWorkflow:")
        || name.starts_with("HandleQuery:")
        || name == "DescribeWorkflow"
}

impl ShouldSample for WithoutPolls {
    fn should_sample(
        &self,
        parent_context: Option<&Context>,
        trace_id: TraceId,
        name: &str,
        span_kind: &SpanKind,
        attributes: &[KeyValue],
        links: &[Link],
    ) -> SamplingResult {
        if is_poll(name) {
            return SamplingResult {
                decision: SamplingDecision::Drop,
                attributes: Vec::new(),
                trace_state: parent_context
                    .map(|cx| cx.span().span_context().trace_state().clone())
                    .unwrap_or_default(),
            };
        }
        self.0
            .should_sample(parent_context, trace_id, name, span_kind, attributes, links)
    }
}

/// The OTLP exporter, saying in the log once that export fails, and once that it works again.
#[derive(Debug)]
struct Reporting<E> {
    inner: E,
    url: String,
    failing: AtomicBool,
}

impl<E> Reporting<E> {
    fn new(inner: E, url: String) -> Self {
        Reporting {
            inner,
            url,
            failing: AtomicBool::new(false),
        }
    }

    fn note(&self, result: &OTelSdkResult, spans: usize) {
        match result {
            Err(error) if !self.failing.swap(true, Ordering::Relaxed) => tracing::warn!(
                endpoint = %self.url,
                "traces cannot be exported to {} ({error}); {spans} spans dropped, tasks go on \
                 and export is retried with the next batch",
                self.url
            ),
            Ok(()) if self.failing.swap(false, Ordering::Relaxed) => {
                tracing::info!(endpoint = %self.url, "traces are exported to {} again", self.url);
            }
            _ => {}
        }
    }
}

impl<E: SpanExporter> SpanExporter for Reporting<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        self.note(&result, spans);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceState};

    use super::*;

    fn decision(name: &str, parent: Option<&Context>) -> SamplingDecision {
        WithoutPolls(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
            .should_sample(parent, TraceId::from(7), name, &SpanKind::Client, &[], &[])
            .decision
    }

    fn remote_parent(flags: TraceFlags) -> Context {
        Context::new().with_remote_span_context(SpanContext::new(
            TraceId::from(7),
            SpanId::from(9),
            flags,
            true,
            TraceState::default(),
        ))
    }

    #[test]
    fn the_environment_s_service_name_wins_over_baton_s() {
        let name = |env: &[(&str, &str)]| {
            let env: Vec<(String, String)> = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let resource = resource("baton-desk", &|name| {
                env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
            });
            resource
                .get(&opentelemetry::Key::new("service.name"))
                .map(|value| value.to_string())
        };
        assert_eq!(name(&[]).as_deref(), Some("baton-desk"));
        // The name itself comes from OpenTelemetry's detector, which reads the process's own
        // variables; Baton's part is not to overwrite it.
        for named in [
            ("OTEL_SERVICE_NAME", "desk-prod"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod, service.name=desk-prod",
            ),
        ] {
            assert_ne!(name(&[named]).as_deref(), Some("baton-desk"), "{named:?}");
        }
    }

    #[test]
    fn the_sampler_is_the_one_configured() {
        let ratio = TraceSampler {
            parent_based: false,
            root: RootSampler::TraceIdRatio(250_000),
        };
        assert_eq!(
            format!("{:?}", sampler(ratio)),
            format!("{:?}", Sampler::TraceIdRatioBased(0.25))
        );
        assert_eq!(
            format!("{:?}", sampler(TraceSampler::default())),
            format!("{:?}", Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
        );
        let off = TraceSampler {
            parent_based: false,
            root: RootSampler::AlwaysOff,
        };
        assert_eq!(
            WithoutPolls(sampler(off))
                .should_sample(
                    None,
                    TraceId::from(7),
                    "RunWorkflow:TaskWorkflow",
                    &SpanKind::Internal,
                    &[],
                    &[]
                )
                .decision,
            SamplingDecision::Drop
        );
    }

    #[test]
    fn polls_are_never_sampled_and_the_rest_follows_the_caller() {
        let sampled = remote_parent(TraceFlags::SAMPLED);
        let unsampled = remote_parent(TraceFlags::default());
        for poll in ["QueryWorkflow:task", "HandleQuery:task", "DescribeWorkflow"] {
            assert_eq!(decision(poll, Some(&sampled)), SamplingDecision::Drop);
            assert_eq!(decision(poll, None), SamplingDecision::Drop);
        }
        for name in [
            "UpdateWithStartWorkflow:TaskWorkflow",
            "RunWorkflow:TaskWorkflow",
            "RunActivity:start_agent_task",
        ] {
            assert_eq!(
                decision(name, Some(&sampled)),
                SamplingDecision::RecordAndSample
            );
            assert_eq!(decision(name, None), SamplingDecision::RecordAndSample);
            assert_eq!(decision(name, Some(&unsampled)), SamplingDecision::Drop);
        }
    }

    #[derive(Debug)]
    struct Answers(Result<(), ()>);

    impl SpanExporter for Answers {
        async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
            self.0.map_err(|()| {
                opentelemetry_sdk::error::OTelSdkError::InternalFailure("refused".into())
            })
        }
    }

    #[test]
    fn a_failing_collector_is_noted_once_until_it_answers_again() {
        let reporting = Reporting::new(Answers(Err(())), "http://127.0.0.1:9/v1/traces".into());
        let failed: OTelSdkResult = futures::executor::block_on(reporting.export(Vec::new()));
        assert!(failed.is_err());
        assert!(reporting.failing.load(Ordering::Relaxed));
        reporting.note(&Ok(()), 0);
        assert!(!reporting.failing.load(Ordering::Relaxed));
    }
}
