//! The W3C trace context on the way out: every call to an agent carries the `traceparent` (and
//! `tracestate`) of the context it is made in: the client span of the call, or, when spans are
//! not exported, the context the task came with.

use a2a_client::ServiceParams;
use opentelemetry::propagation::{Injector, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// Adds the current trace context to a call's headers; nothing when there is none.
pub(crate) fn inject(params: &mut ServiceParams) {
    inject_context(&opentelemetry::Context::current(), params);
}

fn inject_context(cx: &opentelemetry::Context, params: &mut ServiceParams) {
    TraceContextPropagator::new().inject_context(cx, &mut Headers(params));
}

struct Headers<'a>(&'a mut ServiceParams);

impl Injector for Headers<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), vec![value]);
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };

    use super::*;

    #[test]
    fn a_call_carries_the_context_it_is_made_in() {
        let cx = opentelemetry::Context::new().with_remote_span_context(SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            TraceState::from_key_value([("vendor", "x")]).unwrap(),
        ));
        let mut params = ServiceParams::new();
        inject_context(&cx, &mut params);
        assert_eq!(
            params["traceparent"],
            ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]
        );
        assert_eq!(params["tracestate"], ["vendor=x"]);

        let _attached = cx.attach();
        let mut current = ServiceParams::new();
        inject(&mut current);
        assert_eq!(current, params);
    }

    #[test]
    fn no_context_no_header() {
        let mut params = ServiceParams::new();
        inject(&mut params);
        assert!(params.is_empty(), "{params:?}");
    }
}
