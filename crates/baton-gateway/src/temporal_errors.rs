//! What a Temporal call that failed means to an A2A caller: retryable when Temporal cannot take
//! it now, "not found" when the task is not one of ours, the refusal a workflow gave otherwise.

use std::time::Duration;

use a2a::A2AError;
use baton_proto::{Refusal, RefusalCode};
use temporalio_client::errors::{WorkflowQueryError, WorkflowUpdateError};

/// Whether Temporal's status says it cannot take the call now (it is down, restarting or
/// shedding load, or it cancelled the call because the worker it gave a query to stopped), so
/// the same call may succeed later.
pub(crate) fn unreachable(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::ResourceExhausted
            | tonic::Code::Cancelled
    )
}

/// A call Temporal could not take now: retryable, with a `google.rpc.RetryInfo`, as a call it
/// did not answer in time.
pub(crate) fn temporal_unreachable(doing: &str, status: &tonic::Status) -> A2AError {
    A2AError::internal(format!(
        "{doing} failed: this agent's Temporal service cannot take it now ({}); retry later (a \
         message sent again with the same messageId is taken once)",
        status.message()
    ))
    .with_details(vec![retry_info(RETRY_DELAY)])
}

/// How long a caller is asked to wait before retrying a call Temporal did not answer.
pub(crate) const RETRY_DELAY: Duration = Duration::from_secs(1);

/// A `google.rpc.RetryInfo` detail: the error is worth retrying after `delay`.
pub(crate) fn retry_info(delay: Duration) -> a2a::TypedDetail {
    a2a::TypedDetail::new(
        "type.googleapis.com/google.rpc.RetryInfo",
        [(
            "retryDelay".to_string(),
            serde_json::Value::String(format!("{}s", delay.as_secs())),
        )]
        .into(),
    )
}

pub(crate) fn update_error(task_id: &str, doing: &str, error: WorkflowUpdateError) -> A2AError {
    match error {
        WorkflowUpdateError::Rpc(status) if unreachable(&status) => {
            temporal_unreachable(doing, &status)
        }
        WorkflowUpdateError::NotFound(_) => A2AError::task_not_found(task_id),
        WorkflowUpdateError::Failed(failure) => match Refusal::parse(&failure.message) {
            Some(Refusal {
                code: RefusalCode::NotParticipant,
                ..
            }) => A2AError::task_not_found(task_id),
            Some(Refusal {
                code: RefusalCode::TaskClosed,
                reason,
            }) => A2AError::unsupported_operation(format!(
                "the task is in a terminal state and takes no more messages ({reason})"
            )),
            Some(Refusal {
                code: RefusalCode::SubTaskNotAnswerable,
                reason,
            }) => A2AError::invalid_params(reason),
            None => A2AError::invalid_params(failure.message.clone()),
        },
        other => A2AError::internal(format!("the message could not be delivered: {other}")),
    }
}

pub(crate) fn query_error(task_id: &str, doing: &str, error: WorkflowQueryError) -> A2AError {
    match error {
        WorkflowQueryError::Rpc(status) if unreachable(&status) => {
            temporal_unreachable(doing, &status)
        }
        WorkflowQueryError::NotFound(_) | WorkflowQueryError::PayloadConversion(_) => {
            A2AError::task_not_found(task_id)
        }
        // A workflow of another type (a stand-in) fails a query it does not have, which
        // Temporal reports as QueryFailed, an invalid argument: not a task of ours.
        WorkflowQueryError::Rpc(status) if status.code() == tonic::Code::InvalidArgument => {
            A2AError::task_not_found(task_id)
        }
        other => A2AError::internal(format!("the task could not be read: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retryable(error: &A2AError) -> bool {
        error
            .details
            .iter()
            .flatten()
            .any(|d| serde_json::to_string(d).is_ok_and(|d| d.contains("RetryInfo")))
    }

    #[test]
    fn temporal_down_or_shedding_load_is_retryable_and_says_what_was_being_done() {
        for code in [
            tonic::Code::Unavailable,
            tonic::Code::DeadlineExceeded,
            tonic::Code::ResourceExhausted,
            // A query whose worker stopped (a rolling restart) while it was being answered.
            tonic::Code::Cancelled,
        ] {
            let status = || tonic::Status::new(code, "tcp connect error");
            for error in [
                update_error(
                    "t",
                    "delivering the message",
                    WorkflowUpdateError::Rpc(status()),
                ),
                query_error(
                    "t",
                    "delivering the message",
                    WorkflowQueryError::Rpc(status()),
                ),
            ] {
                assert!(retryable(&error), "{code:?}: {error:?}");
                assert!(
                    error.message.contains("delivering the message failed"),
                    "{error:?}"
                );
                assert!(error.message.contains("tcp connect error"), "{error:?}");
            }
        }
        for code in [tonic::Code::Internal, tonic::Code::PermissionDenied] {
            let error = update_error(
                "t",
                "x",
                WorkflowUpdateError::Rpc(tonic::Status::new(code, "no")),
            );
            assert!(!retryable(&error), "{code:?}: {error:?}");
        }
    }
}
