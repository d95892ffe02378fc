//! Choosing what the answer gives: the `choose_answer_files` tool. A task's answer gives its
//! caller every file and data part the task made (its tools', its sub-tasks'); with this tool
//! the model names the ones that belong with its answer instead, so drafts and intermediate
//! files stay with the task.

use baton_proto::{AnswerFiles, TaskView};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::answer::made_files;
use crate::spawn_subtask::{ATTACHMENT_UNKNOWN, ToolError};

/// The tool's name.
pub const CHOOSE_ANSWER_FILES: &str = "choose_answer_files";

/// What the model reads about the tool.
pub const CHOOSE_ANSWER_FILES_DESCRIPTION: &str = "Choose which files and data this task \
    made (its tools' and its sub-tasks') go to the caller with your answer, by name. Without a \
    choice every one goes; an empty list sends none. A later call replaces the choice.";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChooseArgs {
    attachments: Vec<String>,
}

/// The names the model's arguments choose. Bad JSON or an unknown field gives
/// [`INVALID_ARGUMENTS`](crate::spawn_subtask::INVALID_ARGUMENTS).
pub fn validate_choice(arguments: &str) -> Result<Vec<String>, ToolError> {
    let args: ChooseArgs = serde_json::from_str(arguments)
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))?;
    Ok(args.attachments)
}

/// The files of `view` that `names` choose, by name (the latest of a name winning). A name the
/// task made no file of refuses the choice, listing the names it did.
pub fn choose(names: &[String], view: &TaskView) -> Result<AnswerFiles, ToolError> {
    let made: Vec<_> = made_files(view).collect();
    let mut ids = Vec::new();
    for name in names {
        let Some(file) = made
            .iter()
            .rev()
            .find(|made| made.attachment.name.as_deref() == Some(name.as_str()))
        else {
            let mut available: Vec<String> = made
                .iter()
                .filter_map(|made| made.attachment.name.clone())
                .collect();
            available.sort();
            available.dedup();
            let listed = if available.is_empty() {
                "(none: this task made no named files)".to_string()
            } else {
                available.join(", ")
            };
            return Err(ToolError {
                code: ATTACHMENT_UNKNOWN.to_string(),
                message: format!("this task made no file '{name}'; it made: {listed}"),
                rejected: Some(name.clone()),
                available,
            });
        };
        if !ids.contains(&file.id) {
            ids.push(file.id.clone());
        }
    }
    Ok(AnswerFiles { ids })
}

/// What the model reads once its choice is taken.
pub fn chosen_content(names: &[String]) -> String {
    if names.is_empty() {
        "your answer will give no files".to_string()
    } else {
        format!("your answer will give: {}", names.join(", "))
    }
}

/// The JSON Schema of the tool's parameters, committed as
/// `docs/schemas/choose_answer_files.json`. Keys in alphabetical order.
pub fn choose_answer_files_schema() -> Value {
    json!({
        "additionalProperties": false,
        "properties": {
            "attachments": {
                "description": "Names of files this task made that go with your answer; [] for none.",
                "items": { "type": "string" },
                "type": "array"
            }
        },
        "required": ["attachments"],
        "type": "object"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn_subtask::INVALID_ARGUMENTS;
    use baton_proto::{Attachment, AttachmentKind, ContentRef, ToolFile};

    fn file(name: Option<&str>, digest: &str) -> Attachment {
        Attachment {
            kind: AttachmentKind::File,
            name: name.map(str::to_string),
            media_type: "text/csv".into(),
            content: Some(ContentRef {
                digest: digest.into(),
                size: 8,
            }),
            url: None,
        }
    }

    fn view() -> TaskView {
        let view: TaskView = serde_json::from_value(json!({
            "task_id": "t-1", "name": "t", "state": "TASK_STATE_WORKING", "turns": 2,
            "sub_tasks": [{"stand_in_id": "t-1.1", "name": "chart", "agent": "artist",
                           "state": "TASK_STATE_COMPLETED", "resolved": true,
                           "attachments": [{"kind": "file", "name": "chart.png",
                                            "media_type": "image/png"}]}],
        }))
        .unwrap();
        TaskView {
            tool_files: ["draft.csv", "final.csv", "final.csv"]
                .iter()
                .enumerate()
                .map(|(n, name)| ToolFile {
                    tool: "ledger".into(),
                    attachment: file(Some(name), &format!("sha256:{n}")),
                })
                .chain(std::iter::once(ToolFile {
                    tool: "ledger".into(),
                    attachment: file(None, "sha256:x"),
                }))
                .collect(),
            ..view
        }
    }

    #[test]
    fn files_are_chosen_by_name_the_latest_of_a_name_winning_each_once() {
        let names = ["chart.png", "final.csv", "chart.png"].map(String::from);
        let chosen = choose(&names, &view()).unwrap();
        assert_eq!(chosen.ids, ["t-1.1:1", "tool:3"]);
        assert_eq!(choose(&[], &view()).unwrap().ids, Vec::<String>::new());
    }

    #[test]
    fn a_name_the_task_made_no_file_of_is_refused_with_the_names_it_did() {
        let error = choose(&["report.pdf".into()], &view()).unwrap_err();
        assert_eq!(error.code, ATTACHMENT_UNKNOWN);
        assert_eq!(error.rejected.as_deref(), Some("report.pdf"));
        assert_eq!(error.available, ["chart.png", "draft.csv", "final.csv"]);
        assert!(
            error
                .message
                .contains("it made: chart.png, draft.csv, final.csv")
        );
        let nothing_made = TaskView {
            tool_files: Vec::new(),
            sub_tasks: Vec::new(),
            ..view()
        };
        let error = choose(&["a.csv".into()], &nothing_made).unwrap_err();
        assert!(
            error.message.contains("made no named files"),
            "{}",
            error.message
        );
    }

    #[test]
    fn bad_arguments_are_refused_with_the_reason() {
        for (arguments, message) in [
            ("{}", "missing field `attachments`"),
            (r#"{"attachments": "a.csv"}"#, "invalid type"),
            (r#"{"attachments": [], "all": true}"#, "unknown field `all`"),
            ("", "EOF while parsing"),
        ] {
            let error = validate_choice(arguments).expect_err(arguments);
            assert_eq!(error.code, INVALID_ARGUMENTS);
            assert!(
                error.message.contains(message),
                "{arguments}: {}",
                error.message
            );
        }
        assert_eq!(
            validate_choice(r#"{"attachments": ["a.csv"]}"#).unwrap(),
            ["a.csv"]
        );
    }

    #[test]
    fn the_model_reads_what_its_answer_will_give() {
        assert_eq!(chosen_content(&[]), "your answer will give no files");
        assert_eq!(
            chosen_content(&["a.csv".into(), "b.png".into()]),
            "your answer will give: a.csv, b.png"
        );
    }

    #[test]
    fn the_committed_schema_matches_the_code() {
        crate::committed_schema::check(
            "choose_answer_files.json",
            "choose_answer_files_schema",
            &choose_answer_files_schema(),
        );
    }
}
