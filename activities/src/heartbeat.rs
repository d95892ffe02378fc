//! Heartbeats for long activities, so a cancel from the workflow reaches the work promptly and a
//! worker that died is noticed at the heartbeat timeout, not at the activity's end.

use std::future::Future;

use temporalio_sdk::activities::{ActivityContext, ActivityError};

use crate::HEARTBEAT_EVERY;

/// Runs `work` while heartbeating every [`HEARTBEAT_EVERY`]. A cancel from the workflow drops
/// `work` (which hangs up any stream it holds) and reports the activity cancelled.
pub async fn heartbeating<T>(
    ctx: &ActivityContext,
    work: impl Future<Output = T>,
) -> Result<T, ActivityError> {
    heartbeating_progress(ctx, || (), work).await
}

/// As [`heartbeating`], each heartbeat carrying `progress()`, which the activity's next attempt
/// reads from its heartbeat details.
pub async fn heartbeating_progress<T, P: serde::Serialize + 'static>(
    ctx: &ActivityContext,
    progress: impl Fn() -> P,
    work: impl Future<Output = T>,
) -> Result<T, ActivityError> {
    tokio::pin!(work);
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    loop {
        tokio::select! {
            out = &mut work => return Ok(out),
            () = ctx.cancelled() => return Err(ActivityError::cancelled()),
            _ = beat.tick() => {
                ctx.record_heartbeat(progress()).await.ok();
            }
        }
    }
}
