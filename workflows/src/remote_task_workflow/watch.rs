//! The watch: push, follow or off, each step raced against the parent's answer and the
//! deadline; what the agent reports is applied and told to the parent.

use std::time::Duration;

use baton_activities::BatonActivities;
use baton_core::sub_tasks::cap_result;
use baton_core::watch::safety_fetch;
use baton_proto::failure_types::{AGENT_UNKNOWN, TASK_NOT_FOUND};
use baton_proto::{ChildDone, FollowIn, RemoteSnapshot, RemoteWatch, TaskState, WatchKind};
use futures::FutureExt;
use temporalio_sdk::{ActivityExecutionError, WorkflowContext};
use temporalio_workflow::{SignalWorkflowOptions, TimerOptions, WorkflowCancellationToken, select};

use super::RemoteTaskWorkflow;
use super::deadline_left;
use crate::TaskWorkflow;
use crate::activity_failure;
use crate::policies;
use crate::remote_files::collected;

/// Fetches after a push whose claim the agent's GetTask does not yet agree with.
const PUSH_RECHECKS: [Duration; 3] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];

/// The pause before following again after a follow failed.
const FOLLOW_RETRY: Duration = Duration::from_secs(5);

/// One step of the watch, raced against an answer from the parent and, with a deadline, a
/// timer to the deadline. Whichever ends first ends the step and cancels the others, a follow
/// under way with them.
pub(super) async fn watch_step(ctx: &mut WorkflowContext<RemoteTaskWorkflow>) {
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
        ctx.wait_condition(|s: &RemoteTaskWorkflow| !s.durable.replies.is_empty())
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

pub(super) async fn watch_once(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: WorkflowCancellationToken,
) {
    match ctx.state(RemoteTaskWorkflow::effective_watch) {
        WatchKind::Push => wait_for_push(ctx, &token).await,
        WatchKind::Follow => follow_once(ctx, &token).await,
        WatchKind::Off => token.cancelled().await,
    }
}

pub(super) async fn register_watch(ctx: &mut WorkflowContext<RemoteTaskWorkflow>) -> RemoteWatch {
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
pub(super) async fn wait_for_push(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: &WorkflowCancellationToken,
) {
    {
        let every = ctx.state(|s| safety_fetch(s.durable.watch.as_ref()));
        let mut pushed = ctx.wait_condition(|s: &RemoteTaskWorkflow| s.durable.push_pending);
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
        s.durable.push_pending = false;
        s.durable.claimed.take()
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
            || ctx.state(|s| s.durable.push_pending)
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
pub(super) async fn fetch_and_apply(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
) -> Option<TaskState> {
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
pub(super) async fn resolve_if_gone(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    error: &ActivityExecutionError,
) {
    let reason = match activity_failure::type_name(error).as_deref() {
        Some(TASK_NOT_FOUND) => ctx.state(|s| {
            format!(
                "the agent no longer knows task {}",
                s.start.last.remote_task_id
            )
        }),
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
        ..s.start.last.clone()
    });
    apply(ctx, gone).await;
}

/// One follow. A change is applied; a task the agent no longer knows is reported failed; any
/// other failure pauses before the next follow, so the loop never spins.
pub(super) async fn follow_once(
    ctx: &mut WorkflowContext<RemoteTaskWorkflow>,
    token: &WorkflowCancellationToken,
) {
    let input = ctx.state(|s| FollowIn {
        task: s.task_in(ctx.workflow_id()),
        known: s.start.last.clone(),
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
pub(super) async fn apply(ctx: &mut WorkflowContext<RemoteTaskWorkflow>, snapshot: RemoteSnapshot) {
    let news = ctx.state_mut(|s| {
        let still_the_question = s
            .durable
            .answered
            .as_ref()
            .is_some_and(|question| same_report(question, &snapshot));
        s.start.last = snapshot;
        if still_the_question {
            return None;
        }
        s.durable.answered = None;
        let mapped = s.mapped();
        let changed = s.durable.told.as_ref().is_none_or(|told| {
            (told.state, &told.sub_state, &told.text)
                != (mapped.state, &mapped.sub_state, &mapped.text)
        });
        changed.then(|| {
            s.durable.told = Some(mapped.clone());
            mapped
        })
    });
    if let Some(mapped) = news {
        tell_parent(ctx, &mapped, None).await;
    }
}

/// Whether two reports say the same: state, sub-state and text.
pub(super) fn same_report(a: &RemoteSnapshot, b: &RemoteSnapshot) -> bool {
    (a.state, &a.sub_state, &a.text) == (b.state, &b.sub_state, &b.text)
}

pub(super) async fn tell_parent(
    ctx: &WorkflowContext<RemoteTaskWorkflow>,
    mapped: &RemoteSnapshot,
    token: Option<&WorkflowCancellationToken>,
) {
    let parent = ctx.state(|s| s.start.parent_workflow_id.clone());
    let task = ctx.state(|s| s.task_in(ctx.workflow_id()));
    let summary = cap_result(mapped.text.as_deref().unwrap_or_default());
    let (attachments, summary) = collected(ctx, task, mapped, &summary).await;
    let done = ChildDone {
        stand_in_id: ctx.workflow_id().to_string(),
        remote_task_id: mapped.remote_task_id.clone(),
        state: mapped.state,
        sub_state: mapped.sub_state.clone(),
        summary,
        attachments,
        usage: mapped.usage,
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
