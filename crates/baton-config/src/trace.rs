//! `[trace]`: the OpenTelemetry export of spans.

use url::Url;

use crate::error::Errors;
use crate::urls::base_url;
use crate::walk::Field;

/// `[trace]`: where the process sends its OpenTelemetry traces. Trace context (`traceparent`)
/// is carried onward whether or not spans are exported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSettings {
    /// The OTLP/HTTP base URL of a collector; spans are POSTed to `<endpoint>/v1/traces`. None,
    /// the default, exports nothing.
    pub endpoint: Option<Url>,
}

impl TraceSettings {
    /// Where spans are POSTed: `<endpoint>/v1/traces`.
    pub fn traces_url(&self) -> Option<String> {
        self.endpoint
            .as_ref()
            .map(|endpoint| format!("{}/v1/traces", endpoint.as_str().trim_end_matches('/')))
    }
}

const KEYS: [&str; 1] = ["endpoint"];

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> TraceSettings {
    let section = field.section("a table like [trace]", errors);
    section.refuse_unknown(&KEYS, errors);
    TraceSettings {
        endpoint: base_url(
            &section.field("endpoint"),
            "http://otel-collector:4318",
            errors,
        ),
    }
}

#[cfg(test)]
mod tests {
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
}
