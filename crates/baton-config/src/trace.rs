//! `[trace]`: the OpenTelemetry export of spans, configured by the file or by OpenTelemetry's own
//! environment variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_TRACES_SAMPLER`, …), the file
//! winning where it says something.

use url::Url;

use crate::error::Errors;
use crate::urls::base_url;
use crate::walk::Field;

/// `[trace]`: where the process sends its OpenTelemetry traces, and which it samples. Trace
/// context (`traceparent`) is carried onward whether or not spans are exported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSettings {
    /// The OTLP/HTTP base URL of a collector (`trace.endpoint`, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`); spans are POSTed to `<endpoint>/v1/traces`. None, the
    /// default, exports nothing.
    pub endpoint: Option<Url>,
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: the full URL spans are POSTed to, as given, when
    /// the file sets no endpoint.
    pub traces_endpoint: Option<Url>,
    /// `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`; by default the caller's decision,
    /// and every new trace.
    pub sampler: TraceSampler,
}

impl TraceSettings {
    /// Where spans are POSTed: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, else
    /// `<endpoint>/v1/traces`.
    pub fn traces_url(&self) -> Option<String> {
        if let Some(url) = &self.traces_endpoint {
            return Some(url.to_string());
        }
        self.endpoint
            .as_ref()
            .map(|endpoint| format!("{}/v1/traces", endpoint.as_str().trim_end_matches('/')))
    }
}

/// Which traces are sampled: OpenTelemetry's samplers, by the names of `OTEL_TRACES_SAMPLER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceSampler {
    /// Whether a span with a parent follows the parent's decision (`parentbased_*`); `root`
    /// then decides only for new traces.
    pub parent_based: bool,
    /// The decision for a trace (or, parent-based, a new trace).
    pub root: RootSampler,
}

impl Default for TraceSampler {
    fn default() -> Self {
        TraceSampler {
            parent_based: true,
            root: RootSampler::AlwaysOn,
        }
    }
}

/// The decision of a sampler that has no parent to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSampler {
    /// Every trace.
    AlwaysOn,
    /// No trace.
    AlwaysOff,
    /// A share of the traces, by trace id, in millionths (`OTEL_TRACES_SAMPLER_ARG` 0.25 is
    /// 250 000).
    TraceIdRatio(u32),
}

const KEYS: [&str; 1] = ["endpoint"];
const EXAMPLE: &str = "http://otel-collector:4318";
const SAMPLERS: &str = "always_on, always_off, traceidratio, parentbased_always_on, \
    parentbased_always_off, parentbased_traceidratio";

pub(crate) fn read(
    field: Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> TraceSettings {
    let section = field.section("a table like [trace]", errors);
    section.refuse_unknown(&KEYS, errors);
    let variable = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let endpoint_field = section.field("endpoint");
    let from_file = base_url(&endpoint_field, EXAMPLE, errors);
    let disabled = variable("OTEL_SDK_DISABLED")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || variable("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none");
    if let Some(exporter) = variable("OTEL_TRACES_EXPORTER")
        && !matches!(exporter.trim(), "otlp" | "none")
    {
        errors.push(
            "OTEL_TRACES_EXPORTER",
            format!("Baton exports traces with otlp only (or none) (got {exporter:?})"),
        );
    }
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(protocol) = variable(name)
            && protocol.trim() != "http/protobuf"
        {
            errors.push(
                name,
                format!("Baton exports OTLP over http/protobuf only (got {protocol:?})"),
            );
        }
    }
    let from_env = |name: &str, errors: &mut Errors| {
        let value = toml::Value::String(variable(name)?);
        base_url(&Field::detached(name.to_string(), &value), EXAMPLE, errors)
    };
    let (endpoint, traces_endpoint) = if disabled {
        (None, None)
    } else if from_file.is_some() || endpoint_field.is_set() {
        (from_file, None)
    } else {
        (
            from_env("OTEL_EXPORTER_OTLP_ENDPOINT", errors),
            from_env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", errors),
        )
    };
    TraceSettings {
        endpoint,
        traces_endpoint,
        sampler: read_sampler(
            variable("OTEL_TRACES_SAMPLER").as_deref(),
            variable("OTEL_TRACES_SAMPLER_ARG").as_deref(),
            errors,
        ),
    }
}

/// `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) with its ratio argument.
fn read_sampler(name: Option<&str>, argument: Option<&str>, errors: &mut Errors) -> TraceSampler {
    let name = name.map_or("parentbased_always_on", str::trim);
    let (parent_based, root) = match name.strip_prefix("parentbased_") {
        Some(root) => (true, root),
        None => (false, name),
    };
    let root = match root {
        "always_on" => RootSampler::AlwaysOn,
        "always_off" => RootSampler::AlwaysOff,
        "traceidratio" => RootSampler::TraceIdRatio(read_ratio(argument, errors)),
        _ => {
            errors.push(
                "OTEL_TRACES_SAMPLER",
                format!("must be one of {SAMPLERS} (got {name:?})"),
            );
            return TraceSampler::default();
        }
    };
    TraceSampler { parent_based, root }
}

/// `OTEL_TRACES_SAMPLER_ARG`: a share from 0 to 1, in millionths; 1 when unset.
fn read_ratio(argument: Option<&str>, errors: &mut Errors) -> u32 {
    let Some(text) = argument else {
        return 1_000_000;
    };
    match text.trim().parse::<f64>() {
        Ok(ratio) if (0.0..=1.0).contains(&ratio) => (ratio * 1_000_000.0).round() as u32,
        _ => {
            errors.push(
                "OTEL_TRACES_SAMPLER_ARG",
                format!("must be a number from 0 to 1 for a traceidratio sampler (got {text:?})"),
            );
            1_000_000
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RootSampler, TraceSampler};
    use crate::test_support::*;

    #[test]
    fn nothing_is_exported_by_default() {
        let trace = parse("").unwrap().trace;
        assert_eq!(trace.endpoint, None);
        assert_eq!(trace.traces_url(), None);
    }

    #[test]
    fn spans_go_to_the_traces_path_of_the_endpoint() {
        for (endpoint, url) in [
            (
                "http://otel-collector:4318",
                "http://otel-collector:4318/v1/traces",
            ),
            (
                "https://otel.example.com/",
                "https://otel.example.com/v1/traces",
            ),
            (
                "http://127.0.0.1:4318/otlp",
                "http://127.0.0.1:4318/otlp/v1/traces",
            ),
        ] {
            let trace = parse(&format!("[trace]\nendpoint = \"{endpoint}\""))
                .unwrap()
                .trace;
            assert_eq!(trace.traces_url().as_deref(), Some(url), "{endpoint}");
        }
    }

    #[test]
    fn the_endpoint_must_be_an_http_url() {
        assert_only_error(
            "[trace]\nendpoint = \"otel-collector:4318\"",
            "trace.endpoint",
            "must be an absolute http or https URL like \"http://otel-collector:4318\" (got \"otel-collector:4318\")",
        );
        assert_only_error(
            "[trace]\nendpoint = 4318",
            "trace.endpoint",
            "must be a string like \"http://otel-collector:4318\" (got an integer)",
        );
        assert_only_error(
            "[trace]\nsample = 1",
            "trace.sample",
            "unknown setting (allowed: endpoint)",
        );
    }

    #[test]
    fn opentelemetry_s_variables_turn_export_on_unless_the_file_says_where() {
        let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")];
        let trace = parse_with_env("", &env).unwrap().trace;
        assert_eq!(
            trace.traces_url().as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        let trace = parse_with_env("[trace]\nendpoint = \"http://file:4318\"", &env)
            .unwrap()
            .trace;
        assert_eq!(
            trace.traces_url().as_deref(),
            Some("http://file:4318/v1/traces")
        );
        let traces = [
            env[0],
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://collector:4318/custom/traces",
            ),
        ];
        let trace = parse_with_env("", &traces).unwrap().trace;
        assert_eq!(
            trace.traces_url().as_deref(),
            Some("http://collector:4318/custom/traces"),
            "the signal's own endpoint is used as is"
        );
        for off in [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ] {
            let trace = parse_with_env("[trace]\nendpoint = \"http://file:4318\"", &[env[0], off])
                .unwrap()
                .trace;
            assert_eq!(trace.traces_url(), None, "{off:?}");
        }
    }

    #[test]
    fn the_sampler_is_opentelemetry_s() {
        let sampler = |name: &str, arg: Option<&str>| {
            let mut env = vec![("OTEL_TRACES_SAMPLER", name)];
            if let Some(arg) = arg {
                env.push(("OTEL_TRACES_SAMPLER_ARG", arg));
            }
            parse_with_env("", &env).map(|s| s.trace.sampler)
        };
        assert_eq!(parse("").unwrap().trace.sampler, TraceSampler::default());
        assert_eq!(
            sampler("always_off", None).unwrap(),
            TraceSampler {
                parent_based: false,
                root: RootSampler::AlwaysOff
            }
        );
        assert_eq!(
            sampler("parentbased_traceidratio", Some("0.25")).unwrap(),
            TraceSampler {
                parent_based: true,
                root: RootSampler::TraceIdRatio(250_000)
            }
        );
        assert_eq!(
            sampler("traceidratio", None).unwrap().root,
            RootSampler::TraceIdRatio(1_000_000)
        );
        assert_only_error_with_env(
            "",
            &[("OTEL_TRACES_SAMPLER", "jaeger_remote")],
            "OTEL_TRACES_SAMPLER",
            "must be one of always_on, always_off, traceidratio, parentbased_always_on, \
             parentbased_always_off, parentbased_traceidratio (got \"jaeger_remote\")",
        );
        assert_only_error_with_env(
            "",
            &[
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "1.5"),
            ],
            "OTEL_TRACES_SAMPLER_ARG",
            "must be a number from 0 to 1 for a traceidratio sampler (got \"1.5\")",
        );
    }

    #[test]
    fn only_otlp_over_http_protobuf_is_taken() {
        assert_only_error_with_env(
            "",
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "Baton exports OTLP over http/protobuf only (got \"grpc\")",
        );
        assert_only_error_with_env(
            "",
            &[("OTEL_TRACES_EXPORTER", "zipkin")],
            "OTEL_TRACES_EXPORTER",
            "Baton exports traces with otlp only (or none) (got \"zipkin\")",
        );
        assert_only_error_with_env(
            "",
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "must be an absolute http or https URL like \"http://otel-collector:4318\" (got \"collector:4318\")",
        );
    }
}
