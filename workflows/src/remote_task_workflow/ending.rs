//! How a stand-in ends: cancelled by its parent, past its deadline, or with its task, and the
//! cancel of a remote task that every end uses.

use baton_activities::BatonActivities;
use baton_core::deadline::deadline_exceeded;
use baton_core::sub_tasks::map_remote_state;
use baton_proto::failure_types::TASK_NOT_FOUND;
use baton_proto::{
    CancelContextIn, DeletePushIn, RemoteSnapshot, RemoteTaskIn, RemoteView, RemoteWatch,
    TaskState, WatchKind,
};
use temporalio_sdk::{WorkflowContext, WorkflowResult, WorkflowTermination};
use temporalio_workflow::WorkflowCancellationToken;

use super::RemoteTaskWorkflow;
use super::watch::{apply, tell_parent};
use crate::activity_failure;
use crate::policies;

/// Past the deadline: CancelTask on the remote task, then the row FAILED with the reason.
pub(super) async fn deadline_passed(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
) -> WorkflowResult<RemoteView> {
    let cleanup = WorkflowCancellationToken::new();
    let input = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = format!(
        "cancel {}: past its deadline",
        ctx.state(RemoteTaskWorkflow::about)
    );
    let (last, delegated) = ctx.state(|s| (s.start.last.clone(), s.start.delegated));
    let outcome = cancel_until_ended(ctx, input, summary, &cleanup, &last, delegated).await;
    let mut reason = ctx.state(|s| deadline_exceeded(s.start.deadline_secs.unwrap_or_default()));
    if let CancelOutcome::Unconfirmed { why, .. } = &outcome {
        reason = format!("{reason}; {}", unconfirmed(why));
    }
    let failed = ctx.state(|s| RemoteSnapshot {
        state: TaskState::Failed,
        sub_state: None,
        text: Some(reason),
        ..s.start.last.clone()
    });
    apply(ctx, failed).await;
    end(ctx, Some(&cleanup)).await
}

/// Cancelled by the parent: CancelTask as the delegating participant, tell the parent, end.
pub(super) async fn cancel_remote(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
) -> WorkflowResult<RemoteView> {
    let cleanup = WorkflowCancellationToken::new();
    let input = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = format!("cancel {}", ctx.state(RemoteTaskWorkflow::about));
    let (last, delegated) = ctx.state(|s| (s.mapped(), s.start.delegated));
    let mapped = cancel_until_ended(ctx, input, summary, &cleanup, &last, delegated)
        .await
        .into_row();
    ctx.state_mut(|s| {
        s.start.last = mapped.clone();
        s.durable.told = Some(mapped.clone());
    });
    tell_parent(ctx, &mapped, Some(&cleanup)).await;
    end(ctx, Some(&cleanup)).await?;
    Err(WorkflowTermination::cancelled())
}

/// What a cancel of a remote task ended in.
pub(crate) enum CancelOutcome {
    /// The agent shows the task ended (as it answered, mapped), or no longer knows it.
    Ended(RemoteSnapshot),
    /// The agent did not confirm within the bound (refused, unreachable, still running): the
    /// task may still run.
    Unconfirmed {
        /// The task as last seen.
        seen: RemoteSnapshot,
        /// Why the cancel is not confirmed.
        why: String,
    },
}

impl CancelOutcome {
    /// The row a cancel leaves: the task as it ended, or FAILED saying the cancel was not
    /// confirmed. Never CANCELED for a task that may still run.
    pub(crate) fn into_row(self) -> RemoteSnapshot {
        match self {
            CancelOutcome::Ended(ended) => ended,
            CancelOutcome::Unconfirmed { seen, why } => RemoteSnapshot {
                state: TaskState::Failed,
                sub_state: None,
                text: Some(unconfirmed(&why)),
                ..seen
            },
        }
    }
}

pub(super) fn unconfirmed(why: &str) -> String {
    format!("the cancel was not confirmed ({why}): the task may still run on the agent")
}

/// Cancels the remote task until the agent shows it ended (`cancel_remote_task`, on `token`, so
/// the cancel it serves does not cut it short), and says what that ended in. `last` is the task
/// as last seen, `delegated` as for [`map_remote_state`].
pub(crate) async fn cancel_until_ended<W>(
    ctx: &mut WorkflowContext<W>,
    task: RemoteTaskIn,
    summary: String,
    token: &WorkflowCancellationToken,
    last: &RemoteSnapshot,
    delegated: bool,
) -> CancelOutcome {
    let canceled = ctx
        .execute_activity(
            BatonActivities::cancel_remote_task,
            task,
            policies::summarized(policies::cancel_remote_task(token), summary),
        )
        .await;
    match canceled {
        Ok(seen) if seen.state.is_terminal() => {
            CancelOutcome::Ended(map_remote_state(seen, delegated))
        }
        Ok(seen) => {
            let why = format!("the agent still reports it {}", seen.state);
            CancelOutcome::Unconfirmed { seen, why }
        }
        Err(error) if activity_failure::type_name(&error).as_deref() == Some(TASK_NOT_FOUND) => {
            CancelOutcome::Ended(RemoteSnapshot {
                state: TaskState::Canceled,
                sub_state: None,
                ..last.clone()
            })
        }
        Err(error) => CancelOutcome::Unconfirmed {
            seen: last.clone(),
            why: activity_failure::message(&error),
        },
    }
}

/// Closes the stand-in (later pushes are refused), deletes its push config and cancels the
/// duplicates of its task a brief sent twice left, best effort.
pub(super) async fn end(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: Option<&WorkflowCancellationToken>,
) -> WorkflowResult<RemoteView> {
    ctx.state_mut(|s| s.closed = true);
    let push_config = ctx.state(|s| match &s.durable.watch {
        Some(RemoteWatch {
            kind: WatchKind::Push,
            config_id: Some(config_id),
            ..
        }) => Some(config_id.clone()),
        _ => None,
    });
    if let Some(config_id) = push_config {
        let input = DeletePushIn {
            task: ctx.state(|s| s.task_in(ctx.workflow_id())),
            config_id,
        };
        let token = token
            .cloned()
            .unwrap_or_else(WorkflowCancellationToken::new);
        // Best effort: a failure is logged by the activity and stays in its history event.
        let summary = format!("stop pushes for {}", ctx.state(RemoteTaskWorkflow::about));
        ctx.execute_activity(
            BatonActivities::delete_remote_push,
            input,
            policies::summarized(policies::cleanup_call(&token), summary),
        )
        .await
        .ok();
    }
    let duplicates = ctx.state(|s| {
        s.start
            .duplicates_in
            .clone()
            .map(|context_id| CancelContextIn {
                stand_in_id: ctx.workflow_id().to_string(),
                agent: s.start.agent.clone(),
                context_id,
                keep: Some(s.start.last.remote_task_id.clone()),
            })
    });
    if let Some(duplicates) = duplicates {
        let token = token
            .cloned()
            .unwrap_or_else(WorkflowCancellationToken::new);
        let summary = format!(
            "cancel duplicates of {}",
            ctx.state(RemoteTaskWorkflow::about)
        );
        ctx.execute_activity(
            BatonActivities::cancel_context_tasks,
            duplicates,
            policies::summarized(policies::cancel_context_tasks(&token), summary),
        )
        .await
        .ok();
    }
    Ok(ctx.state(|s| RemoteView {
        agent: s.start.agent.clone(),
        last: s.start.last.clone(),
        watch: s.durable.watch.clone(),
        closed: s.closed,
    }))
}
