//! The inbound half of A2A: Baton as an A2A 1.0 agent, with Temporal behind every call, and
//! the push receiver its stand-ins are woken through. Nothing here keeps task state: any number
//! of gateways can serve the same tasks.

#![warn(missing_docs)]

mod a2a_task;
mod auth;
mod card;
mod client_address;
mod config;
mod continuation;
mod draining;
mod extensions;
mod handler;
mod identity;
mod intake;
mod intake_plan;
mod listing;
mod listing_cache;
mod oidc;
mod part_scan;
mod parts;
mod push_configs;
mod push_receiver;
mod rate_limit;
mod refusals;
mod request_metrics;
mod routes;
mod task_changes;
mod task_stream;
mod tasks;
mod temporal_errors;
mod trace_context;
mod version;
mod view_cache;
mod work_limit;

pub use a2a_task::{SUB_TASK_ROWS_KEY, TASK_METADATA_KEY, task_extension};
pub use auth::Authenticator;
pub use config::GatewayConfig;
pub use draining::Draining;
pub use handler::TemporalHandler;
pub use identity::{Caller, CallerKind};
pub use intake::{Trust, new_task};
pub use parts::PartLimits;
pub use push_receiver::{MAX_PUSH_BYTES, UnreadPush, push_routes, pushed_task};
pub use routes::{Limits, gateway_routes};
