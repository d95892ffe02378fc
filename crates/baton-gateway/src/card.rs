//! The agent card at `/.well-known/agent-card.json`, served with `Cache-Control` and an `ETag`
//! that changes whenever the card does.

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use baton_core::push_token::hex;
use sha2::{Digest, Sha256};

const CARD_PATH: &str = "/.well-known/agent-card.json";
const CACHE_CONTROL: &str = "public, max-age=300";

pub fn card_routes(card: &serde_json::Value) -> Router {
    let body = card.to_string();
    let etag = format!("\"{}\"", &hex(&Sha256::digest(body.as_bytes()))[..32]);
    Router::new().route(
        CARD_PATH,
        get(move |headers: HeaderMap| {
            let body = body.clone();
            let etag = etag.clone();
            async move { serve(&headers, body, &etag) }
        }),
    )
}

fn serve(request: &HeaderMap, body: String, etag: &str) -> Response {
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    headers.insert(
        header::ETAG,
        HeaderValue::from_str(etag).expect("a hex etag is a valid header"),
    );
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    (headers, body).into_response()
}
