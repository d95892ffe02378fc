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
use futures::StreamExt;
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
    client: Client,
    watches: Arc<Mutex<HashMap<String, Weak<HistoryWatch>>>>,
}

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
        // A listener that came after this watch's last one went has a new watch: keep it.
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
            // The watch never ends while a listener holds it; if it did, nothing would wake us.
            std::future::pending::<()>().await;
        }
    }
}

impl TaskChanges {
    pub(crate) fn new(client: Client) -> Self {
        TaskChanges {
            client,
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
        let watch = match watches.get(task_id).and_then(Weak::upgrade) {
            Some(watch) => watch,
            None => {
                let (tell, moves) = watch::channel(0);
                let poller = tokio::spawn(watch_history(
                    self.client.clone(),
                    task_id.to_string(),
                    tell,
                ))
                .abort_handle();
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
    let wake = || tell.send_modify(|moves| *moves += 1);
    loop {
        let handle = client.get_workflow_handle::<TaskWorkflow>(task_id.as_str());
        let options = WorkflowFetchHistoryOptions::builder()
            .wait_new_event(true)
            .skip_archival(true)
            .build();
        let mut history = handle.fetch_history(options);
        let mut continued_as_new = false;
        while let Some(event) = history.next().await {
            let Ok(event) = event else { break };
            let kind = EventType::try_from(event.event_type).unwrap_or(EventType::Unspecified);
            continued_as_new = kind == EventType::WorkflowExecutionContinuedAsNew;
            if moves_the_task(kind) {
                wake();
            }
        }
        // The run ended, or the watch failed: the waiting calls read the task and see which.
        wake();
        if !continued_as_new {
            tokio::time::sleep(REWATCH_PAUSE).await;
        }
    }
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
