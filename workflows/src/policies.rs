//! Timeouts, heartbeats and retries of every activity, in one place (docs/engine.md explains
//! each choice).

use std::time::Duration;

use baton_activities::FOLLOW_WINDOW;
use temporalio_common::RetryPolicy;
use temporalio_workflow::{ActivityOptions, LocalActivityOptions, WorkflowCancellationToken};

/// A model call: retried with backoff on 429, 5xx and timeouts; the activity marks anything
/// else non-retryable, so it fails the turn at once with the provider's message. It heartbeats
/// while the model thinks, so a worker that dies mid-call is noticed in seconds, not minutes.
pub fn invoke_model() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(180))
        .heartbeat_timeout(Duration::from_secs(20))
        .retry_policy(
            RetryPolicy::builder()
                .initial_interval(Duration::from_secs(1))
                .backoff_coefficient(2.0)
                .maximum_interval(Duration::from_secs(30))
                .maximum_attempts(5)
                .build(),
        )
        .build()
}

/// Creating a remote task is not idempotent: one attempt. It heartbeats while it reads the
/// stream, so a dead worker is noticed in seconds.
pub fn start_agent_task() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(120))
        .heartbeat_timeout(Duration::from_secs(15))
        .retry_policy(once())
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

/// GetTask and the watch registration: one attempt; the stand-in's own rechecks and its
/// fallback to follow are the retries.
pub fn short_call() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(once())
        .build()
}

/// Cleanup calls (CancelTask, deleting a push config): two attempts, on a token of their own so
/// they still run while the stand-in is being cancelled.
pub fn cleanup_call(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(RetryPolicy::builder().maximum_attempts(2).build())
        .cancellation_token(token.clone())
        .build()
}

/// A follow holds a stream for up to FOLLOW_WINDOW and heartbeats every few seconds; a dead
/// worker is noticed by the heartbeat timeout and the stand-in follows again. It runs on the
/// follow queue of the stand-in's task queue, whose slots are its own.
pub fn follow_remote_task(task_queue: &str) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(FOLLOW_WINDOW + Duration::from_secs(60))
        .task_queue(follow_task_queue(task_queue))
        .heartbeat_timeout(Duration::from_secs(15))
        .retry_policy(once())
        .build()
}

/// One push to a participant's webhook: at least once, with a few quick retries, on a token of
/// its own so the pushes of a cancel still go out.
pub fn deliver_push(token: &WorkflowCancellationToken) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(10))
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

fn once() -> RetryPolicy {
    RetryPolicy::builder().maximum_attempts(1).build()
}
