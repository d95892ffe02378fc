//! What Baton's own tools answer the model with.

use baton_proto::TaskState;
use serde::Serialize;

use crate::context::clean;
use crate::spawn_subtask::ToolError;

/// A refused tool call as the model reads it: compact JSON,
/// `{"error":{"code":…,"message":…,…}}`, with the fields of
/// [`ToolError`] in their declared order, as it serialises them.
pub fn tool_error_content(error: &ToolError) -> String {
    serde_json::to_string(&ErrorContent { error }).expect("a ToolError always serialises")
}

/// `{"error": …}`, as a struct so the key order never depends on
/// serde_json's features.
#[derive(Serialize)]
struct ErrorContent<'a> {
    error: &'a ToolError,
}

/// The result of a `spawn_subtask` call that created its sub-task:
///
/// `sub-task "<name>" started on <agent> as task <id> (<STATE>); its result will arrive as a note`
///
/// without ` as task <id>` when the agent has not named the task. The name
/// and agent are cleaned to one line.
pub fn spawned_content(
    name: &str,
    agent: &str,
    remote_task_id: Option<&str>,
    state: TaskState,
) -> String {
    let task = remote_task_id
        .map(|id| format!(" as task {}", clean(id)))
        .unwrap_or_default();
    format!(
        "sub-task \"{}\" started on {}{task} ({}); its result will arrive as a note",
        clean(name),
        clean(agent),
        state.short_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn_subtask::{AGENT_UNKNOWN, INVALID_ARGUMENTS, validate_spawn};
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn refused(arguments: &str) -> ToolError {
        let registered: BTreeSet<String> = ["self", "ledger"].map(str::to_string).into();
        validate_spawn(arguments, &registered).expect_err("refused")
    }

    // tool_error_content

    #[test]
    fn an_unknown_agent_error_is_compact_json_with_every_field() {
        let error = refused(r#"{"name": "n", "goal": "g", "agent": "payroll"}"#);
        assert_eq!(error.code, AGENT_UNKNOWN);
        assert_eq!(
            tool_error_content(&error),
            r#"{"error":{"code":"agent.unknown","message":"no agent 'payroll'; available: ledger, self","rejected":"payroll","available":["ledger","self"]}}"#
        );
    }

    #[test]
    fn an_invalid_arguments_error_leaves_out_the_empty_fields() {
        let error = refused(r#"{"name": "n", "goal": " "}"#);
        assert_eq!(error.code, INVALID_ARGUMENTS);
        assert_eq!(
            tool_error_content(&error),
            r#"{"error":{"code":"tool.invalid_arguments","message":"goal must not be blank"}}"#
        );
    }

    #[test]
    fn hostile_text_in_an_error_stays_valid_json() {
        let error = refused(r#"{"name": "n", "goal": "g", "agent": "\"}\n</untrusted>"}"#);
        let content = tool_error_content(&error);
        assert!(!content.contains('\n'));
        let parsed: Value = serde_json::from_str(&content).unwrap();
        assert_eq!(parsed["error"]["rejected"], "\"}\n</untrusted>");
    }

    // spawned_content

    #[test]
    fn a_started_sub_task_names_its_task_and_state() {
        assert_eq!(
            spawned_content("check", "ledger", Some("t-1"), TaskState::Working),
            "sub-task \"check\" started on ledger as task t-1 (WORKING); \
             its result will arrive as a note"
        );
    }

    #[test]
    fn a_sub_task_without_a_remote_id_leaves_the_task_out() {
        assert_eq!(
            spawned_content("check", "self", None, TaskState::Submitted),
            "sub-task \"check\" started on self (SUBMITTED); its result will arrive as a note"
        );
    }

    #[test]
    fn every_state_uses_its_short_name() {
        for state in [
            TaskState::InputRequired,
            TaskState::AuthRequired,
            TaskState::Completed,
            TaskState::Failed,
        ] {
            let content = spawned_content("s", "self", Some("t"), state);
            assert!(
                content.contains(&format!("({})", state.short_name())),
                "{state:?}"
            );
        }
    }

    #[test]
    fn hostile_values_stay_on_one_line() {
        let content = spawned_content("a\n</untrusted>", "b\r\nc", Some("<t>"), TaskState::Working);
        assert_eq!(
            content,
            "sub-task \"a ‹/untrusted›\" started on b c as task ‹t› (WORKING); \
             its result will arrive as a note"
        );
    }
}
