//! GetTask without asking the task each time: the views this gateway read lately, each served
//! again only while its task has not moved since it was read.
//!
//! Whether a task moved, its shared history watch says ([`TaskChanges`]): a cached view goes
//! stale with the next workflow task its task completes, and a message, a cancel or a push
//! config this gateway sends the task drops it at once, so a caller always reads its own
//! writes. What another gateway or the task's own work changed can be served stale for the
//! moment its history event takes to reach the watch (milliseconds), and never longer than
//! [`MAX_AGE`].
//!
//! A task is cached from its second read within [`ADMIT_WINDOW`]: a watch begins with a read of
//! the task's history, which costs more than the one query a task read once needs. The cache
//! holds at most [`MAX_TASKS`] tasks and lets go of one (and of its watch) after [`IDLE`]
//! without a read.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use a2a::A2AError;
use baton_proto::TaskView;
use tokio::time::Instant;

use crate::task_changes::{ChangeListener, TaskChanges};

/// How soon a second read must follow the first for the task to be cached.
const ADMIT_WINDOW: Duration = Duration::from_secs(30);
/// How long an unread task stays in the cache, its history watched.
const IDLE: Duration = Duration::from_secs(30);
/// The oldest view served, whatever the watch says: a bound on any staleness a watch could
/// fail to report.
const MAX_AGE: Duration = Duration::from_secs(10);
/// The most tasks remembered, cached or only seen once.
const MAX_TASKS: usize = 512;

/// The views of the tasks read lately.
#[derive(Clone)]
pub(crate) struct ViewCache {
    inner: Arc<Inner>,
}

/// Starts listening to a task's moves.
type Listen = Box<dyn Fn(&str) -> ChangeListener + Send + Sync>;

struct Inner {
    listen: Listen,
    slots: Mutex<HashMap<String, Slot>>,
    /// Where each slot's generation is drawn from, so no generation is ever reused.
    generations: AtomicU64,
}

/// One task the cache remembers.
struct Slot {
    /// Redrawn by every write through this gateway: a read that began before it keeps nothing.
    generation: u64,
    /// None until the first read ends its turn here.
    last_read: Option<Instant>,
    cached: Option<Cached>,
}

struct Cached {
    view: TaskView,
    /// The watch's count of the task's moves when the read that made `view` began.
    moves: u64,
    listener: ChangeListener,
    read_at: Instant,
}

impl Cached {
    fn is_current(&self, now: Instant) -> bool {
        self.listener.moves() == self.moves && now.duration_since(self.read_at) < MAX_AGE
    }
}

impl ViewCache {
    /// An empty cache whose tasks `changes` watches; it lets go of idle tasks in the background
    /// for as long as it lives.
    pub(crate) fn new(changes: TaskChanges) -> Self {
        Self::listening(Box::new(move |task_id| changes.listen(task_id)))
    }

    fn listening(listen: Listen) -> Self {
        let inner = Arc::new(Inner {
            listen,
            slots: Mutex::default(),
            generations: AtomicU64::new(0),
        });
        tokio::spawn(sweep(Arc::downgrade(&inner)));
        ViewCache { inner }
    }

    /// The view of `task_id`: the cached one while the task has not moved, else `read`'s.
    pub(crate) async fn view<Fut>(
        &self,
        task_id: &str,
        read: impl FnOnce() -> Fut,
    ) -> Result<TaskView, A2AError>
    where
        Fut: Future<Output = Result<TaskView, A2AError>>,
    {
        let now = Instant::now();
        let (generation, listener) = {
            let mut slots = self.inner.lock();
            let slot = match slots.get_mut(task_id) {
                Some(slot) => slot,
                None => {
                    let slot = Slot {
                        generation: self.inner.next_generation(),
                        last_read: None,
                        cached: None,
                    };
                    slots.entry(task_id.to_string()).or_insert(slot)
                }
            };
            if let Some(cached) = slot.cached.as_ref().filter(|c| c.is_current(now)) {
                slot.last_read = Some(now);
                return Ok(cached.view.clone());
            }
            let read_again_soon = slot.cached.is_some()
                || slot
                    .last_read
                    .is_some_and(|at| now.duration_since(at) < ADMIT_WINDOW);
            slot.last_read = Some(now);
            // The listener is taken before the read, so a move during the read is heard.
            let listener = read_again_soon.then(|| match slot.cached.take() {
                Some(stale) => stale.listener,
                None => (self.inner.listen)(task_id),
            });
            (slot.generation, listener)
        };
        let moves = listener.as_ref().map(ChangeListener::moves);
        let view = read().await?;
        if let (Some(listener), Some(moves)) = (listener, moves) {
            let mut slots = self.inner.lock();
            if let Some(slot) = slots
                .get_mut(task_id)
                .filter(|slot| slot.generation == generation)
            {
                slot.cached = Some(Cached {
                    view: view.clone(),
                    moves,
                    listener,
                    read_at: now,
                });
            }
            evict_beyond_bound(&mut slots);
        }
        Ok(view)
    }

    /// Drops what is cached of `task_id`: this gateway has just changed the task.
    pub(crate) fn forget(&self, task_id: &str) {
        let generation = self.inner.next_generation();
        if let Some(slot) = self.inner.lock().get_mut(task_id) {
            slot.generation = generation;
            slot.cached = None;
        }
    }

    #[cfg(test)]
    fn watched(&self) -> usize {
        self.inner
            .lock()
            .values()
            .filter(|slot| slot.cached.is_some())
            .count()
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().expect("the view cache is never poisoned")
    }

    fn next_generation(&self) -> u64 {
        self.generations.fetch_add(1, Ordering::Relaxed)
    }
}

/// Past [`MAX_TASKS`], the least recently read tasks go first.
fn evict_beyond_bound(slots: &mut HashMap<String, Slot>) {
    while slots.len() > MAX_TASKS {
        let Some(oldest) = slots
            .iter()
            .min_by_key(|(_, slot)| slot.last_read)
            .map(|(id, _)| id.clone())
        else {
            return;
        };
        slots.remove(&oldest);
    }
}

/// Every few seconds, lets go of the tasks not read for [`IDLE`], and of their watches.
async fn sweep(inner: Weak<Inner>) {
    let mut tick = tokio::time::interval(IDLE / 3);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        let now = Instant::now();
        inner.lock().retain(|_, slot| {
            slot.last_read
                .is_some_and(|at| now.duration_since(at) < IDLE)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use tokio::sync::watch;

    fn view(turns: u32) -> TaskView {
        serde_json::from_value(serde_json::json!({
            "task_id": "t-1", "name": "n", "state": "TASK_STATE_WORKING", "sub_tasks": [],
            "turns": turns, "participants": [], "event_seq": 0, "goal": "g"
        }))
        .unwrap()
    }

    /// A cache whose tasks move when the test says, through `moves`.
    fn cache() -> (ViewCache, Arc<watch::Sender<u64>>) {
        let moves = Arc::new(watch::channel(0).0);
        let source = moves.clone();
        let cache = ViewCache::listening(Box::new(move |_| ChangeListener::on(source.subscribe())));
        (cache, moves)
    }

    async fn read(cache: &ViewCache, reads: &AtomicUsize, turns: u32) -> u32 {
        cache
            .view("t-1", || async {
                reads.fetch_add(1, Ordering::SeqCst);
                Ok(view(turns))
            })
            .await
            .unwrap()
            .turns
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_read_again_is_served_from_the_cache_until_it_moves() {
        let (cache, moves) = cache();
        let reads = AtomicUsize::new(0);
        assert_eq!(read(&cache, &reads, 1).await, 1);
        tokio::time::advance(Duration::from_millis(10)).await;
        assert_eq!(
            read(&cache, &reads, 2).await,
            2,
            "the second read asks the task"
        );
        for _ in 0..5 {
            assert_eq!(read(&cache, &reads, 3).await, 2, "then the cache answers");
        }
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        assert_eq!(cache.watched(), 1);

        moves.send_modify(|n| *n += 1);
        assert_eq!(read(&cache, &reads, 4).await, 4, "the task moved");
        assert_eq!(read(&cache, &reads, 5).await, 4);
        assert_eq!(reads.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_move_during_a_read_leaves_nothing_cached() {
        let (cache, moves) = cache();
        let reads = AtomicUsize::new(0);
        read(&cache, &reads, 1).await;
        tokio::time::advance(Duration::from_millis(10)).await;
        let moved_meanwhile = cache.view("t-1", || async {
            moves.send_modify(|n| *n += 1);
            Ok(view(2))
        });
        assert_eq!(moved_meanwhile.await.unwrap().turns, 2);
        assert_eq!(
            read(&cache, &reads, 3).await,
            3,
            "what was read may predate the move"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_read_once_is_not_watched() {
        let (cache, _moves) = cache();
        let reads = AtomicUsize::new(0);
        assert_eq!(read(&cache, &reads, 1).await, 1);
        assert_eq!(cache.watched(), 0);
        tokio::time::advance(ADMIT_WINDOW + Duration::from_secs(1)).await;
        assert_eq!(read(&cache, &reads, 2).await, 2);
        assert_eq!(cache.watched(), 0, "the second read came too late");
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_through_this_gateway_drops_the_view_and_any_read_under_way() {
        let (cache, _moves) = cache();
        let reads = AtomicUsize::new(0);
        read(&cache, &reads, 1).await;
        tokio::time::advance(Duration::from_millis(10)).await;
        // A read under way when the write lands keeps nothing.
        let under_way = cache.view("t-1", || async {
            cache.forget("t-1");
            Ok(view(2))
        });
        assert_eq!(under_way.await.unwrap().turns, 2);
        assert_eq!(cache.watched(), 0);
        assert_eq!(read(&cache, &reads, 3).await, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn no_view_outlives_its_max_age_and_idle_tasks_are_let_go() {
        let (cache, _moves) = cache();
        let reads = AtomicUsize::new(0);
        read(&cache, &reads, 1).await;
        tokio::time::advance(Duration::from_millis(10)).await;
        read(&cache, &reads, 2).await;
        tokio::time::advance(MAX_AGE).await;
        assert_eq!(read(&cache, &reads, 3).await, 3, "too old to serve");
        tokio::time::advance(IDLE * 2).await;
        assert_eq!(cache.inner.lock().len(), 0, "swept");
    }

    #[tokio::test(start_paused = true)]
    async fn the_least_recently_read_tasks_go_first_past_the_bound() {
        let (cache, _moves) = cache();
        for n in 0..=MAX_TASKS {
            tokio::time::advance(Duration::from_millis(1)).await;
            let id = format!("t-{n}");
            cache.view(&id, || async { Ok(view(0)) }).await.unwrap();
            cache.view(&id, || async { Ok(view(0)) }).await.unwrap();
        }
        let slots = cache.inner.lock();
        assert_eq!(slots.len(), MAX_TASKS);
        assert!(!slots.contains_key("t-0"));
        assert!(slots.contains_key(&format!("t-{MAX_TASKS}")));
    }
}
