//! `send_remote_reply`: an answer to a sub-task's question, as a message on the same remote task
//! and context. Sending is retried, and a message is not idempotent on every agent, so each
//! attempt reads the task first: one whose history already holds the answer's `messageId` got
//! it from an earlier attempt and is not sent it again. Files go with the answer as they go with
//! a brief: each one the agent's card takes, or the answer is refused with the reason.

use a2a::{Message, Part, Role, SendMessageResponse, Task};
use baton_a2a::snapshot::of_task;
use baton_a2a::{AgentError, RemoteAgent};
use baton_content::ContentStore;
use baton_core::display::one_line;
use baton_proto::{RemoteReplyIn, RemoteReplyOut, RemoteSnapshot, TaskState};
use temporalio_sdk::activities::ActivityError;

use crate::brief_files::{NotSent, brief_parts};

/// How many of the task's latest messages are read for an earlier attempt's answer.
const HISTORY_READ: i32 = 50;

pub async fn send_reply(
    agent: &RemoteAgent,
    store: &ContentStore,
    input: &RemoteReplyIn,
) -> Result<RemoteReplyOut, ActivityError> {
    let task_id = &input.task.remote_task_id;
    let task = match agent.get_task_with_history(task_id, HISTORY_READ).await {
        Ok(task) => task,
        Err(error) => return refused_or_retry(input, error),
    };
    if holds_message(&task, &input.message_id) {
        return Ok(RemoteReplyOut::Sent {
            task: of_task(&task),
        });
    }
    let before = of_task(&task);
    if before.state.is_terminal() {
        return Ok(RemoteReplyOut::Refused {
            reason: format!(
                "task {task_id} has already ended ({})",
                before.state.short_name()
            ),
        });
    }
    let files = match brief_parts(agent, store, &input.attachments).await {
        Ok(files) => files,
        Err(NotSent::Refused(reason)) => return Ok(RemoteReplyOut::Refused { reason }),
        Err(NotSent::StoreDown(why)) => {
            return Err(ActivityError::from(anyhow::anyhow!(
                "the files of the answer cannot be read now: {why}"
            )));
        }
    };
    match agent.send_message(reply_message(&task, input, files)).await {
        Ok(SendMessageResponse::Task(task)) => Ok(RemoteReplyOut::Sent {
            task: of_task(&task),
        }),
        // An answer with a message and no task: the task goes on, to be watched.
        Ok(SendMessageResponse::Message(_)) => Ok(RemoteReplyOut::Sent {
            task: RemoteSnapshot {
                state: TaskState::Working,
                sub_state: None,
                text: None,
                ..before
            },
        }),
        Err(error) => refused_or_retry(input, error),
    }
}

/// The answer on `task`, in the task's own context (an agent may not infer it from the task):
/// its text, then `files`.
fn reply_message(task: &Task, input: &RemoteReplyIn, files: Vec<Part>) -> Message {
    Message {
        message_id: input.message_id.clone(),
        context_id: Some(task.context_id.clone()).filter(|id| !id.is_empty()),
        task_id: Some(task.id.clone()),
        role: Role::User,
        parts: std::iter::once(Part::text(input.text.clone()))
            .chain(files)
            .collect(),
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    }
}

fn holds_message(task: &Task, message_id: &str) -> bool {
    task.history
        .iter()
        .flatten()
        .any(|message| message.message_id == message_id)
}

/// No answer from the agent: another attempt. The agent's own refusal: the outcome.
fn refused_or_retry(
    input: &RemoteReplyIn,
    error: AgentError,
) -> Result<RemoteReplyOut, ActivityError> {
    let said = one_line(&error.to_string());
    if error.is_transient() {
        tracing::warn!(stand_in = %input.task.stand_in_id, agent = %input.task.agent, "sending the answer failed, to be retried: {said}");
        return Err(ActivityError::from(anyhow::anyhow!(said)));
    }
    tracing::warn!(stand_in = %input.task.stand_in_id, agent = %input.task.agent, "the agent refused the answer: {said}");
    Ok(RemoteReplyOut::Refused { reason: said })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(history: serde_json::Value) -> Task {
        serde_json::from_value(json!({
            "id": "r-1",
            "contextId": "c-1",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
            "history": history
        }))
        .unwrap()
    }

    fn input() -> RemoteReplyIn {
        RemoteReplyIn {
            task: baton_proto::RemoteTaskIn {
                stand_in_id: "t.1".into(),
                agent: "ledger".into(),
                remote_task_id: "r-1".into(),
            },
            message_id: "m-reply".into(),
            text: "the savings account".into(),
            attachments: Vec::new(),
        }
    }

    #[test]
    fn an_answer_an_earlier_attempt_sent_is_found_in_the_history() {
        let sent = task(json!([
            {"messageId": "m-brief", "role": "ROLE_USER", "parts": [{"text": "brief"}]},
            {"messageId": "m-reply", "role": "ROLE_USER", "parts": [{"text": "the savings account"}]}
        ]));
        assert!(holds_message(&sent, "m-reply"));
        let not_yet = task(json!([
            {"messageId": "m-brief", "role": "ROLE_USER", "parts": [{"text": "brief"}]}
        ]));
        assert!(!holds_message(&not_yet, "m-reply"));
        assert!(!holds_message(&task(json!(null)), "m-reply"));
    }

    #[test]
    fn the_answer_names_the_task_and_its_context() {
        let message = reply_message(&task(json!([])), &input(), vec![Part::text("more")]);
        let wire = serde_json::to_value(&message).unwrap();
        assert_eq!(
            wire,
            json!({
                "messageId": "m-reply",
                "contextId": "c-1",
                "taskId": "r-1",
                "role": "ROLE_USER",
                "parts": [{"text": "the savings account"}, {"text": "more"}]
            })
        );
    }
}
