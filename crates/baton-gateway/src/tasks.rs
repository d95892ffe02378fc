//! Reading tasks over Temporal: their views (hedged with the result of an ended task), their
//! events, and who may see them.

use crate::draining::Draining;
use std::sync::Arc;
use std::time::Duration;

use a2a::A2AError;
use a2a_server::ServiceParams;
use baton_proto::temporal::{TaskWorkflow, task_workflow};
use baton_proto::{EventPage, TaskView};
use temporalio_client::errors::WorkflowQueryError;
use temporalio_client::{
    Client, WorkflowDescribeOptions, WorkflowExecutionDescription, WorkflowExecutionStatus,
    WorkflowGetResultOptions, WorkflowQueryOptions,
};
use temporalio_common::{QueryDefinition, WorkflowDefinition};

use crate::config::GatewayConfig;
use crate::identity::{caller, check_task_id};
use crate::task_changes::TaskChanges;
use crate::temporal_errors::{RETRY_DELAY, query_error, retry_info, unreachable};
use crate::view_cache::ViewCache;

/// The reader of tasks over Temporal, shared by the handler and the listing: every read is
/// bounded by the call timeout, and GetTask's views are served again while a task has not moved.
#[derive(Clone)]
pub(crate) struct Tasks {
    pub(crate) client: Client,
    pub(crate) config: Arc<GatewayConfig>,
    /// Which tasks moved, from Temporal: what waits and streams listen to.
    pub(crate) changes: TaskChanges,
    /// The views GetTask serves again while their tasks have not moved.
    pub(crate) views: ViewCache,
    /// Set when the process stops: streams and blocking sends end at once.
    pub(crate) draining: Draining,
}

impl Tasks {
    /// Reads `config`'s tasks through `client`.
    pub(crate) fn new(client: Client, config: Arc<GatewayConfig>) -> Self {
        let changes = TaskChanges::new(client.clone());
        Tasks {
            views: ViewCache::new(changes.clone()),
            changes,
            client,
            config,
            draining: Draining::default(),
        }
    }

    /// Whether Temporal has a workflow with this id, within the call timeout.
    pub(crate) async fn exists(&self, task_id: &str) -> bool {
        self.described(task_id).await.is_some()
    }

    /// Temporal's description of the workflow with this id; `None` when it has none or did not
    /// answer within the call timeout.
    pub(crate) async fn described(&self, task_id: &str) -> Option<WorkflowExecutionDescription> {
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        let describe = handle.describe(WorkflowDescribeOptions::default());
        tokio::time::timeout(self.config.temporal_timeout, describe)
            .await
            .ok()?
            .ok()
    }

    /// `call`, bounded by the call timeout.
    pub(crate) async fn bounded<T>(
        &self,
        doing: &str,
        call: impl Future<Output = T>,
    ) -> Result<T, A2AError> {
        tokio::time::timeout(self.config.temporal_timeout, call)
            .await
            .map_err(|_| self.unavailable(doing))
    }

    /// Queries task `task_id`'s workflow with `query`, bounded by the call timeout (`doing`
    /// says what for).
    pub(crate) async fn query_task<Q>(
        &self,
        task_id: &str,
        query: Q,
        input: Q::Input,
        doing: &str,
    ) -> Result<Q::Output, A2AError>
    where
        Q: QueryDefinition<Workflow = TaskWorkflow>,
        Q::Input: Send,
    {
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        let query = handle.query(query, input, WorkflowQueryOptions::default());
        self.bounded(doing, query)
            .await?
            .map_err(|e| query_error(task_id, doing, e))
    }

    /// The retryable error of a call Temporal did not answer in time: no worker is running,
    /// or Temporal itself is unreachable.
    pub(crate) fn unavailable(&self, doing: &str) -> A2AError {
        A2AError::internal(format!(
            "{doing} took longer than {}s: this agent's workers or its Temporal service are \
             not answering; retry later (a message sent again with the same messageId is \
             taken once)",
            self.config.temporal_timeout.as_secs()
        ))
        .with_details(vec![retry_info(RETRY_DELAY)])
    }

    /// The task, as its `task` query answers. A query is answered by a worker, which replays
    /// the task; a task that has ended COMPLETED is also its workflow's result, which Temporal
    /// holds without any worker. So when the query has not answered within [`ENDED_READ_AFTER`] (or
    /// half the call timeout, if that is shorter), the result is read too, and the first of
    /// the two to answer is the view: an ended task reads in about a second with its workers
    /// stopped or busy, where the query alone would fail after the call timeout.
    pub(crate) async fn view(&self, task_id: &str) -> Result<TaskView, A2AError> {
        let query = self.query_task(task_id, task_workflow::TASK, (), "reading the task");
        let mut query = std::pin::pin!(query);
        let hedge_after = ENDED_READ_AFTER.min(self.config.temporal_timeout / 2);
        if let Ok(answer) = tokio::time::timeout(hedge_after, query.as_mut()).await {
            return answer;
        }
        tokio::select! {
            answer = query.as_mut() => answer,
            Some(view) = self.ended_view(task_id) => Ok(view),
        }
    }

    /// The view task `task_id` ended with, from its workflow's result; `None` while it runs (a
    /// run that continued as new is not an end), when it ended without one (a task that ends
    /// FAILED or CANCELED fails or cancels its workflow; terminated, timed out), when the id is
    /// another workflow's (a stand-in's), or when Temporal does not answer in time.
    pub(crate) async fn ended_view(&self, task_id: &str) -> Option<TaskView> {
        let ended_task = self.described(task_id).await.is_some_and(|d| {
            d.workflow_type() == TaskWorkflow.name()
                && d.status() == WorkflowExecutionStatus::Completed
        });
        if !ended_task {
            return None;
        }
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        let result = handle.get_result(
            WorkflowGetResultOptions::builder()
                .follow_runs(false)
                .build(),
        );
        match tokio::time::timeout(self.config.temporal_timeout, result).await {
            Ok(Ok(view)) => Some(view),
            _ => None,
        }
    }

    /// The task's events from `cursor`; `None` when Temporal did not answer within the call
    /// timeout (a worker restarting, a busy machine) or could not take the call, which a
    /// waiting caller may ask again.
    pub(crate) async fn events(
        &self,
        task_id: &str,
        cursor: u64,
    ) -> Result<Option<EventPage>, A2AError> {
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        let query = handle.query(
            task_workflow::EVENTS_SINCE,
            cursor,
            WorkflowQueryOptions::default(),
        );
        match tokio::time::timeout(self.config.temporal_timeout, query).await {
            Ok(Err(WorkflowQueryError::Rpc(status))) if unreachable(&status) => {
                // Refused at once: a caller that asks again at once would spin.
                tokio::time::sleep(RETRY_DELAY).await;
                Ok(None)
            }
            Ok(page) => page
                .map(Some)
                .map_err(|e| query_error(task_id, "reading the task's events", e)),
            Err(_) => Ok(None),
        }
    }

    /// The task, if `caller` is one of its participants; "not found" otherwise.
    pub(crate) async fn visible_view(
        &self,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<TaskView, A2AError> {
        let caller = caller_of(params, task_id)?;
        visible_to(&caller, self.view(task_id).await?)
    }

    /// As [`Self::visible_view`], served from the view cache while the task has not moved:
    /// for GetTask, which only shows the task. The calls that act on what they read ask the
    /// task itself.
    pub(crate) async fn visible_cached_view(
        &self,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<TaskView, A2AError> {
        let caller = caller_of(params, task_id)?;
        let view = self.views.view(task_id, || self.view(task_id)).await?;
        visible_to(&caller, view)
    }
}

/// Who asks to read `task_id`, once the id is one Baton could have made.
pub(crate) fn caller_of(params: &ServiceParams, task_id: &str) -> Result<String, A2AError> {
    check_task_id(task_id)?;
    Ok(caller(params).id)
}

/// `view`, if `caller` is one of its task's participants; "not found" otherwise, as for a task
/// that does not exist.
pub(crate) fn visible_to(caller: &str, view: TaskView) -> Result<TaskView, A2AError> {
    if view.participants.iter().any(|p| p.id == caller) {
        Ok(view)
    } else {
        Err(A2AError::task_not_found(&view.task_id))
    }
}

/// How long a read of the task waits on its query before it also reads the result of a task
/// that has completed. A worker that holds the task answers in milliseconds, one that replays it in
/// tens of them; past a second it is most likely stopped or swamped.
pub(crate) const ENDED_READ_AFTER: Duration = Duration::from_secs(1);
