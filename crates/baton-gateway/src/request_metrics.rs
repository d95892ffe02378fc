//! `baton_gateway_requests_total` and `baton_gateway_request_duration_seconds`: every request the
//! gateway answers, by its binding and HTTP status, refusals included (401, 413, 429, 503 say
//! which limit refused it). A stream counts the time to its first byte.
//! `baton_gateway_refusals_total` counts the refusals by their A2A reason, in every binding (a
//! refused gRPC call answers HTTP 200, its status in `grpc-status`).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::refusals::Refused;

/// Whose gateway this is, and where its JSON-RPC endpoint is.
pub(crate) struct RequestMetrics {
    pub(crate) agent: String,
    pub(crate) base_path: String,
}

pub(crate) async fn count_requests(
    State(metrics): State<Arc<RequestMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let binding = binding_of(&metrics.base_path, &request);
    let started = Instant::now();
    let response = next.run(request).await;
    let recorder = baton_metrics::global();
    recorder.gateway_request(
        &metrics.agent,
        binding,
        response.status().as_u16(),
        started.elapsed(),
    );
    if let Some(Refused(reason)) = response.extensions().get::<Refused>() {
        recorder.gateway_refusal(&metrics.agent, binding, reason);
    }
    response
}

/// Which surface a request is for: `grpc`, `card`, `push`, `jsonrpc` (a POST to the base path)
/// or `rest` (the HTTP+JSON binding, and anything else).
fn binding_of(base_path: &str, request: &Request) -> &'static str {
    let path = request.uri().path();
    let is_grpc = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc"));
    if is_grpc {
        "grpc"
    } else if path.ends_with("/.well-known/agent-card.json") {
        "card"
    } else if path.contains("/a2a/push/") {
        "push"
    } else if request.method() == Method::POST
        && path.trim_end_matches('/') == base_path.trim_end_matches('/')
    {
        "jsonrpc"
    } else {
        "rest"
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;

    use super::*;

    fn request(method: Method, path: &str, content_type: &str) -> Request {
        axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::empty())
            .unwrap()
    }

    #[test]
    fn each_surface_is_told_apart() {
        let json = "application/json";
        for (base, method, path, content_type, binding) in [
            ("", Method::POST, "/", json, "jsonrpc"),
            ("/a2a", Method::POST, "/a2a/", json, "jsonrpc"),
            ("", Method::POST, "/message:send", json, "rest"),
            ("", Method::GET, "/tasks/t-1", json, "rest"),
            (
                "",
                Method::GET,
                "/.well-known/agent-card.json",
                json,
                "card",
            ),
            ("", Method::POST, "/a2a/push/t-1.1", json, "push"),
            (
                "",
                Method::POST,
                "/lf.a2a.v1.A2AService/GetTask",
                "application/grpc",
                "grpc",
            ),
        ] {
            assert_eq!(
                binding_of(base, &request(method.clone(), path, content_type)),
                binding,
                "{method} {path}"
            );
        }
    }
}
