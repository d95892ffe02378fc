//! What `baton task` prints in text mode, from A2A tasks and events: pure, so it is tested
//! without a gateway.

use a2a::{Message, Task, TaskState, TaskStatus};
use baton_a2a::snapshot::message_text;
use baton_core::attachments::whole_numbers;
use baton_gateway::{SUB_TASK_ROWS_KEY, TASK_METADATA_KEY};
use baton_proto::SubTaskRow;
use serde_json::Value;

/// The task's sub-task rows, as Baton's gateway publishes them beside the task extension. Read
/// over gRPC, metadata is a protobuf `Struct`, whose numbers (a row's token counts) are doubles.
pub fn sub_tasks_of(task: &Task) -> Vec<SubTaskRow> {
    task.metadata
        .as_ref()
        .and_then(|m| m.get(SUB_TASK_ROWS_KEY))
        .and_then(|rows| serde_json::from_value(whole_numbers(rows.clone())).ok())
        .unwrap_or_default()
}

/// The task's name, from the task extension.
fn name_of(task: &Task) -> Option<String> {
    task.metadata
        .as_ref()
        .and_then(|m| m.get(TASK_METADATA_KEY))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `TASK_STATE_INPUT_REQUIRED` → `INPUT_REQUIRED`.
pub fn state_name(state: &TaskState) -> String {
    let wire = serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{state:?}"));
    wire.trim_start_matches("TASK_STATE_").to_string()
}

/// The text parts of a message, joined; empty when there are none.
pub fn text_of(message: &Message) -> String {
    message_text(message).unwrap_or_default()
}

/// One line for a state change: `WORKING`, `INPUT_REQUIRED (awaiting-next-message): text`.
pub fn status_line(status: &TaskStatus, sub_state: Option<&str>) -> String {
    let mut line = state_name(&status.state);
    if let Some(sub_state) = sub_state {
        line.push_str(&format!(" ({sub_state})"));
    }
    if let Some(text) = status
        .message
        .as_ref()
        .map(text_of)
        .filter(|t| !t.is_empty())
    {
        line.push_str(": ");
        line.push_str(&text);
    }
    line
}

/// One line for a sub-task row: `  sub-task balance on ledger: COMPLETED (task t-9): 42`.
pub fn sub_task_line(row: &SubTaskRow) -> String {
    let mut line = format!("  sub-task {} on {}: {}", row.name, row.agent, row.state);
    if let Some(sub_state) = &row.sub_state {
        line.push_str(&format!(" ({sub_state})"));
    }
    if let Some(id) = &row.remote_task_id {
        line.push_str(&format!(" [task {id}]"));
    }
    if let Some(summary) = row.summary.as_ref().filter(|s| !s.is_empty()) {
        line.push_str(": ");
        line.push_str(&first_line(summary, 100));
    }
    line
}

/// The rows of `now` that are new or changed since `before`.
pub fn changed_rows<'a>(before: &[SubTaskRow], now: &'a [SubTaskRow]) -> Vec<&'a SubTaskRow> {
    now.iter().filter(|row| !before.contains(row)).collect()
}

/// `baton task show`: the task, its state and answer, and its sub-tasks.
pub fn task_text(task: &Task) -> String {
    let mut lines = vec![format!("task {}", task.id)];
    if let Some(name) = name_of(task) {
        lines.push(format!("name: {name}"));
    }
    lines.push(format!("context: {}", task.context_id));
    lines.push(format!("state: {}", status_line(&task.status, None)));
    let rows = sub_tasks_of(task);
    if !rows.is_empty() {
        lines.push("sub-tasks:".into());
        lines.extend(rows.iter().map(sub_task_line));
    }
    lines.join("\n")
}

/// `baton task list`: one line a task.
pub fn list_text(tasks: &[Task]) -> String {
    if tasks.is_empty() {
        return "no tasks".into();
    }
    tasks
        .iter()
        .map(|task| {
            format!(
                "{}  {:<15} {}",
                task.id,
                state_name(&task.status.state),
                name_of(task).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a task's state means for the exit code: 0 done or waiting for the caller, 1 ended
/// without success, 3 still running.
pub fn exit_code_of(state: &TaskState) -> u8 {
    match state {
        TaskState::Completed | TaskState::InputRequired | TaskState::AuthRequired => 0,
        TaskState::Failed | TaskState::Canceled | TaskState::Rejected => 1,
        _ => 3,
    }
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(value: Value) -> Task {
        serde_json::from_value(value).unwrap()
    }

    fn row(state: baton_proto::TaskState, summary: Option<&str>) -> SubTaskRow {
        SubTaskRow {
            stand_in_id: "t.1".into(),
            name: "balance".into(),
            agent: "ledger".into(),
            remote_task_id: Some("r-9".into()),
            context_id: None,
            state,
            sub_state: None,
            summary: summary.map(str::to_string),
            resolved: false,
            attachments: Vec::new(),
            usage: None,
        }
    }

    #[test]
    fn a_status_line_names_the_state_the_sub_state_and_the_text() {
        let status: TaskStatus = serde_json::from_value(json!({
            "state": "TASK_STATE_INPUT_REQUIRED",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "Order 1042 shipped."}]}
        }))
        .unwrap();
        assert_eq!(
            status_line(&status, Some("awaiting-next-message")),
            "INPUT_REQUIRED (awaiting-next-message): Order 1042 shipped."
        );
        let working: TaskStatus =
            serde_json::from_value(json!({"state": "TASK_STATE_WORKING"})).unwrap();
        assert_eq!(status_line(&working, None), "WORKING");
    }

    #[test]
    fn a_sub_task_line_shows_the_agent_state_task_and_first_line_of_the_answer() {
        let done = row(baton_proto::TaskState::Completed, Some("42\nmore"));
        assert_eq!(
            sub_task_line(&done),
            "  sub-task balance on ledger: COMPLETED [task r-9]: 42…"
        );
        let long = row(baton_proto::TaskState::Working, Some(&"x".repeat(150)));
        assert_eq!(
            sub_task_line(&long).chars().filter(|c| *c == 'x').count(),
            100
        );
    }

    #[test]
    fn only_new_or_changed_rows_are_printed_again() {
        let working = row(baton_proto::TaskState::Working, None);
        let done = row(baton_proto::TaskState::Completed, Some("42"));
        assert_eq!(changed_rows(&[], std::slice::from_ref(&working)).len(), 1);
        assert!(
            changed_rows(
                std::slice::from_ref(&working),
                std::slice::from_ref(&working)
            )
            .is_empty()
        );
        assert_eq!(
            changed_rows(std::slice::from_ref(&working), std::slice::from_ref(&done)),
            vec![&done]
        );
    }

    #[test]
    fn rows_read_over_grpc_keep_their_token_counts() {
        let mut row = serde_json::to_value(row(baton_proto::TaskState::Completed, None)).unwrap();
        row["usage"] = json!({"input_tokens": 1888.0, "output_tokens": 2.0});
        let t = task(json!({
            "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
            "metadata": {SUB_TASK_ROWS_KEY: [row]}
        }));
        let rows = sub_tasks_of(&t);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].usage.map(|u| u.tokens()), Some(1890));
    }

    #[test]
    fn show_and_list_read_the_name_from_the_task_extension_and_the_rows_beside_it() {
        let rows =
            [serde_json::to_value(row(baton_proto::TaskState::Completed, Some("42"))).unwrap()];
        let t = task(json!({
            "id": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "metadata": {TASK_METADATA_KEY: {"name": "books"}, SUB_TASK_ROWS_KEY: rows}
        }));
        assert_eq!(
            task_text(&t),
            "task t-1\nname: books\ncontext: c-1\nstate: COMPLETED\nsub-tasks:\n  sub-task balance on ledger: COMPLETED [task r-9]: 42"
        );
        assert_eq!(list_text(&[t]), "t-1  COMPLETED       books");
        assert_eq!(list_text(&[]), "no tasks");
    }

    #[test]
    fn the_exit_code_says_whether_the_task_succeeded() {
        assert_eq!(exit_code_of(&TaskState::Completed), 0);
        assert_eq!(exit_code_of(&TaskState::InputRequired), 0);
        assert_eq!(exit_code_of(&TaskState::Failed), 1);
        assert_eq!(exit_code_of(&TaskState::Canceled), 1);
        assert_eq!(exit_code_of(&TaskState::Rejected), 1);
        assert_eq!(exit_code_of(&TaskState::Working), 3);
    }
}
