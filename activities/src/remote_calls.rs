//! The stand-in's calls on its remote task: GetTask, CancelTask (asked until the task has
//! ended) and the push-config delete, each as the delegating participant (the registry's
//! clients assert it); and the read of a task whose end a stream reported.

use std::time::Duration;

use a2a::Task;
use baton_a2a::snapshot::{of_task, of_task_after};
use baton_a2a::{AgentError, RemoteAgent};
use baton_core::display::one_line;
use baton_proto::failure_types::{CANCEL_NOT_CONFIRMED, TASK_NOT_FOUND};
use baton_proto::{DeletePushIn, RemoteSnapshot, RemoteTaskIn};
use temporalio_sdk::activities::ActivityError;

use crate::{CANCEL_CONFIRM_BOUND, non_retryable};

/// The longest pause between two attempts to cancel.
const CANCEL_PAUSE_MOST: Duration = Duration::from_secs(30);

pub async fn get(
    agent: &RemoteAgent,
    input: &RemoteTaskIn,
) -> Result<RemoteSnapshot, ActivityError> {
    snapshot(agent.get_task(&input.remote_task_id).await)
}

/// Cancels the remote task until the agent shows it ended, or [`CANCEL_CONFIRM_BOUND`] has
/// passed since the first attempt: a refusal ("not cancelable in its current state") and an
/// agent that cannot be reached are asked again, with backoff. Returns the task as last seen:
/// ended once the cancel is confirmed, still open when the bound passed first (the caller then
/// says so; it never reports a task that still runs as CANCELED). A task the agent does not know
/// is final ([`classify`]).
pub async fn cancel_until_ended(
    agent: &RemoteAgent,
    input: &RemoteTaskIn,
    waited_before: Duration,
) -> Result<RemoteSnapshot, ActivityError> {
    let deadline = tokio::time::Instant::now() + CANCEL_CONFIRM_BOUND.saturating_sub(waited_before);
    let mut pause = Duration::from_secs(1);
    let mut last: Option<RemoteSnapshot> = None;
    loop {
        match cancel_once(agent, &input.remote_task_id).await {
            Ok(seen) if seen.state.is_terminal() => return Ok(seen),
            Ok(seen) => last = Some(seen),
            Err(error) if is_gone(&error) => return Err(classify(error)),
            Err(error) => tracing::warn!(
                stand_in = %input.stand_in_id,
                agent = %input.agent,
                "cancelling task {} is not confirmed yet, asking again within {pause:?}: {}",
                input.remote_task_id,
                one_line(&error.to_string())
            ),
        }
        if tokio::time::Instant::now() + pause >= deadline {
            tracing::warn!(
                stand_in = %input.stand_in_id,
                agent = %input.agent,
                "the cancel of task {} was not confirmed within {CANCEL_CONFIRM_BOUND:?}",
                input.remote_task_id
            );
            return last.ok_or_else(|| {
                non_retryable(
                    CANCEL_NOT_CONFIRMED,
                    format!(
                        "the agent did not confirm the cancel within {}s",
                        CANCEL_CONFIRM_BOUND.as_secs()
                    ),
                )
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(CANCEL_PAUSE_MOST);
    }
}

/// One CancelTask; when the agent refuses, its task as GetTask shows it (a task that ended
/// meanwhile is what the cancel wanted).
async fn cancel_once(agent: &RemoteAgent, task_id: &str) -> Result<RemoteSnapshot, AgentError> {
    match agent.cancel_task(task_id).await {
        Ok(task) => Ok(of_task(&task)),
        Err(refused) if !refused.is_transient() && !is_gone(&refused) => {
            let task = agent.get_task(task_id).await?;
            let seen = of_task(&task);
            if seen.state.is_terminal() {
                Ok(seen)
            } else {
                Err(refused)
            }
        }
        Err(error) => Err(error),
    }
}

fn is_gone(error: &AgentError) -> bool {
    matches!(error, AgentError::Call { source, .. } if source.code == a2a::error_code::TASK_NOT_FOUND)
}

/// A settled snapshot a stream built from its updates, read again whole: an update carries only
/// the status message, and the answer may be in an artifact or the history. `said_before` is
/// what the stream showed before it settled. The stream's own snapshot when the read fails or
/// finds the task in another state.
pub async fn read_whole(
    agent: &RemoteAgent,
    from_stream: RemoteSnapshot,
    said_before: Option<&str>,
) -> RemoteSnapshot {
    match agent.get_task(&from_stream.remote_task_id).await {
        Ok(task) if of_task(&task).state == from_stream.state => of_task_after(&task, said_before),
        Ok(_) => from_stream,
        Err(error) => {
            tracing::debug!(
                "reading task {} whole after its stream settled failed, keeping the stream's \
                 words: {}",
                from_stream.remote_task_id,
                one_line(&error.to_string())
            );
            from_stream
        }
    }
}

/// What the stand-in learns from a call that answers with the task: its snapshot, or the
/// [`classify`]d error.
fn snapshot(answer: Result<Task, AgentError>) -> Result<RemoteSnapshot, ActivityError> {
    answer.map(|task| of_task(&task)).map_err(classify)
}

pub async fn delete_push(agent: &RemoteAgent, input: &DeletePushIn) -> Result<(), ActivityError> {
    agent
        .delete_push_config(&input.task.remote_task_id, &input.config_id)
        .await
        .map_err(|error| {
            tracing::warn!(stand_in = %input.task.stand_in_id, "deleting the push config failed: {}", one_line(&error.to_string()));
            classify(error)
        })
}

/// A task the agent no longer knows is final for the workflow; anything else may pass.
pub fn classify(error: AgentError) -> ActivityError {
    match &error {
        AgentError::Call { source, .. } if source.code == a2a::error_code::TASK_NOT_FOUND => {
            non_retryable(TASK_NOT_FOUND, error.to_string())
        }
        _ => ActivityError::from(anyhow::anyhow!(error.to_string())),
    }
}
