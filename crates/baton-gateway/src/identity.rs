//! Who is calling, as the routes see it: `X-Participant-Id` as [`crate::auth`] left it (the
//! proven participant, or the asserted one where the mode takes that), with `X-Baton-Caller`
//! saying how it is known. A first message may name its sender in `metadata.participant_id`
//! instead; the two never disagree, and a stranger is never served another's task. A caller
//! that names nobody, where the mode takes asserted ids, is served as the anonymous caller, so a
//! generic client that sends nothing Baton-specific is served at the defaults.

use a2a::{A2AError, Message};
use a2a_server::ServiceParams;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub const PARTICIPANT_HEADER: &str = "x-participant-id";
/// Set by [`crate::auth::authenticate`] only: how the participant is known.
pub const CALLER_KIND_HEADER: &str = "x-baton-caller";
const PARTICIPANT_METADATA: &str = "participant_id";
/// The longest participant or task id the gateway takes.
pub const MAX_ID_CHARS: usize = 256;

/// Whether `id` can be a participant or task id: 1 to [`MAX_ID_CHARS`] printable ASCII
/// characters, no space.
pub fn is_valid_id(id: &str) -> bool {
    (1..=MAX_ID_CHARS).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic())
}

/// Refuses, as invalid params, a task id that no task can have, before Temporal is asked.
pub fn check_task_id(task_id: &str) -> Result<(), A2AError> {
    if is_valid_id(task_id) {
        Ok(())
    } else {
        Err(A2AError::invalid_params(format!(
            "a task id is 1 to {MAX_ID_CHARS} printable ASCII characters (got {} characters)",
            task_id.chars().count()
        )))
    }
}

/// Refuses a request whose `X-Participant-Id` is given more than once or cannot be read as a
/// participant id: it is never ignored in favour of another claim.
pub async fn readable_identity(request: Request, next: Next) -> Response {
    let values: Vec<_> = request
        .headers()
        .get_all(PARTICIPANT_HEADER)
        .iter()
        .collect();
    let problem = match values.as_slice() {
        [] => None,
        [one] => match one.to_str() {
            Ok(id) if is_valid_id(id.trim()) => None,
            _ => Some(format!(
                "X-Participant-Id must be 1 to {MAX_ID_CHARS} printable ASCII characters"
            )),
        },
        _ => Some("X-Participant-Id is given more than once".to_string()),
    };
    match problem {
        None => next.run(request).await,
        Some(problem) => (StatusCode::BAD_REQUEST, problem).into_response(),
    }
}

/// How a caller's participant is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallerKind {
    /// A credential proved it.
    Authenticated,
    /// This deployment's own token: one of its agents calling itself. Trusted to brief fully.
    Deployment,
    /// Taken as said (`server.auth.mode = "asserted"`).
    Asserted,
    /// No credential, and no participant named: its tasks are reached by their ids alone.
    Anonymous,
}

impl CallerKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CallerKind::Authenticated => "authenticated",
            CallerKind::Deployment => "deployment",
            CallerKind::Asserted => "asserted",
            CallerKind::Anonymous => "anonymous",
        }
    }

    fn of(params: &ServiceParams) -> CallerKind {
        match params
            .get(CALLER_KIND_HEADER)
            .and_then(|values| values.first())
            .map(String::as_str)
        {
            Some("authenticated") => CallerKind::Authenticated,
            Some("deployment") => CallerKind::Deployment,
            Some("anonymous") => CallerKind::Anonymous,
            _ => CallerKind::Asserted,
        }
    }
}

/// A participant and how it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The participant's id.
    pub id: String,
    /// How it is known.
    pub kind: CallerKind,
}

impl Caller {
    /// The caller who names nobody and presents no credential.
    fn anonymous() -> Caller {
        Caller {
            id: baton_config::ANONYMOUS_PARTICIPANT.to_string(),
            kind: CallerKind::Anonymous,
        }
    }
}

/// The participant `X-Participant-Id` names, as [`crate::auth`] left it.
fn named_caller(params: &ServiceParams) -> Option<Caller> {
    params
        .get(PARTICIPANT_HEADER)
        .and_then(|values| values.first())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .map(|id| Caller {
            id,
            kind: CallerKind::of(params),
        })
}

/// The participant a call is made as, from the header alone: the anonymous caller when it
/// names nobody.
pub fn caller(params: &ServiceParams) -> Caller {
    named_caller(params).unwrap_or_else(Caller::anonymous)
}

/// The sender of a message: the header, or the message's metadata, else the anonymous caller.
/// Both given and different is invalid; an id in the metadata is asserted, so it may not be
/// this agent's own (`agent_id`) nor the anonymous one.
pub fn sender(
    params: &ServiceParams,
    message: &Message,
    agent_id: &str,
) -> Result<Caller, A2AError> {
    let from_metadata = message
        .metadata
        .as_ref()
        .and_then(|m| m.get(PARTICIPANT_METADATA))
        .and_then(|v| v.as_str())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    if let Some(id) = &from_metadata
        && !is_valid_id(id)
    {
        return Err(A2AError::invalid_params(format!(
            "metadata.participant_id must be 1 to {MAX_ID_CHARS} printable ASCII characters"
        )));
    }
    match (named_caller(params), from_metadata) {
        (Some(header), Some(metadata)) if header.id != metadata => Err(A2AError::invalid_params(
            "the message names a different participant than X-Participant-Id",
        )),
        (Some(caller), _) => Ok(caller),
        (None, Some(id)) if id == agent_id || id == baton_config::ANONYMOUS_PARTICIPANT => {
            Err(A2AError::invalid_params(format!(
                "metadata.participant_id {id:?} is reserved: this agent's own calls prove \
                 themselves with its deployment secret"
            )))
        }
        (None, Some(id)) => Ok(Caller {
            id,
            kind: CallerKind::of(params),
        }),
        (None, None) => Ok(Caller::anonymous()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_printable_ascii_of_bounded_length() {
        for good in [
            "alice",
            "front-desk",
            "a",
            "tiny-harness:agent/1",
            &"x".repeat(MAX_ID_CHARS),
        ] {
            assert!(is_valid_id(good), "{good}");
        }
        for bad in [
            "",
            "al ice",
            "ali\nce",
            "Zoë",
            "\u{202e}evil",
            &"x".repeat(MAX_ID_CHARS + 1),
        ] {
            assert!(!is_valid_id(bad), "{bad:?}");
        }
        assert_eq!(
            check_task_id("").unwrap_err().code,
            a2a::error_code::INVALID_PARAMS
        );
    }
}
