//! A2A 1.0 served over Temporal. Every call becomes a workflow update, query or cancel: the
//! gateway keeps no task state, so any number of gateways can serve the same tasks.

use std::sync::Arc;
use std::time::Duration;

use a2a::{
    A2AError, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};
use a2a_server::{RequestHandler, ServiceParams};
use async_trait::async_trait;
use baton_a2a::webhook::{self, Webhooks};
use baton_core::derived_id::derived_id;
use baton_core::extensions::{STATUS_EXTENSION, SUPPORTED_EXTENSIONS, TASK_EXTENSION};
use baton_proto::temporal::search_attributes::{
    A2A_CONTEXT_ID, A2A_STATUS_TIMESTAMP, A2A_TASK_STATE, BATON_AGENT, BATON_PARTICIPANTS,
};
use baton_proto::temporal::{TaskWorkflow, task_workflow};
use baton_proto::{
    EventPage, InboxMessage, InboxReceipt, Lifecycle, PushConfig, PushDelivery, TaskInput,
    TaskMessage, TaskState, TaskView,
};
use baton_proto::{Refusal, RefusalCode};
use futures::stream::BoxStream;
use temporalio_client::errors::{
    WorkflowInteractionError, WorkflowQueryError, WorkflowStartError, WorkflowUpdateError,
    WorkflowUpdateWithStartError,
};
use temporalio_client::{
    Client, WorkflowCancelOptions, WorkflowDescribeOptions, WorkflowExecuteUpdateOptions,
    WorkflowExecutionDescription, WorkflowExecutionStatus, WorkflowGetResultOptions,
    WorkflowIdConflictPolicy, WorkflowIdReusePolicy, WorkflowQueryOptions, WorkflowStartOptions,
    WorkflowUpdateWithStartOptions,
};
use temporalio_common::search_attributes::SearchAttributes;
use temporalio_common::{QueryDefinition, UpdateDefinition, WorkflowDefinition};
use tokio_stream::wrappers::ReceiverStream;

use crate::a2a_task::{Reader, events_of, task_of};
use crate::continuation::continuing;
use crate::identity::{CallerKind, caller, check_task_id, sender};
use crate::intake::{Trust, follow_up, inbox_message, new_task, text_of};
use crate::listing::{Freshness, list_tasks};
use crate::listing_cache::ListingCache;
use crate::part_scan::too_many_parts;
use crate::push_configs::{self, check_url};
use crate::task_changes::TaskChanges;
use crate::view_cache::ViewCache;

/// What the gateway serves, from the agent's settings.
pub struct GatewayConfig {
    /// `agent.id`: this agent's own id, which labels its tasks and no sender may assert.
    pub agent_id: String,
    /// `temporal.task_queue`: where new tasks run, and the tasks ListTasks reads.
    pub task_queue: String,
    /// `server.delegators`: participants trusted to brief a new task fully.
    pub delegators: Vec<String>,
    /// The agent card served at `/.well-known/agent-card.json`
    /// (`baton_config::agent_card::served_card`).
    pub card: serde_json::Value,
    /// The longest any one call to Temporal may take (`server.temporal_timeout`): past it the
    /// caller gets a retryable error, never a hang.
    pub temporal_timeout: Duration,
    /// The longest a blocking SendMessage waits for its task to settle
    /// (`server.blocking_timeout`) before it answers with the task as it stands.
    pub blocking_timeout: Duration,
    /// `server.allow_private_push_urls`.
    pub allow_private_push_urls: bool,
    /// Whether tasks carry Baton's search attributes (`temporal.search_attributes`).
    pub search_attributes: bool,
    /// This agent's public URL: its own push receiver (`<base_url>/a2a/push/<stand-in id>`),
    /// which its own stand-ins register, is trusted whatever address it has.
    pub public_url: url::Url,
    /// What the deployment secret gives: webhook secrets are sealed with it before they reach
    /// history, and anonymous tasks' ids are keyed by it.
    pub deployment: Arc<baton_core::deployment_key::DeploymentKey>,
    /// `server.max_message_parts`: checked here for gRPC, whose bodies the part scan cannot read.
    pub max_message_parts: usize,
}

/// The `RequestHandler` of Baton's gateway.
#[derive(Clone)]
pub struct TemporalHandler {
    pub(crate) client: Client,
    pub(crate) config: Arc<GatewayConfig>,
    changes: TaskChanges,
    /// The views GetTask serves again while their tasks have not moved.
    views: ViewCache,
    /// The listings ListTasks serves again for a moment.
    pub(crate) listings: ListingCache,
    /// Where a config registered on an ended task gets the task's final state.
    webhooks: Webhooks,
}

/// How long a read of the task waits on its query before it also reads the result of a task
/// that has completed. A worker that holds the task answers in milliseconds, one that replays it in
/// tens of them; past a second it is most likely stopped or swamped.
const ENDED_READ_AFTER: Duration = Duration::from_secs(1);

/// How long a CancelTask waits for the task to confirm it was cancelled.
const CANCEL_WAIT: Duration = Duration::from_secs(60);

/// Where a message was delivered, and what became of it.
pub(crate) struct Delivered {
    task_id: String,
    context_id: Option<String>,
    arrival: Arrival,
}

/// What became of a delivered message.
enum Arrival {
    /// The task took it: the inbox's receipt.
    Taken(InboxReceipt),
    /// Temporal holds the new task it opens, with the message (signal-with-start): the task as
    /// it is until a worker takes the message.
    Opened(Box<TaskView>),
    /// Temporal holds the new task, but no worker took the message within the call timeout.
    Unread,
}

/// When a stream of events ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EndAt {
    /// A terminal or interrupted state: the end of a streaming send.
    Settled,
    /// A terminal state only: the end of a subscription.
    Terminal,
}

impl EndAt {
    fn reached(self, state: TaskState) -> bool {
        state.is_terminal() || (self == EndAt::Settled && state.is_interrupted())
    }
}

impl TemporalHandler {
    /// Serves `config`'s agent, reaching its tasks through `client`.
    pub fn new(client: Client, config: GatewayConfig) -> Self {
        let changes = TaskChanges::new(client.clone());
        TemporalHandler {
            views: ViewCache::new(changes.clone()),
            listings: ListingCache::default(),
            webhooks: Webhooks::new(
                config.allow_private_push_urls,
                Some(config.public_url.clone()),
                config.deployment.clone(),
            ),
            changes,
            client,
            config: Arc::new(config),
        }
    }

    /// The conversation a new task in `context_id` continues: that of the caller's newest task
    /// there, bounded. Empty when the context holds no task of the caller's; a lookup that
    /// fails is logged, and the task starts afresh.
    async fn earlier_in_context(
        &self,
        params: &ServiceParams,
        context_id: &str,
    ) -> Vec<TaskMessage> {
        let newest = ListTasksRequest {
            context_id: Some(context_id.to_string()),
            status: None,
            page_size: Some(1),
            page_token: None,
            history_length: Some(0),
            status_timestamp_after: None,
            include_artifacts: None,
            tenant: None,
        };
        let listed = match self
            .bounded(
                "looking up the context",
                list_tasks(self, params, newest, Freshness::Now),
            )
            .await
            .and_then(|listed| listed)
        {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(context = %context_id, "the task starts without its context's earlier conversation: {}", error.message);
                return Vec::new();
            }
        };
        let Some(previous) = listed.tasks.first() else {
            return Vec::new();
        };
        match self.view(&previous.id).await {
            Ok(view) => continuing(&view),
            Err(error) => {
                tracing::warn!(context = %context_id, "the task starts without its context's earlier conversation: {}", error.message);
                Vec::new()
            }
        }
    }

    /// Refuses an `A2A-Extensions` URI the card does not advertise, before anything is created.
    fn check_extensions(&self, params: &ServiceParams) -> Result<(), A2AError> {
        let requested = requested_extensions(params);
        let unknown: Vec<&String> = requested
            .iter()
            .filter(|uri| !SUPPORTED_EXTENSIONS.contains(&uri.as_str()))
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(A2AError::unsupported_operation(format!(
                "unsupported A2A extension(s): {}",
                unknown
                    .iter()
                    .map(|u| u.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }

    /// Delivers a message: the inbox update of its task, starting the task if it is new. A
    /// webhook sent with it (`configuration.taskPushNotificationConfig`) travels in the same
    /// update, so it is in place before the message causes any change. A new task whose
    /// sender will not wait (`immediately`) is opened with signal-with-start instead, which
    /// Temporal answers without a worker.
    async fn deliver(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
        immediately: bool,
    ) -> Result<Delivered, A2AError> {
        let message = &req.message;
        if message.parts.len() > self.config.max_message_parts {
            return Err(A2AError::invalid_params(too_many_parts(
                self.config.max_message_parts,
            )));
        }
        let webhook = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.as_ref());
        if let Some(task_id) = message.task_id.clone().filter(|id| !id.is_empty()) {
            check_task_id(&task_id)?;
            let sender = sender(params, message, &self.config.agent_id)?.id;
            let mut inbox = follow_up(&sender, message)?;
            inbox.push_config = webhook.map(|w| self.push_config(&task_id, w)).transpose()?;
            let view = self.view(&task_id).await?;
            if !view.participants.iter().any(|p| p.id == sender) {
                return Err(A2AError::task_not_found(&task_id));
            }
            if view.state.is_terminal() {
                return Err(A2AError::unsupported_operation(format!(
                    "task {task_id} is in a terminal state ({}) and takes no more messages",
                    view.state
                )));
            }
            let receipt = self
                .update_task(
                    &task_id,
                    task_workflow::INBOX,
                    inbox,
                    "delivering the message",
                )
                .await?;
            return Ok(Delivered {
                task_id,
                context_id: view.context_id,
                arrival: Arrival::Taken(receipt),
            });
        }
        let caller = sender(params, message, &self.config.agent_id)?;
        let trusted = Trust {
            delegators: &self.config.delegators,
        }
        .trusts(&caller);
        // A retried first message lands on the same task: its id derives from the sender and
        // the message id, and the inbox drops the duplicate. An anonymous task is reached by its
        // id alone, so its id is one only this deployment can derive, from the message's text
        // too: another anonymous caller reusing a message id gets a task of their own.
        let task_id = if caller.kind == CallerKind::Anonymous {
            self.config.deployment.keyed_id(&[
                "anonymous task",
                &message.message_id,
                &text_of(message),
            ])
        } else {
            derived_id(&[&caller.id, &message.message_id])
        };
        let sender = caller.id;
        let context_id = message
            .context_id
            .clone()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| derived_id(&[&task_id, "context"]));
        // A caller that speaks the status extension gets a conversation, which parks awaiting
        // its next message; any other caller a task that completes with its answer.
        let unbriefed = if activates(params, message, STATUS_EXTENSION) {
            Lifecycle::Conversation
        } else {
            Lifecycle::Delegated
        };
        let mut input = new_task(&sender, message, &context_id, trusted, unbriefed)?;
        // A caller that converses goes on with the same task; one whose tasks end goes on with
        // a new task in the same context, found by the context's search attribute (a lookup
        // without it would read every task of the queue).
        let continues_a_context = unbriefed == Lifecycle::Delegated
            && self.config.search_attributes
            && message.context_id.as_deref().is_some_and(|c| !c.is_empty());
        if continues_a_context {
            input.earlier = self.earlier_in_context(params, &context_id).await;
        }
        let mut inbox = inbox_message(&sender, message);
        inbox.push_config = webhook.map(|w| self.push_config(&task_id, w)).transpose()?;
        let indexed = self.config.search_attributes.then(|| {
            SearchAttributes::new([
                A2A_CONTEXT_ID.value_set(context_id.clone()),
                A2A_TASK_STATE.value_set("TASK_STATE_SUBMITTED".to_string()),
                A2A_STATUS_TIMESTAMP.value_set(std::time::SystemTime::now().into()),
                BATON_AGENT.value_set(self.config.agent_id.clone()),
                BATON_PARTICIPANTS
                    .value_set(input.participants.iter().map(|p| p.id.clone()).collect()),
            ])
        });
        // What the Web UI shows for the task in its list.
        let summary = format!("{} (from {sender})", input.name);
        if immediately {
            let options =
                WorkflowStartOptions::new(self.config.task_queue.clone(), task_id.clone())
                    .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
                    // An ended task is never started again by a repeat of the message that created it.
                    .id_reuse_policy(WorkflowIdReusePolicy::RejectDuplicate)
                    .maybe_search_attributes(indexed)
                    .static_summary(summary)
                    .task_timeout(task_workflow::WORKFLOW_TASK_TIMEOUT)
                    .build();
            let arrival = self.open(&task_id, input, inbox, options).await?;
            return Ok(Delivered {
                task_id,
                context_id: Some(context_id),
                arrival,
            });
        }
        let options = WorkflowUpdateWithStartOptions::new(
            self.config.task_queue.clone(),
            task_id.clone(),
            WorkflowIdConflictPolicy::UseExisting,
        )
        .id_reuse_policy(WorkflowIdReusePolicy::RejectDuplicate)
        .maybe_search_attributes(indexed)
        .static_summary(summary)
        .task_timeout(task_workflow::WORKFLOW_TASK_TIMEOUT)
        .build();
        let started = self.client.execute_update_with_start_workflow(
            TaskWorkflow,
            input.into(),
            task_workflow::INBOX,
            inbox,
            options,
        );
        let started = tokio::time::timeout(self.config.temporal_timeout, started).await;
        self.wrote(&task_id);
        let receipt = match started {
            Ok(Ok(receipt)) => receipt,
            // The task this message created has ended: the message is a repeat, answered with
            // the task as it is, never a second run of it.
            Ok(Err(WorkflowUpdateWithStartError::Start(WorkflowStartError::AlreadyStarted {
                ..
            }))) => self.repeat_of_ended(&task_id, &message.message_id).await?,
            Ok(Err(WorkflowUpdateWithStartError::Update(e))) => {
                return Err(update_error(&task_id, "delivering the message", e));
            }
            Ok(Err(
                WorkflowUpdateWithStartError::Start(WorkflowStartError::Rpc(status))
                | WorkflowUpdateWithStartError::Rpc(status),
            )) if unreachable(&status) => {
                return Err(temporal_unreachable("starting the task", &status));
            }
            Ok(Err(other)) => {
                return Err(A2AError::internal(format!(
                    "the task could not be started: {other}"
                )));
            }
            // No worker took the message in time. If Temporal has the task, it holds the
            // brief in its input and runs once a worker comes: the caller gets it SUBMITTED.
            Err(_) if self.exists(&task_id).await => {
                return Ok(Delivered {
                    task_id,
                    context_id: Some(context_id),
                    arrival: Arrival::Unread,
                });
            }
            Err(_) => return Err(self.unavailable("starting the task")),
        };
        Ok(Delivered {
            task_id,
            context_id: Some(context_id),
            arrival: Arrival::Taken(receipt),
        })
    }

    /// Opens a new task with its first message in one signal-with-start: Temporal answers once
    /// it holds both, and the task is what [`TaskView::opened`] says until a worker takes the
    /// message. A repeat lands on the same task, whose inbox drops the duplicate; a repeat for
    /// a task that has ended is answered with the task as it is.
    async fn open(
        &self,
        task_id: &str,
        input: TaskInput,
        first: InboxMessage,
        options: WorkflowStartOptions,
    ) -> Result<Arrival, A2AError> {
        let now = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let opened = Box::new(TaskView::opened(task_id, &input, &first, now));
        let message_id = first.message_id.clone();
        let started = self.client.signal_with_start_workflow(
            TaskWorkflow,
            input.into(),
            task_workflow::FIRST_MESSAGE,
            first,
            options,
        );
        let started = tokio::time::timeout(self.config.temporal_timeout, started).await;
        self.wrote(task_id);
        match started {
            Ok(Ok(_)) => Ok(Arrival::Opened(opened)),
            Ok(Err(WorkflowStartError::AlreadyStarted { .. })) => Ok(Arrival::Taken(
                self.repeat_of_ended(task_id, &message_id).await?,
            )),
            Ok(Err(WorkflowStartError::Rpc(status))) if unreachable(&status) => {
                Err(temporal_unreachable("starting the task", &status))
            }
            // Temporal refuses to start again a task that has ended (its id is never reused):
            // the message is a repeat of the one that created it.
            Ok(Err(other)) => match self.repeat_of_ended(task_id, &message_id).await {
                Ok(receipt) if receipt.state.is_terminal() => Ok(Arrival::Taken(receipt)),
                _ => Err(A2AError::internal(format!(
                    "the task could not be started: {other}"
                ))),
            },
            // Signal-with-start is one write: a task Temporal holds holds the message too.
            Err(_) if self.exists(task_id).await => Ok(Arrival::Opened(opened)),
            Err(_) => Err(self.unavailable("starting the task")),
        }
    }

    /// The receipt for a repeat of the message that created a task that has since ended: a
    /// duplicate, with the task as it is.
    async fn repeat_of_ended(
        &self,
        task_id: &str,
        message_id: &str,
    ) -> Result<InboxReceipt, A2AError> {
        let view = self.view(task_id).await?;
        Ok(InboxReceipt {
            message_id: message_id.to_string(),
            duplicate: true,
            state: view.state,
            cursor: view.event_seq,
        })
    }

    /// Forgets what the caches hold that a write to `task_id` may have changed.
    fn wrote(&self, task_id: &str) {
        self.views.forget(task_id);
        self.listings.wrote();
    }

    /// Whether Temporal has a workflow with this id, within the call timeout.
    async fn exists(&self, task_id: &str) -> bool {
        self.described(task_id).await.is_some()
    }

    /// Temporal's description of the workflow with this id; `None` when it has none or did not
    /// answer within the call timeout.
    async fn described(&self, task_id: &str) -> Option<WorkflowExecutionDescription> {
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
    async fn query_task<Q>(
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

    /// Runs `update` on task `task_id`'s workflow with `input`, bounded by the call timeout
    /// (`doing` says what for); a refusal is the A2A error it stands for.
    async fn update_task<U>(
        &self,
        task_id: &str,
        update: U,
        input: U::Input,
        doing: &str,
    ) -> Result<U::Output, A2AError>
    where
        U: UpdateDefinition<Workflow = TaskWorkflow>,
        U::Input: Send,
        U::Output: 'static,
    {
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        let update = handle.execute_update(update, input, WorkflowExecuteUpdateOptions::default());
        let updated = self.bounded(doing, update).await;
        self.wrote(task_id);
        updated?.map_err(|e| update_error(task_id, doing, e))
    }

    /// The retryable error of a call Temporal did not answer in time: no worker is running,
    /// or Temporal itself is unreachable.
    fn unavailable(&self, doing: &str) -> A2AError {
        A2AError::internal(format!(
            "{doing} took longer than {}s: this agent's workers or its Temporal service are \
             not answering; retry later (a message sent again with the same messageId is \
             taken once)",
            self.config.temporal_timeout.as_secs()
        ))
        .with_details(vec![retry_info(RETRY_DELAY)])
    }

    /// A webhook a caller asks for on `task_id`, checked: its URL may not reach into this
    /// network unless allowed, and an inline config may not name another task.
    fn push_config(
        &self,
        task_id: &str,
        req: &TaskPushNotificationConfig,
    ) -> Result<PushConfig, A2AError> {
        if !req.task_id.is_empty() && req.task_id != task_id {
            return Err(A2AError::invalid_params(format!(
                "the push config names task {} but the message goes to task {task_id}",
                req.task_id
            )));
        }
        check_url(
            &req.url,
            &self.config.public_url,
            self.config.allow_private_push_urls,
        )?;
        let id = req
            .id
            .clone()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| derived_id(&[task_id, &req.url]));
        Ok(push_configs::from_a2a(req, id, &self.config.deployment))
    }

    /// A config registered on a task that has ended: the webhook gets the final state once,
    /// now, since nothing more will happen to the task; the config is not kept (it lives until
    /// the task ends, which it has). A webhook that cannot be reached is the caller's error.
    async fn push_final_state(
        &self,
        view: &TaskView,
        config: PushConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let delivery = PushDelivery {
            task_id: view.task_id.clone(),
            context_id: view
                .context_id
                .clone()
                .unwrap_or_else(|| view.task_id.clone()),
            state: view.state,
            sub_state: view.sub_state.clone(),
            message: view
                .status_message
                .clone()
                .or_else(|| view.last_answer.clone()),
            at: view.updated_at.clone().unwrap_or_default(),
            config,
        };
        webhook::deliver(&self.webhooks, &delivery)
            .await
            .map_err(|failure| {
                A2AError::invalid_params(format!(
                    "task {} has ended ({}), so its webhook gets the final state at once, and that push failed: {failure}",
                    view.task_id, view.state
                ))
            })?;
        Ok(push_configs::to_a2a(&view.task_id, &delivery.config))
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
    async fn ended_view(&self, task_id: &str) -> Option<TaskView> {
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
    async fn events(&self, task_id: &str, cursor: u64) -> Result<Option<EventPage>, A2AError> {
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
    async fn visible_view(
        &self,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<TaskView, A2AError> {
        let caller = reader_of(params, task_id)?;
        visible_to(&caller, self.view(task_id).await?)
    }

    /// As [`Self::visible_view`], served from the view cache while the task has not moved:
    /// for GetTask, which only shows the task. The calls that act on what they read ask the
    /// task itself.
    async fn visible_cached_view(
        &self,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<TaskView, A2AError> {
        let caller = reader_of(params, task_id)?;
        let view = self.views.view(task_id, || self.view(task_id)).await?;
        visible_to(&caller, view)
    }

    /// The task's push configs, for one of its participants.
    async fn configs(
        &self,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, A2AError> {
        self.visible_view(params, task_id).await?;
        let configs = self
            .query_task(
                task_id,
                task_workflow::PUSH_CONFIGS,
                (),
                "reading the push configs",
            )
            .await?;
        Ok(configs
            .iter()
            .map(|c| push_configs::to_a2a(task_id, c))
            .collect())
    }

    /// Waits until a state change after `cursor` settles the task (terminal or interrupted).
    async fn wait_settled(&self, task_id: &str, cursor: u64) -> Result<TaskView, A2AError> {
        let deadline = tokio::time::Instant::now() + self.config.blocking_timeout;
        let mut changes = self.changes.listen(task_id);
        let mut next = cursor;
        loop {
            // A read Temporal did not answer in time is asked again until the deadline.
            let page = self.events(task_id, next).await?;
            if let Some(page) = &page {
                next = page.next_seq;
                let settled = page.events.iter().any(|e| {
                    matches!(e.event, baton_proto::TaskEvent::Status { state, .. } if EndAt::Settled.reached(state))
                });
                if settled || page.closed {
                    return self.view(task_id).await;
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return self.view(task_id).await;
            }
            if page.is_some()
                && tokio::time::timeout_at(deadline, changes.changed())
                    .await
                    .is_err()
            {
                return self.view(task_id).await;
            }
        }
    }

    /// A stream of the task's snapshot, then its events from `cursor`, until `end`. It reads
    /// the task only when the task moved, and stops as soon as the client hangs up.
    fn stream(
        &self,
        task_id: String,
        cursor: u64,
        end: EndAt,
        first: Task,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let handler = self.clone();
        let mut changes = self.changes.listen(&task_id);
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
                    for event in events_of(&view, &page.events) {
                        if let StreamResponse::StatusUpdate(update) = &event {
                            let state = baton_core::a2a_state::from_a2a(&update.status.state);
                            finished |= end.reached(state);
                        }
                        if tx.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                }
                if finished {
                    return;
                }
                tokio::select! {
                    () = changes.changed() => {}
                    () = tx.closed() => return,
                }
            }
        });
        Box::pin(ReceiverStream::new(rx))
    }
}

#[async_trait]
impl RequestHandler for TemporalHandler {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.check_extensions(params)?;
        let configuration = req.configuration.as_ref();
        let history_length = configuration.and_then(|c| c.history_length);
        let immediately = configuration.and_then(|c| c.return_immediately) == Some(true);
        let reader = sender_reader(params, &req.message);
        let delivered = self.deliver(params, &req, immediately).await?;
        let receipt = match &delivered.arrival {
            Arrival::Taken(receipt) => receipt,
            Arrival::Opened(view) => {
                return Ok(SendMessageResponse::Task(task_of(
                    view,
                    history_length,
                    reader,
                )));
            }
            Arrival::Unread => return Ok(SendMessageResponse::Task(submitted(&delivered))),
        };
        let task_id = &delivered.task_id;
        // A repeated messageId was answered when it first came: the task as it is now.
        let view = if immediately || receipt.duplicate {
            self.view(task_id).await?
        } else {
            self.wait_settled(task_id, receipt.cursor).await?
        };
        Ok(SendMessageResponse::Task(task_of(
            &view,
            history_length,
            reader,
        )))
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.check_extensions(params)?;
        let reader = sender_reader(params, &req.message);
        let delivered = self.deliver(params, &req, false).await?;
        let receipt = match &delivered.arrival {
            Arrival::Taken(receipt) => receipt.clone(),
            Arrival::Opened(view) => {
                let only = StreamResponse::Task(task_of(view, None, reader));
                return Ok(Box::pin(futures::stream::iter([Ok(only)])));
            }
            Arrival::Unread => {
                let only = StreamResponse::Task(submitted(&delivered));
                return Ok(Box::pin(futures::stream::iter([Ok(only)])));
            }
        };
        let view = self.view(&delivered.task_id).await?;
        if receipt.duplicate {
            // A repeated messageId: the task as it is, and the end of the stream.
            let snapshot = StreamResponse::Task(task_of(&view, None, reader));
            return Ok(Box::pin(futures::stream::iter([Ok(snapshot)])));
        }
        // The task as the message found it, then every change since, in order: a state the
        // stream shows is never followed by one that came before it.
        let as_received = TaskView {
            state: receipt.state,
            sub_state: None,
            status_message: None,
            ..view
        };
        let snapshot = task_of(&as_received, None, reader);
        Ok(self.stream(delivered.task_id, receipt.cursor, EndAt::Settled, snapshot))
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        let view = self.visible_cached_view(params, &req.id).await?;
        Ok(task_of(&view, req.history_length, task_reader(params)))
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        // Each task is read with its own bounded query; the whole listing is bounded too.
        self.bounded(
            "listing the tasks",
            list_tasks(self, params, req, Freshness::MayBeKept),
        )
        .await?
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        let view = self.visible_view(params, &req.id).await?;
        if view.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(&req.id));
        }
        let handle = self
            .client
            .get_workflow_handle::<TaskWorkflow>(req.id.as_str());
        let cancel = handle.cancel(
            WorkflowCancelOptions::builder()
                .reason("cancelled over A2A".to_string())
                .build(),
        );
        let sent = self.bounded("sending the cancel", cancel).await;
        self.wrote(&req.id);
        sent?.map_err(|e| match e {
            WorkflowInteractionError::Rpc(status) if unreachable(&status) => {
                temporal_unreachable("sending the cancel", &status)
            }
            other => A2AError::internal(format!("the cancel could not be sent: {other}")),
        })?;
        let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
        let mut changes = self.changes.listen(&req.id);
        loop {
            let view = self.view(&req.id).await?;
            // Past the deadline the wait ends at once, with the task as it stands.
            if view.state.is_terminal()
                || tokio::time::timeout_at(deadline, changes.changed())
                    .await
                    .is_err()
            {
                return Ok(task_of(&view, Some(0), task_reader(params)));
            }
        }
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let view = self.visible_view(params, &req.id).await?;
        if view.state.is_terminal() {
            return Err(A2AError::unsupported_operation(format!(
                "task {} is in a terminal state ({}): there is nothing to subscribe to",
                req.id, view.state
            )));
        }
        let cursor = if view.event_seq > 0 {
            view.event_seq
        } else {
            // A worker from before views carried their position in the log.
            self.events(&req.id, u64::MAX)
                .await?
                .ok_or_else(|| self.unavailable("reading the task's events"))?
                .next_seq
        };
        let first = task_of(&view, None, task_reader(params));
        Ok(self.stream(req.id, cursor, EndAt::Terminal, first))
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let view = self.visible_view(params, &req.task_id).await?;
        let config = self.push_config(&req.task_id, &req)?;
        if view.state.is_terminal() {
            return self.push_final_state(&view, config).await;
        }
        let saved = self
            .update_task(
                &req.task_id,
                task_workflow::SET_PUSH_CONFIG,
                config,
                "registering the push config",
            )
            .await?;
        Ok(push_configs::to_a2a(&req.task_id, &saved))
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.configs(params, &req.task_id)
            .await?
            .into_iter()
            .find(|c| c.id.as_deref() == Some(req.id.as_str()))
            .ok_or_else(|| A2AError::task_not_found(&req.task_id))
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: self.configs(params, &req.task_id).await?,
            next_page_token: None,
        })
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        let view = self.visible_view(params, &req.task_id).await?;
        if view.state.is_terminal() {
            // Nothing is pushed for a closed task any more: the delete has nothing left to do.
            return Ok(());
        }
        self.update_task(
            &req.task_id,
            task_workflow::DELETE_PUSH_CONFIG,
            req.id.clone(),
            "deleting the push config",
        )
        .await
    }

    async fn get_extended_agent_card(
        &self,
        _params: &ServiceParams,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        Err(A2AError::extended_card_not_configured())
    }
}

/// Who asks to read `task_id`, once the id is one Baton could have made.
fn reader_of(params: &ServiceParams, task_id: &str) -> Result<String, A2AError> {
    check_task_id(task_id)?;
    Ok(caller(params).id)
}

/// `view`, if `caller` is one of its task's participants; "not found" otherwise, as for a task
/// that does not exist.
fn visible_to(caller: &str, view: TaskView) -> Result<TaskView, A2AError> {
    if view.participants.iter().any(|p| p.id == caller) {
        Ok(view)
    } else {
        Err(A2AError::task_not_found(&view.task_id))
    }
}

/// Whether Temporal's status says it cannot take the call now (it is down, restarting or
/// shedding load, or it cancelled the call because the worker it gave a query to stopped), so
/// the same call may succeed later.
fn unreachable(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::ResourceExhausted
            | tonic::Code::Cancelled
    )
}

/// A call Temporal could not take now: retryable, with a `google.rpc.RetryInfo`, as a call it
/// did not answer in time.
fn temporal_unreachable(doing: &str, status: &tonic::Status) -> A2AError {
    A2AError::internal(format!(
        "{doing} failed: this agent's Temporal service cannot take it now ({}); retry later (a \
         message sent again with the same messageId is taken once)",
        status.message()
    ))
    .with_details(vec![retry_info(RETRY_DELAY)])
}

/// How long a caller is asked to wait before retrying a call Temporal did not answer.
const RETRY_DELAY: Duration = Duration::from_secs(1);

/// A `google.rpc.RetryInfo` detail: the error is worth retrying after `delay`.
fn retry_info(delay: Duration) -> a2a::TypedDetail {
    a2a::TypedDetail::new(
        "type.googleapis.com/google.rpc.RetryInfo",
        [(
            "retryDelay".to_string(),
            serde_json::Value::String(format!("{}s", delay.as_secs())),
        )]
        .into(),
    )
}

/// A new task Temporal holds that no worker has read yet: SUBMITTED, with the brief it was
/// created with in its input.
fn submitted(delivered: &Delivered) -> Task {
    Task {
        id: delivered.task_id.clone(),
        context_id: delivered.context_id.clone().unwrap_or_default(),
        status: a2a::TaskStatus {
            state: a2a::TaskState::Submitted,
            message: None,
            timestamp: Some(std::time::SystemTime::now().into()),
        },
        artifacts: None,
        history: None,
        metadata: None,
    }
}

/// The extension URIs the caller activated with `A2A-Extensions`.
fn requested_extensions(params: &ServiceParams) -> Vec<String> {
    params
        .get("a2a-extensions")
        .into_iter()
        .flatten()
        .flat_map(|v| v.split(','))
        .map(|uri| uri.trim().to_string())
        .filter(|uri| !uri.is_empty())
        .collect()
}

/// How the caller of a read reads a task: it activates extensions with `A2A-Extensions`.
pub(crate) fn task_reader(params: &ServiceParams) -> Reader {
    Reader {
        task_extension: requested_extensions(params)
            .iter()
            .any(|uri| uri == TASK_EXTENSION),
    }
}

/// How the sender of `message` reads the task it answers with: an extension is activated by
/// `A2A-Extensions` or in the message's `extensions`.
fn sender_reader(params: &ServiceParams, message: &Message) -> Reader {
    Reader {
        task_extension: activates(params, message, TASK_EXTENSION),
    }
}

/// Whether the caller activated `uri`, with `A2A-Extensions` or in the message's `extensions`.
fn activates(params: &ServiceParams, message: &Message, uri: &str) -> bool {
    requested_extensions(params).iter().any(|u| u == uri)
        || message.extensions.iter().flatten().any(|u| u == uri)
}

fn update_error(task_id: &str, doing: &str, error: WorkflowUpdateError) -> A2AError {
    match error {
        WorkflowUpdateError::Rpc(status) if unreachable(&status) => {
            temporal_unreachable(doing, &status)
        }
        WorkflowUpdateError::NotFound(_) => A2AError::task_not_found(task_id),
        WorkflowUpdateError::Failed(failure) => match Refusal::parse(&failure.message) {
            Some(Refusal {
                code: RefusalCode::NotParticipant,
                ..
            }) => A2AError::task_not_found(task_id),
            Some(Refusal {
                code: RefusalCode::TaskClosed,
                reason,
            }) => A2AError::unsupported_operation(format!(
                "the task is in a terminal state and takes no more messages ({reason})"
            )),
            Some(Refusal {
                code: RefusalCode::SubTaskNotAnswerable,
                reason,
            }) => A2AError::invalid_params(reason),
            None => A2AError::invalid_params(failure.message.clone()),
        },
        other => A2AError::internal(format!("the message could not be delivered: {other}")),
    }
}

fn query_error(task_id: &str, doing: &str, error: WorkflowQueryError) -> A2AError {
    match error {
        WorkflowQueryError::Rpc(status) if unreachable(&status) => {
            temporal_unreachable(doing, &status)
        }
        WorkflowQueryError::NotFound(_) | WorkflowQueryError::PayloadConversion(_) => {
            A2AError::task_not_found(task_id)
        }
        // A workflow of another type (a stand-in) fails a query it does not have, which
        // Temporal reports as QueryFailed, an invalid argument: not a task of ours.
        WorkflowQueryError::Rpc(status) if status.code() == tonic::Code::InvalidArgument => {
            A2AError::task_not_found(task_id)
        }
        other => A2AError::internal(format!("the task could not be read: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retryable(error: &A2AError) -> bool {
        error
            .details
            .iter()
            .flatten()
            .any(|d| serde_json::to_string(d).is_ok_and(|d| d.contains("RetryInfo")))
    }

    #[test]
    fn temporal_down_or_shedding_load_is_retryable_and_says_what_was_being_done() {
        for code in [
            tonic::Code::Unavailable,
            tonic::Code::DeadlineExceeded,
            tonic::Code::ResourceExhausted,
            // A query whose worker stopped (a rolling restart) while it was being answered.
            tonic::Code::Cancelled,
        ] {
            let status = || tonic::Status::new(code, "tcp connect error");
            for error in [
                update_error(
                    "t",
                    "delivering the message",
                    WorkflowUpdateError::Rpc(status()),
                ),
                query_error(
                    "t",
                    "delivering the message",
                    WorkflowQueryError::Rpc(status()),
                ),
            ] {
                assert!(retryable(&error), "{code:?}: {error:?}");
                assert!(
                    error.message.contains("delivering the message failed"),
                    "{error:?}"
                );
                assert!(error.message.contains("tcp connect error"), "{error:?}");
            }
        }
        for code in [tonic::Code::Internal, tonic::Code::PermissionDenied] {
            let error = update_error(
                "t",
                "x",
                WorkflowUpdateError::Rpc(tonic::Status::new(code, "no")),
            );
            assert!(!retryable(&error), "{code:?}: {error:?}");
        }
    }
}
