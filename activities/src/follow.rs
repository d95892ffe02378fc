//! `follow_remote_task`: hold SubscribeToTask open and return on the first real change.
//!
//! SubscribeToTask starts with a snapshot of the task; a peer may then replay history it sent
//! before. Anything stamped no later than the snapshot is that replay, not a change: reading a
//! replayed WORKING as news would flip the stand-in back to a state the task has left.

use std::time::Duration;

use a2a::StreamResponse;
use baton_a2a::snapshot::{after_event, of_task_after};
use baton_a2a::{AgentError, RemoteAgent};
use baton_proto::{FollowIn, FollowOut, RemoteSnapshot};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use tokio::time::Instant;

use crate::heartbeat::heartbeating;
use crate::remote_calls::{classify, read_whole};

pub async fn follow(
    ctx: &ActivityContext,
    agent: &RemoteAgent,
    input: &FollowIn,
    window: Duration,
) -> Result<FollowOut, ActivityError> {
    let deadline = Instant::now() + window;
    let interval = agent.follow_interval();
    heartbeating(ctx, async {
        loop {
            let subscription = one_subscription(agent, &input.task.remote_task_id, &input.known);
            match tokio::time::timeout_at(deadline, subscription).await {
                Err(_window_over) => return Ok(FollowOut { changed: None }),
                Ok(Ok(Some(change))) => {
                    return Ok(FollowOut {
                        changed: Some(change),
                    });
                }
                Ok(Ok(None)) => {}
                Ok(Err(error)) => {
                    // SubscribeToTask refuses a task that has ended (UnsupportedOperation), and
                    // a broken stream says nothing of the task: ask for it instead.
                    match agent.get_task(&input.task.remote_task_id).await {
                        Ok(task) => {
                            let now = of_task_after(&task, input.known.text.as_deref());
                            if differs(&now, &input.known) {
                                return Ok(FollowOut { changed: Some(now) });
                            }
                        }
                        Err(fetch_error) => {
                            let fetch_error = classify(fetch_error);
                            if is_final(&fetch_error) {
                                return Err(fetch_error);
                            }
                        }
                    }
                    tracing::warn!(
                        stand_in = %input.task.stand_in_id,
                        "follow of {} on {} failed, re-subscribing in {interval:?}: {error:?}",
                        input.task.remote_task_id,
                        input.task.agent,
                    );
                }
            }
            if Instant::now() + interval >= deadline {
                return Ok(FollowOut { changed: None });
            }
            tokio::time::sleep(interval).await;
        }
    })
    .await?
}

fn is_final(error: &ActivityError) -> bool {
    matches!(error, ActivityError::Application(failure) if failure.is_non_retryable())
}

/// One subscription: `Some` with the first snapshot that differs from `known`, `None` when the
/// stream ends with nothing new. The stream is dropped, so closed, on every return.
async fn one_subscription(
    agent: &RemoteAgent,
    task_id: &str,
    known: &RemoteSnapshot,
) -> Result<Option<RemoteSnapshot>, AgentError> {
    let mut stream = agent.subscribe(task_id).await?;
    let _open = baton_metrics::global().follow_stream_opened(agent.id());
    let mut baseline: Option<DateTime<Utc>> = None;
    let mut current: Option<RemoteSnapshot> = None;
    while let Some(event) = stream.next().await {
        let event = event.map_err(|source| AgentError::Call {
            agent: agent.id().to_string(),
            method: "SubscribeToTask",
            source,
        })?;
        if current.is_some() && is_replayed(&event, baseline) {
            continue;
        }
        let next = match (&event, &current) {
            (StreamResponse::Task(task), None) => {
                baseline = task.status.timestamp;
                Some(of_task_after(task, known.text.as_deref()))
            }
            (_, Some(before)) => after_event(before, &event),
            (_, None) => after_event(known, &event),
        };
        if let Some(next) = next {
            if differs(&next, known) {
                let settled = next.state.is_terminal() || next.state.is_interrupted();
                let said_before = current.as_ref().unwrap_or(known).text.as_deref();
                return Ok(Some(match event {
                    StreamResponse::Task(_) => next,
                    _ if settled => read_whole(agent, next, said_before).await,
                    _ => next,
                }));
            }
            current = Some(next);
        }
    }
    Ok(None)
}

/// Whether a status carries a timestamp no later than the subscription's snapshot.
fn is_replayed(event: &StreamResponse, baseline: Option<DateTime<Utc>>) -> bool {
    let stamp = match event {
        StreamResponse::StatusUpdate(update) => update.status.timestamp,
        StreamResponse::Task(task) => task.status.timestamp,
        _ => None,
    };
    matches!((stamp, baseline), (Some(stamp), Some(baseline)) if stamp <= baseline)
}

fn differs(a: &RemoteSnapshot, b: &RemoteSnapshot) -> bool {
    (a.state, &a.sub_state, &a.text) != (b.state, &b.sub_state, &b.text)
}
