//! What can go wrong reaching a remote agent, each error naming the agent and carrying a stable
//! code that logs, the roster and the model read.

use a2a::A2AError;

/// A card Baton cannot honour: it requires an extension Baton does not implement. Stable code:
/// [`UnsupportedExtensionError::CODE`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent {agent}: {reason}{}", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
pub struct UnsupportedExtensionError {
    /// The agent's id (`agents[].id`).
    pub agent: String,
    /// Why the card is refused.
    pub reason: String,
    /// The extension at fault, as `extension=<uri>`.
    pub detail: Option<String>,
}

impl UnsupportedExtensionError {
    /// The stable code of this refusal.
    pub const CODE: &'static str = "a2a.unsupported_extension";
}

/// Everything that can go wrong reaching a remote agent. Each variant names the agent and has a
/// stable [`code`](AgentError::code).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The card requires an extension Baton does not implement.
    #[error(transparent)]
    UnsupportedExtension(#[from] UnsupportedExtensionError),
    /// The card could not be fetched: no answer, a failed status, or too big or too slow.
    #[error("agent {agent}: cannot fetch its card from {url}: {reason}")]
    CardUnavailable {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// The card's URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The card is not a valid A2A 1.0 agent card.
    #[error("agent {agent}: the card at {url} is not a valid A2A 1.0 agent card: {reason}")]
    CardInvalid {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// The card's URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The card offers no A2A 1.x interface in a binding Baton speaks, or the client could not
    /// be built on the one chosen.
    #[error("agent {agent}: {reason}")]
    NoCompatibleInterface {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// What the card offers, or why the client failed.
        reason: String,
    },
    /// The interface chosen is not on the origin of `agents[].url`, and
    /// `agents[].allow_other_origin` is not set.
    #[error(
        "agent {agent}: the card's interface {interface} is not on the origin of {url}; set agents[].allow_other_origin = true if the agent rightly lives elsewhere"
    )]
    ForeignInterface {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// The interface's URL.
        interface: String,
        /// `agents[].url`.
        url: String,
    },
    /// The card's `version` is not the one `agents[].version` pins.
    #[error("agent {agent}: the card says version {found:?}, but agents[].version pins {pinned:?}")]
    VersionMismatch {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// `agents[].version`.
        pinned: String,
        /// The card's `version`.
        found: String,
    },
    /// No credential Baton has for the agent meets the security the card requires.
    #[error("agent {agent}: {reason}")]
    SecurityUnsatisfiable {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// What the card requires and why each choice falls short.
        reason: String,
    },
    /// An A2A call to the agent failed.
    #[error("agent {agent}: {method} failed: {source}")]
    Call {
        /// The agent's id (`agents[].id`).
        agent: String,
        /// The A2A method, like `SendStreamingMessage`.
        method: &'static str,
        /// The error the client reported.
        #[source]
        source: A2AError,
    },
}

impl AgentError {
    /// The stable code of the error (`a2a.card_unavailable`, `a2a.call_failed`, …).
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

    /// The id of the agent the error is about.
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
