//! Refusals made in front of the A2A routers (the body limit, the rate limit) come back as A2A
//! errors in the binding the caller used: a JSON-RPC error object for a POST to the JSON-RPC
//! endpoint, a gRPC status with its `ErrorInfo` for a gRPC call, and an HTTP+JSON
//! `google.rpc.Status` for everything else. Outside gRPC the HTTP status stays 413 or 429, so
//! a client that reads only the status still understands.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tonic_types::{ErrorDetails, StatusExt};

/// Whether a request is a gRPC call (`application/grpc`, `application/grpc+proto`, …).
pub fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"))
}

/// Which of the two bindings a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    JsonRpc,
    HttpJson,
}

/// The JSON-RPC endpoint is the interface URL, a POST to `base_path` with or without its
/// trailing slash; every other route is HTTP+JSON.
pub fn binding_of(method: &Method, path: &str, base_path: &str) -> Binding {
    let base = base_path.trim_end_matches('/');
    let at_interface = path == base || path.strip_prefix(base) == Some("/");
    if method == Method::POST && at_interface {
        Binding::JsonRpc
    } else {
        Binding::HttpJson
    }
}

/// What is refused, and how each binding names it: the A2A error a non-JSON error response
/// stands for, by its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    TooLarge,
    RateLimited,
    /// A body the framework could not read as the route's JSON (malformed, wrong type).
    BadRequest,
    /// A `Content-Type` other than JSON.
    NotJson,
    /// No credential, or one that proves nothing (401).
    Unauthenticated,
    /// A credential that does not allow what was asked (403).
    PermissionDenied,
    /// No such route, or no such method on it.
    NoSuchMethod,
    /// Temporal or a worker did not answer in time, or the gateway is at its concurrency limit.
    Unavailable,
    /// A request that was read and holds something this agent does not take.
    InvalidParams,
    /// Anything else at or above 500.
    Internal,
}

impl Refusal {
    /// The refusal an error status stands for; `None` for a success.
    fn of(status: StatusCode) -> Option<Refusal> {
        Some(match status {
            StatusCode::PAYLOAD_TOO_LARGE => Refusal::TooLarge,
            StatusCode::TOO_MANY_REQUESTS => Refusal::RateLimited,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Refusal::NotJson,
            StatusCode::UNAUTHORIZED => Refusal::Unauthenticated,
            StatusCode::FORBIDDEN => Refusal::PermissionDenied,
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => Refusal::NoSuchMethod,
            StatusCode::SERVICE_UNAVAILABLE => Refusal::Unavailable,
            status if status.is_server_error() => Refusal::Internal,
            status if status.is_client_error() => Refusal::BadRequest,
            _ => return None,
        })
    }

    fn reason(self) -> &'static str {
        match self {
            Refusal::TooLarge => "REQUEST_TOO_LARGE",
            Refusal::RateLimited => "RATE_LIMIT_EXCEEDED",
            Refusal::BadRequest | Refusal::NotJson => "INVALID_REQUEST",
            Refusal::InvalidParams => "INVALID_PARAMS",
            Refusal::Unauthenticated => "UNAUTHENTICATED",
            Refusal::PermissionDenied => "PERMISSION_DENIED",
            Refusal::NoSuchMethod => "METHOD_NOT_FOUND",
            Refusal::Unavailable => "UNAVAILABLE",
            Refusal::Internal => "INTERNAL_ERROR",
        }
    }

    /// What the refusal says when the response said nothing of its own.
    fn message(self) -> &'static str {
        match self {
            Refusal::TooLarge => "the request body is over this agent's size limit",
            Refusal::RateLimited => "too many requests from this address; retry after a second",
            Refusal::BadRequest => "the request is not one this route reads",
            Refusal::InvalidParams => "the request's parameters are not ones this agent takes",
            Refusal::NotJson => "the body must be JSON: send Content-Type: application/json",
            Refusal::Unauthenticated => {
                "a credential is needed: see the agent card's securitySchemes"
            }
            Refusal::PermissionDenied => "the credential does not allow this",
            Refusal::NoSuchMethod => "no such method: see the agent card for the interfaces",
            Refusal::Unavailable => "not available right now; retry later",
            Refusal::Internal => "internal error",
        }
    }

    /// JSON-RPC: an oversized, unreadable or unauthenticated request is an Invalid Request; a
    /// flood or an outage gets the generic server error, since JSON-RPC has no code for it. The
    /// ErrorInfo reason (and the HTTP status) tells them apart.
    fn json_rpc_code(self) -> i32 {
        match self {
            Refusal::TooLarge
            | Refusal::BadRequest
            | Refusal::NotJson
            | Refusal::Unauthenticated
            | Refusal::PermissionDenied => -32600,
            Refusal::RateLimited | Refusal::Unavailable => -32000,
            Refusal::NoSuchMethod => -32601,
            Refusal::InvalidParams => -32602,
            Refusal::Internal => -32603,
        }
    }

    fn rpc_status(self) -> &'static str {
        match self {
            Refusal::TooLarge | Refusal::BadRequest | Refusal::NotJson | Refusal::InvalidParams => {
                "INVALID_ARGUMENT"
            }
            Refusal::Unauthenticated => "UNAUTHENTICATED",
            Refusal::PermissionDenied => "PERMISSION_DENIED",
            Refusal::RateLimited => "RESOURCE_EXHAUSTED",
            Refusal::NoSuchMethod => "UNIMPLEMENTED",
            Refusal::Unavailable => "UNAVAILABLE",
            Refusal::Internal => "INTERNAL",
        }
    }

    fn grpc_code(self) -> tonic::Code {
        match self {
            Refusal::TooLarge | Refusal::RateLimited => tonic::Code::ResourceExhausted,
            Refusal::BadRequest | Refusal::NotJson | Refusal::InvalidParams => {
                tonic::Code::InvalidArgument
            }
            Refusal::Unauthenticated => tonic::Code::Unauthenticated,
            Refusal::PermissionDenied => tonic::Code::PermissionDenied,
            Refusal::NoSuchMethod => tonic::Code::Unimplemented,
            Refusal::Unavailable => tonic::Code::Unavailable,
            Refusal::Internal => tonic::Code::Internal,
        }
    }
}

/// The `ErrorInfo` reason of a refused A2A version.
pub const VERSION_NOT_SUPPORTED: &str = "VERSION_NOT_SUPPORTED";

/// The longest text of a framework's own error that is kept as the refusal's message.
const MESSAGE_CHARS: usize = 300;

/// The body of a refusal in `binding`; `said` is what the response said itself, if anything.
pub fn refusal_body(
    binding: Binding,
    refusal: Refusal,
    http_status: StatusCode,
    said: Option<&str>,
) -> Value {
    let details = json!([{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": refusal.reason(),
        "domain": "a2a-protocol.org",
        "metadata": {}
    }]);
    let message: String = said
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map_or_else(
            || refusal.message().to_string(),
            |text| text.chars().take(MESSAGE_CHARS).collect(),
        );
    match binding {
        // The request was not read, so its id is unknown: JSON-RPC says null.
        Binding::JsonRpc => json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": refusal.json_rpc_code(), "message": message, "data": details}
        }),
        Binding::HttpJson => json!({"error": {
            "code": http_status.as_u16(),
            "status": refusal.rpc_status(),
            "message": message,
            "details": details
        }}),
    }
}

/// Every error response is an A2A error in the request's binding, as `application/json`: a
/// `google.rpc.Status` error labelled `application/problem+json` is relabelled; one that is not
/// JSON at all (the body limit's, the rate limit's, a framework's rejection of a malformed or
/// mistyped body, an unknown route) is rewritten, keeping its status and headers (Retry-After).
pub async fn as_a2a_errors(
    State(base_path): State<String>,
    request: Request,
    next: Next,
) -> Response {
    let grpc = is_grpc(request.headers());
    let binding = binding_of(request.method(), request.uri().path(), &base_path);
    let response = next.run(request).await;
    let Some(refusal) = Refusal::of(response.status()) else {
        return response;
    };
    let mut answer = if grpc {
        as_grpc_status(response, refusal).await
    } else {
        in_binding(response, binding, refusal).await
    };
    answer.extensions_mut().insert(Refused(refusal.reason()));
    answer
}

/// The refusal's reason (`RATE_LIMIT_EXCEEDED`, …), on the response of every request refused in
/// front of the A2A handler or by an HTTP error status, for the request metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused(pub &'static str);

async fn in_binding(response: Response, binding: Binding, refusal: Refusal) -> Response {
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|value| value.as_bytes().to_vec())
        .unwrap_or_default();
    if content_type.starts_with(b"application/json") {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if content_type.starts_with(b"application/problem+json") {
        return Response::from_parts(parts, body);
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    let said = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let said = String::from_utf8_lossy(&said);
    let body = Json(refusal_body(binding, refusal, parts.status, Some(&said))).into_response();
    Response::from_parts(parts, body.into_body())
}

/// A gRPC call refused before the gRPC service read it (an HTTP error status, whatever its
/// body says) is answered the way gRPC answers: HTTP 200 with `grpc-status`, the message, and
/// an `ErrorInfo` keeping the reason the refusal gave, so a gRPC client decodes it like any
/// other A2A error.
async fn as_grpc_status(response: Response, refusal: Refusal) -> Response {
    let (parts, body) = response.into_parts();
    let said = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let (message, reason) = said_in(&said);
    // A2A's gRPC binding maps a version it does not serve to FAILED_PRECONDITION, whatever the
    // HTTP status of the refusal.
    let code = match reason.as_deref() {
        Some(VERSION_NOT_SUPPORTED) => tonic::Code::FailedPrecondition,
        _ => refusal.grpc_code(),
    };
    let details = ErrorDetails::with_error_info(
        reason.unwrap_or_else(|| refusal.reason().to_string()),
        "a2a-protocol.org",
        HashMap::new(),
    );
    let status = tonic::Status::with_error_details(
        code,
        message.unwrap_or_else(|| refusal.message().to_string()),
        details,
    );
    let mut grpc: Response = status.into_http();
    if let Some(retry_after) = parts.headers.get(header::RETRY_AFTER) {
        grpc.headers_mut()
            .insert(header::RETRY_AFTER, retry_after.clone());
    }
    grpc
}

/// The message and the `ErrorInfo` reason of an error body in either JSON shape, or its plain
/// text as the message.
fn said_in(body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        return (
            (!text.is_empty()).then(|| text.chars().take(MESSAGE_CHARS).collect()),
            None,
        );
    };
    let error = &json["error"];
    let message = error["message"].as_str().map(str::to_string);
    let details = error.get("details").or_else(|| error.get("data"));
    let reason = details
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|detail| detail["reason"].as_str())
        .map(str::to_string);
    (message, reason)
}

/// A request that was read and is refused for what it holds: JSON-RPC -32602 with the
/// request's id (HTTP 200, as the router answers its own), HTTP+JSON 400 `INVALID_ARGUMENT`.
pub fn invalid_params(binding: Binding, id: Option<Value>, message: &str) -> Response {
    let status = match binding {
        Binding::JsonRpc => StatusCode::OK,
        Binding::HttpJson => StatusCode::BAD_REQUEST,
    };
    let mut body = refusal_body(
        binding,
        Refusal::InvalidParams,
        StatusCode::BAD_REQUEST,
        Some(message),
    );
    if binding == Binding::JsonRpc {
        body["id"] = id.unwrap_or(Value::Null);
    }
    (status, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_post_to_the_interface_url_is_json_rpc() {
        for (method, path, base) in [
            (Method::POST, "/", ""),
            (Method::POST, "", ""),
            (Method::POST, "/agents/front", "/agents/front"),
            (Method::POST, "/agents/front/", "/agents/front"),
            (Method::POST, "/agents/front/", "/agents/front/"),
        ] {
            assert_eq!(
                binding_of(&method, path, base),
                Binding::JsonRpc,
                "{path} under {base:?}"
            );
        }
        for (method, path, base) in [
            (Method::GET, "/", ""),
            (Method::POST, "/message:send", ""),
            (Method::POST, "/agents/front/message:send", "/agents/front"),
            (Method::POST, "/agents/frontdesk", "/agents/front"),
            (Method::POST, "/a2a/push/t.1", ""),
            (Method::GET, "/.well-known/agent-card.json", ""),
        ] {
            assert_eq!(
                binding_of(&method, path, base),
                Binding::HttpJson,
                "{path} under {base:?}"
            );
        }
    }

    #[test]
    fn a_json_rpc_refusal_is_an_error_object_with_a_null_id_and_its_reason() {
        let body = refusal_body(
            Binding::JsonRpc,
            Refusal::TooLarge,
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
        );
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], Value::Null);
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(body["error"]["data"][0]["reason"], "REQUEST_TOO_LARGE");
        let body = refusal_body(
            Binding::JsonRpc,
            Refusal::RateLimited,
            StatusCode::TOO_MANY_REQUESTS,
            None,
        );
        assert_eq!(body["error"]["code"], -32000);
        assert_eq!(body["error"]["data"][0]["reason"], "RATE_LIMIT_EXCEEDED");
    }

    #[test]
    fn an_http_json_refusal_is_a_google_rpc_status_with_its_reason() {
        let body = refusal_body(
            Binding::HttpJson,
            Refusal::RateLimited,
            StatusCode::TOO_MANY_REQUESTS,
            Some(""),
        );
        assert_eq!(body["error"]["code"], 429);
        assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(body["error"]["details"][0]["reason"], "RATE_LIMIT_EXCEEDED");
        let body = refusal_body(
            Binding::HttpJson,
            Refusal::TooLarge,
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
        );
        assert_eq!(body["error"]["code"], 413);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(body["error"]["details"][0]["reason"], "REQUEST_TOO_LARGE");
    }

    #[test]
    fn every_error_status_stands_for_a_refusal_and_a_success_for_none() {
        for (status, refusal) in [
            (StatusCode::PAYLOAD_TOO_LARGE, Refusal::TooLarge),
            (StatusCode::TOO_MANY_REQUESTS, Refusal::RateLimited),
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, Refusal::NotJson),
            (StatusCode::NOT_FOUND, Refusal::NoSuchMethod),
            (StatusCode::METHOD_NOT_ALLOWED, Refusal::NoSuchMethod),
            (StatusCode::SERVICE_UNAVAILABLE, Refusal::Unavailable),
            (StatusCode::INTERNAL_SERVER_ERROR, Refusal::Internal),
            (StatusCode::BAD_REQUEST, Refusal::BadRequest),
            (StatusCode::UNPROCESSABLE_ENTITY, Refusal::BadRequest),
            (StatusCode::UNAUTHORIZED, Refusal::Unauthenticated),
            (StatusCode::FORBIDDEN, Refusal::PermissionDenied),
            (StatusCode::CONFLICT, Refusal::BadRequest),
        ] {
            assert_eq!(Refusal::of(status), Some(refusal), "{status}");
        }
        for status in [
            StatusCode::OK,
            StatusCode::NO_CONTENT,
            StatusCode::NOT_MODIFIED,
        ] {
            assert_eq!(Refusal::of(status), None, "{status}");
        }
    }

    #[test]
    fn a_framework_s_own_words_are_kept_and_bounded() {
        let said = "Failed to parse the request body as JSON: expected value at line 1";
        let body = refusal_body(
            Binding::HttpJson,
            Refusal::BadRequest,
            StatusCode::BAD_REQUEST,
            Some(said),
        );
        assert_eq!(body["error"]["message"], said);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(body["error"]["details"][0]["reason"], "INVALID_REQUEST");
        let long = "x".repeat(10_000);
        let body = refusal_body(
            Binding::HttpJson,
            Refusal::BadRequest,
            StatusCode::BAD_REQUEST,
            Some(&long),
        );
        assert_eq!(
            body["error"]["message"].as_str().unwrap().len(),
            MESSAGE_CHARS
        );
    }

    #[tokio::test]
    async fn a_refused_grpc_call_gets_a_grpc_status_with_the_reason_it_was_given() {
        let refused = (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": {
                "code": 401, "status": "UNAUTHENTICATED", "message": "the token is not one this agent granted",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNAUTHENTICATED", "domain": "a2a-protocol.org"}]
            }})),
        )
            .into_response();
        let grpc = as_grpc_status(refused, Refusal::Unauthenticated).await;
        assert_eq!(grpc.status(), StatusCode::OK);
        let status = tonic::Status::from_header_map(grpc.headers()).expect("a grpc-status");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        assert_eq!(status.message(), "the token is not one this agent granted");
        let info = status.get_details_error_info().expect("an ErrorInfo");
        assert_eq!(
            (info.reason.as_str(), info.domain.as_str()),
            ("UNAUTHENTICATED", "a2a-protocol.org")
        );
    }

    #[tokio::test]
    async fn a_version_refused_over_grpc_is_failed_precondition() {
        let refused = crate::version::version_refusal("0.3");
        let grpc = as_grpc_status(refused, Refusal::BadRequest).await;
        let status = tonic::Status::from_header_map(grpc.headers()).unwrap();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        assert_eq!(
            status.get_details_error_info().unwrap().reason,
            VERSION_NOT_SUPPORTED
        );
    }

    #[tokio::test]
    async fn a_plain_refusal_of_a_grpc_call_keeps_its_words_and_retry_after() {
        let refused = (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            "at the concurrency limit",
        )
            .into_response();
        let grpc = as_grpc_status(refused, Refusal::Unavailable).await;
        let status = tonic::Status::from_header_map(grpc.headers()).unwrap();
        assert_eq!(status.code(), tonic::Code::Unavailable);
        assert_eq!(status.message(), "at the concurrency limit");
        assert_eq!(
            status.get_details_error_info().unwrap().reason,
            "UNAVAILABLE"
        );
        assert_eq!(grpc.headers()[header::RETRY_AFTER], "1");
    }

    #[tokio::test]
    async fn invalid_params_is_32602_with_the_id_or_an_invalid_argument_status() {
        let rpc = invalid_params(Binding::JsonRpc, Some(json!("r-1")), "too many parts");
        assert_eq!(rpc.status(), StatusCode::OK);
        let body: Value =
            serde_json::from_slice(&axum::body::to_bytes(rpc.into_body(), 4096).await.unwrap())
                .unwrap();
        assert_eq!(
            (
                &body["id"],
                &body["error"]["code"],
                &body["error"]["message"]
            ),
            (&json!("r-1"), &json!(-32602), &json!("too many parts"))
        );
        let rest = invalid_params(Binding::HttpJson, None, "too many parts");
        assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
        let body: Value =
            serde_json::from_slice(&axum::body::to_bytes(rest.into_body(), 4096).await.unwrap())
                .unwrap();
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    }
}
