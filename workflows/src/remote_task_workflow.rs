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

use std::time::Duration;

use baton_activities::BatonActivities;
use baton_core::deadline::{deadline_exceeded, time_left};
use baton_core::push_token::digests_match;
use baton_core::sub_tasks::{cap_result, map_remote_state};
use baton_proto::failure_types::{AGENT_UNKNOWN, TASK_NOT_FOUND};
use baton_proto::{
    CancelContextIn, ChildDone, DeletePushIn, FollowIn, PushIn, RemoteCarry, RemoteReplyIn,
    RemoteReplyOut, RemoteSnapshot, RemoteStart, RemoteTaskIn, RemoteView, RemoteWatch,
    SubTaskReply, TaskState, WatchKind,
};
use futures::FutureExt;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityExecutionError, ContinueAsNewOptions, SyncWorkflowContext, WorkflowContext,
    WorkflowContextView, WorkflowResult, WorkflowTermination,
};
use temporalio_workflow::{SignalWorkflowOptions, TimerOptions, WorkflowCancellationToken, select};

use crate::TaskWorkflow;
use crate::activity_failure;
use crate::current_details::remote_details;
use crate::policies;

/// Fetches after a push whose claim the agent's GetTask does not yet agree with.
const PUSH_RECHECKS: [Duration; 3] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];
/// How often a push-watched task is fetched anyway, when its watch does not say: a push lost
/// while no receiver was up (a restart, a network split) costs at most this long.
const PUSH_SAFETY_FETCH: Duration = Duration::from_secs(30);
/// The pause before following again after a follow failed.
const FOLLOW_RETRY: Duration = Duration::from_secs(5);

/// The stand-in for one delegation: it watches the remote A2A task and tells its parent
/// [`TaskWorkflow`] of each change with `child_done`.
#[workflow]
pub struct RemoteTaskWorkflow {
    start: RemoteStart,
    /// The remote task as last reported, before mapping.
    last: RemoteSnapshot,
    watch: Option<RemoteWatch>,
    told: Option<RemoteSnapshot>,
    push_pending: bool,
    claimed: Option<TaskState>,
    closed: bool,
    /// Answers from the parent, in the order they came, not yet sent.
    replies: Vec<SubTaskReply>,
    /// The question the last answer went to, while the agent still shows it.
    answered: Option<RemoteSnapshot>,
}

#[workflow_methods]
impl RemoteTaskWorkflow {
    /// The stand-in from `start`, with what the last run carried over when it continued as new.
    #[init]
    pub fn new(_ctx: &WorkflowContextView, mut start: RemoteStart) -> Self {
        let carry = start.carry.take();
        let last = start.last.clone();
        let mut workflow = RemoteTaskWorkflow {
            start,
            last,
            watch: None,
            told: None,
            push_pending: false,
            claimed: None,
            closed: false,
            replies: Vec::new(),
            answered: None,
        };
        if let Some(carry) = carry {
            workflow.watch = Some(carry.watch);
            workflow.told = carry.told;
            workflow.push_pending = carry.push_pending;
            workflow.claimed = carry.claimed;
            workflow.replies = carry.replies;
            workflow.answered = carry.answered;
        }
        workflow
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
        if ctx.state(|s| s.told.is_none()) {
            // The parent recorded the first answer itself; it is what the parent has heard.
            ctx.state_mut(|s| s.told = Some(map_remote_state(s.last.clone(), s.start.delegated)));
        }
        if ctx.state(|s| s.watch.is_none() && !s.is_done()) {
            let chosen = ctx.state(|s| s.start.watch);
            let watch = match chosen {
                Some(kind) => RemoteWatch::unregistered(kind),
                None => register_watch(ctx).await,
            };
            let is_push = watch.kind == WatchKind::Push;
            ctx.state_mut(|s| s.watch = Some(watch));
            if is_push {
                // A change between the create and the registration would never be pushed.
                fetch_and_apply(ctx).await;
            }
        }
        loop {
            let details = ctx.state(|s| {
                remote_details(&s.start.agent, &s.last, s.watch.as_ref().map(|w| w.kind))
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
            let reply = ctx.state_mut(|s| (!s.replies.is_empty()).then(|| s.replies.remove(0)));
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
                .replies
                .iter()
                .any(|r| r.message_id == reply.message_id)
        {
            return;
        }
        self.replies.push(reply);
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
        self.push_pending = true;
        self.claimed = push.claimed_state;
    }

    /// Refuses, before anything is written to history, a push for a stand-in that has ended, is
    /// not push-watched, names another remote task, or carries the wrong token.
    #[update_validator(remote_push)]
    fn validate_remote_push(
        &self,
        _ctx: &WorkflowContextView,
        push: &PushIn,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let expected = match &self.watch {
            Some(RemoteWatch {
                kind: WatchKind::Push,
                token_digest: Some(digest),
                ..
            }) if !self.closed => digest,
            _ => return Err("push not accepted".into()),
        };
        let token_ok = digests_match(expected, &push.token_digest);
        if !token_ok || push.remote_task_id != self.last.remote_task_id {
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
            last: self.last.clone(),
            watch: self.watch.clone(),
            closed: self.closed,
        }
    }
}

impl RemoteTaskWorkflow {
    fn mapped(&self) -> RemoteSnapshot {
        map_remote_state(self.last.clone(), self.start.delegated)
    }

    fn is_done(&self) -> bool {
        self.mapped().state.is_terminal()
    }

    /// An `off` watch still follows a task that is SUBMITTED or WORKING: only a parked task is
    /// left alone between turns.
    fn effective_watch(&self) -> WatchKind {
        match self.watch.as_ref().map(|w| w.kind) {
            Some(WatchKind::Off) | None
                if matches!(self.last.state, TaskState::Submitted | TaskState::Working) =>
            {
                WatchKind::Follow
            }
            Some(kind) => kind,
            None => WatchKind::Off,
        }
    }

    /// `task <id> on <agent>`, for activity summaries.
    fn about(&self) -> String {
        format!("task {} on {}", self.last.remote_task_id, self.start.agent)
    }

    fn task_in(&self, stand_in_id: &str) -> RemoteTaskIn {
        RemoteTaskIn {
            stand_in_id: stand_in_id.to_string(),
            agent: self.start.agent.clone(),
            remote_task_id: self.last.remote_task_id.clone(),
        }
    }

    fn carry(&self) -> RemoteStart {
        RemoteStart {
            last: self.last.clone(),
            carry: Some(RemoteCarry {
                watch: self
                    .watch
                    .clone()
                    .unwrap_or(RemoteWatch::unregistered(WatchKind::Off)),
                told: self.told.clone(),
                push_pending: self.push_pending,
                claimed: self.claimed,
                replies: self.replies.clone(),
                answered: self.answered.clone(),
            }),
            ..self.start.clone()
        }
    }
}

/// The time left before the delegation's deadline; none for a delegation without one.
fn deadline_left(ctx: &WorkflowContext<RemoteTaskWorkflow>) -> Option<Duration> {
    let at = ctx.state(|s| s.start.deadline_at_ms)?;
    Some(time_left(at, ctx.workflow_time()?))
}

/// One step of the watch, raced against an answer from the parent and, with a deadline, a
/// timer to the deadline. Whichever ends first ends the step and cancels the others, a follow
/// under way with them.
async fn watch_step(ctx: &mut WorkflowContext<RemoteTaskWorkflow>) {
    let step_token = ctx.cancellation_token().child_token();
    let timer_token = WorkflowCancellationToken::new();
    let left = deadline_left(ctx);
    let mut step_ctx = ctx.clone();
    let mut step = std::pin::pin!(watch_once(&mut step_ctx, step_token.clone()).fuse());
    let timer_ctx = ctx.clone();
    let timer_cancel = timer_token.clone();
    let mut deadline = std::pin::pin!(
        async move {
            match left {
                Some(left) => {
                    let options = TimerOptions::builder(left)
                        .cancellation_token(timer_cancel)
                        .build();
                    timer_ctx.timer(options).await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        .fuse()
    );
    let mut replied = std::pin::pin!(
        ctx.wait_condition(|s: &RemoteTaskWorkflow| !s.replies.is_empty())
            .fuse()
    );
    select! {
        _ = step.as_mut() => timer_token.cancel(),
        _ = deadline.as_mut() => step_token.cancel(),
        _ = replied.as_mut() => {
            step_token.cancel();
            timer_token.cancel();
        }
    };
}

async fn watch_once(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: WorkflowCancellationToken,
) {
    match ctx.state(RemoteTaskWorkflow::effective_watch) {
        WatchKind::Push => wait_for_push(ctx, &token).await,
        WatchKind::Follow => follow_once(ctx, &token).await,
        WatchKind::Off => token.cancelled().await,
    }
}

/// Past the deadline: CancelTask on the remote task, then the row FAILED with the reason.
async fn deadline_passed(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
) -> WorkflowResult<RemoteView> {
    let cleanup = WorkflowCancellationToken::new();
    let input = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = format!(
        "cancel {}: past its deadline",
        ctx.state(RemoteTaskWorkflow::about)
    );
    let (last, delegated) = ctx.state(|s| (s.last.clone(), s.start.delegated));
    let outcome = cancel_until_ended(ctx, input, summary, &cleanup, &last, delegated).await;
    let mut reason = ctx.state(|s| deadline_exceeded(s.start.deadline_secs.unwrap_or_default()));
    if let CancelOutcome::Unconfirmed { why, .. } = &outcome {
        reason = format!("{reason}; {}", unconfirmed(why));
    }
    let failed = ctx.state(|s| RemoteSnapshot {
        state: TaskState::Failed,
        sub_state: None,
        text: Some(reason),
        ..s.last.clone()
    });
    apply(ctx, failed).await;
    end(ctx, Some(&cleanup)).await
}

async fn register_watch(ctx: &mut WorkflowContext<RemoteTaskWorkflow>) -> RemoteWatch {
    let input = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = format!(
        "choose how to watch {}",
        ctx.state(RemoteTaskWorkflow::about)
    );
    ctx.execute_activity(
        BatonActivities::register_remote_push,
        input,
        policies::summarized(policies::short_call(), summary),
    )
    .await
    .unwrap_or(RemoteWatch::unregistered(WatchKind::Follow))
}

/// Waits for a verified push (or the safety fetch), then fetches, and rechecks while the
/// agent disagrees with the state the push claimed.
async fn wait_for_push(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: &WorkflowCancellationToken,
) {
    {
        let every = ctx.state(|s| {
            s.watch
                .as_ref()
                .and_then(|w| w.safety_fetch_secs)
                .map_or(PUSH_SAFETY_FETCH, Duration::from_secs)
        });
        let mut pushed = ctx.wait_condition(|s: &RemoteTaskWorkflow| s.push_pending);
        let mut safety = ctx.timer(
            TimerOptions::builder(every)
                .cancellation_token(token.clone())
                .build(),
        );
        select! {
            _ = pushed => {},
            _ = safety => {},
        };
    }
    if token.is_cancelled() {
        return;
    }
    let claimed = ctx.state_mut(|s| {
        s.push_pending = false;
        s.claimed.take()
    });
    // Settled once the agent agrees with the claim, or, for a push that claimed nothing, once a
    // fetch succeeds; otherwise fetch again after 1, 2 and 4 s while the task is still open.
    let settled = |fetched: Option<TaskState>| match claimed {
        Some(claimed) => fetched == Some(claimed),
        None => fetched.is_some(),
    };
    if settled(fetch_and_apply(ctx).await) {
        return;
    }
    for delay in PUSH_RECHECKS {
        let recheck = TimerOptions::builder(delay)
            .cancellation_token(token.clone())
            .build();
        if ctx.state(RemoteTaskWorkflow::is_done)
            || ctx.timer(recheck).await != temporalio_workflow::TimerResult::Fired
            || ctx.state(|s| s.push_pending)
        {
            return;
        }
        if settled(fetch_and_apply(ctx).await) {
            return;
        }
    }
}

/// GetTask and apply what the agent says. The fetch is retried with backoff until the agent
/// answers; a task or an agent that is gone for good resolves the row FAILED.
async fn fetch_and_apply(ctx: &mut WorkflowContext<RemoteTaskWorkflow>) -> Option<TaskState> {
    let input = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = format!("read {}", ctx.state(RemoteTaskWorkflow::about));
    match ctx
        .execute_activity(
            BatonActivities::get_remote_task,
            input,
            policies::summarized(policies::get_remote_task(), summary),
        )
        .await
    {
        Ok(snapshot) => {
            let state = snapshot.state;
            apply(ctx, snapshot).await;
            Some(state)
        }
        Err(error) => {
            resolve_if_gone(ctx, &error).await;
            None
        }
    }
}

/// Resolves the row FAILED when `error` says the task or its agent is gone for good: nothing
/// the stand-in could do would bring either back. Any other failure changes nothing.
async fn resolve_if_gone(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    error: &ActivityExecutionError,
) {
    let reason = match activity_failure::type_name(error).as_deref() {
        Some(TASK_NOT_FOUND) => {
            ctx.state(|s| format!("the agent no longer knows task {}", s.last.remote_task_id))
        }
        Some(AGENT_UNKNOWN) => ctx.state(|s| {
            format!(
                "agent {} is no longer configured on this worker",
                s.start.agent
            )
        }),
        _ => return,
    };
    let gone = ctx.state(|s| RemoteSnapshot {
        state: TaskState::Failed,
        text: Some(reason),
        ..s.last.clone()
    });
    apply(ctx, gone).await;
}

/// One follow. A change is applied; a task the agent no longer knows is reported failed; any
/// other failure pauses before the next follow, so the loop never spins.
async fn follow_once(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: &WorkflowCancellationToken,
) {
    let input = ctx.state(|s| FollowIn {
        task: s.task_in(ctx.workflow_id()),
        known: s.last.clone(),
    });
    let summary = format!("follow {}", ctx.state(RemoteTaskWorkflow::about));
    match ctx
        .execute_activity(
            BatonActivities::follow_remote_task,
            input,
            policies::summarized(
                policies::follow_remote_task(ctx.task_queue(), token),
                summary,
            ),
        )
        .await
    {
        Ok(out) => {
            if let Some(changed) = out.changed {
                apply(ctx, changed).await;
            }
        }
        Err(error) if error.as_cancelled().is_some() => {}
        Err(error) => {
            resolve_if_gone(ctx, &error).await;
            if !ctx.state(RemoteTaskWorkflow::is_done) {
                ctx.timer(FOLLOW_RETRY).await;
            }
        }
    }
}

/// Records what the agent reported and tells the parent when (state, sub_state, text) changed.
async fn apply(ctx: &mut WorkflowContext<RemoteTaskWorkflow>, snapshot: RemoteSnapshot) {
    let news = ctx.state_mut(|s| {
        let still_the_question = s
            .answered
            .as_ref()
            .is_some_and(|question| same_report(question, &snapshot));
        s.last = snapshot;
        if still_the_question {
            return None;
        }
        s.answered = None;
        let mapped = s.mapped();
        let changed = s.told.as_ref().is_none_or(|told| {
            (told.state, &told.sub_state, &told.text)
                != (mapped.state, &mapped.sub_state, &mapped.text)
        });
        changed.then(|| {
            s.told = Some(mapped.clone());
            mapped
        })
    });
    if let Some(mapped) = news {
        tell_parent(ctx, &mapped, None).await;
    }
}

/// Whether two reports say the same: state, sub-state and text.
fn same_report(a: &RemoteSnapshot, b: &RemoteSnapshot) -> bool {
    (a.state, &a.sub_state, &a.text) == (b.state, &b.sub_state, &b.text)
}

/// Sends the parent's answer on the remote task. The parent marked the row WORKING when it sent
/// the answer, and the stand-in takes the same view: the agent's next question is news even in
/// the same state, and the question it answered is not, while the agent still shows it.
async fn send_reply(ctx: &mut WorkflowContext<RemoteTaskWorkflow>, reply: SubTaskReply) {
    let stand_in_id = ctx.workflow_id().to_string();
    let input = ctx.state_mut(|s| {
        s.answered = Some(s.last.clone());
        s.told = Some(RemoteSnapshot {
            state: TaskState::Working,
            sub_state: None,
            text: None,
            ..s.last.clone()
        });
        RemoteReplyIn {
            task: s.task_in(&stand_in_id),
            message_id: reply.message_id,
            text: reply.text,
        }
    });
    let summary = format!(
        "answer the question of {}",
        ctx.state(RemoteTaskWorkflow::about)
    );
    let sent = ctx
        .execute_activity(
            BatonActivities::send_remote_reply,
            input,
            policies::summarized(policies::send_remote_reply(), summary),
        )
        .await;
    match sent {
        Ok(RemoteReplyOut::Sent { task }) => apply(ctx, task).await,
        Ok(RemoteReplyOut::Refused { reason }) => answer_not_delivered(ctx, &reason).await,
        Err(error) => {
            resolve_if_gone(ctx, &error).await;
            if !ctx.state(RemoteTaskWorkflow::is_done) {
                answer_not_delivered(ctx, &activity_failure::message(&error)).await;
            }
        }
    }
}

/// Tells the parent its answer did not reach the agent, and that the question still stands.
async fn answer_not_delivered(ctx: &mut WorkflowContext<RemoteTaskWorkflow>, reason: &str) {
    let question = ctx.state_mut(|s| {
        s.answered = None;
        let question = s.mapped();
        s.told = Some(question.clone());
        question
    });
    let asked = question.text.clone().unwrap_or_default();
    let report = RemoteSnapshot {
        text: Some(format!(
            "your answer was not delivered ({reason}); the agent still asks: {asked}"
        )),
        ..question
    };
    tell_parent(ctx, &report, None).await;
}

async fn tell_parent(
    ctx: &WorkflowContext<RemoteTaskWorkflow>,
    mapped: &RemoteSnapshot,
    token: Option<&WorkflowCancellationToken>,
) {
    let parent = ctx.state(|s| s.start.parent_workflow_id.clone());
    let done = ChildDone {
        workflow_id: ctx.workflow_id().to_string(),
        remote_task_id: mapped.remote_task_id.clone(),
        state: mapped.state,
        sub_state: mapped.sub_state.clone(),
        summary: cap_result(mapped.text.as_deref().unwrap_or_default()),
    };
    let options = SignalWorkflowOptions::builder()
        .maybe_cancellation_token(token.cloned())
        .build();
    // A parent that has already ended has nothing left to learn.
    ctx.external_workflow(parent, None)
        .signal(TaskWorkflow::child_done, done, options)
        .await
        .ok();
}

/// Cancelled by the parent: CancelTask as the delegating participant, tell the parent, end.
async fn cancel_remote(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
) -> WorkflowResult<RemoteView> {
    let cleanup = WorkflowCancellationToken::new();
    let input = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = format!("cancel {}", ctx.state(RemoteTaskWorkflow::about));
    let (last, delegated) = ctx.state(|s| (s.mapped(), s.start.delegated));
    let mapped = cancel_until_ended(ctx, input, summary, &cleanup, &last, delegated)
        .await
        .into_row();
    ctx.state_mut(|s| {
        s.last = mapped.clone();
        s.told = Some(mapped.clone());
    });
    tell_parent(ctx, &mapped, Some(&cleanup)).await;
    end(ctx, Some(&cleanup)).await?;
    Err(WorkflowTermination::cancelled())
}

/// What a cancel of a remote task ended in.
pub(crate) enum CancelOutcome {
    /// The agent shows the task ended (as it answered, mapped), or no longer knows it.
    Ended(RemoteSnapshot),
    /// The agent did not confirm within the bound (refused, unreachable, still running): the
    /// task may still run.
    Unconfirmed {
        /// The task as last seen.
        seen: RemoteSnapshot,
        /// Why the cancel is not confirmed.
        why: String,
    },
}

impl CancelOutcome {
    /// The row a cancel leaves: the task as it ended, or FAILED saying the cancel was not
    /// confirmed. Never CANCELED for a task that may still run.
    pub(crate) fn into_row(self) -> RemoteSnapshot {
        match self {
            CancelOutcome::Ended(ended) => ended,
            CancelOutcome::Unconfirmed { seen, why } => RemoteSnapshot {
                state: TaskState::Failed,
                sub_state: None,
                text: Some(unconfirmed(&why)),
                ..seen
            },
        }
    }
}

fn unconfirmed(why: &str) -> String {
    format!("the cancel was not confirmed ({why}): the task may still run on the agent")
}

/// Cancels the remote task until the agent shows it ended (`cancel_remote_task`, on `token`, so
/// the cancel it serves does not cut it short), and says what that ended in. `last` is the task
/// as last seen, `delegated` as for [`map_remote_state`].
pub(crate) async fn cancel_until_ended<W>(
    ctx: &mut WorkflowContext<W>,
    task: RemoteTaskIn,
    summary: String,
    token: &WorkflowCancellationToken,
    last: &RemoteSnapshot,
    delegated: bool,
) -> CancelOutcome {
    let canceled = ctx
        .execute_activity(
            BatonActivities::cancel_remote_task,
            task,
            policies::summarized(policies::cancel_remote_task(token), summary),
        )
        .await;
    match canceled {
        Ok(seen) if seen.state.is_terminal() => {
            CancelOutcome::Ended(map_remote_state(seen, delegated))
        }
        Ok(seen) => {
            let why = format!("the agent still reports it {}", seen.state);
            CancelOutcome::Unconfirmed { seen, why }
        }
        Err(error) if activity_failure::type_name(&error).as_deref() == Some(TASK_NOT_FOUND) => {
            CancelOutcome::Ended(RemoteSnapshot {
                state: TaskState::Canceled,
                sub_state: None,
                ..last.clone()
            })
        }
        Err(error) => CancelOutcome::Unconfirmed {
            seen: last.clone(),
            why: activity_failure::message(&error),
        },
    }
}

/// Closes the stand-in (later pushes are refused), deletes its push config and cancels the
/// duplicates of its task a brief sent twice left, best effort.
async fn end(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: Option<&WorkflowCancellationToken>,
) -> WorkflowResult<RemoteView> {
    ctx.state_mut(|s| s.closed = true);
    let push_config = ctx.state(|s| match &s.watch {
        Some(RemoteWatch {
            kind: WatchKind::Push,
            config_id: Some(config_id),
            ..
        }) => Some(config_id.clone()),
        _ => None,
    });
    if let Some(config_id) = push_config {
        let input = DeletePushIn {
            task: ctx.state(|s| s.task_in(ctx.workflow_id())),
            config_id,
        };
        let token = token
            .cloned()
            .unwrap_or_else(WorkflowCancellationToken::new);
        // Best effort: a failure is logged by the activity and stays in its history event.
        let summary = format!("stop pushes for {}", ctx.state(RemoteTaskWorkflow::about));
        ctx.execute_activity(
            BatonActivities::delete_remote_push,
            input,
            policies::summarized(policies::cleanup_call(&token), summary),
        )
        .await
        .ok();
    }
    let duplicates = ctx.state(|s| {
        s.start
            .duplicates_in
            .clone()
            .map(|context_id| CancelContextIn {
                stand_in_id: ctx.workflow_id().to_string(),
                agent: s.start.agent.clone(),
                context_id,
                keep: Some(s.last.remote_task_id.clone()),
            })
    });
    if let Some(duplicates) = duplicates {
        let token = token
            .cloned()
            .unwrap_or_else(WorkflowCancellationToken::new);
        let summary = format!(
            "cancel duplicates of {}",
            ctx.state(RemoteTaskWorkflow::about)
        );
        ctx.execute_activity(
            BatonActivities::cancel_context_tasks,
            duplicates,
            policies::summarized(policies::cancel_context_tasks(&token), summary),
        )
        .await
        .ok();
    }
    Ok(ctx.state(|s| RemoteView {
        agent: s.start.agent.clone(),
        last: s.last.clone(),
        watch: s.watch.clone(),
        closed: s.closed,
    }))
}
