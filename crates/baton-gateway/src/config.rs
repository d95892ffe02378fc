//! What the gateway serves, from the agent's settings.

use std::sync::Arc;
use std::time::Duration;

use crate::parts::PartLimits;

/// What the gateway serves, from the agent's settings.
pub struct GatewayConfig {
    /// `agent.id`: this agent's own id, which labels its tasks and no sender may assert.
    pub agent_id: String,
    /// `temporal.task_queue`: where new tasks run, and the tasks ListTasks reads.
    pub task_queue: String,
    /// `server.delegators`: participants trusted to brief a new task fully.
    pub delegators: Vec<String>,
    /// The agent card served at `/.well-known/agent-card.json`
    /// (`baton_config::agent_card::served_card`).
    pub card: serde_json::Value,
    /// The longest any one call to Temporal may take (`server.temporal_timeout`): past it the
    /// caller gets a retryable error, never a hang.
    pub temporal_timeout: Duration,
    /// The longest a blocking SendMessage waits for its task to settle
    /// (`server.blocking_timeout`) before it answers with the task as it stands.
    pub blocking_timeout: Duration,
    /// `server.allow_private_push_urls`.
    pub allow_private_push_urls: bool,
    /// Whether tasks carry Baton's search attributes (`temporal.search_attributes`).
    pub search_attributes: bool,
    /// This agent's public URL: its own push receiver (`<base_url>/a2a/push/<stand-in id>`),
    /// which its own stand-ins register, is trusted whatever address it has.
    pub public_url: url::Url,
    /// What the deployment secret gives: webhook secrets are sealed with it before they reach
    /// history, and anonymous tasks' ids are keyed by it.
    pub deployment: Arc<baton_core::deployment_key::DeploymentKey>,
    /// `server.max_message_parts`: checked here for gRPC, whose bodies the part scan cannot read.
    pub max_message_parts: usize,
    /// `[content]`: the files and data a message may carry.
    pub part_limits: PartLimits,
}
