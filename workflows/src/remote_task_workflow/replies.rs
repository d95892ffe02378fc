//! The parent's answers to the remote task's questions, sent on the same remote task.

use baton_activities::BatonActivities;
use baton_proto::{RemoteReplyIn, RemoteReplyOut, RemoteSnapshot, SubTaskReply, TaskState};
use temporalio_sdk::WorkflowContext;

use super::RemoteTaskWorkflow;
use super::watch::{apply, resolve_if_gone, tell_parent};
use crate::activity_failure;
use crate::policies;

/// Sends the parent's answer on the remote task. The parent marked the row WORKING when it sent
/// the answer, and the stand-in takes the same view: the agent's next question is news even in
/// the same state, and the question it answered is not, while the agent still shows it.
pub(super) async fn send_reply(ctx: &mut WorkflowContext<RemoteTaskWorkflow>, reply: SubTaskReply) {
    let stand_in_id = ctx.workflow_id().to_string();
    let input = ctx.state_mut(|s| {
        s.durable.answered = Some(s.start.last.clone());
        s.durable.told = Some(RemoteSnapshot {
            state: TaskState::Working,
            sub_state: None,
            text: None,
            ..s.start.last.clone()
        });
        RemoteReplyIn {
            task: s.task_in(&stand_in_id),
            message_id: reply.message_id,
            text: reply.text,
            attachments: reply.attachments,
        }
    });
    let summary = format!(
        "answer the question of {}",
        ctx.state(RemoteTaskWorkflow::about)
    );
    let sent = ctx
        .execute_activity(
            BatonActivities::send_remote_reply,
            input,
            policies::summarized(policies::send_remote_reply(), summary),
        )
        .await;
    match sent {
        Ok(RemoteReplyOut::Sent { task }) => apply(ctx, task).await,
        Ok(RemoteReplyOut::Refused { reason }) => answer_not_delivered(ctx, &reason).await,
        Err(error) => {
            resolve_if_gone(ctx, &error).await;
            if !ctx.state(RemoteTaskWorkflow::is_done) {
                answer_not_delivered(ctx, &activity_failure::message(&error)).await;
            }
        }
    }
}

/// Tells the parent its answer did not reach the agent, and that the question still stands.
pub(super) async fn answer_not_delivered(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    reason: &str,
) {
    let question = ctx.state_mut(|s| {
        s.durable.answered = None;
        let question = s.mapped();
        s.durable.told = Some(question.clone());
        question
    });
    let asked = question.text.clone().unwrap_or_default();
    let report = RemoteSnapshot {
        text: Some(format!(
            "your answer was not delivered ({reason}); the agent still asks: {asked}"
        )),
        ..question
    };
    tell_parent(ctx, &report, None).await;
}
