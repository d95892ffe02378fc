//! Wakes the calls waiting on a task (a blocking send, a stream, a cancel) when its workflow
//! moves, without polling Temporal. Each task watched has one long poll of its history
//! (GetWorkflowExecutionHistory with `waitNewEvent`), shared by every call in this gateway that
//! waits on it: while the task is quiet, the poll is held by the server and costs nothing, and
//! it ends when the last waiting call goes.
//!
//! A waiting call is only woken: it then reads the task's event log with a query, as before.
//! A workflow's state can change only in a workflow task, so a completed workflow task or the
//! run's end is the wake-up; the other events of a turn (activities, timers) wake nobody.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use baton_proto::temporal::TaskWorkflow;
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use temporalio_client::{Client, WorkflowFetchHistoryOptions};
use temporalio_common::protos::temporal::api::enums::v1::EventType;
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The pause before a task's history is watched again after its run ended or the watch failed
/// (Temporal unreachable): a run that continued as new is watched again at once.
const REWATCH_PAUSE: Duration = Duration::from_secs(1);

/// The tasks this gateway's waiting calls watch, one shared history watch each.
#[derive(Clone)]
pub(crate) struct TaskChanges {
    watch_task: WatchTask,
    watches: Arc<Mutex<HashMap<String, Weak<HistoryWatch>>>>,
}

/// Watches one task (its id), counting its moves into the sender until the task has closed.
type WatchTask = Arc<dyn Fn(String, watch::Sender<u64>) -> BoxFuture<'static, ()> + Send + Sync>;

/// One task's history watch; stopped when the last listener drops it.
struct HistoryWatch {
    task_id: String,
    moves: watch::Receiver<u64>,
    poller: AbortHandle,
    watches: Arc<Mutex<HashMap<String, Weak<HistoryWatch>>>>,
}

impl Drop for HistoryWatch {
    fn drop(&mut self) {
        self.poller.abort();
        let mut watches = self
            .watches
            .lock()
            .expect("the watch map is never poisoned");
        // A listener that came after this watch's last one went, or after it stopped, has a
        // new watch: keep it.
        if watches
            .get(&self.task_id)
            .is_some_and(|w| w.strong_count() == 0)
        {
            watches.remove(&self.task_id);
        }
    }
}

/// A waiting call's ear on one task.
pub(crate) struct ChangeListener {
    moves: watch::Receiver<u64>,
    /// Keeps the watch running; none for a listener a test drives by hand.
    _watch: Option<Arc<HistoryWatch>>,
}

impl ChangeListener {
    /// A listener on moves a test reports itself.
    #[cfg(test)]
    pub(crate) fn on(moves: watch::Receiver<u64>) -> Self {
        ChangeListener {
            moves,
            _watch: None,
        }
    }

    /// How many times the task has moved since its watch began.
    pub(crate) fn moves(&self) -> u64 {
        *self.moves.borrow()
    }

    /// Returns once the task's workflow has moved since the listener was made or last woken.
    pub(crate) async fn changed(&mut self) {
        if self.moves.changed().await.is_err() {
            // The watch ends only once the task has closed for good: nothing will move it.
            std::future::pending::<()>().await;
        }
    }
}

impl TaskChanges {
    pub(crate) fn new(client: Client) -> Self {
        Self::watching_with(Arc::new(move |task_id, tell| {
            watch_history(client.clone(), task_id, tell).boxed()
        }))
    }

    fn watching_with(watch_task: WatchTask) -> Self {
        TaskChanges {
            watch_task,
            watches: Arc::default(),
        }
    }

    /// A listener on `task_id`, sharing the watch another call may already hold. Made before
    /// the caller reads the task, so no move after that read goes unheard.
    pub(crate) fn listen(&self, task_id: &str) -> ChangeListener {
        let mut watches = self
            .watches
            .lock()
            .expect("the watch map is never poisoned");
        // A watch that has stopped (its task closed) is not shared: were the task reset to an
        // earlier point, a new listener would never hear it move.
        let running = watches
            .get(task_id)
            .and_then(Weak::upgrade)
            .filter(|watch| watch.moves.has_changed().is_ok());
        let watch = match running {
            Some(watch) => watch,
            None => {
                let (tell, moves) = watch::channel(0);
                let poller =
                    tokio::spawn((self.watch_task)(task_id.to_string(), tell)).abort_handle();
                let watch = Arc::new(HistoryWatch {
                    task_id: task_id.to_string(),
                    moves,
                    poller,
                    watches: self.watches.clone(),
                });
                watches.insert(task_id.to_string(), Arc::downgrade(&watch));
                watch
            }
        };
        ChangeListener {
            moves: watch.moves.clone(),
            _watch: Some(watch),
        }
    }
}

/// Long-polls the task's history, run after run, and counts its moves into `tell`.
async fn watch_history(client: Client, task_id: String, tell: watch::Sender<u64>) {
    let history = || {
        let handle = client.get_workflow_handle::<TaskWorkflow>(task_id.as_str());
        let options = WorkflowFetchHistoryOptions::builder()
            .wait_new_event(true)
            .skip_archival(true)
            .build();
        // A failed read ends the stream, as the end of the run does.
        handle
            .fetch_history(options)
            .take_while(|event| std::future::ready(event.is_ok()))
            .filter_map(|event| {
                std::future::ready(event.ok().map(|event| {
                    EventType::try_from(event.event_type).unwrap_or(EventType::Unspecified)
                }))
            })
    };
    watch_runs(history, tell).await;
}

/// Reads `history` (the task's events from the start of its current run, then each new one
/// as it comes) again and again, counting the task's moves into `tell`. Once the last run has
/// closed for good, nothing can move the task again, so it stops reading: before, an ended
/// task that GetTask kept cached had its whole history read again every second.
async fn watch_runs<S>(mut history: impl FnMut() -> S, tell: watch::Sender<u64>)
where
    S: Stream<Item = EventType>,
{
    let wake = || tell.send_modify(|moves| *moves += 1);
    loop {
        let mut last = None;
        let mut events = std::pin::pin!(history());
        while let Some(kind) = events.next().await {
            if moves_the_task(kind) {
                wake();
            }
            last = Some(kind);
        }
        // The run ended, or the watch failed: the waiting calls read the task and see which.
        wake();
        match last {
            Some(EventType::WorkflowExecutionContinuedAsNew) => {}
            Some(kind) if closes_the_task(kind) => return,
            _ => tokio::time::sleep(REWATCH_PAUSE).await,
        }
    }
}

/// Whether an event ends the task for good (a run that continued as new goes on in the next).
fn closes_the_task(kind: EventType) -> bool {
    matches!(
        kind,
        EventType::WorkflowExecutionCompleted
            | EventType::WorkflowExecutionFailed
            | EventType::WorkflowExecutionTimedOut
            | EventType::WorkflowExecutionCanceled
            | EventType::WorkflowExecutionTerminated
    )
}

/// Whether an event can change what a query of the task answers.
fn moves_the_task(kind: EventType) -> bool {
    matches!(
        kind,
        EventType::WorkflowTaskCompleted
            | EventType::WorkflowExecutionCompleted
            | EventType::WorkflowExecutionFailed
            | EventType::WorkflowExecutionTimedOut
            | EventType::WorkflowExecutionCanceled
            | EventType::WorkflowExecutionTerminated
            | EventType::WorkflowExecutionContinuedAsNew
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Watches a task whose runs' histories are `runs`, one per read (the last one again for
    /// any read after), each ending as its events run out, or held open after them when `open`.
    /// Returns the count of reads and the moves.
    fn watched(runs: Vec<(Vec<EventType>, bool)>) -> (Arc<AtomicUsize>, watch::Receiver<u64>) {
        let reads = Arc::new(AtomicUsize::new(0));
        let (tell, moves) = watch::channel(0);
        let counted = reads.clone();
        let history = move || {
            let n = counted.fetch_add(1, Ordering::SeqCst).min(runs.len() - 1);
            let (events, open) = runs[n].clone();
            let held = if open {
                futures::stream::pending().boxed()
            } else {
                futures::stream::empty().boxed()
            };
            futures::stream::iter(events).chain(held)
        };
        tokio::spawn(watch_runs(history, tell));
        (reads, moves)
    }

    /// Task changes whose watches are fakes: one for a task whose id starts with "ended" tells
    /// one move and stops, any other is held open. Returns the count of watches started.
    fn fake_changes() -> (TaskChanges, Arc<AtomicUsize>) {
        let started = Arc::new(AtomicUsize::new(0));
        let counted = started.clone();
        let changes = TaskChanges::watching_with(Arc::new(move |task_id: String, tell| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                tell.send_modify(|moves| *moves += 1);
                if !task_id.starts_with("ended") {
                    std::future::pending::<()>().await;
                }
            }
            .boxed()
        }));
        (changes, started)
    }

    fn watched_tasks(changes: &TaskChanges) -> usize {
        changes.watches.lock().unwrap().len()
    }

    #[tokio::test]
    async fn listeners_on_one_task_share_one_watch_until_the_last_goes() {
        let (changes, started) = fake_changes();
        let mut first = changes.listen("t-1");
        let second = changes.listen("t-1");
        let _other = changes.listen("t-2");
        first.changed().await;
        assert_eq!(second.moves(), 1, "the second hears the same watch");
        assert_eq!(started.load(Ordering::SeqCst), 2);
        drop(first);
        drop(second);
        assert_eq!(
            watched_tasks(&changes),
            1,
            "t-1's watch went with its last listener"
        );
        let _again = changes.listen("t-1");
        assert_eq!(
            started.load(Ordering::SeqCst),
            3,
            "a new listener starts a new watch"
        );
    }

    #[tokio::test]
    async fn a_listener_after_the_watch_stopped_starts_a_new_one_that_outlives_the_old() {
        let (changes, started) = fake_changes();
        let mut old = changes.listen("ended-1");
        old.changed().await;
        // The fake watch has returned once it told its move: the task has closed.
        while old.moves.has_changed().is_ok() {
            tokio::task::yield_now().await;
        }
        let new = changes.listen("ended-1");
        assert_eq!(started.load(Ordering::SeqCst), 2);
        drop(old);
        assert_eq!(
            watched_tasks(&changes),
            1,
            "the old watch's drop kept the new one"
        );
        drop(new);
        assert_eq!(watched_tasks(&changes), 0);
    }

    const A_TURN: [EventType; 3] = [
        EventType::WorkflowTaskScheduled,
        EventType::WorkflowTaskStarted,
        EventType::WorkflowTaskCompleted,
    ];

    #[tokio::test(start_paused = true)]
    async fn a_task_that_has_ended_is_read_once_and_never_again() {
        let ended = [&A_TURN[..], &[EventType::WorkflowExecutionCompleted]].concat();
        let (reads, mut moves) = watched(vec![(ended, false)]);
        // Its turn, its end, and the end of the read.
        moves.wait_for(|&m| m == 3).await.unwrap();
        tokio::time::sleep(REWATCH_PAUSE * 30).await;
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        assert_eq!(*moves.borrow(), 3);
        assert!(moves.has_changed().is_err(), "the watch has stopped");
    }

    #[tokio::test(start_paused = true)]
    async fn a_run_that_continued_as_new_is_followed_into_the_next_at_once() {
        let continued = [&A_TURN[..], &[EventType::WorkflowExecutionContinuedAsNew]].concat();
        let (reads, mut moves) = watched(vec![(continued, false), (A_TURN.to_vec(), true)]);
        // The first run's turn, its continue-as-new, the read's end, the next run's turn.
        moves.wait_for(|&m| m == 4).await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        tokio::time::sleep(REWATCH_PAUSE * 30).await;
        assert_eq!(
            reads.load(Ordering::SeqCst),
            2,
            "the next run's read is held open"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_that_fails_before_the_end_is_tried_again_after_a_pause() {
        let (reads, mut moves) = watched(vec![(A_TURN.to_vec(), false), (A_TURN.to_vec(), true)]);
        moves.wait_for(|&m| m == 2).await.unwrap();
        assert_eq!(
            reads.load(Ordering::SeqCst),
            1,
            "not read again before the pause"
        );
        moves.wait_for(|&m| m == 3).await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn only_workflow_tasks_and_ends_move_a_task() {
        for kind in [
            EventType::WorkflowTaskCompleted,
            EventType::WorkflowExecutionCompleted,
            EventType::WorkflowExecutionFailed,
            EventType::WorkflowExecutionTimedOut,
            EventType::WorkflowExecutionCanceled,
            EventType::WorkflowExecutionTerminated,
            EventType::WorkflowExecutionContinuedAsNew,
        ] {
            assert!(moves_the_task(kind), "{kind:?}");
        }
        for kind in [
            EventType::WorkflowTaskScheduled,
            EventType::WorkflowTaskStarted,
            EventType::ActivityTaskScheduled,
            EventType::ActivityTaskCompleted,
            EventType::TimerFired,
            EventType::WorkflowExecutionSignaled,
            EventType::WorkflowExecutionUpdateAccepted,
        ] {
            assert!(!moves_the_task(kind), "{kind:?}");
        }
    }
}
