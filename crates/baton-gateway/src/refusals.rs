//! Refusals made in front of the A2A routers (the body limit, the rate limit) come back as A2A
//! errors in the binding the caller used: a JSON-RPC error object for a POST to the JSON-RPC
//! endpoint, and an HTTP+JSON `google.rpc.Status` for everything else. The HTTP status stays
//! 413 or 429, so a client that reads only the status still understands.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

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

/// What is refused, and how each binding names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    TooLarge,
    RateLimited,
}

impl Refusal {
    fn of(status: StatusCode) -> Option<Refusal> {
        match status {
            StatusCode::PAYLOAD_TOO_LARGE => Some(Refusal::TooLarge),
            StatusCode::TOO_MANY_REQUESTS => Some(Refusal::RateLimited),
            _ => None,
        }
    }

    fn reason(self) -> &'static str {
        match self {
            Refusal::TooLarge => "REQUEST_TOO_LARGE",
            Refusal::RateLimited => "RATE_LIMIT_EXCEEDED",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Refusal::TooLarge => "the request body is over this agent's size limit",
            Refusal::RateLimited => "too many requests from this address; retry after a second",
        }
    }

    /// JSON-RPC: an oversized request is an Invalid Request; a flood gets the generic server
    /// error, since JSON-RPC has no code for it. The ErrorInfo reason tells them apart.
    fn json_rpc_code(self) -> i32 {
        match self {
            Refusal::TooLarge => -32600,
            Refusal::RateLimited => -32000,
        }
    }

    fn rpc_status(self) -> &'static str {
        match self {
            Refusal::TooLarge => "INVALID_ARGUMENT",
            Refusal::RateLimited => "RESOURCE_EXHAUSTED",
        }
    }
}

/// The body of a refusal in `binding`.
pub fn refusal_body(binding: Binding, refusal: Refusal, http_status: StatusCode) -> Value {
    let details = json!([{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": refusal.reason(),
        "domain": "a2a-protocol.org",
        "metadata": {}
    }]);
    match binding {
        // The request was not read, so its id is unknown: JSON-RPC says null.
        Binding::JsonRpc => json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": refusal.json_rpc_code(), "message": refusal.message(), "data": details}
        }),
        Binding::HttpJson => json!({"error": {
            "code": http_status.as_u16(),
            "status": refusal.rpc_status(),
            "message": refusal.message(),
            "details": details
        }}),
    }
}

/// Rewrites a 413 or 429 that is not JSON yet (the body limit's, the rate limit's, the push
/// receiver's) into the A2A error of the request's binding, keeping its headers (Retry-After).
pub async fn as_a2a_errors(
    State(base_path): State<String>,
    request: Request,
    next: Next,
) -> Response {
    let binding = binding_of(request.method(), request.uri().path(), &base_path);
    let response = next.run(request).await;
    let Some(refusal) = Refusal::of(response.status()) else {
        return response;
    };
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = Json(refusal_body(binding, refusal, parts.status)).into_response();
    Response::from_parts(parts, body.into_body())
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
        );
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], Value::Null);
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(body["error"]["data"][0]["reason"], "REQUEST_TOO_LARGE");
        let body = refusal_body(
            Binding::JsonRpc,
            Refusal::RateLimited,
            StatusCode::TOO_MANY_REQUESTS,
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
        );
        assert_eq!(body["error"]["code"], 429);
        assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(body["error"]["details"][0]["reason"], "RATE_LIMIT_EXCEEDED");
        let body = refusal_body(
            Binding::HttpJson,
            Refusal::TooLarge,
            StatusCode::PAYLOAD_TOO_LARGE,
        );
        assert_eq!(body["error"]["code"], 413);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(body["error"]["details"][0]["reason"], "REQUEST_TOO_LARGE");
    }
}
