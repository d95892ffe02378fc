//! The mapping between A2A's task states and Baton's, used by both halves of A2A.

use a2a::TaskState as A2aState;
use baton_proto::TaskState;

/// An A2A state in Baton's terms. UNSPECIFIED (a peer that printed a default) reads as SUBMITTED.
pub fn from_a2a(state: &A2aState) -> TaskState {
    match state {
        A2aState::Unspecified | A2aState::Submitted => TaskState::Submitted,
        A2aState::Working => TaskState::Working,
        A2aState::InputRequired => TaskState::InputRequired,
        A2aState::AuthRequired => TaskState::AuthRequired,
        A2aState::Completed => TaskState::Completed,
        A2aState::Failed => TaskState::Failed,
        A2aState::Canceled => TaskState::Canceled,
        A2aState::Rejected => TaskState::Rejected,
    }
}

/// Baton's state as A2A writes it.
pub fn to_a2a(state: TaskState) -> A2aState {
    match state {
        TaskState::Submitted => A2aState::Submitted,
        TaskState::Working => A2aState::Working,
        TaskState::InputRequired => A2aState::InputRequired,
        TaskState::AuthRequired => A2aState::AuthRequired,
        TaskState::Completed => A2aState::Completed,
        TaskState::Failed => A2aState::Failed,
        TaskState::Canceled => A2aState::Canceled,
        TaskState::Rejected => A2aState::Rejected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_a2a_state_maps_and_unspecified_reads_as_submitted() {
        let cases = [
            (A2aState::Unspecified, TaskState::Submitted),
            (A2aState::Submitted, TaskState::Submitted),
            (A2aState::Working, TaskState::Working),
            (A2aState::InputRequired, TaskState::InputRequired),
            (A2aState::AuthRequired, TaskState::AuthRequired),
            (A2aState::Completed, TaskState::Completed),
            (A2aState::Failed, TaskState::Failed),
            (A2aState::Canceled, TaskState::Canceled),
            (A2aState::Rejected, TaskState::Rejected),
        ];
        for (a2a, baton) in cases {
            assert_eq!(from_a2a(&a2a), baton, "{a2a:?}");
            if a2a != A2aState::Unspecified {
                assert_eq!(to_a2a(baton), a2a, "{baton:?}");
            }
        }
    }
}
