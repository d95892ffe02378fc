//! `RemoteTaskWorkflow`, the stand-in: one per delegation, workflow id `<parent id>.<n>`.
//!
//! It watches the remote A2A task by the agent's `updates` setting and tells the parent of each
//! change with `child_done`:
//! - push: a verified push only wakes it; it fetches the task with GetTask and applies that,
//!   never the push body, and fetches again after 1, 2 and 4 s while the fetch disagrees with
//!   the state the push claimed;
//! - follow: a heartbeating activity holds SubscribeToTask open;
//! - off: nothing between turns, except that a task still SUBMITTED or WORKING is followed.
//!
//! An answer from the parent (the `reply` signal) for a task that asked a question stops the
//! watch; the stand-in sends it as a message on the same remote task and watches again. Until
//! the agent shows something other than the question it answered, nothing is news.
//!
//! Cancelled by its parent, it cancels the remote task with CancelTask, tells the parent, and
//! ends CANCELED. Past the delegation's deadline it cancels the remote task the same way and
//! resolves the row FAILED "deadline exceeded". On every end it deletes its push config, so
//! later pushes are refused.

mod ending;
mod replies;
mod watch;

use std::time::Duration;

use baton_core::deadline::time_left;
use baton_core::push_token::digests_match;
use baton_core::sub_tasks::map_remote_state;
use baton_proto::{
    PushIn, RemoteCarry, RemoteSnapshot, RemoteStart, RemoteTaskIn, RemoteView, RemoteWatch,
    SubTaskReply, TaskState, WatchKind,
};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ContinueAsNewOptions, SyncWorkflowContext, WorkflowContext, WorkflowContextView, WorkflowResult,
};

use crate::current_details::remote_details;

use ending::{cancel_remote, deadline_passed, end};
use replies::send_reply;
use watch::{fetch_and_apply, register_watch, watch_step};

pub(crate) use ending::cancel_until_ended;

/// The stand-in for one delegation: it watches the remote A2A task and tells its parent
/// [`TaskWorkflow`](crate::TaskWorkflow) of each change with `child_done`.
#[workflow]
pub struct RemoteTaskWorkflow {
    /// The delegation as the parent started it; `start.last` is the remote task as last
    /// reported, before mapping, and `start.carry` is always `None` here.
    start: RemoteStart,
    /// Everything else that crosses continue-as-new: declared once, in the contract, and carried
    /// whole (see [`RemoteTaskWorkflow::carry`]).
    durable: RemoteCarry,
    /// Ended: later pushes and answers are refused. A stand-in never continues as new once
    /// closed, so this is not carried.
    closed: bool,
}

#[workflow_methods]
impl RemoteTaskWorkflow {
    /// The stand-in from `start`, with what the last run carried over when it continued as new.
    #[init]
    pub fn new(_ctx: &WorkflowContextView, mut start: RemoteStart) -> Self {
        let durable = start.carry.take().unwrap_or_default();
        RemoteTaskWorkflow {
            start,
            durable,
            closed: false,
        }
    }

    /// Watches the remote task and sends the parent's answers until the task ends, the stand-in
    /// is cancelled or the deadline passes, continuing as new when its history grows long.
    /// Returns the stand-in's view as it ended.
    #[run(name = "RemoteTaskWorkflow")]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<RemoteView> {
        if ctx.state(|s| s.durable.told.is_none()) {
            // The parent recorded the first answer itself; it is what the parent has heard.
            ctx.state_mut(|s| {
                s.durable.told = Some(map_remote_state(s.start.last.clone(), s.start.delegated));
            });
        }
        if ctx.state(|s| s.durable.watch.is_none() && !s.is_done()) {
            let chosen = ctx.state(|s| s.start.watch);
            let watch = match chosen {
                Some(kind) => RemoteWatch::unregistered(kind),
                None => register_watch(ctx).await,
            };
            let is_push = watch.kind == WatchKind::Push;
            ctx.state_mut(|s| s.durable.watch = Some(watch));
            if is_push {
                // A change between the create and the registration would never be pushed.
                fetch_and_apply(ctx).await;
            }
        }
        loop {
            let details = ctx.state(|s| {
                remote_details(
                    &s.start.agent,
                    &s.start.last,
                    s.durable.watch.as_ref().map(|w| w.kind),
                )
            });
            ctx.set_current_details(details);
            if ctx.state(RemoteTaskWorkflow::is_done) {
                return end(ctx, None).await;
            }
            if ctx.cancellation_token().is_cancelled() {
                return cancel_remote(ctx).await;
            }
            if deadline_left(ctx) == Some(Duration::ZERO) {
                return deadline_passed(ctx).await;
            }
            let reply = ctx.state_mut(|s| {
                (!s.durable.replies.is_empty()).then(|| s.durable.replies.remove(0))
            });
            if let Some(reply) = reply {
                send_reply(ctx, reply).await;
                continue;
            }
            if ctx.history_length() >= ctx.state(|s| s.start.history_event_bound)
                || ctx.continue_as_new_suggested()
            {
                let next = ctx.state(RemoteTaskWorkflow::carry);
                match ctx.continue_as_new(next, ContinueAsNewOptions::default())? {}
            }
            watch_step(ctx).await;
        }
    }

    /// The parent's answer to the question the remote task asked. A repeat of one not yet sent
    /// is dropped, and so is one that comes after the stand-in ended.
    #[signal]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn reply(&mut self, _ctx: &mut SyncWorkflowContext<Self>, reply: SubTaskReply) {
        if self.closed
            || self
                .durable
                .replies
                .iter()
                .any(|r| r.message_id == reply.message_id)
        {
            return;
        }
        self.durable.replies.push(reply);
    }

    /// A verified push from the agent: only wakes the stand-in, which then fetches the task.
    /// Refused unless the stand-in is open and push-watched, and the push names its remote task
    /// and carries its token.
    #[update]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn remote_push(&mut self, _ctx: &mut SyncWorkflowContext<Self>, push: PushIn) {
        self.durable.push_pending = true;
        self.durable.claimed = push.claimed_state;
    }

    /// Refuses, before anything is written to history, a push for a stand-in that has ended, is
    /// not push-watched, names another remote task, or carries the wrong token.
    #[update_validator(remote_push)]
    fn validate_remote_push(
        &self,
        _ctx: &WorkflowContextView,
        push: &PushIn,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let expected = match &self.durable.watch {
            Some(RemoteWatch {
                kind: WatchKind::Push,
                token_digest: Some(digest),
                ..
            }) if !self.closed => digest,
            _ => return Err("push not accepted".into()),
        };
        let token_ok = digests_match(expected, &push.token_digest);
        if !token_ok || push.remote_task_id != self.start.last.remote_task_id {
            return Err("push not accepted".into());
        }
        Ok(())
    }

    /// The agent, the remote task as last seen, the watch, and whether the stand-in has ended.
    #[query]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn task(&self, _ctx: &WorkflowContextView) -> RemoteView {
        RemoteView {
            agent: self.start.agent.clone(),
            last: self.start.last.clone(),
            watch: self.durable.watch.clone(),
            closed: self.closed,
        }
    }
}

impl RemoteTaskWorkflow {
    fn mapped(&self) -> RemoteSnapshot {
        map_remote_state(self.start.last.clone(), self.start.delegated)
    }

    fn is_done(&self) -> bool {
        self.mapped().state.is_terminal()
    }

    /// An `off` watch still follows a task that is SUBMITTED or WORKING: only a parked task is
    /// left alone between turns.
    fn effective_watch(&self) -> WatchKind {
        match self.durable.watch.as_ref().map(|w| w.kind) {
            Some(WatchKind::Off) | None
                if matches!(
                    self.start.last.state,
                    TaskState::Submitted | TaskState::Working
                ) =>
            {
                WatchKind::Follow
            }
            Some(kind) => kind,
            None => WatchKind::Off,
        }
    }

    /// `task <id> on <agent>`, for activity summaries.
    fn about(&self) -> String {
        format!(
            "task {} on {}",
            self.start.last.remote_task_id, self.start.agent
        )
    }

    fn task_in(&self, stand_in_id: &str) -> RemoteTaskIn {
        RemoteTaskIn {
            stand_in_id: stand_in_id.to_string(),
            agent: self.start.agent.clone(),
            remote_task_id: self.start.last.remote_task_id.clone(),
        }
    }

    /// What the next run starts from: the delegation, the task as last seen, and the durable
    /// state whole.
    fn carry(&self) -> RemoteStart {
        RemoteStart {
            carry: Some(self.durable.clone()),
            ..self.start.clone()
        }
    }
}

/// The time left before the delegation's deadline; none for a delegation without one.
pub(super) fn deadline_left(ctx: &WorkflowContext<RemoteTaskWorkflow>) -> Option<Duration> {
    let at = ctx.state(|s| s.start.deadline_at_ms)?;
    Some(time_left(at, ctx.workflow_time()?))
}
