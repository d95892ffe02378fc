//! Baton's HTTP surface: the card, JSON-RPC at the interface URL (with and without its trailing
//! slash), the HTTP+JSON routes, the gRPC service (at the root, as gRPC clients call it), and
//! the push receiver; behind a body limit, a per-peer rate limit, a concurrency limit and a
//! part count (all refusing with A2A errors in the caller's binding) and CORS for the A2A
//! headers.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use a2a_grpc::GrpcHandler;
use a2a_pb::proto::a2a_service_server::A2aServiceServer;
use a2a_server::jsonrpc::jsonrpc_router;
use a2a_server::rest::rest_router;
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;

use crate::auth::{Authenticator, authenticate};
use crate::card::card_routes;
use crate::handler::TemporalHandler;
use crate::identity::readable_identity;
use crate::part_scan::{PartLimit, refuse_part_floods};
use crate::push_receiver::push_routes;
use crate::refusals::as_a2a_errors;
use crate::request_metrics::{RequestMetrics, count_requests};
use crate::trace_context::Traced;
use crate::version::{empty_delete_is_json, require_a2a_1};
use crate::work_limit::{WorkLimit, limit_work};

/// Where gRPC clients call the A2A service: `/lf.a2a.v1.A2AService/<Method>`.
const GRPC_SERVICE_PATH: &str = "/lf.a2a.v1.A2AService/{*method}";

/// The limits every request passes first.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest request body taken, in bytes (`server.max_request_bytes`).
    pub max_request_bytes: usize,
    /// Requests per minute from one peer address; 0 means no limit.
    pub rate_limit_per_minute: u32,
    /// A2A requests worked on at once.
    pub max_concurrent_requests: usize,
    /// Parts one message may carry.
    pub max_message_parts: usize,
}

/// Every route of the gateway, mounted under `base_path` (the path of `server.base_url`,
/// empty or like `/agents/front`). Serve it with `into_make_service_with_connect_info`.
pub fn gateway_routes(
    handler: TemporalHandler,
    authenticator: Authenticator,
    base_path: &str,
    limits: Limits,
) -> Router {
    let base = base_path.trim_end_matches('/');
    let handler = Arc::new(handler);
    let api_key_header = authenticator.api_key_header().clone();
    let authenticator = Arc::new(authenticator);
    let card = card_routes(&handler.config.card);
    let part_limit = Arc::new(PartLimit {
        max_parts: limits.max_message_parts,
        max_request_bytes: limits.max_request_bytes,
        base_path: base.to_string(),
    });
    let work_limit = WorkLimit::new(limits.max_concurrent_requests);
    // The card is public and a push proves itself with its token: only the A2A methods ask who
    // is calling, and only they count towards the concurrency limit.
    let authenticated = |router: Router| {
        router
            .layer(from_fn_with_state(part_limit.clone(), refuse_part_floods))
            .layer(from_fn_with_state(authenticator.clone(), authenticate))
            .layer(from_fn_with_state(work_limit.clone(), limit_work))
    };
    // Every A2A method runs in a span of the caller's trace; the card and pushes do not.
    let traced = Arc::new(Traced::new(handler.clone(), &handler.config.agent_id));
    let rest = rest_router(traced.clone())
        .layer(axum::middleware::from_fn(empty_delete_is_json))
        .layer(axum::middleware::from_fn(require_a2a_1));
    let grpc = Router::new()
        .route_service(
            GRPC_SERVICE_PATH,
            A2aServiceServer::from_arc(Arc::new(GrpcHandler::new(traced.clone())))
                .max_decoding_message_size(limits.max_request_bytes),
        )
        .layer(axum::middleware::from_fn(require_a2a_1));
    let a2a = authenticated(rest.merge(jsonrpc_router(traced.clone())))
        .merge(push_routes(
            handler.tasks.client.clone(),
            &handler.config.task_queue,
            handler.config.temporal_timeout,
        ))
        .merge(card.clone());
    let app = if base.is_empty() {
        a2a
    } else {
        Router::new()
            .nest(base, a2a)
            .route_service(
                &format!("{base}/"),
                authenticated(jsonrpc_router(traced.clone())),
            )
            .merge(card)
    }
    .merge(authenticated(grpc));
    let limiter = RateLimiter::new(limits.rate_limit_per_minute);
    let request_metrics = Arc::new(RequestMetrics {
        agent: handler.config.agent_id.clone(),
        base_path: base.to_string(),
    });
    app.layer(axum::middleware::from_fn(readable_identity))
        .layer(from_fn_with_state(limiter, rate_limit))
        .layer(RequestBodyLimitLayer::new(limits.max_request_bytes))
        .layer(from_fn_with_state(base.to_string(), as_a2a_errors))
        .layer(cors(api_key_header))
        .layer(from_fn_with_state(request_metrics, count_requests))
}

fn cors(api_key_header: HeaderName) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            header::CONTENT_TYPE,
            HeaderName::from_static("a2a-version"),
            HeaderName::from_static("a2a-extensions"),
            HeaderName::from_static("x-participant-id"),
            header::AUTHORIZATION,
            api_key_header,
        ])
        .expose_headers([HeaderName::from_static("a2a-extensions")])
}

/// Peers tracked at most. Buckets that have refilled are forgotten first; if that frees nothing
/// (that many peers all busy at once), a new peer is refused until one does.
const MAX_TRACKED_PEERS: usize = 10_000;

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
        let refilled = |tokens: f64, at: Instant| {
            (tokens + now.duration_since(at).as_secs_f64() * capacity / 60.0).min(capacity)
        };
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_TRACKED_PEERS && !buckets.contains_key(&peer) {
            buckets.retain(|_, (tokens, at)| refilled(*tokens, *at) < capacity);
            if buckets.len() >= MAX_TRACKED_PEERS {
                return false;
            }
        }
        let (tokens, at) = buckets.entry(peer).or_insert((capacity, now));
        *tokens = refilled(*tokens, *at);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    #[test]
    fn a_peer_gets_its_bucket_then_is_refused_and_others_are_not() {
        let limiter = RateLimiter::new(3);
        let first: Vec<bool> = (0..5).map(|_| limiter.admit(peer(1))).collect();
        assert_eq!(first, [true, true, true, false, false]);
        assert!(limiter.admit(peer(2)));
    }

    #[test]
    fn zero_means_no_limit() {
        let limiter = RateLimiter::new(0);
        assert!((0..10_000).all(|_| limiter.admit(peer(1))));
        assert!(limiter.buckets.lock().unwrap().is_empty());
    }

    #[test]
    fn the_table_of_peers_is_bounded() {
        // One request a minute: every tracked peer stays busy, so a new one is refused.
        let limiter = RateLimiter::new(1);
        assert!((0..MAX_TRACKED_PEERS as u32).all(|n| limiter.admit(peer(n))));
        assert!(!limiter.admit(peer(u32::MAX)));
        assert_eq!(limiter.buckets.lock().unwrap().len(), MAX_TRACKED_PEERS);

        // A thousand a second: the buckets refill within milliseconds and are forgotten.
        let limiter = RateLimiter::new(60_000);
        assert!((0..MAX_TRACKED_PEERS as u32).all(|n| limiter.admit(peer(n))));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(limiter.admit(peer(u32::MAX)));
        assert_eq!(limiter.buckets.lock().unwrap().len(), 1);
    }
}
