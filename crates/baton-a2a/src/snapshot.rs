//! Reading what a remote agent says about a task into a [`RemoteSnapshot`]: the state, the
//! sub-state of the status extension, and the agent's words.
//!
//! Agents put their answer in different places: the final status message (Baton,
//! tiny-harness, the a2a-sdk's examples), an artifact behind a generic status text (LangGraph's
//! stream), the history behind a generic status text (LangGraph's GetTask), a WORKING message
//! kept in the history before an empty completion (Microsoft Agent Framework). One rule reads
//! them all, so a generic status text never hides real content. Each piece once (a piece
//! another piece already holds is left out), in this order:
//! - the status message;
//! - every artifact (text parts as they are, data parts as JSON);
//! - for a task that has ended, the agent's message that closes its history (one after the
//!   last user message), unless it is what the task said before this read (the a2a-sdk moves
//!   each earlier status message, a progress note, into the history); with neither status
//!   message nor artifact, its last agent message.
//!
//! A task still running or waiting says only its status message and artifacts: its question is
//! the status message, and an earlier progress message is not news.

use a2a::{
    Message, Part, PartContent, Role, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent,
};
use baton_core::a2a_state::from_a2a;
use baton_core::attachments::whole_numbers;
use baton_core::extensions::{ENVELOPE_MEDIA_TYPE, reported_usage, sub_state_of};
use baton_proto::RemoteSnapshot;

/// How many of a task's last messages a read asks for: enough to find the agent's last one.
pub const ANSWER_HISTORY: i32 = 5;

/// The snapshot of a whole task (GetTask, a stream's first event, a blocking send), read with
/// nothing known of what it said before.
pub fn of_task(task: &Task) -> RemoteSnapshot {
    of_task_after(task, None)
}

/// As [`of_task`], for a task that said `said_before` when it was last seen.
pub fn of_task_after(task: &Task, said_before: Option<&str>) -> RemoteSnapshot {
    RemoteSnapshot {
        remote_task_id: task.id.clone(),
        state: from_a2a(&task.status.state),
        sub_state: sub_state_of(task.metadata.as_ref()),
        text: task_text(task, said_before),
        carries_files: task
            .artifacts
            .iter()
            .flatten()
            .any(|artifact| holds_files(&artifact.parts)),
        usage: reported_usage(task.metadata.as_ref()),
    }
}

/// Whether `parts` hold a file (bytes or URL) or data other than the task envelope: what a
/// stand-in collects into the content store once its task ends.
pub fn holds_files(parts: &[Part]) -> bool {
    parts.iter().any(|part| match &part.content {
        PartContent::Text(_) => false,
        PartContent::Data(_) => part.media_type.as_deref() != Some(ENVELOPE_MEDIA_TYPE),
        PartContent::Raw(_) | PartContent::Url(_) => true,
    })
}

/// The agent's words in a whole task, by the rule in this module's comment.
fn task_text(task: &Task, said_before: Option<&str>) -> Option<String> {
    let mut pieces: Vec<String> = status_text(&task.status)
        .into_iter()
        .chain(
            task.artifacts
                .iter()
                .flatten()
                .filter_map(|artifact| parts_text(&artifact.parts)),
        )
        .collect();
    if from_a2a(&task.status.state).is_terminal() {
        let history = if pieces.is_empty() {
            last_agent_message(task)
        } else {
            closing_agent_message(task).filter(|closing| Some(closing.as_str()) != said_before)
        };
        pieces.extend(history);
    }
    let said = said_once(&pieces);
    (!said.is_empty()).then(|| said.join("\n\n"))
}

/// The agent message that closes the history: none when a user message came after it (an
/// answer to an earlier turn, not this one).
fn closing_agent_message(task: &Task) -> Option<String> {
    let last = task.history.as_ref()?.last()?;
    (last.role == Role::Agent)
        .then(|| message_text(last))
        .flatten()
}

/// The pieces no other piece holds (of equal ones, the first), in their order.
fn said_once(pieces: &[String]) -> Vec<&str> {
    pieces
        .iter()
        .enumerate()
        .filter(|&(i, piece)| {
            !pieces.iter().enumerate().any(|(j, other)| {
                j != i && other.contains(piece.as_str()) && (other != piece || j < i)
            })
        })
        .map(|(_, piece)| piece.as_str())
        .collect()
}

fn last_agent_message(task: &Task) -> Option<String> {
    task.history
        .iter()
        .flatten()
        .rev()
        .filter(|message| message.role == Role::Agent)
        .find_map(message_text)
}

/// The snapshot of one status update on its own: every update names its task, so a stream that
/// starts with one (no Task first) still says which task exists and in what state.
pub fn of_status_update(update: &TaskStatusUpdateEvent) -> RemoteSnapshot {
    RemoteSnapshot {
        remote_task_id: update.task_id.clone(),
        state: from_a2a(&update.status.state),
        sub_state: sub_state_of(update.metadata.as_ref()),
        text: status_text(&update.status),
        carries_files: false,
        usage: None,
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
                carries_files: before.carries_files,
                ..after
            })
        }
        StreamResponse::ArtifactUpdate(update) => {
            let carries_files = before.carries_files || holds_files(&update.artifact.parts);
            let text = parts_text(&update.artifact.parts).or_else(|| before.text.clone());
            let after = RemoteSnapshot {
                text,
                carries_files,
                ..before.clone()
            };
            (after != *before).then_some(after)
        }
        StreamResponse::Message(_) => None,
    }
}

/// The words of a message (text parts, and data parts as JSON), joined by newlines; `None`
/// when there are none.
pub fn message_text(message: &Message) -> Option<String> {
    parts_text(&message.parts)
}

fn status_text(status: &TaskStatus) -> Option<String> {
    status.message.as_ref().and_then(message_text)
}

/// Text parts as they are and data parts as JSON; the task envelope is protocol, not words.
fn parts_text(parts: &[Part]) -> Option<String> {
    let texts: Vec<String> = parts
        .iter()
        .filter_map(|part| match &part.content {
            PartContent::Text(text) if !text.trim().is_empty() => Some(text.clone()),
            PartContent::Data(data) if part.media_type.as_deref() != Some(ENVELOPE_MEDIA_TYPE) => {
                Some(whole_numbers(data.clone()).to_string())
            }
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

    fn text_of(value: Value) -> Option<String> {
        of_task(&task(value)).text
    }

    fn agent_says(text: &str) -> Value {
        json!({"messageId": text, "role": "ROLE_AGENT", "parts": [{"text": text}]})
    }

    #[test]
    fn without_a_status_message_the_artifacts_are_the_answer_data_as_json() {
        let snapshot = of_task(&task(json!({
            "id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "42"}, {"data": {"x": 1}}]}]
        })));
        assert_eq!(snapshot.state, TaskState::Completed);
        assert_eq!(snapshot.text.as_deref(), Some("42\n{\"x\":1}"));
    }

    #[test]
    fn a_generic_status_text_never_hides_an_artifact() {
        // LangGraph's shape: a generic completion text, the answer in an artifact.
        assert_eq!(
            text_of(json!({
                "id": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_COMPLETED", "message": agent_says("Task completed successfully")},
                "artifacts": [
                    {"artifactId": "a", "parts": [{"text": "The ledger balances: 1,204.50"}]},
                    {"artifactId": "b", "parts": [{"data": {"balanced": true}}]}
                ]
            }))
            .as_deref(),
            Some("Task completed successfully\n\nThe ledger balances: 1,204.50\n\n{\"balanced\":true}")
        );
    }

    #[test]
    fn a_generic_status_text_never_hides_the_history_s_answer() {
        // LangGraph's GetTask: a generic completion text, no artifact, the answer in the history.
        let langgraph = json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "message": agent_says("Task completed successfully")},
            "history": [
                {"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "Is March balanced?"}]},
                agent_says("March is balanced.")
            ]
        });
        assert_eq!(
            text_of(langgraph).as_deref(),
            Some("Task completed successfully\n\nMarch is balanced.")
        );
        // The a2a-sdk keeps earlier status messages in the history: an ended task says the last
        // one after its answer.
        let progress = json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "message": agent_says("done: 42")},
            "history": [agent_says("working on it")]
        });
        assert_eq!(
            text_of(progress.clone()).as_deref(),
            Some("done: 42\n\nworking on it")
        );
        // A progress note the task said before this read is not said again.
        assert_eq!(
            of_task_after(&task(progress), Some("working on it"))
                .text
                .as_deref(),
            Some("done: 42")
        );
        // An answer to an earlier turn, a user message after it, is not this turn's.
        let earlier_turn = json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "message": agent_says("Savings: 310.00")},
            "history": [agent_says("Which account?"), {"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "savings"}]}]
        });
        assert_eq!(text_of(earlier_turn).as_deref(), Some("Savings: 310.00"));
        // The history repeating the status message says it once.
        let repeated = json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "message": agent_says("42")},
            "history": [agent_says("42")]
        });
        assert_eq!(text_of(repeated).as_deref(), Some("42"));
    }

    #[test]
    fn a_task_not_ended_says_its_status_message_not_its_history() {
        // A waiting task's question is its status message; an earlier message is not news.
        assert_eq!(
            text_of(json!({
                "id": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": agent_says("Which account?")},
                "history": [agent_says("working on it")]
            }))
            .as_deref(),
            Some("Which account?")
        );
    }

    #[test]
    fn a_status_message_an_artifact_repeats_is_said_once() {
        // Baton's own shape: the answer as the status message and as an artifact.
        assert_eq!(
            text_of(json!({
                "id": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_COMPLETED", "message": agent_says("42")},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "42"}]}]
            }))
            .as_deref(),
            Some("42")
        );
    }

    #[test]
    fn with_neither_status_message_nor_artifact_the_history_s_last_agent_message_answers() {
        // Microsoft Agent Framework's shape: the answer in a WORKING message, then an empty
        // completion.
        assert_eq!(
            text_of(json!({
                "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                "history": [
                    {"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "Is March balanced?"}]},
                    agent_says("Working on it"),
                    agent_says("March is balanced."),
                    {"messageId": "u2", "role": "ROLE_USER", "parts": [{"text": "thanks"}]}
                ]
            }))
            .as_deref(),
            Some("March is balanced.")
        );
        assert_eq!(
            text_of(
                json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}})
            ),
            None
        );
    }

    #[test]
    fn the_envelope_blank_text_and_files_are_not_words() {
        assert_eq!(
            text_of(json!({
                "id": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_COMPLETED", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [
                    {"text": "  "},
                    {"data": {"kind": "task"}, "mediaType": ENVELOPE_MEDIA_TYPE},
                    {"url": "https://files.example/a.png", "mediaType": "image/png"}
                ]}},
                "history": [agent_says("from history")]
            }))
            .as_deref(),
            Some("from history")
        );
    }

    #[test]
    fn a_status_update_keeps_the_earlier_text_when_it_has_none() {
        let before = RemoteSnapshot {
            remote_task_id: "t1".into(),
            state: TaskState::Working,
            sub_state: None,
            text: Some("halfway".into()),
            carries_files: false,
            usage: None,
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
                carries_files: false,
                usage: None,
            }
        );
    }

    #[test]
    fn files_and_data_in_artifacts_are_marked_for_collection_and_the_envelope_is_not() {
        let with = |parts: Value| {
            of_task(&task(json!({
                "id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": parts}]
            })))
            .carries_files
        };
        assert!(with(
            json!([{"text": "see"}, {"raw": "aGk=", "mediaType": "text/csv"}])
        ));
        assert!(with(json!([{"url": "https://files.example.com/a.png"}])));
        assert!(with(json!([{"data": {"rows": 2}}])));
        assert!(!with(json!([{"text": "just words"}])));
        assert!(!with(json!([
            {"data": {"kind": "task", "payload": {}}, "mediaType": ENVELOPE_MEDIA_TYPE}
        ])));
    }

    #[test]
    fn a_streamed_file_marks_the_snapshot_and_a_later_status_keeps_the_mark() {
        let before = of_task(&task(json!({
            "id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}
        })));
        let chunk: StreamResponse = serde_json::from_value(json!({"artifactUpdate": {
            "taskId": "t1", "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"raw": "aGk=", "mediaType": "image/png"}]}
        }}))
        .unwrap();
        let marked = after_event(&before, &chunk).expect("a file is news");
        assert!(marked.carries_files);
        assert_eq!(marked.text, None, "a file alone says no words");
        let done: StreamResponse = serde_json::from_value(json!({"statusUpdate": {
            "taskId": "t1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}
        }}))
        .unwrap();
        assert!(after_event(&marked, &done).unwrap().carries_files);
        assert_eq!(
            after_event(&marked, &chunk),
            None,
            "the same file again is not news"
        );
    }
}
