use a2a::A2AError;

/// A card Baton cannot honour: it declares security, or requires an extension Baton does not
/// implement. Stable code: [`UnsupportedExtensionError::CODE`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent {agent}: {reason}{}", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
pub struct UnsupportedExtensionError {
    pub agent: String,
    pub reason: String,
    pub detail: Option<String>,
}

impl UnsupportedExtensionError {
    pub const CODE: &'static str = "a2a.unsupported_extension";
}

/// Everything that can go wrong reaching a remote agent. Each variant names the agent and has a
/// stable [`code`](AgentError::code).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    UnsupportedExtension(#[from] UnsupportedExtensionError),
    #[error("agent {agent}: cannot fetch its card from {url}: {reason}")]
    CardUnavailable {
        agent: String,
        url: String,
        reason: String,
    },
    #[error("agent {agent}: the card at {url} is not a valid A2A 1.0 agent card: {reason}")]
    CardInvalid {
        agent: String,
        url: String,
        reason: String,
    },
    #[error("agent {agent}: {reason}")]
    NoCompatibleInterface { agent: String, reason: String },
    #[error("agent {agent}: the card says version {found:?}, but agents[].version pins {pinned:?}")]
    VersionMismatch {
        agent: String,
        pinned: String,
        found: String,
    },
    #[error("agent {agent}: {method} failed: {source}")]
    Call {
        agent: String,
        method: &'static str,
        #[source]
        source: A2AError,
    },
}

impl AgentError {
    pub fn code(&self) -> &'static str {
        match self {
            AgentError::UnsupportedExtension(_) => UnsupportedExtensionError::CODE,
            AgentError::CardUnavailable { .. } => "a2a.card_unavailable",
            AgentError::CardInvalid { .. } => "a2a.card_invalid",
            AgentError::NoCompatibleInterface { .. } => "a2a.no_compatible_interface",
            AgentError::VersionMismatch { .. } => "a2a.card_version_mismatch",
            AgentError::Call { .. } => "a2a.call_failed",
        }
    }

    pub fn agent(&self) -> &str {
        match self {
            AgentError::UnsupportedExtension(e) => &e.agent,
            AgentError::CardUnavailable { agent, .. }
            | AgentError::CardInvalid { agent, .. }
            | AgentError::NoCompatibleInterface { agent, .. }
            | AgentError::VersionMismatch { agent, .. }
            | AgentError::Call { agent, .. } => agent,
        }
    }
}
