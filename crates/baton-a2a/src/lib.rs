//! The outbound half of A2A: the remote agents Baton delegates to.
//!
//! A [`RemoteAgent`] is built from a card that was fetched ([`card_fetch`]) and validated
//! ([`card_validation`]), or built in-process for `self` and for Baton agents of the same
//! process. The [`Registry`] holds them all and renders the roster the model sees.

#![warn(missing_docs)]

pub mod card_fetch;
pub mod card_validation;
mod error;
pub mod extensions;
mod grpc_transport;
mod outbound_auth;
mod outside_only;
pub mod push;
mod registry;
mod remote_agent;
pub mod rendering;
pub mod snapshot;
mod trace_context;
pub mod url_fetch;
pub mod webhook;

pub use card_fetch::CardLimits;
pub use error::{AgentError, UnsupportedExtensionError};
pub use registry::{AgentCheck, Registry, SELF_NOT_OFFERED, agent_http_client};
pub use remote_agent::RemoteAgent;
