//! `TaskWorkflow`'s patches, and one marker for all of them in a new run.
//!
//! Each `patched` that a run records costs a marker event and, since the SDK also upserts
//! `TemporalChangeVersion` alongside it, a search attribute write that visibility must index. A
//! new task used to record three to five of them. A run started on this code records
//! [`EVERY_PATCH`] once, at its first patch check, and takes every [`Patch`] without a marker of
//! its own. A history written before has no [`EVERY_PATCH`] marker, so its checks read each
//! patch's own marker, exactly as before.

use temporalio_sdk::{SyncWorkflowContext, WorkflowContext};

/// Recorded by a run started on code where every [`Patch`] applies.
const EVERY_PATCH: &str = "baton.every-patch-2026-12";

/// The patches a run that recorded [`EVERY_PATCH`] takes without their own markers. **Never add
/// to this list**: such a run may have started before the new patch and must replay without
/// it. A later patch is checked with `ctx.patched` of its own (or a new list under a new id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patch {
    /// `record_delegation_ends`, for the histories written before it.
    DelegationMetrics,
    /// A create under way finishes after a cancel, for the histories before it.
    CreateGrace,
    /// Messages that arrive during a turn are kept for the next one, for the histories before
    /// it (which put them in the model's history at once and counted them read).
    TurnOrder,
    /// A parked conversation moves to WORKING as soon as a message arrives, for the histories
    /// before it (which stayed INPUT_REQUIRED until the next turn started).
    WakeOnMessage,
    /// A conversation left idle ends, for the histories before it.
    IdleEnd,
    /// A failed parent cancels its open sub-tasks and logs its failure, for the histories
    /// before it.
    CleanupOnFail,
    /// The turn limit counts the turns since the last participant message, not the task's life.
    TurnsPerMessage,
    /// Sub-tasks take answers (`reply_to_subtask`, a participant's answer through the task) and
    /// the task tells its participants of sub-tasks that wait for their authorisation.
    SubTaskAnswers,
    /// The model may ask the task's participants a question (`ask_participant`).
    AskParticipant,
    /// Only a first message that arrives before the first turn starts is the brief, for the
    /// histories before it (which took a first message during the first turn as the brief too).
    BriefBeforeTurn,
    /// Each change of state is written where ListTasks reads it without asking the task: its
    /// timestamp in the `A2AStatusTimestamp` search attribute and its listed view in the memo.
    ListedStatus,
}

impl Patch {
    /// The marker's id, as the histories before [`EVERY_PATCH`] hold it.
    fn id(self) -> &'static str {
        match self {
            Patch::DelegationMetrics => "baton.delegation-metrics",
            Patch::CreateGrace => "baton.create-grace",
            Patch::TurnOrder => "baton.turn-order",
            Patch::WakeOnMessage => "baton.wake-on-message",
            Patch::IdleEnd => "baton.idle-end",
            Patch::CleanupOnFail => "baton.cleanup-on-fail",
            Patch::TurnsPerMessage => "baton.turns-per-message",
            Patch::SubTaskAnswers => "baton.sub-task-answers",
            Patch::AskParticipant => "baton.ask-participant",
            Patch::BriefBeforeTurn => "baton.brief-before-turn",
            Patch::ListedStatus => "baton.listed-status",
        }
    }
}

/// A workflow context that can check a patch: the run's and a handler's.
pub(crate) trait Patches {
    /// `patched` of the SDK: whether this history was made with `patch_id`, recording it if new.
    fn patched(&self, patch_id: &str) -> bool;
}

impl<W> Patches for WorkflowContext<W> {
    fn patched(&self, patch_id: &str) -> bool {
        WorkflowContext::patched(self, patch_id)
    }
}

impl<W> Patches for SyncWorkflowContext<W> {
    fn patched(&self, patch_id: &str) -> bool {
        SyncWorkflowContext::patched(self, patch_id)
    }
}

/// Whether this run takes `patch`: always for a run that recorded [`EVERY_PATCH`], which the
/// first check of a new run does; otherwise what the history says of `patch` itself. The SDK
/// remembers each answer for the run, so every check agrees with the first.
pub(crate) fn has_patch(ctx: &impl Patches, patch: Patch) -> bool {
    ctx.patched(EVERY_PATCH) || ctx.patched(patch.id())
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use super::*;

    /// A history as `patched` sees it: the markers it holds, whether it is being replayed, and
    /// the markers each check recorded.
    struct History {
        markers: Vec<&'static str>,
        replaying: bool,
        answers: RefCell<BTreeMap<String, bool>>,
        recorded: RefCell<Vec<String>>,
    }

    impl History {
        fn new(markers: &[&'static str], replaying: bool) -> History {
            History {
                markers: markers.to_vec(),
                replaying,
                answers: RefCell::default(),
                recorded: RefCell::default(),
            }
        }
    }

    impl Patches for History {
        /// The SDK's rule: a marker in the history applies; a new one applies (and is recorded)
        /// unless the history is being replayed; the first answer for an id holds for the run.
        fn patched(&self, patch_id: &str) -> bool {
            if let Some(answer) = self.answers.borrow().get(patch_id) {
                return *answer;
            }
            let answer = self.markers.contains(&patch_id) || !self.replaying;
            if answer {
                self.recorded.borrow_mut().push(patch_id.to_string());
            }
            self.answers
                .borrow_mut()
                .insert(patch_id.to_string(), answer);
            answer
        }
    }

    #[test]
    fn a_new_run_takes_every_patch_and_records_one_marker() {
        let run = History::new(&[], false);
        assert!(has_patch(&run, Patch::ListedStatus));
        assert!(has_patch(&run, Patch::TurnOrder));
        assert!(has_patch(&run, Patch::DelegationMetrics));
        assert_eq!(*run.recorded.borrow(), [EVERY_PATCH]);
    }

    #[test]
    fn a_run_that_recorded_every_patch_replays_with_every_patch_and_no_other_marker() {
        let run = History::new(&[EVERY_PATCH], true);
        assert!(has_patch(&run, Patch::IdleEnd));
        assert!(has_patch(&run, Patch::CleanupOnFail));
        assert_eq!(*run.recorded.borrow(), [EVERY_PATCH]);
    }

    #[test]
    fn an_older_history_replays_each_patch_as_its_own_marker_says() {
        let run = History::new(&[Patch::TurnOrder.id()], true);
        assert!(has_patch(&run, Patch::TurnOrder));
        assert!(!has_patch(&run, Patch::ListedStatus));
        assert_eq!(*run.recorded.borrow(), [Patch::TurnOrder.id()]);
    }

    #[test]
    fn an_older_run_that_goes_on_under_this_code_takes_its_new_checks_as_patched() {
        // Replayed without EVERY_PATCH, so the run keeps reading each patch's own marker; a
        // patch first checked after the replay applies and is recorded, as it always was.
        let run = History::new(&[Patch::TurnOrder.id()], true);
        assert!(has_patch(&run, Patch::TurnOrder));
        let run = History {
            replaying: false,
            ..run
        };
        assert!(has_patch(&run, Patch::ListedStatus));
        assert_eq!(
            *run.recorded.borrow(),
            [Patch::TurnOrder.id(), Patch::ListedStatus.id()]
        );
    }
}
