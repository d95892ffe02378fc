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
/// after the last result arrives, it takes one more turn) or a sub-task is
/// still unresolved (the task waits for it).
pub fn decide_completion(
    answered_without_tools: bool,
    sub_tasks: &[SubTaskRow],
    pending_notes: usize,
) -> Completion {
    if !answered_without_tools || pending_notes > 0 {
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
            workflow_id: "parent.1".to_string(),
            name: "check".to_string(),
            agent: "ledger".to_string(),
            remote_task_id: Some("t-1".to_string()),
            state: if resolved {
                TaskState::Completed
            } else {
                TaskState::Working
            },
            sub_state: None,
            summary: None,
            resolved,
        }
    }

    #[test]
    fn a_turn_that_called_tools_takes_another_turn_whatever_else() {
        for sub_tasks in [vec![], vec![row(true)], vec![row(false)]] {
            for pending_notes in [0, 1, 3] {
                assert_eq!(
                    decide_completion(false, &sub_tasks, pending_notes),
                    Completion::TakeTurn,
                    "{sub_tasks:?} {pending_notes}"
                );
            }
        }
    }

    #[test]
    fn an_answer_with_nothing_open_completes() {
        assert_eq!(decide_completion(true, &[], 0), Completion::Complete);
    }

    #[test]
    fn an_answer_with_only_resolved_sub_tasks_completes() {
        assert_eq!(
            decide_completion(true, &[row(true), row(true)], 0),
            Completion::Complete
        );
    }

    #[test]
    fn an_answer_with_an_unresolved_sub_task_waits() {
        assert_eq!(
            decide_completion(true, &[row(true), row(false)], 0),
            Completion::WaitForSubTasks
        );
    }

    #[test]
    fn a_pending_note_takes_one_more_turn_before_completing() {
        assert_eq!(
            decide_completion(true, &[row(true)], 1),
            Completion::TakeTurn
        );
        assert_eq!(decide_completion(true, &[], 2), Completion::TakeTurn);
    }

    #[test]
    fn a_pending_note_is_read_before_waiting_for_the_rest() {
        assert_eq!(
            decide_completion(true, &[row(true), row(false)], 1),
            Completion::TakeTurn
        );
    }
}
