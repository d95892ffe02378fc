//! The W3C trace context of an inbound A2A call: the caller's `traceparent` (and `tracestate`)
//! is the parent of a server span for the call, and the context every Temporal call of the
//! call carries on (the Temporal client puts it in the workflow's headers). Without an exporter
//! the span is a no-op and the caller's own context goes on unchanged.
//!
//! One span per A2A method, named `A2AService/<Method>` (kind server), with `rpc.system`
//! `a2a`, `rpc.method`, `baton.agent` and, once known, `a2a.task_id`. Streams are traced until
//! they open, not while they run. A push to the receiver gets a span of its own (see
//! `push_receiver`), a child of the pushing agent's `traceparent` if it sends one.

use std::future::Future;
use std::sync::Arc;

use a2a::{
    A2AError, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};
use a2a_server::{RequestHandler, ServiceParams};
use async_trait::async_trait;
use futures::stream::BoxStream;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::FutureExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Instrument;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The trace context of a call's headers; empty when it has none (or an invalid one).
pub(crate) fn caller_context(params: &ServiceParams) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&Headers(params))
}

/// The trace context of an HTTP request's headers; empty when it has none.
pub(crate) fn request_context(headers: &axum::http::HeaderMap) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&HttpHeaders(headers))
}

struct HttpHeaders<'a>(&'a axum::http::HeaderMap);

impl Extractor for HttpHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(axum::http::HeaderName::as_str).collect()
    }
}

struct Headers<'a>(&'a ServiceParams);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(&key.to_ascii_lowercase())
            .and_then(|values| values.first())
            .map(String::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// A handler whose every call runs in a server span, a child of the caller's trace context.
pub(crate) struct Traced<H> {
    inner: Arc<H>,
    agent: String,
}

impl<H> Traced<H> {
    pub(crate) fn new(inner: Arc<H>, agent: &str) -> Self {
        Traced {
            inner,
            agent: agent.to_string(),
        }
    }

    /// Runs `call` in the span of `method`, with `task_id` when the request names one, and
    /// counts it in `baton_gateway_calls_total` by its outcome (whatever the binding).
    async fn traced<T>(
        &self,
        params: &ServiceParams,
        method: &'static str,
        task_id: Option<&str>,
        call: impl Future<Output = Result<T, A2AError>>,
    ) -> Result<T, A2AError> {
        let parent = caller_context(params);
        let span = tracing::info_span!(
            "a2a.server",
            otel.name = %format_args!("A2AService/{method}"),
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            rpc.system = "a2a",
            rpc.method = method,
            baton.agent = %self.agent,
            a2a.task_id = Empty,
        );
        if let Some(task_id) = task_id {
            span.record("a2a.task_id", task_id);
        }
        // Fails only when the span is not exported, which the caller's context below covers.
        let _ = span.set_parent(parent.clone());
        // The caller's context is current around the span, so that without an exporter the
        // Temporal calls inside carry it on as it came.
        let started = std::time::Instant::now();
        let result = call.instrument(span.clone()).with_context(parent).await;
        if let Err(error) = &result {
            span.record("otel.status_code", "error");
            span.record("otel.status_description", error.to_string());
        }
        let outcome = match &result {
            Ok(_) => "ok",
            Err(error) => a2a::error_reason(error.code),
        };
        baton_metrics::global().gateway_call(&self.agent, method, outcome, started.elapsed());
        result
    }
}

#[async_trait]
impl<H: RequestHandler> RequestHandler for Traced<H> {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        let task_id = req.message.task_id.clone();
        let call = async {
            let answer = self.inner.send_message(params, req).await;
            if let Ok(SendMessageResponse::Task(task)) = &answer {
                // A new task's id is known only now.
                tracing::Span::current().record("a2a.task_id", task.id.as_str());
            }
            answer
        };
        self.traced(params, "SendMessage", task_id.as_deref(), call)
            .await
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let task_id = req.message.task_id.clone();
        let call = self.inner.send_streaming_message(params, req);
        self.traced(params, "SendStreamingMessage", task_id.as_deref(), call)
            .await
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        let task_id = req.id.clone();
        let call = self.inner.get_task(params, req);
        self.traced(params, "GetTask", Some(&task_id), call).await
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        let call = self.inner.list_tasks(params, req);
        self.traced(params, "ListTasks", None, call).await
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        let task_id = req.id.clone();
        let call = self.inner.cancel_task(params, req);
        self.traced(params, "CancelTask", Some(&task_id), call)
            .await
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let task_id = req.id.clone();
        let call = self.inner.subscribe_to_task(params, req);
        self.traced(params, "SubscribeToTask", Some(&task_id), call)
            .await
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let task_id = req.task_id.clone();
        let call = self.inner.create_push_config(params, req);
        let method = "CreateTaskPushNotificationConfig";
        self.traced(params, method, Some(&task_id), call).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let task_id = req.task_id.clone();
        let call = self.inner.get_push_config(params, req);
        let method = "GetTaskPushNotificationConfig";
        self.traced(params, method, Some(&task_id), call).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        let task_id = req.task_id.clone();
        let call = self.inner.list_push_configs(params, req);
        let method = "ListTaskPushNotificationConfigs";
        self.traced(params, method, Some(&task_id), call).await
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        let task_id = req.task_id.clone();
        let call = self.inner.delete_push_config(params, req);
        let method = "DeleteTaskPushNotificationConfig";
        self.traced(params, method, Some(&task_id), call).await
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        let call = self.inner.get_extended_agent_card(params, req);
        self.traced(params, "GetExtendedAgentCard", None, call)
            .await
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::TraceContextExt;

    use super::*;

    fn params(headers: &[(&str, &str)]) -> ServiceParams {
        headers
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
            .collect()
    }

    #[test]
    fn the_callers_traceparent_is_the_parent() {
        let cx = caller_context(&params(&[
            (
                "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
            ("tracestate", "vendor=x"),
        ]));
        let span = cx.span();
        let parent = span.span_context();
        assert!(parent.is_valid() && parent.is_remote() && parent.is_sampled());
        assert_eq!(
            parent.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(parent.span_id().to_string(), "00f067aa0ba902b7");
        assert_eq!(parent.trace_state().header(), "vendor=x");
    }

    #[test]
    fn an_http_request_carries_its_context_too() {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
                .parse()
                .unwrap(),
        );
        let cx = request_context(&headers);
        let span = cx.span();
        let parent = span.span_context();
        assert!(parent.is_valid() && !parent.is_sampled());
        assert_eq!(parent.span_id().to_string(), "00f067aa0ba902b7");
        assert!(
            !request_context(&axum::http::HeaderMap::new())
                .span()
                .span_context()
                .is_valid()
        );
    }

    #[test]
    fn a_missing_or_malformed_traceparent_starts_no_trace() {
        for headers in [
            vec![],
            vec![("traceparent", "not a trace parent")],
            vec![(
                "traceparent",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            )],
        ] {
            let cx = caller_context(&params(&headers));
            assert!(!cx.span().span_context().is_valid(), "{headers:?}");
        }
    }
}
