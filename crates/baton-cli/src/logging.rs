//! Log lines on stderr, at INFO unless `RUST_LOG` says otherwise; stdout stays for results. The
//! lines start as text, and switch to `[log] format` once a command has read its settings.
//!
//! Beside the lines, those of Baton's own `tracing` spans that say what they are to OpenTelemetry
//! (an `otel.kind` field), and the events inside them, become OpenTelemetry spans while traces
//! are exported (`[trace] endpoint`, see [`crate::tracing_export`]), at INFO whatever `RUST_LOG`
//! says. Other spans, like `agent{agent=…}`, are there for the lines only.

use std::io::IsTerminal;
use std::sync::OnceLock;

use baton_config::LogFormat;
use opentelemetry::trace::TraceContextExt;
use tracing::metadata::LevelFilter;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::{FilterExt, Targets, dynamic_filter_fn, filter_fn};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry, reload};

type FormatLayer = Box<dyn Layer<Registry> + Send + Sync>;

static FORMAT: OnceLock<reload::Handle<FormatLayer, Registry>> = OnceLock::new();

/// The crates whose spans are exported: Baton's own (`baton_gateway`, `baton_a2a`, …), never
/// the SDKs' internals.
const EXPORTED_TARGETS: &str = "baton";

/// Starts logging: text lines on stderr, filtered by `RUST_LOG` (INFO by default), and the layer
/// that turns Baton's spans into OpenTelemetry spans. Call it once, first.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (format, handle) = reload::Layer::new(layer(LogFormat::Text));
    let spans = tracing_opentelemetry::layer()
        .with_tracer(crate::tracing_export::GlobalTracer)
        .with_threads(false)
        .with_filter(
            exported()
                .and(filter_fn(says_what_it_is))
                .and(dynamic_filter_fn(|_, _| crate::tracing_export::exporting())),
        );
    tracing_subscriber::registry()
        .with(format.with_filter(filter))
        .with(spans)
        .init();
    FORMAT.set(handle).ok();
}

/// What becomes part of a trace: Baton's spans and events at INFO and above.
fn exported() -> Targets {
    Targets::new()
        .with_target(EXPORTED_TARGETS, Level::INFO)
        .with_default(LevelFilter::OFF)
}

/// Whether a span (or event) belongs in a trace: events do, spans when they name their kind.
fn says_what_it_is(metadata: &Metadata<'_>) -> bool {
    !metadata.is_span() || metadata.fields().field("otel.kind").is_some()
}

/// Writes every line from now on in `format`.
pub fn use_format(format: LogFormat) {
    if format == LogFormat::Text {
        return;
    }
    if let Some(handle) = FORMAT.get() {
        handle.reload(layer(format)).ok();
    }
}

fn layer(format: LogFormat) -> FormatLayer {
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false);
    match format {
        LogFormat::Text => lines
            .with_ansi(wants_colour(
                std::io::stderr().is_terminal(),
                std::env::var_os("NO_COLOR").as_deref(),
            ))
            .boxed(),
        LogFormat::Json => lines
            .json()
            .with_ansi(false)
            .map_event_format(WithTraceIds)
            .boxed(),
    }
}

/// A JSON line format with the `trace_id` and `span_id` of the OpenTelemetry span the event is
/// in, when spans are exported, so a log line leads to its trace.
struct WithTraceIds<F>(F);

impl<S, N, F> FormatEvent<S, N> for WithTraceIds<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        if let Some((trace_id, span_id)) = trace_ids(ctx)
            && let Some(end) = line.rfind('}')
        {
            line.insert_str(
                end,
                &format!(",\"trace_id\":\"{trace_id}\",\"span_id\":\"{span_id}\""),
            );
        }
        writer.write_str(&line)
    }
}

/// The ids of the innermost exported span around the event being formatted.
fn trace_ids<S, N>(ctx: &FmtContext<'_, S, N>) -> Option<(String, String)>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    if !crate::tracing_export::exporting() {
        return None;
    }
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    ctx.event_scope()?.find_map(|span| {
        let cx = tracing_opentelemetry::get_otel_context(&span.id(), &dispatch)?;
        let otel_span = cx.span();
        let ids = otel_span.span_context();
        ids.is_valid()
            .then(|| (ids.trace_id().to_string(), ids.span_id().to_string()))
    })
}

/// Whether text lines are coloured: on a terminal, unless `NO_COLOR` is set to anything but
/// the empty string (no-color.org).
fn wants_colour(on_a_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    on_a_terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_coloured_only_on_a_terminal_without_no_color() {
        use std::ffi::OsStr;
        assert!(wants_colour(true, None));
        assert!(wants_colour(true, Some(OsStr::new(""))));
        assert!(!wants_colour(true, Some(OsStr::new("1"))));
        assert!(!wants_colour(false, None));
    }

    #[test]
    fn baton_crates_are_exported_and_the_sdks_are_not() {
        let exported = exported();
        for target in ["baton_gateway::trace_context", "baton_a2a::remote_agent"] {
            assert!(exported.would_enable(target, &Level::INFO), "{target}");
            assert!(!exported.would_enable(target, &Level::DEBUG), "{target}");
        }
        for target in ["temporalio_sdk_core::worker", "h2::codec", "hyper"] {
            assert!(!exported.would_enable(target, &Level::ERROR), "{target}");
        }
    }

    #[test]
    fn only_spans_that_name_their_kind_are_traced() {
        let seen = tracing::subscriber::with_default(Registry::default(), || {
            let kinds = [
                tracing::info_span!("a2a.client", otel.kind = "client"),
                tracing::info_span!("agent", agent = "front-desk"),
            ];
            kinds.map(|span| says_what_it_is(span.metadata().expect("an enabled span")))
        });
        assert_eq!(seen, [true, false]);
    }
}
