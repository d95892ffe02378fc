//! Reading what a remote agent says about a task into a [`RemoteSnapshot`]: the state, the
//! sub-state of the status extension, and the agent's last words.

use a2a::{Message, Part, PartContent, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent};
use baton_core::a2a_state::from_a2a;
use baton_core::extensions::sub_state_of;
use baton_proto::RemoteSnapshot;

/// The snapshot of a whole task (GetTask, a stream's first event, a blocking send).
pub fn of_task(task: &Task) -> RemoteSnapshot {
    RemoteSnapshot {
        remote_task_id: task.id.clone(),
        state: from_a2a(&task.status.state),
        sub_state: sub_state_of(task.metadata.as_ref()),
        text: status_text(&task.status).or_else(|| artifacts_text(task)),
    }
}

/// The snapshot of one status update on its own: every update names its task, so a stream that
/// starts with one (no Task first) still says which task exists and in what state.
pub fn of_status_update(update: &TaskStatusUpdateEvent) -> RemoteSnapshot {
    RemoteSnapshot {
        remote_task_id: update.task_id.clone(),
        state: from_a2a(&update.status.state),
        sub_state: sub_state_of(update.metadata.as_ref()),
        text: status_text(&update.status),
    }
}

/// The snapshot after one stream event, given the snapshot before it. Returns `None` for an
/// event that says nothing about the state (an artifact chunk, a message).
pub fn after_event(before: &RemoteSnapshot, event: &StreamResponse) -> Option<RemoteSnapshot> {
    match event {
        StreamResponse::Task(task) => Some(of_task(task)),
        StreamResponse::StatusUpdate(update) => {
            let after = of_status_update(update);
            Some(RemoteSnapshot {
                text: after.text.or_else(|| before.text.clone()),
                ..after
            })
        }
        StreamResponse::ArtifactUpdate(update) => {
            let text = parts_text(&update.artifact.parts)?;
            Some(RemoteSnapshot {
                text: Some(text),
                ..before.clone()
            })
        }
        StreamResponse::Message(_) => None,
    }
}

/// The text parts of a message, joined by newlines; `None` when there are none.
pub fn message_text(message: &Message) -> Option<String> {
    parts_text(&message.parts)
}

fn status_text(status: &TaskStatus) -> Option<String> {
    status.message.as_ref().and_then(message_text)
}

fn artifacts_text(task: &Task) -> Option<String> {
    let texts: Vec<String> = task
        .artifacts
        .iter()
        .flatten()
        .filter_map(|artifact| parts_text(&artifact.parts))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

fn parts_text(parts: &[Part]) -> Option<String> {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match &part.content {
            PartContent::Text(text) if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::extensions::STATUS_METADATA_KEY;
    use baton_proto::TaskState;
    use serde_json::{Value, json};

    fn task(value: Value) -> Task {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_task_reads_its_state_sub_state_and_status_text() {
        let snapshot = of_task(&task(json!({
            "id": "t1", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                       "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "which account?"}]}},
            "metadata": {STATUS_METADATA_KEY: {"sub_state": "awaiting-answer"}}
        })));
        assert_eq!(snapshot.remote_task_id, "t1");
        assert_eq!(snapshot.state, TaskState::InputRequired);
        assert_eq!(snapshot.sub_state.as_deref(), Some("awaiting-answer"));
        assert_eq!(snapshot.text.as_deref(), Some("which account?"));
    }

    #[test]
    fn without_a_status_message_the_artifacts_are_the_answer() {
        let snapshot = of_task(&task(json!({
            "id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "42"}, {"data": {"x": 1}}]}]
        })));
        assert_eq!(snapshot.state, TaskState::Completed);
        assert_eq!(snapshot.text.as_deref(), Some("42"));
    }

    #[test]
    fn a_status_update_keeps_the_earlier_text_when_it_has_none() {
        let before = RemoteSnapshot {
            remote_task_id: "t1".into(),
            state: TaskState::Working,
            sub_state: None,
            text: Some("halfway".into()),
        };
        let event: StreamResponse = serde_json::from_value(json!({"statusUpdate": {
            "taskId": "t1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}))
        .unwrap();
        let after = after_event(&before, &event).unwrap();
        assert_eq!(after.state, TaskState::Completed);
        assert_eq!(after.text.as_deref(), Some("halfway"));
    }

    #[test]
    fn a_status_update_alone_names_its_task_state_sub_state_and_text() {
        let event: StreamResponse = serde_json::from_value(json!({"statusUpdate": {
            "taskId": "t9", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                       "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "which one?"}]}},
            "metadata": {STATUS_METADATA_KEY: {"sub_state": "awaiting-answer"}}}}))
        .unwrap();
        let StreamResponse::StatusUpdate(update) = &event else {
            panic!("a status update: {event:?}")
        };
        assert_eq!(
            of_status_update(update),
            RemoteSnapshot {
                remote_task_id: "t9".into(),
                state: TaskState::InputRequired,
                sub_state: Some("awaiting-answer".into()),
                text: Some("which one?".into()),
            }
        );
    }
}
