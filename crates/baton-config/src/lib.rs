//! `baton.toml`: the typed settings file, with its defaults and checks. Every error names
//! the setting by its full path and says what is allowed.

#![warn(missing_docs)]

mod agent;
mod agent_auth;
pub mod agent_card;
mod agents;
mod auth;
mod card;
mod content;
mod duration;
mod embedded_temporal;
mod error;
mod health;
mod ids;
mod log;
mod mcp;
mod metrics;
mod model;
mod prices;
mod prompt;
mod secret;
mod server;
mod settings;
mod temporal;
mod temporal_shared;
mod temporal_tls;
mod trace;
mod urls;
mod walk;
mod worker_tuning;

#[cfg(test)]
mod test_support;

pub use agent::{AgentSettings, DEFAULT_MAX_DELEGATION_DEPTH};
pub use agent_auth::{AgentAuth, ClientCredentials, EnvSecret};
pub use agents::{
    DEFAULT_CREATE_TIMEOUT, DEFAULT_DEADLINE, DEFAULT_LISTING_WAIT, DEFAULT_PUSH_SAFETY_FETCH,
    MAX_CREATE_TIMEOUT, MAX_DEADLINE, RemoteAgentSpec, Updates,
};
pub use auth::{
    ANONYMOUS_PARTICIPANT, AuthMode, AuthSettings, DEPLOYMENT_SECRET_VARIABLE, OidcSettings,
    TokenGrant,
};
pub use card::GrpcUrlForm;
pub use content::{ContentSettings, ContentStoreSpec};
pub use duration::parse_duration;
pub use embedded_temporal::{EmbeddedTemporal, SqliteSync};
pub use error::{ConfigError, SettingError};
pub use health::HealthSettings;
pub use log::{LogFormat, LogSettings};
pub use mcp::{DEFAULT_MCP_CALL_TIMEOUT, MAX_MCP_CALL_TIMEOUT, McpServerSpec, McpTransport};
pub use metrics::MetricsSettings;
pub use model::{MAX_MODEL_RETRY_FOR, ModelSettings};
pub use prices::{DEFAULT_CURRENCY, ModelPrice};
pub use prompt::PromptSettings;
pub use secret::Secret;
pub use server::ServerSettings;
pub use settings::Settings;
pub use temporal::{TemporalMode, TemporalSettings};
pub use temporal_shared::{Pem, PemSource};
pub use temporal_tls::{ClientCertificate, TemporalTls};
pub use trace::{RootSampler, TraceSampler, TraceSettings};
pub use worker_tuning::WorkerTuning;
