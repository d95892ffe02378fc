//! Following a task as it moves: a blocking send's wait for it to settle, and the streams of
//! its events.

use std::sync::Arc;

use a2a::{A2AError, StreamResponse, Task};
use baton_a2a::rendering::Contents;
use baton_content::ContentStore;
use baton_core::answer::{answer_artifacts, has_answered};
use baton_proto::{TaskEvent, TaskState, TaskView};
use futures::stream::BoxStream;
use tokio_stream::wrappers::ReceiverStream;

use crate::a2a_task::events_of;
use crate::tasks::Tasks;

/// When a stream of events ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndAt {
    /// A terminal or interrupted state: the end of a streaming send.
    Settled,
    /// A terminal state only: the end of a subscription.
    Terminal,
}

impl EndAt {
    pub(crate) fn reached(self, state: TaskState) -> bool {
        state.is_terminal() || (self == EndAt::Settled && state.is_interrupted())
    }
}

impl Tasks {
    /// Waits until a state change after `cursor` settles the task (terminal or interrupted),
    /// the blocking timeout passes or the process begins to stop.
    pub(crate) async fn wait_settled(
        &self,
        task_id: &str,
        cursor: u64,
    ) -> Result<TaskView, A2AError> {
        let deadline = tokio::time::Instant::now() + self.config.blocking_timeout;
        let mut changes = self.changes.listen(task_id);
        let mut next = cursor;
        loop {
            // A read Temporal did not answer in time is asked again until the deadline.
            let page = self.events(task_id, next).await?;
            if let Some(page) = &page {
                next = page.next_seq;
                let settled = page.events.iter().any(|e| {
                    matches!(e.event, TaskEvent::Status { state, .. } if EndAt::Settled.reached(state))
                });
                if settled || page.closed {
                    return self.view(task_id).await;
                }
            }
            if tokio::time::Instant::now() >= deadline || self.draining.has_started() {
                return self.view(task_id).await;
            }
            if page.is_some() {
                tokio::select! {
                    moved = tokio::time::timeout_at(deadline, changes.changed()) => {
                        if moved.is_err() {
                            return self.view(task_id).await;
                        }
                    }
                    () = self.draining.started() => return self.view(task_id).await,
                }
            }
        }
    }

    /// A stream of the task's snapshot, then its events from `cursor`, until `end`. It reads
    /// the task only when the task moved, and stops as soon as the client hangs up or the
    /// process begins to stop (the client subscribes again, as after any cut). The files
    /// of the artifacts of a task that answered are read from `content`.
    pub(crate) fn stream(
        &self,
        task_id: String,
        cursor: u64,
        end: EndAt,
        first: Task,
        content: Arc<ContentStore>,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let handler = self.clone();
        let mut changes = self.changes.listen(&task_id);
        let draining = self.draining.clone();
        tokio::spawn(async move {
            if tx.send(Ok(StreamResponse::Task(first))).await.is_err() {
                return;
            }
            let mut next = cursor;
            loop {
                let page = match handler.events(&task_id, next).await {
                    Ok(Some(page)) => page,
                    // Not answered in time: asked again at once while the client listens.
                    Ok(None) if tx.is_closed() => return,
                    Ok(None) => continue,
                    Err(error) => {
                        tx.send(Err(error)).await.ok();
                        return;
                    }
                };
                next = page.next_seq;
                let mut finished = page.closed;
                if !page.events.is_empty() {
                    let view = match handler.view(&task_id).await {
                        Ok(view) => view,
                        Err(error) => {
                            tx.send(Err(error)).await.ok();
                            return;
                        }
                    };
                    let answers = page.events.iter().any(|e| {
                        matches!(&e.event, TaskEvent::Status { state, sub_state, .. } if has_answered(*state, sub_state.as_deref()))
                    });
                    let contents = if answers {
                        Contents::of_artifacts(&content, &view.task_id, &answer_artifacts(&view))
                            .await
                    } else {
                        Contents::none()
                    };
                    for event in events_of(&view, &page.events, &contents) {
                        if let StreamResponse::StatusUpdate(update) = &event {
                            let state = baton_core::a2a_state::from_a2a(&update.status.state);
                            finished |= end.reached(state);
                        }
                        if tx.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                }
                // A stopping process ends its streams: the client subscribes again elsewhere.
                if finished || draining.has_started() {
                    return;
                }
                tokio::select! {
                    () = changes.changed() => {}
                    () = tx.closed() => return,
                    () = draining.started() => return,
                }
            }
        });
        Box::pin(ReceiverStream::new(rx))
    }
}
