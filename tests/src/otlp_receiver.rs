//! A local OTLP/HTTP trace receiver, as an OpenTelemetry collector is one: `POST /v1/traces`
//! with an `ExportTraceServiceRequest` in protobuf. It keeps every span it is sent, for the
//! test to read; it stops on drop.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use tokio::task::JoinHandle;

use crate::wait::poll_seeing;

/// One span as the receiver got it; ids in lowercase hex, as `traceparent` writes them.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// The `service.name` of the process that sent it.
    pub service: String,
    pub name: String,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// `SpanKind` as OTLP numbers it: 2 server, 3 client.
    pub kind: i32,
    pub attributes: BTreeMap<String, String>,
    /// The HTTP headers of the export request that carried it.
    pub headers: BTreeMap<String, String>,
}

pub const SPAN_KIND_SERVER: i32 = 2;
pub const SPAN_KIND_CLIENT: i32 = 3;

type Spans = Arc<Mutex<Vec<ReceivedSpan>>>;

pub struct OtlpReceiver {
    addr: SocketAddr,
    spans: Spans,
    task: JoinHandle<()>,
}

impl OtlpReceiver {
    pub async fn start() -> OtlpReceiver {
        let spans = Spans::default();
        let app = Router::new()
            .route("/v1/traces", post(receive))
            .with_state(spans.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        OtlpReceiver { addr, spans, task }
    }

    /// The base URL for `[trace] endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.spans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Polls the spans received until `done` holds, for at most `within`; panics naming `what`.
    pub async fn wait_for(
        &self,
        what: &str,
        within: Duration,
        done: impl Fn(&[ReceivedSpan]) -> bool,
    ) -> Vec<ReceivedSpan> {
        let what = format!("the OTLP receiver to get {what}");
        poll_seeing(&what, within, || async {
            let spans = self.spans();
            if done(&spans) {
                Ok(spans)
            } else {
                Err(spans
                    .iter()
                    .map(|s| {
                        format!(
                            "{} {} {}<-{}",
                            s.name, s.trace_id, s.span_id, s.parent_span_id
                        )
                    })
                    .collect::<Vec<_>>())
            }
        })
        .await
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn receive(State(spans): State<Spans>, headers: HeaderMap, body: Bytes) -> Response {
    let protobuf = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes() == b"application/x-protobuf");
    if !protobuf {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "protobuf only").into_response();
    }
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, "not an ExportTraceServiceRequest").into_response();
    };
    let mut received = Vec::new();
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .map(|r| attributes(&r.attributes))
            .and_then(|a| a.get("service.name").cloned())
            .unwrap_or_default();
        for scope_spans in resource_spans.scope_spans {
            for span in scope_spans.spans {
                received.push(ReceivedSpan {
                    service: service.clone(),
                    name: span.name,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    kind: span.kind,
                    attributes: attributes(&span.attributes),
                    headers: headers
                        .iter()
                        .map(|(name, value)| {
                            (
                                name.to_string(),
                                String::from_utf8_lossy(value.as_bytes()).into_owned(),
                            )
                        })
                        .collect(),
                });
            }
        }
    }
    spans
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .extend(received);
    (
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

fn attributes(pairs: &[KeyValue]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value.as_ref().map_or_else(String::new, text),
            )
        })
        .collect()
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
