//! Timeouts, heartbeats and retries of every activity, in one place (docs/engine.md explains
//! each choice).

use std::time::Duration;

use baton_activities::{
    CANCEL_CONFIRM_BOUND, CREATE_BACKSTOP, FOLLOW_WINDOW, MODEL_BACKSTOP, TOOL_BACKSTOP,
};
use temporalio_common::RetryPolicy;
use temporalio_workflow::{
    ActivityCloseTimeouts, ActivityOptions, LocalActivityOptions, WorkflowCancellationToken,
};

/// A model call: retried with backoff on 429, 5xx and timeouts until `model.retry_for` runs
/// out, which the activity applies itself (it also honours the provider's `Retry-After`); the
/// activity marks anything else non-retryable, so it fails the turn at once with the
/// provider's message. It heartbeats while the model thinks, so a worker that dies mid-call is
/// noticed in seconds, not minutes. It runs on `token`, a child of the workflow's, so a cancel of
/// the task stops it either way.
pub fn invoke_model(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_close_timeouts(ActivityCloseTimeouts::ScheduleAndStartToClose {
        schedule_to_close: MODEL_BACKSTOP,
        start_to_close: Duration::from_secs(180),
    })
    .heartbeat_timeout(Duration::from_secs(20))
    .retry_policy(backoff(Duration::from_secs(30)))
    .cancellation_token(token.clone())
    .build()
}

/// An MCP tool call: the activity bounds it by its server's `call_timeout`, and heartbeats, so a
/// worker that dies mid-call is noticed in seconds. A tool that is safe to call again (read-only
/// or idempotent) gets three attempts; any other gets one, since a call that got no answer may
/// still have done its work. It runs on `token`, a child of the workflow's, so a cancel of the
/// task stops it either way.
pub fn invoke_tool(retry_safe: bool, token: &WorkflowCancellationToken) -> ActivityOptions {
    let attempts = if retry_safe {
        RetryPolicy::builder()
            .initial_interval(Duration::from_secs(1))
            .backoff_coefficient(2.0)
            .maximum_interval(Duration::from_secs(10))
            .maximum_attempts(3)
            .build()
    } else {
        once()
    };
    ActivityOptions::with_start_to_close_timeout(TOOL_BACKSTOP)
        .heartbeat_timeout(Duration::from_secs(20))
        .retry_policy(attempts)
        .cancellation_token(token.clone())
        .build()
}

/// Creating a remote task: retried with backoff while the agent gives no answer, since every
/// attempt after the first adopts what an earlier one created (`start_agent_task` looks under
/// the delegation's own context first); the activity itself gives up after the agent's
/// `create_timeout`. It heartbeats while it reads the stream, so a dead worker is noticed in
/// seconds and the next attempt runs on a live one. It runs on `token`, not the workflow's, so
/// a cancel lets an attempt under way finish and learn the task id.
pub fn start_agent_task(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_close_timeouts(ActivityCloseTimeouts::ScheduleAndStartToClose {
        schedule_to_close: CREATE_BACKSTOP,
        // An attempt may wait 90 s for a slow agent to list an earlier attempt's task, then
        // read a new stream for 90 s more; the heartbeat notices a dead worker long before.
        start_to_close: Duration::from_secs(240),
    })
    .heartbeat_timeout(Duration::from_secs(15))
    .retry_policy(backoff(Duration::from_secs(30)))
    .cancellation_token(token.clone())
    .build()
}

/// Cancelling what a failed creation may have left in its context: retried for 20 s (the
/// creation already waited out the agent's `create_timeout`, and the parent's next turn waits
/// on this), on a token of its own so it runs while the parent is being cancelled.
pub fn cancel_context_tasks(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_close_timeouts(ActivityCloseTimeouts::ScheduleAndStartToClose {
        schedule_to_close: Duration::from_secs(20),
        start_to_close: Duration::from_secs(10),
    })
    .retry_policy(backoff(Duration::from_secs(8)))
    .cancellation_token(token.clone())
    .build()
}

/// Counting delegation ends in the worker's metrics: in process and quick; one attempt, since
/// a count that failed is not worth a retry that could count twice. Detached from the
/// workflow's cancellation, so a cancelled task still counts its cancelled sub-tasks.
pub fn record_delegation_ends() -> LocalActivityOptions {
    LocalActivityOptions::builder()
        .start_to_close_timeout(Duration::from_secs(5))
        .retry_policy(once())
        .cancellation_token(WorkflowCancellationToken::new())
        .build()
}

/// Logging a failed task in the worker's log: in process and quick, one attempt, detached
/// from the workflow's cancellation.
pub fn report_task_failed() -> LocalActivityOptions {
    record_delegation_ends()
}

/// GetTask on a push-watched task: retried with backoff until the agent answers, so a fetch
/// that fails (the agent restarting, a network split) is never the end of the watch. A task or
/// agent gone for good fails it at once (non-retryable), and the stand-in resolves the row.
pub fn get_remote_task() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(backoff(Duration::from_secs(30)))
        .build()
}

/// An answer to a sub-task's question: retried with backoff for up to 5 minutes while the agent
/// gives no answer (every attempt looks for the one an earlier attempt sent before it sends);
/// past that the stand-in tells the parent the answer was not delivered.
pub fn send_remote_reply() -> ActivityOptions {
    ActivityOptions::with_close_timeouts(ActivityCloseTimeouts::ScheduleAndStartToClose {
        schedule_to_close: Duration::from_secs(300),
        start_to_close: Duration::from_secs(30),
    })
    .retry_policy(backoff(Duration::from_secs(30)))
    .build()
}

/// The watch registration: one attempt; a failed one falls back to follow.
pub fn short_call() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(once())
        .build()
}

/// Cleanup calls (deleting a push config): two attempts, on a token of their own so
/// they still run while the stand-in is being cancelled.
pub fn cleanup_call(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(RetryPolicy::builder().maximum_attempts(2).build())
        .cancellation_token(token.clone())
        .build()
}

/// Cancelling a remote task until the agent shows it ended: the activity asks again itself
/// (with backoff, up to `CANCEL_CONFIRM_BOUND` from its first attempt) and heartbeats, so a
/// dead worker's attempt is taken over in seconds; on a token of its own so it runs while the
/// stand-in is being cancelled.
pub fn cancel_remote_task(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_close_timeouts(ActivityCloseTimeouts::ScheduleAndStartToClose {
        schedule_to_close: CANCEL_CONFIRM_BOUND + Duration::from_secs(120),
        start_to_close: CANCEL_CONFIRM_BOUND + Duration::from_secs(60),
    })
    .heartbeat_timeout(Duration::from_secs(15))
    .retry_policy(backoff(Duration::from_secs(10)))
    .cancellation_token(token.clone())
    .build()
}

/// Collecting an ended task's files into the content store: a GetTask and a few writes,
/// heartbeating while large files move; an attempt may take the longest `content.retry_for` a
/// write allows, and attempts go on with backoff for up to 15 minutes, so a store or an agent
/// down for a while costs time, not files (one down for longer leaves the files out, said to the
/// model); on a token of its own so a cancel of the parent does not lose what the sub-task made.
pub fn collect_remote_files(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_close_timeouts(ActivityCloseTimeouts::ScheduleAndStartToClose {
        schedule_to_close: Duration::from_secs(15 * 60),
        start_to_close: Duration::from_secs(6 * 60),
    })
    .heartbeat_timeout(Duration::from_secs(15))
    .retry_policy(backoff(Duration::from_secs(30)))
    .cancellation_token(token.clone())
    .build()
}

/// A follow holds a stream for up to FOLLOW_WINDOW and heartbeats every few seconds; a dead
/// worker is noticed by the heartbeat timeout and the stand-in follows again. It runs on the
/// follow queue of the stand-in's task queue, whose slots are its own.
pub fn follow_remote_task(task_queue: &str, token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(FOLLOW_WINDOW + Duration::from_secs(60))
        .task_queue(follow_task_queue(task_queue))
        .heartbeat_timeout(Duration::from_secs(15))
        .retry_policy(once())
        .cancellation_token(token.clone())
        .build()
}

/// One push to a participant's webhook, with `artifacts` artifact updates before its status: at
/// least once, with a few quick retries, on a token of its own so the pushes of a cancel still
/// go out. Each POST and the read of the files have time of their own.
pub fn deliver_push(token: &WorkflowCancellationToken, artifacts: usize) -> ActivityOptions {
    let posts = 1 + artifacts.min(MAX_PUSHED_ARTIFACTS_TIMED) as u32;
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(10) * (posts + 1))
        .retry_policy(
            RetryPolicy::builder()
                .initial_interval(Duration::from_secs(1))
                .backoff_coefficient(2.0)
                .maximum_attempts(3)
                .build(),
        )
        .cancellation_token(token.clone())
        .build()
}

/// The most artifacts a push is given time for: past it, a push of more fails at its timeout and
/// is tried again (three attempts in all).
const MAX_PUSHED_ARTIFACTS_TIMED: usize = 60;

/// The task queue of the follows started by workflows on `task_queue`. A follow holds an
/// activity slot for as long as its task is parked; on the main queue, a hundred parked
/// follows would take every slot and no model turn could start.
pub fn follow_task_queue(task_queue: &str) -> String {
    format!("{task_queue}-follow")
}

/// `options` with a one-line summary, which the Web UI shows on the activity in the history, so
/// a reader can follow a task without opening each payload.
pub fn summarized(mut options: ActivityOptions, summary: String) -> ActivityOptions {
    options.summary = Some(summary);
    options
}

/// Unlimited attempts from 1 s, doubling up to `maximum`; a timeout bounds them.
fn backoff(maximum: Duration) -> RetryPolicy {
    RetryPolicy::builder()
        .initial_interval(Duration::from_secs(1))
        .backoff_coefficient(2.0)
        .maximum_interval(maximum)
        .build()
}

fn once() -> RetryPolicy {
    RetryPolicy::builder().maximum_attempts(1).build()
}
