//! Baton's HTTP surface: the card, JSON-RPC at the interface URL (with and without its trailing
//! slash), the HTTP+JSON routes, the gRPC service (at the root, as gRPC clients call it), and
//! the push receiver; behind a body limit, a per-caller rate limit, a concurrency limit and a
//! part count (all refusing with A2A errors in the caller's binding) and CORS for the A2A
//! headers.

use std::sync::Arc;

use a2a_grpc::GrpcHandler;
use a2a_pb::proto::a2a_service_server::A2aServiceServer;
use a2a_server::jsonrpc::jsonrpc_router;
use a2a_server::rest::rest_router;
use axum::Router;
use axum::http::{HeaderName, Method, header};
use axum::middleware::from_fn_with_state;
use ipnet::IpNet;
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;

use crate::auth::{Authenticator, authenticate};
use crate::card::card_routes;
use crate::handler::TemporalHandler;
use crate::identity::readable_identity;
use crate::part_scan::{PartLimit, refuse_part_floods};
use crate::push_receiver::push_routes;
use crate::rate_limit::{RateLimit, limit_by_address, limit_by_caller};
use crate::refusals::as_a2a_errors;
use crate::request_metrics::{RequestMetrics, count_requests};
use crate::trace_context::Traced;
use crate::version::{empty_delete_is_json, require_a2a_1};
use crate::work_limit::{WorkLimit, limit_work};

/// Where gRPC clients call the A2A service: `/lf.a2a.v1.A2AService/<Method>`.
const GRPC_SERVICE_PATH: &str = "/lf.a2a.v1.A2AService/{*method}";

/// The limits every request passes first.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The largest request body taken, in bytes (`server.max_request_bytes`).
    pub max_request_bytes: usize,
    /// Requests per minute from one caller; 0 means no limit.
    pub rate_limit_per_minute: u32,
    /// The proxies whose forwarding headers name the client (`server.trusted_proxies`).
    pub trusted_proxies: Vec<IpNet>,
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
    let rate_limit = RateLimit::new(limits.rate_limit_per_minute, limits.trusted_proxies);
    // The card is public and a push proves itself with its token: only the A2A methods ask who
    // is calling, so only they are limited per proven caller, and only they count towards the
    // concurrency limit.
    let authenticated = |router: Router| {
        router
            .layer(from_fn_with_state(part_limit.clone(), refuse_part_floods))
            .layer(from_fn_with_state(rate_limit.clone(), limit_by_caller))
            .layer(from_fn_with_state(authenticator.clone(), authenticate))
            .layer(from_fn_with_state(work_limit.clone(), limit_work))
    };
    let by_address =
        |router: Router| router.layer(from_fn_with_state(rate_limit.clone(), limit_by_address));
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
        .merge(by_address(push_routes(
            handler.tasks.client.clone(),
            &handler.config.task_queue,
            handler.config.temporal_timeout,
        )))
        .merge(by_address(card.clone()));
    let app = if base.is_empty() {
        a2a
    } else {
        Router::new()
            .nest(base, a2a)
            .route_service(
                &format!("{base}/"),
                authenticated(jsonrpc_router(traced.clone())),
            )
            .merge(by_address(card))
    }
    .merge(authenticated(grpc));
    let request_metrics = Arc::new(RequestMetrics {
        agent: handler.config.agent_id.clone(),
        base_path: base.to_string(),
    });
    app.layer(axum::middleware::from_fn(readable_identity))
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
