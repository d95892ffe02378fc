//! The stand-in's one-shot calls on its remote task: GetTask, CancelTask and the push-config
//! delete, each as the delegating participant (the registry's clients assert it).

use a2a::Task;
use baton_a2a::snapshot::of_task;
use baton_a2a::{AgentError, RemoteAgent};
use baton_core::display::one_line;
use baton_proto::failure_types::TASK_NOT_FOUND;
use baton_proto::{DeletePushIn, RemoteSnapshot, RemoteTaskIn};
use temporalio_sdk::activities::ActivityError;

use crate::non_retryable;

pub async fn get(
    agent: &RemoteAgent,
    input: &RemoteTaskIn,
) -> Result<RemoteSnapshot, ActivityError> {
    snapshot(agent.get_task(&input.remote_task_id).await)
}

pub async fn cancel(
    agent: &RemoteAgent,
    input: &RemoteTaskIn,
) -> Result<RemoteSnapshot, ActivityError> {
    snapshot(agent.cancel_task(&input.remote_task_id).await)
}

/// A settled snapshot a stream built from its updates, read again whole: an update carries only
/// the status message, and the answer may be in an artifact or the history. The stream's own
/// snapshot when the read fails or finds the task in another state.
pub async fn read_whole(agent: &RemoteAgent, from_stream: RemoteSnapshot) -> RemoteSnapshot {
    match agent.get_task(&from_stream.remote_task_id).await {
        Ok(task) if of_task(&task).state == from_stream.state => of_task(&task),
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
