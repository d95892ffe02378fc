//! What a task gives with its answer: the answer's text and the files and data parts it made
//! (its tools', its sub-tasks'), as artifacts by reference. GetTask, a stream and a push render
//! the same list.

use baton_proto::{AnswerArtifact, Attachment, TaskState, TaskView};

use crate::sub_tasks::AWAITING_NEXT_MESSAGE;

/// Whether a task in `state` has given its answer, so its artifacts stand: it completed, or it
/// is a conversation parked after its answer (which a delegating Baton takes as done).
pub fn has_answered(state: TaskState, sub_state: Option<&str>) -> bool {
    state == TaskState::Completed
        || (state == TaskState::InputRequired && sub_state == Some(AWAITING_NEXT_MESSAGE))
}

/// A file or data part the task made: one of its tools gave it, or one of its sub-tasks.
pub struct MadeFile<'a> {
    /// Unique in the task: `tool:<n>`, or `<stand-in id>:<n>` (1-based).
    pub id: String,
    /// Its place among its tool's or sub-task's files (0-based).
    pub index: usize,
    /// What made it, as the artifact's description says.
    pub by: String,
    /// The file.
    pub attachment: &'a Attachment,
}

/// The files and data parts the task made, in order: its tools', then its sub-tasks'.
pub fn made_files(view: &TaskView) -> impl Iterator<Item = MadeFile<'_>> {
    let from_tools = view
        .tool_files
        .iter()
        .enumerate()
        .map(|(index, file)| MadeFile {
            id: format!("tool:{}", index + 1),
            index,
            by: format!("given by tool {}", file.tool),
            attachment: &file.attachment,
        });
    let from_sub_tasks = view.sub_tasks.iter().flat_map(|row| {
        row.attachments
            .iter()
            .enumerate()
            .map(move |(index, attachment)| MadeFile {
                id: format!("{}:{}", row.stand_in_id, index + 1),
                index,
                by: format!("made by sub-task {} on {}", row.name, row.agent),
                attachment,
            })
    });
    from_tools.chain(from_sub_tasks)
}

/// The artifacts of `view` once it has answered, in order: its answer, then each file and data
/// part it made (those its model chose, when it chose). None before it has answered.
pub fn answer_artifacts(view: &TaskView) -> Vec<AnswerArtifact> {
    let Some(answer) = view
        .last_answer
        .as_ref()
        .filter(|_| has_answered(view.state, view.sub_state.as_deref()))
    else {
        return Vec::new();
    };
    let answer = AnswerArtifact {
        id: "answer".into(),
        name: "answer".into(),
        description: None,
        text: Some(answer.clone()),
        attachment: None,
    };
    let chosen = view.answer_files.as_ref();
    let files = made_files(view)
        .filter(|made| chosen.is_none_or(|chosen| chosen.ids.contains(&made.id)))
        .map(|made| AnswerArtifact {
            name: made.attachment.label(made.index),
            id: made.id,
            description: Some(made.by),
            text: None,
            attachment: Some(made.attachment.clone()),
        });
    std::iter::once(answer).chain(files).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sub_tasks::AWAITING_ANSWER;
    use baton_proto::{AnswerFiles, AttachmentKind, ContentRef, SubTaskRow, ToolFile};

    fn file(name: Option<&str>) -> Attachment {
        Attachment {
            kind: AttachmentKind::File,
            name: name.map(str::to_string),
            media_type: "text/csv".into(),
            content: Some(ContentRef {
                digest: "sha256:aa".into(),
                size: 8,
            }),
            url: None,
        }
    }

    fn answered() -> TaskView {
        let view: TaskView = serde_json::from_value(serde_json::json!({
            "task_id": "t-1", "name": "t", "state": "TASK_STATE_COMPLETED",
            "last_answer": "Here it is.", "turns": 2,
            "sub_tasks": [{"stand_in_id": "t-1.1", "name": "chart", "agent": "artist",
                           "state": "TASK_STATE_COMPLETED", "resolved": true}],
        }))
        .unwrap();
        let mut row: SubTaskRow = view.sub_tasks[0].clone();
        row.attachments = vec![file(None), file(Some("b.csv"))];
        TaskView {
            tool_files: vec![ToolFile {
                tool: "order_csv".into(),
                attachment: file(Some("order-1043.csv")),
            }],
            sub_tasks: vec![row],
            ..view
        }
    }

    #[test]
    fn an_answered_task_gives_its_answer_then_its_tools_then_its_sub_tasks_files() {
        let artifacts = answer_artifacts(&answered());
        let ids: Vec<&str> = artifacts.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["answer", "tool:1", "t-1.1:1", "t-1.1:2"]);
        let names: Vec<&str> = artifacts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["answer", "order-1043.csv", "file 1", "b.csv"]);
        assert_eq!(artifacts[0].text.as_deref(), Some("Here it is."));
        assert_eq!(artifacts[0].attachment, None);
        assert_eq!(
            artifacts[2].description.as_deref(),
            Some("made by sub-task chart on artist")
        );
        assert_eq!(artifacts[1].text, None);
    }

    #[test]
    fn a_task_whose_model_chose_gives_only_the_chosen_files() {
        let chose = |ids: &[&str]| TaskView {
            answer_files: Some(AnswerFiles {
                ids: ids.iter().map(ToString::to_string).collect(),
            }),
            ..answered()
        };
        let ids = |view: &TaskView| -> Vec<String> {
            answer_artifacts(view).into_iter().map(|a| a.id).collect()
        };
        assert_eq!(
            ids(&chose(&["t-1.1:2", "tool:1"])),
            ["answer", "tool:1", "t-1.1:2"]
        );
        assert_eq!(ids(&chose(&[])), ["answer"]);
    }

    #[test]
    fn only_a_task_that_has_answered_gives_artifacts() {
        let in_state = |state, sub_state: Option<&str>| TaskView {
            state,
            sub_state: sub_state.map(str::to_string),
            ..answered()
        };
        for (state, sub_state, gives) in [
            (TaskState::Completed, None, true),
            (TaskState::InputRequired, Some(AWAITING_NEXT_MESSAGE), true),
            (TaskState::InputRequired, Some(AWAITING_ANSWER), false),
            (TaskState::Working, None, false),
            (TaskState::Failed, None, false),
            (TaskState::Canceled, None, false),
        ] {
            let artifacts = answer_artifacts(&in_state(state, sub_state));
            assert_eq!(!artifacts.is_empty(), gives, "{state:?} {sub_state:?}");
        }
        let no_answer = TaskView {
            last_answer: None,
            ..answered()
        };
        assert!(answer_artifacts(&no_answer).is_empty());
    }
}
