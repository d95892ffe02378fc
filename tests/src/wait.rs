//! Waiting in tests on what can be observed, never on a fixed sleep: poll a condition until it
//! holds, or await one event, each bounded by a hang guard that fails the test naming what it
//! waited for. The guard only stops a test that hangs; no test asserts how long anything took.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

/// How long a test waits for something that should come, before it fails as hung.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// How often a poll looks again.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// Calls `probe` until it returns `Some`, and returns that; fails the test naming `what` when
/// nothing came within `within`.
pub async fn poll_until<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll_seeing(what, within, || {
        let probed = probe();
        async move { probed.await.ok_or(NothingYet) }
    })
    .await
}

/// Calls `probe` until it returns `Ok`, and returns that; fails the test naming `what`, with
/// what the last probe saw (its `Err`), when nothing came within `within`.
pub async fn poll_seeing<T, E, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    E: Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let seen = match probe().await {
            Ok(found) => return found,
            Err(seen) => seen,
        };
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {within:?} for {what}, in vain; last seen: {seen:#?}"
        );
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// What [`poll_until`]'s probe saw when it found nothing.
#[derive(Debug)]
struct NothingYet;

/// Awaits `event`; fails the test naming `what` when it did not come within `within`.
pub async fn within<T>(what: &str, within: Duration, event: impl Future<Output = T>) -> T {
    match tokio::time::timeout(within, event).await {
        Ok(value) => value,
        Err(_) => panic!("waited {within:?} for {what}, in vain"),
    }
}
