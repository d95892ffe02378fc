//! Who is calling. A caller asserts a participant id with `X-Participant-Id`, or with
//! `metadata.participant_id` on a message; Baton authenticates nobody itself (the perimeter
//! does), but it never lets the two disagree and never serves a task to a stranger.

use a2a::{A2AError, Message};
use a2a_server::ServiceParams;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

const PARTICIPANT_HEADER: &str = "x-participant-id";
const PARTICIPANT_METADATA: &str = "participant_id";
/// The longest participant or task id the gateway takes.
pub const MAX_ID_CHARS: usize = 256;
const NO_PARTICIPANT: &str = "no participant asserted";

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

/// The participant a call is made as, from the header alone.
pub fn caller(params: &ServiceParams) -> Option<String> {
    params
        .get(PARTICIPANT_HEADER)
        .and_then(|values| values.first())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The sender of a message: the header, or the message's metadata. Both given and different,
/// or neither given, is invalid.
pub fn sender(params: &ServiceParams, message: &Message) -> Result<String, A2AError> {
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
    match (caller(params), from_metadata) {
        (Some(header), Some(metadata)) if header != metadata => Err(A2AError::invalid_params(
            "the message names a different participant than X-Participant-Id",
        )),
        (Some(id), _) | (None, Some(id)) => Ok(id),
        (None, None) => Err(A2AError::invalid_params(format!(
            "{NO_PARTICIPANT}: send X-Participant-Id or metadata.participant_id"
        ))),
    }
}

/// The sender of a message to the existing task `task_id`: as [`sender`], except that a message
/// asserting no participant finds no task (as every other call on a task does), so a stranger
/// learns nothing of which task ids exist.
pub fn follow_up_sender(
    params: &ServiceParams,
    message: &Message,
    task_id: &str,
) -> Result<String, A2AError> {
    sender(params, message).map_err(|error| {
        if error.message.starts_with(NO_PARTICIPANT) {
            A2AError::task_not_found(task_id)
        } else {
            error
        }
    })
}

/// The caller of a call that names an existing task; without one the task is "not found".
pub fn required_caller(params: &ServiceParams, task_id: &str) -> Result<String, A2AError> {
    caller(params).ok_or_else(|| A2AError::task_not_found(task_id))
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
