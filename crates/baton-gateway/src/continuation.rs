//! A new task that continues a context: its model starts from the conversation of the caller's
//! newest task in that context (which itself may have continued an earlier one), bounded.

use baton_proto::{TaskMessage, TaskView};

/// The most messages a continuation carries.
pub const EARLIER_MESSAGES: usize = 20;
/// The most characters of text a continuation carries.
pub const EARLIER_CHARS: usize = 32_000;

/// The conversation a task continuing `previous`'s context starts from: what `previous` started
/// from, then its own messages, cut to the newest that fit [`EARLIER_MESSAGES`] and
/// [`EARLIER_CHARS`], oldest first. A message is kept whole or not at all.
pub fn continuing(previous: &TaskView) -> Vec<TaskMessage> {
    let all = previous.earlier.iter().chain(&previous.messages);
    let mut kept: Vec<TaskMessage> = Vec::new();
    let mut chars = 0;
    for message in all.rev().take(EARLIER_MESSAGES) {
        chars += message.text.chars().count();
        if chars > EARLIER_CHARS {
            break;
        }
        kept.push(message.clone());
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::MessageRole;

    fn message(n: usize, text: &str) -> TaskMessage {
        TaskMessage {
            message_id: format!("m-{n}"),
            role: if n.is_multiple_of(2) {
                MessageRole::User
            } else {
                MessageRole::Agent
            },
            text: text.to_string(),
            attachments: Vec::new(),
        }
    }

    fn view(earlier: Vec<TaskMessage>, messages: Vec<TaskMessage>) -> TaskView {
        let mut view: TaskView = serde_json::from_value(serde_json::json!({
            "task_id": "t-1", "name": "n", "state": "TASK_STATE_COMPLETED", "sub_tasks": [],
            "turns": 1, "messages": [], "participants": [], "event_seq": 0, "goal": "g",
            "description": "", "acceptance_criteria": [], "parent_tasks": []
        }))
        .unwrap();
        view.earlier = earlier;
        view.messages = messages;
        view
    }

    #[test]
    fn a_continuation_carries_what_the_previous_task_started_from_and_said() {
        let earlier = vec![message(0, "first question"), message(1, "first answer")];
        let own = vec![message(2, "second question"), message(3, "second answer")];
        let carried = continuing(&view(earlier.clone(), own.clone()));
        assert_eq!(carried, [earlier, own].concat());
    }

    #[test]
    fn only_the_newest_messages_that_fit_are_carried_whole_and_in_order() {
        let many: Vec<TaskMessage> = (0..30).map(|n| message(n, "x")).collect();
        let carried = continuing(&view(Vec::new(), many.clone()));
        assert_eq!(carried, many[10..].to_vec());

        let big = "y".repeat(EARLIER_CHARS - 10);
        let messages = vec![message(0, "older"), message(1, &big), message(2, "newest")];
        let carried = continuing(&view(Vec::new(), messages.clone()));
        assert_eq!(
            carried,
            messages[1..].to_vec(),
            "the older one no longer fits"
        );

        let too_big = "z".repeat(EARLIER_CHARS + 1);
        assert!(continuing(&view(Vec::new(), vec![message(0, &too_big)])).is_empty());
    }
}
