//! Delegation counters, recorded by the parent: a delegation starts when its row is added and
//! finishes when the row is resolved. Nothing is recorded while the workflow replays, since a
//! replay re-runs code whose effects its history already holds (so a worker that crashes
//! between running the code and completing the workflow task may count a delegation twice).

use baton_metrics::DelegationOutcome;
use baton_proto::{SubTaskRow, TaskState};

pub(crate) fn started(replaying: bool, task_queue: &str, agent: &str) {
    if !replaying {
        baton_metrics::global().delegation_started(task_queue, agent);
    }
}

/// Records `after` as finished when it was resolved by the change from `before`.
pub(crate) fn resolved(
    replaying: bool,
    task_queue: &str,
    before: Option<&SubTaskRow>,
    after: Option<&SubTaskRow>,
) {
    let Some(after) = after.filter(|row| row.resolved) else {
        return;
    };
    if replaying || before.is_some_and(|row| row.resolved) {
        return;
    }
    if let Some(outcome) = outcome_of(after.state) {
        baton_metrics::global().delegation_finished(task_queue, &after.agent, outcome);
    }
}

fn outcome_of(state: TaskState) -> Option<DelegationOutcome> {
    match state {
        TaskState::Completed => Some(DelegationOutcome::Completed),
        TaskState::Failed => Some(DelegationOutcome::Failed),
        TaskState::Canceled => Some(DelegationOutcome::Canceled),
        TaskState::Rejected => Some(DelegationOutcome::Rejected),
        TaskState::Submitted
        | TaskState::Working
        | TaskState::InputRequired
        | TaskState::AuthRequired => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_terminal_state_has_an_outcome_and_no_other_state_does() {
        for state in TaskState::ALL {
            assert_eq!(
                outcome_of(state).is_some(),
                state.is_terminal(),
                "{state:?}"
            );
        }
        assert_eq!(
            outcome_of(TaskState::Canceled),
            Some(DelegationOutcome::Canceled)
        );
        assert_eq!(
            outcome_of(TaskState::Rejected),
            Some(DelegationOutcome::Rejected)
        );
    }
}
