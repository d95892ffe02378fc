//! When a task is done: the rule a parent applies after each model turn.

use baton_proto::SubTaskRow;

use crate::sub_tasks::unresolved;

/// What the task does after a model turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Take another model turn.
    TakeTurn,
    /// Wait for a `child_done` (or a cancel): unresolved sub-tasks remain.
    WaitForSubTasks,
    /// The task is done.
    Complete,
}

/// Decides what follows a model turn.
///
/// A turn that called tools is followed by another turn, to read their
/// results. A turn that answered without tools completes the task, unless
/// notes about sub-tasks are pending (the model must read a result first:
/// after the last result arrives, it takes one more turn), participant
/// messages arrived during the turn (each is answered), or a sub-task is
/// still unresolved (the task waits for it).
pub fn decide_completion(
    answered_without_tools: bool,
    sub_tasks: &[SubTaskRow],
    pending_notes: usize,
    unread_messages: u32,
) -> Completion {
    if !answered_without_tools || pending_notes > 0 || unread_messages > 0 {
        Completion::TakeTurn
    } else if !unresolved(sub_tasks).is_empty() {
        Completion::WaitForSubTasks
    } else {
        Completion::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::TaskState;

    fn row(resolved: bool) -> SubTaskRow {
        SubTaskRow {
            stand_in_id: "parent.1".to_string(),
            name: "check".to_string(),
            agent: "ledger".to_string(),
            remote_task_id: Some("t-1".to_string()),
            context_id: None,
            state: if resolved {
                TaskState::Completed
            } else {
                TaskState::Working
            },
            sub_state: None,
            summary: None,
            resolved,
            attachments: Vec::new(),
            usage: None,
        }
    }

    /// Every combination of what a turn can leave behind, against the rule as stated.
    #[test]
    fn every_combination_follows_the_rule() {
        let sub_task_sets = [
            vec![],
            vec![row(true)],
            vec![row(false)],
            vec![row(true), row(false)],
        ];
        for answered_without_tools in [false, true] {
            for sub_tasks in &sub_task_sets {
                for pending_notes in [0, 1, 3] {
                    for unread_messages in [0, 1, 2] {
                        let open = sub_tasks.iter().any(|r| !r.resolved);
                        let expected = if !answered_without_tools
                            || pending_notes > 0
                            || unread_messages > 0
                        {
                            Completion::TakeTurn
                        } else if open {
                            Completion::WaitForSubTasks
                        } else {
                            Completion::Complete
                        };
                        assert_eq!(
                            decide_completion(
                                answered_without_tools,
                                sub_tasks,
                                pending_notes,
                                unread_messages
                            ),
                            expected,
                            "tools done {answered_without_tools}, {sub_tasks:?}, \
                             {pending_notes} notes, {unread_messages} messages"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn an_answer_with_nothing_open_completes() {
        assert_eq!(decide_completion(true, &[], 0, 0), Completion::Complete);
    }

    #[test]
    fn an_answer_with_an_unresolved_sub_task_waits() {
        assert_eq!(
            decide_completion(true, &[row(true), row(false)], 0, 0),
            Completion::WaitForSubTasks
        );
    }

    #[test]
    fn a_pending_note_is_read_before_waiting_for_the_rest() {
        assert_eq!(
            decide_completion(true, &[row(true), row(false)], 1, 0),
            Completion::TakeTurn
        );
    }

    #[test]
    fn a_message_that_arrived_during_the_last_turn_is_answered_before_completing() {
        assert_eq!(decide_completion(true, &[], 0, 1), Completion::TakeTurn);
        assert_eq!(
            decide_completion(true, &[row(false)], 0, 1),
            Completion::TakeTurn
        );
    }
}
