//! Who is calling. A caller asserts a participant id with `X-Participant-Id`, or with
//! `metadata.participant_id` on a message; Baton authenticates nobody itself (the perimeter
//! does), but it never lets the two disagree and never serves a task to a stranger.

use a2a::{A2AError, Message};
use a2a_server::ServiceParams;

const PARTICIPANT_HEADER: &str = "x-participant-id";
const PARTICIPANT_METADATA: &str = "participant_id";
const NO_PARTICIPANT: &str = "no participant asserted";

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
