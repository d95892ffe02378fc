//! Delegation counters. They are recorded by activities, never by workflow code: workflow code
//! runs again whenever a workflow is replayed (after a cache eviction, or to answer a query), and
//! the SDK does not always flag those runs as replays. An activity runs once per attempt.
//!
//! - `start_agent_task` counts the start;
//! - `record_delegation_ends`, a local activity of the parent, counts the rows it resolved since
//!   it last ran. Its result is a marker in the parent's history, so a replay never runs it again.
//!
//! Either may count twice only when a worker dies after the activity ran and before Temporal
//! recorded it.

use baton_metrics::DelegationOutcome;
use baton_proto::{DelegationEnd, TaskState};

pub(crate) fn record_started(task_queue: &str, agent: &str) {
    baton_metrics::global().delegation_started(task_queue, agent);
}

pub(crate) fn record_ends(task_queue: &str, ends: &[DelegationEnd]) {
    for end in ends {
        if let Some(outcome) = outcome_of(end.state) {
            baton_metrics::global().delegation_finished(task_queue, &end.agent, outcome);
        }
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
