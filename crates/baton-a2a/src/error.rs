use a2a::A2AError;

/// A card Baton cannot honour: it requires an extension Baton does not implement. Stable code: [`UnsupportedExtensionError::CODE`].
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
    #[error(
        "agent {agent}: the card's interface {interface} is not on the origin of {url}; set agents[].allow_other_origin = true if the agent rightly lives elsewhere"
    )]
    ForeignInterface {
        agent: String,
        interface: String,
        url: String,
    },
    #[error("agent {agent}: the card says version {found:?}, but agents[].version pins {pinned:?}")]
    VersionMismatch {
        agent: String,
        pinned: String,
        found: String,
    },
    #[error("agent {agent}: {reason}")]
    SecurityUnsatisfiable { agent: String, reason: String },
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
            AgentError::ForeignInterface { .. } => "a2a.foreign_interface",
            AgentError::SecurityUnsatisfiable { .. } => "a2a.security_unsatisfiable",
            AgentError::Call { .. } => "a2a.call_failed",
        }
    }

    /// Whether asking again later may succeed: the call never got an answer from the agent (a
    /// connection, a timeout, a broken stream, all of which the client reports as an internal
    /// error), or the agent answered with an internal or server error (the JSON-RPC range
    /// -32000 to -32099 outside the codes A2A defines, such as a rate limit). An A2A error the
    /// agent chose (invalid params, unsupported operation, task not found, …) is its answer.
    pub fn is_transient(&self) -> bool {
        match self {
            AgentError::Call { source, .. } => {
                let code = source.code;
                code == a2a::error_code::INTERNAL_ERROR
                    || ((-32099..=-32000).contains(&code) && !(-32009..=-32001).contains(&code))
            }
            AgentError::CardUnavailable { .. } => true,
            _ => false,
        }
    }

    pub fn agent(&self) -> &str {
        match self {
            AgentError::UnsupportedExtension(e) => &e.agent,
            AgentError::CardUnavailable { agent, .. }
            | AgentError::CardInvalid { agent, .. }
            | AgentError::NoCompatibleInterface { agent, .. }
            | AgentError::VersionMismatch { agent, .. }
            | AgentError::ForeignInterface { agent, .. }
            | AgentError::SecurityUnsatisfiable { agent, .. }
            | AgentError::Call { agent, .. } => agent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::error_code;

    fn call_failing_with(code: i32) -> AgentError {
        AgentError::Call {
            agent: "ledger".into(),
            method: "SendStreamingMessage",
            source: A2AError::new(code, "no"),
        }
    }

    #[test]
    fn no_answer_and_server_errors_are_transient() {
        for code in [error_code::INTERNAL_ERROR, -32000, -32010, -32099] {
            assert!(call_failing_with(code).is_transient(), "{code}");
        }
        let unreachable = AgentError::CardUnavailable {
            agent: "ledger".into(),
            url: "http://ledger".into(),
            reason: "connection refused".into(),
        };
        assert!(unreachable.is_transient());
    }

    #[test]
    fn an_agent_s_own_answer_is_final() {
        for code in [
            error_code::INVALID_PARAMS,
            error_code::INVALID_REQUEST,
            error_code::METHOD_NOT_FOUND,
            error_code::PARSE_ERROR,
            error_code::TASK_NOT_FOUND,
            error_code::UNSUPPORTED_OPERATION,
            error_code::CONTENT_TYPE_NOT_SUPPORTED,
            error_code::EXTENSION_SUPPORT_REQUIRED,
            error_code::VERSION_NOT_SUPPORTED,
        ] {
            assert!(!call_failing_with(code).is_transient(), "{code}");
        }
        let refused = AgentError::NoCompatibleInterface {
            agent: "ledger".into(),
            reason: "no JSON-RPC".into(),
        };
        assert!(!refused.is_transient());
    }
}
