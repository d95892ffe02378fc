//! ListTasks without asking Temporal visibility each time: the listings this gateway read in the
//! last [`FRESH_FOR`], served again until then.
//!
//! A visibility query costs the dev server a few milliseconds even when it finds nothing, and
//! visibility already follows the workflows by a moment (on Elasticsearch, by about a second),
//! so a listing may show a task's state from up to [`FRESH_FOR`] ago. A write through this
//! gateway (a message, a cancel, a push config) drops every kept listing, and no listing read
//! within [`SETTLE`] of a write is kept, while the write may still be on its way into
//! visibility: a caller lists its own writes as soon as visibility has them.
//!
//! The cache holds at most [`MAX_VIEWS`] task views in all; a listing longer than that is not
//! kept. A listing that has gone stale is dropped by the next one kept.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::A2AError;
use baton_proto::{TaskState, TaskView};
use chrono::{DateTime, Utc};
use tokio::time::Instant;

/// How long a kept listing is served.
const FRESH_FOR: Duration = Duration::from_secs(1);
/// How long after a write through this gateway no listing is kept.
const SETTLE: Duration = Duration::from_secs(1);
/// The most task views kept, across every listing.
const MAX_VIEWS: usize = 5_000;

/// What a listing is of: the caller's tasks, narrowed by what the request filters on. Paging
/// and what each listed task shows (history, artifacts) are applied to the listing afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ListingKey {
    pub caller: String,
    pub context_id: Option<String>,
    pub state: Option<TaskState>,
    pub status_after: Option<DateTime<Utc>>,
}

/// The listings read lately.
#[derive(Clone, Default)]
pub(crate) struct ListingCache {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    /// Redrawn by every write: a listing read across one is not kept.
    generation: u64,
    last_write: Option<Instant>,
    kept: HashMap<ListingKey, Kept>,
    /// The views `kept` holds in all.
    views: usize,
}

struct Kept {
    listing: Arc<Vec<TaskView>>,
    read_at: Instant,
}

impl ListingCache {
    /// The listing of `key`: a kept one while it is fresh, else `read`'s, kept when no write
    /// came during the read or within [`SETTLE`] before it.
    pub(crate) async fn listing<Fut>(
        &self,
        key: ListingKey,
        read: impl FnOnce() -> Fut,
    ) -> Result<Arc<Vec<TaskView>>, A2AError>
    where
        Fut: Future<Output = Result<Vec<TaskView>, A2AError>>,
    {
        let began = Instant::now();
        let generation = {
            let inner = self.lock();
            if let Some(kept) = inner.kept.get(&key).filter(|k| k.is_fresh(began)) {
                return Ok(kept.listing.clone());
            }
            inner.generation
        };
        let listing = Arc::new(read().await?);
        let mut inner = self.lock();
        let settled = inner
            .last_write
            .is_none_or(|wrote| began.duration_since(wrote) >= SETTLE);
        if inner.generation == generation && settled {
            inner.keep(key, listing.clone(), began);
        }
        Ok(listing)
    }

    /// Drops every kept listing: called for each write through this gateway.
    pub(crate) fn wrote(&self) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.last_write = Some(Instant::now());
        inner.kept.clear();
        inner.views = 0;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    /// Keeps `listing`, after dropping the listings gone stale, if it fits.
    fn keep(&mut self, key: ListingKey, listing: Arc<Vec<TaskView>>, read_at: Instant) {
        let now = Instant::now();
        self.kept
            .retain(|kept_key, kept| *kept_key != key && kept.is_fresh(now));
        self.views = self.kept.values().map(|k| k.listing.len()).sum();
        if self.views + listing.len() > MAX_VIEWS {
            return;
        }
        self.views += listing.len();
        self.kept.insert(key, Kept { listing, read_at });
    }
}

impl Kept {
    fn is_fresh(&self, now: Instant) -> bool {
        now.duration_since(self.read_at) < FRESH_FOR
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn key(caller: &str) -> ListingKey {
        ListingKey {
            caller: caller.to_string(),
            context_id: None,
            state: None,
            status_after: None,
        }
    }

    fn view(task_id: &str) -> TaskView {
        serde_json::from_value(serde_json::json!({
            "task_id": task_id, "name": "n", "state": "TASK_STATE_WORKING",
            "sub_tasks": [], "turns": 0
        }))
        .unwrap()
    }

    /// Counts the reads of visibility a listing made.
    #[derive(Default)]
    struct Visibility {
        reads: AtomicUsize,
    }

    impl Visibility {
        async fn list(&self, cache: &ListingCache, key: ListingKey, tasks: usize) -> usize {
            let listing = cache
                .listing(key, || async {
                    self.reads.fetch_add(1, Ordering::SeqCst);
                    Ok((0..tasks).map(|n| view(&format!("t-{n}"))).collect())
                })
                .await
                .unwrap();
            listing.len()
        }

        fn reads(&self) -> usize {
            self.reads.load(Ordering::SeqCst)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_listing_is_served_again_until_it_is_a_second_old() {
        let cache = ListingCache::default();
        let visibility = Visibility::default();
        assert_eq!(visibility.list(&cache, key("alice"), 3).await, 3);
        tokio::time::advance(FRESH_FOR - Duration::from_millis(1)).await;
        assert_eq!(visibility.list(&cache, key("alice"), 3).await, 3);
        assert_eq!(visibility.reads(), 1);
        tokio::time::advance(Duration::from_millis(1)).await;
        visibility.list(&cache, key("alice"), 3).await;
        assert_eq!(visibility.reads(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn each_caller_and_filter_has_a_listing_of_its_own() {
        let cache = ListingCache::default();
        let visibility = Visibility::default();
        let in_context = ListingKey {
            context_id: Some("c-1".into()),
            ..key("alice")
        };
        let completed = ListingKey {
            state: Some(TaskState::Completed),
            ..key("alice")
        };
        for key in [key("alice"), key("bob"), in_context, completed] {
            visibility.list(&cache, key.clone(), 1).await;
            visibility.list(&cache, key, 1).await;
        }
        assert_eq!(visibility.reads(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_drops_every_listing_and_none_is_kept_until_it_settles() {
        let cache = ListingCache::default();
        let visibility = Visibility::default();
        visibility.list(&cache, key("alice"), 1).await;
        cache.wrote();
        visibility.list(&cache, key("alice"), 1).await;
        visibility.list(&cache, key("alice"), 1).await;
        assert_eq!(
            visibility.reads(),
            3,
            "nothing kept while the write settles"
        );
        tokio::time::advance(SETTLE).await;
        visibility.list(&cache, key("alice"), 1).await;
        visibility.list(&cache, key("alice"), 1).await;
        assert_eq!(visibility.reads(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_listing_read_across_a_write_is_not_kept() {
        let cache = ListingCache::default();
        let (began, begun) = tokio::sync::oneshot::channel();
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        let reading = tokio::spawn({
            let cache = cache.clone();
            async move {
                cache
                    .listing(key("alice"), || async {
                        began.send(()).unwrap();
                        finished.await.unwrap();
                        Ok(vec![view("t-old")])
                    })
                    .await
            }
        });
        begun.await.unwrap();
        tokio::time::advance(SETTLE * 2).await;
        cache.wrote();
        tokio::time::advance(SETTLE * 2).await;
        finish.send(()).unwrap();
        reading.await.unwrap().unwrap();
        let listing = cache
            .listing(key("alice"), || async { Ok(vec![view("t-new")]) })
            .await
            .unwrap();
        assert_eq!(
            listing[0].task_id, "t-new",
            "the read across the write was kept"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_views_kept_are_bounded_and_stale_listings_make_room() {
        let cache = ListingCache::default();
        let visibility = Visibility::default();
        visibility.list(&cache, key("alice"), MAX_VIEWS).await;
        visibility.list(&cache, key("bob"), 1).await;
        visibility.list(&cache, key("bob"), 1).await;
        assert_eq!(visibility.reads(), 3, "bob's listing did not fit");
        visibility.list(&cache, key("alice"), MAX_VIEWS).await;
        assert_eq!(visibility.reads(), 3, "alice's was kept");

        tokio::time::advance(FRESH_FOR).await;
        visibility.list(&cache, key("bob"), 1).await;
        visibility.list(&cache, key("bob"), 1).await;
        assert_eq!(visibility.reads(), 4, "alice's stale listing made room");
        assert_eq!(cache.lock().views, 1);
    }
}
