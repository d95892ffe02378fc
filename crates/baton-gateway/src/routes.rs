//! Baton's HTTP surface: the card, JSON-RPC at the interface URL (with and without its trailing
//! slash), the HTTP+JSON routes, and the push receiver; behind a body limit, a per-peer rate
//! limit and CORS for the A2A headers.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use a2a_server::jsonrpc::jsonrpc_router;
use a2a_server::rest::rest_router;
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;

use crate::card::card_routes;
use crate::handler::TemporalHandler;
use crate::push_receiver::push_routes;
use crate::version::{empty_delete_is_json, require_a2a_1};

/// The limits every request passes first.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_request_bytes: usize,
    /// Requests per minute from one peer address; 0 means no limit.
    pub rate_limit_per_minute: u32,
}

/// Every route of the gateway, mounted under `base_path` (the path of `server.base_url`,
/// empty or like `/agents/front`). Serve it with `into_make_service_with_connect_info`.
pub fn gateway_routes(handler: TemporalHandler, base_path: &str, limits: Limits) -> Router {
    let base = base_path.trim_end_matches('/');
    let handler = Arc::new(handler);
    let card = card_routes(&handler.config.card);
    let rest = rest_router(handler.clone())
        .layer(axum::middleware::from_fn(empty_delete_is_json))
        .layer(axum::middleware::from_fn(require_a2a_1));
    let a2a = rest
        .merge(jsonrpc_router(handler.clone()))
        .merge(push_routes(handler.client.clone()))
        .merge(card.clone());
    let app = if base.is_empty() {
        a2a
    } else {
        Router::new()
            .nest(base, a2a)
            .route_service(&format!("{base}/"), jsonrpc_router(handler.clone()))
            .merge(card)
    };
    let limiter = RateLimiter::new(limits.rate_limit_per_minute);
    app.layer(from_fn_with_state(limiter, rate_limit))
        .layer(RequestBodyLimitLayer::new(limits.max_request_bytes))
        .layer(cors())
}

fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            header::CONTENT_TYPE,
            HeaderName::from_static("a2a-version"),
            HeaderName::from_static("a2a-extensions"),
            HeaderName::from_static("x-participant-id"),
        ])
        .expose_headers([HeaderName::from_static("a2a-extensions")])
}

/// A token bucket per peer address: `per_minute` requests, refilled continuously.
#[derive(Clone)]
struct RateLimiter {
    per_minute: u32,
    buckets: Arc<Mutex<HashMap<IpAddr, (f64, Instant)>>>,
}

impl RateLimiter {
    fn new(per_minute: u32) -> Self {
        RateLimiter {
            per_minute,
            buckets: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn admit(&self, peer: IpAddr) -> bool {
        if self.per_minute == 0 {
            return true;
        }
        let capacity = f64::from(self.per_minute);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let (tokens, at) = buckets.entry(peer).or_insert((capacity, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * capacity / 60.0).min(capacity);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

async fn rate_limit(State(limiter): State<RateLimiter>, request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    if let Some(peer) = peer
        && !limiter.admit(peer)
    {
        let mut response = (StatusCode::TOO_MANY_REQUESTS, "rate limit exceeded").into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    }
    next.run(request).await
}
