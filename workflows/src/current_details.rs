//! The "current details" of a workflow: the Markdown the Temporal Web UI shows on a workflow's
//! page, and the one thing the SDK's answer to `__temporal_workflow_metadata` carries (it answers
//! that query itself, without the query definitions, so the details name the queries instead).
//! Set on every change of state; not in history, so a replay sets them again the same way.

use baton_proto::{RemoteSnapshot, TaskState, WatchKind};

/// The longest message quoted; the rest is in the `task` query.
const QUOTE_CHARS: usize = 200;

const TASK_QUERIES: &str = "Queries: `task` (the task as A2A clients see it: state, messages, \
    artifacts, sub-tasks), `events_since` (its event log after a cursor, `0` for all), \
    `push_configs` (its push notification configs).";

const REMOTE_QUERIES: &str =
    "Queries: `task` (the agent, its task's last state, the watch, whether it is closed).";

/// A task's details: its state, sub-state and message, then its queries.
pub fn task_details(state: TaskState, sub_state: Option<&str>, message: Option<&str>) -> String {
    let mut details = format!("**{state}**");
    if let Some(sub_state) = sub_state {
        details.push_str(&format!(" ({sub_state})"));
    }
    if let Some(message) = message {
        details.push_str(&format!(": {}", quote(message)));
    }
    format!("{details}\n\n{TASK_QUERIES}")
}

/// A stand-in's details: the agent, the remote task and its last reported state, how it is
/// watched, then its queries.
pub fn remote_details(agent: &str, last: &RemoteSnapshot, watch: Option<WatchKind>) -> String {
    let watched = match watch {
        Some(WatchKind::Push) => "watched by push",
        Some(WatchKind::Follow) => "followed (SubscribeToTask)",
        Some(WatchKind::Off) => "not watched: it resolves on the agent's answer",
        None => "registering its watch",
    };
    let mut details = format!(
        "Sub-task on **{agent}**, remote task `{}`: **{}**",
        last.remote_task_id, last.state
    );
    if let Some(sub_state) = &last.sub_state {
        details.push_str(&format!(" ({sub_state})"));
    }
    if let Some(text) = &last.text {
        details.push_str(&format!(": {}", quote(text)));
    }
    format!("{details}; {watched}.\n\n{REMOTE_QUERIES}")
}

/// `text` on one line, at most QUOTE_CHARS characters, with `…` when cut.
fn quote(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_says_its_state_and_names_its_queries() {
        assert_eq!(
            task_details(TaskState::Working, Some("awaiting-subtasks"), None),
            format!("**WORKING** (awaiting-subtasks)\n\n{TASK_QUERIES}")
        );
        let failed = task_details(TaskState::Failed, None, Some("the model\nrefuses"));
        assert!(
            failed.starts_with("**FAILED**: the model refuses\n\n"),
            "{failed}"
        );
        for query in ["`task`", "`events_since`", "`push_configs`"] {
            assert!(failed.contains(query), "{query}");
        }
    }

    #[test]
    fn long_messages_are_cut_on_a_character() {
        let long = "é".repeat(500);
        let details = task_details(TaskState::Completed, None, Some(&long));
        let quoted = details
            .strip_prefix("**COMPLETED**: ")
            .unwrap()
            .split("\n\n")
            .next()
            .unwrap();
        assert_eq!(quoted.chars().count(), QUOTE_CHARS + 1);
        assert!(quoted.ends_with('…'));
    }

    #[test]
    fn a_stand_in_says_where_its_task_is_and_how_it_is_watched() {
        let last = RemoteSnapshot {
            remote_task_id: "r-1".into(),
            state: TaskState::InputRequired,
            sub_state: None,
            text: Some("Which month?".into()),
            carries_files: false,
            usage: None,
        };
        assert_eq!(
            remote_details("ledger", &last, Some(WatchKind::Push)),
            format!(
                "Sub-task on **ledger**, remote task `r-1`: **INPUT_REQUIRED**: Which month?; \
                 watched by push.\n\n{REMOTE_QUERIES}"
            )
        );
        assert!(remote_details("ledger", &last, None).contains("registering its watch"));
        assert!(remote_details("ledger", &last, Some(WatchKind::Off)).contains("not watched"));
        assert!(remote_details("ledger", &last, Some(WatchKind::Follow)).contains("followed"));
    }
}
