//! A2A 1.0 served over Temporal. Every call becomes a workflow update, query or cancel: the
//! gateway keeps no task state, so any number of gateways can serve the same tasks.

mod delivery;

use crate::draining::Draining;
use std::sync::Arc;
use std::time::Duration;

use a2a::{
    A2AError, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};
use a2a_server::{RequestHandler, ServiceParams};
use async_trait::async_trait;
use baton_a2a::rendering::Contents;
use baton_a2a::url_fetch::UrlFetcher;
use baton_a2a::webhook::{self, Webhooks};
use baton_content::ContentStore;
use baton_core::answer::answer_artifacts;
use baton_proto::temporal::{TaskWorkflow, task_workflow};
use baton_proto::{PushConfig, PushDelivery, TaskView};
use futures::stream::BoxStream;
use temporalio_client::errors::WorkflowInteractionError;
use temporalio_client::{Client, WorkflowCancelOptions, WorkflowExecuteUpdateOptions};
use temporalio_common::UpdateDefinition;

use crate::a2a_task::{kept_messages, task_of};
use crate::config::GatewayConfig;
use crate::extensions::{check_extensions, sender_reader, task_reader};
use crate::listing::{Freshness, list_tasks};
use crate::listing_cache::ListingCache;
use crate::push_configs;
use crate::task_stream::EndAt;
use crate::tasks::Tasks;
use crate::temporal_errors::{temporal_unreachable, unreachable, update_error};

use delivery::{Arrival, submitted};

/// The `RequestHandler` of Baton's gateway.
#[derive(Clone)]
pub struct TemporalHandler {
    pub(crate) config: Arc<GatewayConfig>,
    /// Every read of a task, shared with the listing.
    pub(crate) tasks: Tasks,
    /// The listings ListTasks serves again for a moment.
    pub(crate) listings: ListingCache,
    /// Where a config registered on an ended task gets the task's final state.
    webhooks: Webhooks,
    /// Where the files and data of incoming messages are kept.
    pub(crate) content: Arc<ContentStore>,
    /// Fetches the files messages give by URL, when `content.fetch_urls` is on.
    urls: UrlFetcher,
}

/// How long a CancelTask waits for the task to confirm it was cancelled.
const CANCEL_WAIT: Duration = Duration::from_secs(60);

impl TemporalHandler {
    /// Serves `config`'s agent, reaching its tasks through `client` and their files and data in
    /// `content`.
    pub fn new(client: Client, config: GatewayConfig, content: Arc<ContentStore>) -> Self {
        let config = Arc::new(config);
        TemporalHandler {
            content,
            urls: UrlFetcher::new(config.allow_private_push_urls),
            tasks: Tasks::new(client, config.clone()),
            listings: ListingCache::default(),
            webhooks: Webhooks::new(
                config.allow_private_push_urls,
                Some(config.public_url.clone()),
                config.deployment.clone(),
            ),
            config,
        }
    }

    /// What ends this gateway's streams and blocking sends when its process stops.
    pub fn draining(&self) -> Draining {
        self.tasks.draining.clone()
    }

    /// The bytes of the stored attachments a rendering of `view` with `history_length` shows:
    /// its messages', and, once it answered, the files its tools and sub-tasks made, which are
    /// its artifacts.
    /// One that cannot be read now is left out (the rendering names it instead), so a store
    /// that is down never keeps a caller from its task.
    pub(crate) async fn contents(&self, view: &TaskView, history_length: Option<i32>) -> Contents {
        let artifacts = answer_artifacts(view);
        let stored = kept_messages(view, history_length)
            .iter()
            .flat_map(|message| &message.attachments)
            .chain(artifacts.iter().filter_map(|a| a.attachment.as_ref()));
        Contents::read(&self.content, &view.task_id, stored).await
    }

    /// Forgets what the caches hold that a write to `task_id` may have changed.
    pub(crate) fn wrote(&self, task_id: &str) {
        self.tasks.views.forget(task_id);
        self.listings.wrote();
    }

    /// Runs `update` on task `task_id`'s workflow with `input`, bounded by the call timeout
    /// (`doing` says what for); a refusal is the A2A error it stands for.
    pub(crate) async fn update_task<U>(
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
        let handle = self
            .tasks
            .client
            .get_workflow_handle::<TaskWorkflow>(task_id);
        let update = handle.execute_update(update, input, WorkflowExecuteUpdateOptions::default());
        let updated = self.tasks.bounded(doing, update).await;
        self.wrote(task_id);
        updated?.map_err(|e| update_error(task_id, doing, e))
    }

    /// A config registered on a task that has ended: the webhook gets the final state once (with
    /// the task's artifacts, when it completed), now, since nothing more will happen to the task; the config is not kept (it lives until
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
            artifacts: answer_artifacts(view),
            config,
        };
        webhook::deliver(&self.webhooks, &self.content, &delivery)
            .await
            .map_err(|failure| {
                A2AError::invalid_params(format!(
                    "task {} has ended ({}), so its webhook gets the final state at once, and that push failed: {failure}",
                    view.task_id, view.state
                ))
            })?;
        Ok(push_configs::to_a2a(&view.task_id, &delivery.config))
    }

    /// The task's push configs, for one of its participants.
    async fn configs(
        &self,
        params: &ServiceParams,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, A2AError> {
        self.tasks.visible_view(params, task_id).await?;
        let configs = self
            .tasks
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
}

#[async_trait]
impl RequestHandler for TemporalHandler {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        check_extensions(params)?;
        let configuration = req.configuration.as_ref();
        let history_length = configuration.and_then(|c| c.history_length);
        let immediately = configuration.and_then(|c| c.return_immediately) == Some(true);
        let reader = sender_reader(params, &req.message);
        let delivered = self.deliver(params, &req, immediately).await?;
        let receipt = match &delivered.arrival {
            Arrival::Taken(receipt) => receipt,
            Arrival::Opened(view) => {
                let contents = self.contents(view, history_length).await;
                return Ok(SendMessageResponse::Task(task_of(
                    view,
                    history_length,
                    reader,
                    &contents,
                )));
            }
            Arrival::Unread => return Ok(SendMessageResponse::Task(submitted(&delivered))),
        };
        let task_id = &delivered.task_id;
        // A repeated messageId was answered when it first came: the task as it is now.
        let view = if immediately || receipt.duplicate {
            self.tasks.view(task_id).await?
        } else {
            self.tasks.wait_settled(task_id, receipt.cursor).await?
        };
        let contents = self.contents(&view, history_length).await;
        Ok(SendMessageResponse::Task(task_of(
            &view,
            history_length,
            reader,
            &contents,
        )))
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        check_extensions(params)?;
        let reader = sender_reader(params, &req.message);
        let delivered = self.deliver(params, &req, false).await?;
        let receipt = match &delivered.arrival {
            Arrival::Taken(receipt) => receipt.clone(),
            Arrival::Opened(view) => {
                let contents = self.contents(view, None).await;
                let only = StreamResponse::Task(task_of(view, None, reader, &contents));
                return Ok(Box::pin(futures::stream::iter([Ok(only)])));
            }
            Arrival::Unread => {
                let only = StreamResponse::Task(submitted(&delivered));
                return Ok(Box::pin(futures::stream::iter([Ok(only)])));
            }
        };
        let view = self.tasks.view(&delivered.task_id).await?;
        if receipt.duplicate {
            // A repeated messageId: the task as it is, and the end of the stream.
            let contents = self.contents(&view, None).await;
            let snapshot = StreamResponse::Task(task_of(&view, None, reader, &contents));
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
        let contents = self.contents(&as_received, None).await;
        let snapshot = task_of(&as_received, None, reader, &contents);
        Ok(self.tasks.stream(
            delivered.task_id,
            receipt.cursor,
            EndAt::Settled,
            snapshot,
            self.content.clone(),
        ))
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        let view = self.tasks.visible_cached_view(params, &req.id).await?;
        let contents = self.contents(&view, req.history_length).await;
        Ok(task_of(
            &view,
            req.history_length,
            task_reader(params),
            &contents,
        ))
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        // Each task is read with its own bounded query; the whole listing is bounded too.
        self.tasks
            .bounded(
                "listing the tasks",
                list_tasks(
                    &self.tasks,
                    &self.listings,
                    params,
                    req,
                    Freshness::MayBeKept,
                ),
            )
            .await?
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        let view = self.tasks.visible_view(params, &req.id).await?;
        if view.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(&req.id));
        }
        let handle = self
            .tasks
            .client
            .get_workflow_handle::<TaskWorkflow>(req.id.as_str());
        let cancel = handle.cancel(
            WorkflowCancelOptions::builder()
                .reason("cancelled over A2A".to_string())
                .build(),
        );
        let sent = self.tasks.bounded("sending the cancel", cancel).await;
        self.wrote(&req.id);
        sent?.map_err(|e| match e {
            WorkflowInteractionError::Rpc(status) if unreachable(&status) => {
                temporal_unreachable("sending the cancel", &status)
            }
            other => A2AError::internal(format!("the cancel could not be sent: {other}")),
        })?;
        let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
        let mut changes = self.tasks.changes.listen(&req.id);
        loop {
            let view = self.tasks.view(&req.id).await?;
            // Past the deadline the wait ends at once, with the task as it stands.
            if view.state.is_terminal()
                || tokio::time::timeout_at(deadline, changes.changed())
                    .await
                    .is_err()
            {
                return Ok(task_of(
                    &view,
                    Some(0),
                    task_reader(params),
                    &Contents::none(),
                ));
            }
        }
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let view = self.tasks.visible_view(params, &req.id).await?;
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
            self.tasks
                .events(&req.id, u64::MAX)
                .await?
                .ok_or_else(|| self.tasks.unavailable("reading the task's events"))?
                .next_seq
        };
        let contents = self.contents(&view, None).await;
        let first = task_of(&view, None, task_reader(params), &contents);
        Ok(self
            .tasks
            .stream(req.id, cursor, EndAt::Terminal, first, self.content.clone()))
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let view = self.tasks.visible_view(params, &req.task_id).await?;
        let config = push_configs::checked(&self.config, &req.task_id, &req)?;
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
        let view = self.tasks.visible_view(params, &req.task_id).await?;
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
