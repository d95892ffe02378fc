//! Fixes on the official HTTP+JSON router. A2A-Version: the JSON-RPC router checks it itself;
//! the REST router does not, so this layer does, the same way: a missing version reads as 0.3,
//! and anything but 1.x is refused with VersionNotSupported (HTTP 400).

use axum::Json;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub async fn require_a2a_1(request: Request, next: Next) -> Response {
    let version = requested_version(&request);
    if version.split('.').next().map(str::trim) == Some("1") {
        return next.run(request).await;
    }
    version_refusal(&version)
}

/// VersionNotSupported for `version`, as HTTP+JSON says it (a gRPC call's refusal is turned into
/// its gRPC status on the way out).
pub(crate) fn version_refusal(version: &str) -> Response {
    let body = json!({"error": {
        "code": 400,
        "status": "FAILED_PRECONDITION",
        "message": format!("A2A version '{version}' is not supported by this agent; send A2A-Version: 1.0"),
        "details": [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": crate::refusals::VERSION_NOT_SUPPORTED,
            "domain": "a2a-protocol.org",
            "metadata": {}
        }]
    }});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// The HTTP+JSON DeleteTaskPushNotificationConfig answers `google.protobuf.Empty`, which is `{}`
/// in JSON; the official router sends an empty body, which clients that parse the answer (the
/// Python a2a-sdk) refuse. Say `{}`.
pub async fn empty_delete_is_json(request: Request, next: Next) -> Response {
    let is_delete = request.method() == axum::http::Method::DELETE;
    let response = next.run(request).await;
    let empty = response
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .is_none_or(|length| length == "0");
    if is_delete && response.status() == StatusCode::OK && empty {
        return (StatusCode::OK, Json(json!({}))).into_response();
    }
    response
}

/// The header, else the query parameter; absent means 0.3.
fn requested_version(request: &Request) -> String {
    if let Some(value) = request
        .headers()
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.trim().is_empty())
    {
        return value.trim().to_string();
    }
    request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| key.eq_ignore_ascii_case("a2a-version"))
        .map(|(_, value)| value.to_string())
        .unwrap_or_else(|| "0.3".to_string())
}
