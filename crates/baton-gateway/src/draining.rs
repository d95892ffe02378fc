//! A gateway that is stopping: its streams end at once (their clients subscribe again, to
//! another replica behind a load balancer) and its blocking sends answer with the task as it
//! stands, so the requests under way finish within the process's drain bound.

use std::sync::Arc;

use tokio::sync::watch;

/// Set once, when the process begins to stop; every clone sees it.
#[derive(Clone)]
pub struct Draining(Arc<watch::Sender<bool>>);

impl Default for Draining {
    fn default() -> Self {
        Draining(Arc::new(watch::channel(false).0))
    }
}

impl Draining {
    /// Begins the drain: every stream and wait under way, and every one after, ends.
    pub fn start(&self) {
        self.0.send_replace(true);
    }

    /// Whether the drain has begun.
    pub fn has_started(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the drain has begun (at once if it has).
    pub async fn started(&self) {
        let mut seen = self.0.subscribe();
        // The sender lives as long as `self`, so the wait cannot fail.
        seen.wait_for(|draining| *draining).await.ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_clone_sees_the_drain_begin_also_after_it_began() {
        let draining = Draining::default();
        let clone = draining.clone();
        assert!(!clone.has_started());
        let waiting = tokio::spawn(async move { clone.started().await });
        draining.start();
        waiting.await.unwrap();
        assert!(draining.has_started());
        // A wait that begins after the drain ends at once.
        tokio::time::timeout(std::time::Duration::from_secs(1), draining.started())
            .await
            .unwrap();
    }
}
