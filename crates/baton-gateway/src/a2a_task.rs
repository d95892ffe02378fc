//! What Temporal knows of a task, as A2A 1.0 says it: the `task` query's view as an A2A `Task`,
//! and the event log as `StreamResponse` events.

use std::collections::HashMap;

use a2a::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatus,
    TaskStatusUpdateEvent,
};
use baton_a2a::rendering::{Contents, artifact_of, part_of};
use baton_core::a2a_state::to_a2a;
use baton_core::answer::{answer_artifacts, has_answered};
use baton_core::extensions::{BUDGET_EXTENSION, status_metadata, usage_metadata};
use baton_core::spawn_subtask::SELF_AGENT;
use baton_core::sub_tasks::{AWAITING_ANSWER, AWAITING_NEXT_MESSAGE};
use baton_core::usage::tree_usage;
use baton_proto::envelope::{AcceptanceCriterion, ENTITY_KIND_AGENT, EntityRef, ExtensionTaskRef};
use baton_proto::{
    EventEntry, MessageRole, SubTaskRow, TaskEnvelopePayload, TaskEvent, TaskMessage, TaskView,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Where the task extension keeps its data.
pub const TASK_METADATA_KEY: &str = "io.github.madarauchiha-314.tiny-harness/task";
/// Where Baton publishes its own sub-task rows (name, agent, state, summary), beside the task
/// extension, whose closed model has no room for them.
pub const SUB_TASK_ROWS_KEY: &str = "baton/sub-task-rows";

/// What a caller activated that shapes the `Task` it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// Whether it activated the task extension: only then does `Task.metadata` carry the
    /// extension's payload (tiny-harness's, in its snake_case), since a client that never asked
    /// for an extension is not sent its data.
    pub task_extension: bool,
}

/// The messages of `view` a rendering with `history_length` (as GetTask defines it; absent: all)
/// keeps.
pub fn kept_messages(view: &TaskView, history_length: Option<i32>) -> &[TaskMessage] {
    let keep = history_length.map_or(view.messages.len(), |n| n.max(0) as usize);
    &view.messages[view.messages.len().saturating_sub(keep)..]
}

/// The A2A `Task` for a view, as `reader` reads it; `history_length` as GetTask defines it
/// (absent: all). Stored attachments of the history are sent whole when `contents` holds their
/// bytes.
pub fn task_of(
    view: &TaskView,
    history_length: Option<i32>,
    reader: Reader,
    contents: &Contents,
) -> Task {
    let context_id = context_of(view);
    let history: Vec<Message> = kept_messages(view, history_length)
        .iter()
        .map(|m| message_with(&view.task_id, &context_id, m, contents))
        .collect();
    Task {
        id: view.task_id.clone(),
        context_id: context_id.clone(),
        status: status_of(view, &context_id),
        artifacts: artifacts_of(view, contents),
        history: (!history.is_empty()).then_some(history),
        metadata: Some(metadata_of(view, reader)),
    }
}

/// The stream events for log entries, in order. A status event carries the agent's latest
/// answer as its message when it parks or ends the task; the status that completes it (or parks
/// a conversation after its answer) follows one artifact update per artifact the task gives (its answer, then the files it made, their
/// bytes from `contents`), as GetTask shows them, so a client that reads only the stream gets
/// them all.
pub fn events_of(
    view: &TaskView,
    entries: &[EventEntry],
    contents: &Contents,
) -> Vec<StreamResponse> {
    let context_id = context_of(view);
    let mut last_answer: Option<&TaskMessage> = None;
    let mut out = Vec::new();
    for entry in entries {
        match &entry.event {
            TaskEvent::Message { message } if message.role == MessageRole::Agent => {
                last_answer = Some(message);
            }
            TaskEvent::Status {
                state,
                sub_state,
                message,
            } => {
                if has_answered(*state, sub_state.as_deref()) {
                    let artifacts = artifacts_of(view, contents).unwrap_or_default();
                    out.extend(artifacts.into_iter().map(|artifact| {
                        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                            task_id: view.task_id.clone(),
                            context_id: context_id.clone(),
                            artifact,
                            append: None,
                            last_chunk: Some(true),
                            metadata: None,
                        })
                    }));
                }
                let says = message
                    .as_ref()
                    .map(|text| {
                        agent_message(
                            &view.task_id,
                            &context_id,
                            &format!("{}:status:{}", view.task_id, entry.seq),
                            text,
                        )
                    })
                    .or_else(|| {
                        (state.is_terminal() || state.is_interrupted())
                            .then_some(last_answer)
                            .flatten()
                            .map(|m| message_of(&view.task_id, &context_id, m))
                    });
                out.push(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: view.task_id.clone(),
                    context_id: context_id.clone(),
                    status: TaskStatus {
                        state: to_a2a(*state),
                        message: says,
                        timestamp: parse_time(&entry.at),
                    },
                    metadata: sub_state.as_ref().map(|s| status_metadata(s)),
                }));
            }
            _ => {}
        }
    }
    out
}

fn context_of(view: &TaskView) -> String {
    view.context_id
        .clone()
        .unwrap_or_else(|| view.task_id.clone())
}

fn status_of(view: &TaskView, context_id: &str) -> TaskStatus {
    let message = match &view.status_message {
        Some(text) => Some(agent_message(
            &view.task_id,
            context_id,
            &format!("{}:status", view.task_id),
            text,
        )),
        None if view.state.is_terminal() || view.state.is_interrupted() => view
            .messages
            .iter()
            .rev()
            .find(|m| m.role == MessageRole::Agent)
            .map(|m| message_of(&view.task_id, context_id, m)),
        None => None,
    };
    TaskStatus {
        state: to_a2a(view.state),
        message,
        timestamp: view.updated_at.as_deref().and_then(parse_time),
    }
}

/// The artifacts of a task that has answered, as A2A says them; none before.
fn artifacts_of(view: &TaskView, contents: &Contents) -> Option<Vec<Artifact>> {
    let artifacts = answer_artifacts(view);
    (!artifacts.is_empty()).then(|| {
        artifacts
            .iter()
            .map(|artifact| artifact_of(&view.task_id, artifact, contents))
            .collect()
    })
}

fn metadata_of(view: &TaskView, reader: Reader) -> HashMap<String, Value> {
    let mut metadata = HashMap::new();
    if reader.task_extension {
        metadata.insert(
            TASK_METADATA_KEY.to_string(),
            serde_json::to_value(task_extension(view))
                .expect("the task extension always serialises"),
        );
    }
    metadata.insert(
        SUB_TASK_ROWS_KEY.to_string(),
        serde_json::to_value(&view.sub_tasks).expect("sub-task rows always serialise"),
    );
    if let Some(sub_state) = &view.sub_state {
        metadata.extend(status_metadata(sub_state));
    }
    metadata.insert(
        BUDGET_EXTENSION.to_string(),
        usage_metadata(view.usage, tree_usage(view.usage, &view.sub_tasks)),
    );
    metadata
}

/// The task extension data of a task, as tiny-harness publishes it: whole, and only with
/// values its closed model takes (a reasoning effort or a sub-task's sub-state it does not
/// know is left out rather than published).
pub fn task_extension(view: &TaskView) -> TaskEnvelopePayload {
    TaskEnvelopePayload {
        name: Some(view.name.clone()),
        goal: Some(view.goal.clone()),
        description: Some(view.description.clone()),
        acceptance_criteria: Some(AcceptanceCriterion::all_open(&view.acceptance_criteria)),
        participants: Some(view.participants.clone()),
        parent_tasks: Some(
            view.parent_tasks
                .iter()
                .map(ExtensionTaskRef::from)
                .collect(),
        ),
        sub_tasks: Some(view.sub_tasks.iter().map(sub_task_ref).collect()),
        lifecycle: view.lifecycle,
        model: view.model.clone(),
        reasoning_effort: view
            .reasoning_effort
            .clone()
            .filter(|effort| PUBLISHED_EFFORTS.contains(&effort.as_str())),
        ..TaskEnvelopePayload::default()
    }
}

/// The reasoning efforts the published extension takes.
const PUBLISHED_EFFORTS: [&str; 3] = ["low", "medium", "high"];

/// A sub-task row as the extension names it: the task on its agent (`self` is this agent, so
/// no agent), with the state its parent last heard.
fn sub_task_ref(row: &SubTaskRow) -> ExtensionTaskRef {
    let on_self = row.agent == SELF_AGENT;
    ExtensionTaskRef {
        task_id: row
            .remote_task_id
            .clone()
            .unwrap_or_else(|| row.stand_in_id.clone()),
        agent: (!on_self).then(|| EntityRef {
            kind: ENTITY_KIND_AGENT.to_string(),
            id: row.agent.clone(),
            version: None,
        }),
        state: Some(row.state.short_name().to_string()),
        sub_state: row
            .sub_state
            .clone()
            .filter(|s| s == AWAITING_NEXT_MESSAGE || s == AWAITING_ANSWER),
    }
}

fn message_of(task_id: &str, context_id: &str, message: &TaskMessage) -> Message {
    message_with(task_id, context_id, message, &Contents::none())
}

/// `message` as A2A says it: its text (unless it has none and carries files), then each
/// attachment as a file or data part.
fn message_with(
    task_id: &str,
    context_id: &str,
    message: &TaskMessage,
    contents: &Contents,
) -> Message {
    let files_alone = message.text.is_empty() && !message.attachments.is_empty();
    let parts = (!files_alone)
        .then(|| Part::text(message.text.clone()))
        .into_iter()
        .chain(
            message
                .attachments
                .iter()
                .enumerate()
                .map(|(index, attachment)| part_of(attachment, index, contents)),
        )
        .collect();
    Message {
        message_id: message.message_id.clone(),
        context_id: Some(context_id.to_string()),
        task_id: Some(task_id.to_string()),
        role: match message.role {
            MessageRole::User => Role::User,
            MessageRole::Agent => Role::Agent,
        },
        parts,
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    }
}

fn agent_message(task_id: &str, context_id: &str, id: &str, text: &str) -> Message {
    message_of(
        task_id,
        context_id,
        &TaskMessage {
            message_id: id.to_string(),
            role: MessageRole::Agent,
            text: text.to_string(),
            attachments: Vec::new(),
        },
    )
}

fn parse_time(at: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(at)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::PartContent;
    use baton_proto::{Attachment, AttachmentKind, ContentRef, TaskState, ToolFile};
    use bytes::Bytes;

    fn completed_view() -> TaskView {
        let csv = Attachment {
            kind: AttachmentKind::File,
            name: Some("order-1043.csv".into()),
            media_type: "text/csv".into(),
            content: Some(ContentRef {
                digest: "sha256:aa".into(),
                size: 8,
            }),
            url: None,
        };
        let view: TaskView = serde_json::from_value(serde_json::json!({
            "task_id": "t-1", "name": "t", "state": "TASK_STATE_COMPLETED", "sub_tasks": [],
            "last_answer": "Here it is.", "turns": 2,
        }))
        .unwrap();
        TaskView {
            tool_files: vec![ToolFile {
                tool: "order_csv".into(),
                attachment: csv,
            }],
            ..view
        }
    }

    fn status(seq: u64, state: TaskState) -> EventEntry {
        EventEntry {
            seq,
            at: "2026-12-06T07:00:00Z".into(),
            event: TaskEvent::Status {
                state,
                sub_state: None,
                message: None,
            },
        }
    }

    #[test]
    fn the_status_that_completes_a_task_follows_its_artifacts_whole() {
        let view = completed_view();
        let mut contents = Contents::none();
        contents.insert("sha256:aa".into(), Bytes::from_static(b"order,\n1"));
        let events = events_of(
            &view,
            &[
                status(1, TaskState::Working),
                status(2, TaskState::Completed),
            ],
            &contents,
        );
        let kinds: Vec<&str> = events
            .iter()
            .map(|event| match event {
                StreamResponse::StatusUpdate(_) => "status",
                StreamResponse::ArtifactUpdate(_) => "artifact",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["status", "artifact", "artifact", "status"]);
        let StreamResponse::ArtifactUpdate(file) = &events[2] else {
            unreachable!()
        };
        assert_eq!(file.artifact.artifact_id, "t-1:tool:1");
        assert_eq!(
            file.artifact.description.as_deref(),
            Some("given by tool order_csv")
        );
        assert_eq!(file.last_chunk, Some(true));
        assert_eq!(
            file.artifact.parts[0].content,
            PartContent::Raw(b"order,\n1".to_vec())
        );
    }

    #[test]
    fn a_file_the_store_cannot_give_now_is_named_not_dropped() {
        let events = events_of(
            &completed_view(),
            &[status(2, TaskState::Completed)],
            &Contents::none(),
        );
        let StreamResponse::ArtifactUpdate(file) = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(
            file.artifact.parts[0].content,
            PartContent::Text("[file 1: order-1043.csv, text/csv, 8 B] (not available now)".into())
        );
    }

    #[test]
    fn a_conversation_parked_after_its_answer_gives_its_artifacts_and_one_waiting_for_an_answer_does_not()
     {
        let parked = |sub_state: &str| TaskView {
            state: TaskState::InputRequired,
            sub_state: Some(sub_state.into()),
            ..completed_view()
        };
        let event = |sub_state: &str| EventEntry {
            event: TaskEvent::Status {
                state: TaskState::InputRequired,
                sub_state: Some(sub_state.into()),
                message: None,
            },
            ..status(2, TaskState::InputRequired)
        };
        let view = parked(AWAITING_NEXT_MESSAGE);
        let events = events_of(&view, &[event(AWAITING_NEXT_MESSAGE)], &Contents::none());
        assert_eq!(events.len(), 3, "{events:?}");
        let task = task_of(
            &view,
            None,
            Reader {
                task_extension: false,
            },
            &Contents::none(),
        );
        assert_eq!(task.artifacts.map(|a| a.len()), Some(2));

        let asking = parked(AWAITING_ANSWER);
        assert_eq!(
            events_of(&asking, &[event(AWAITING_ANSWER)], &Contents::none()).len(),
            1
        );
        let task = task_of(
            &asking,
            None,
            Reader {
                task_extension: false,
            },
            &Contents::none(),
        );
        assert_eq!(task.artifacts, None);
    }

    #[test]
    fn a_message_of_files_alone_has_no_empty_text_part() {
        let view = completed_view();
        let files_alone = TaskMessage {
            message_id: "m-1".into(),
            role: MessageRole::User,
            text: String::new(),
            attachments: vec![view.tool_files[0].attachment.clone()],
        };
        let message = message_with("t-1", "c-1", &files_alone, &Contents::none());
        assert_eq!(message.parts.len(), 1);
        assert!(
            matches!(message.parts[0].content, PartContent::Text(ref t) if t.starts_with("[file 1"))
        );
        let empty = TaskMessage {
            attachments: Vec::new(),
            ..files_alone
        };
        let message = message_with("t-1", "c-1", &empty, &Contents::none());
        assert_eq!(message.parts, vec![Part::text("")]);
    }

    #[test]
    fn a_task_that_fails_streams_no_artifacts() {
        let view = TaskView {
            state: TaskState::Failed,
            ..completed_view()
        };
        let events = events_of(&view, &[status(2, TaskState::Failed)], &Contents::none());
        assert_eq!(events.len(), 1);
    }
}
