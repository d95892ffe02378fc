//! A fast A2A 1.0 peer of our own, built on the official `a2a-server-lf`: `DefaultRequestHandler`
//! over an `InMemoryTaskStore` and an in-memory push-config store, the JSON-RPC router and the
//! agent-card router. The benchmarks run it (as a child process, `baton-bench peer`, so the
//! bench's RSS is not the peer's store of parked tasks); it answers at once, so a measurement
//! is Baton's and Temporal's, not an agent's.
//!
//! Its executor's behaviour is chosen by the brief it is sent:
//! - a brief with [`PARK_MARKER`] is set WORKING, then INPUT_REQUIRED, and its execution is held
//!   open (so SubscribeToTask can follow it) until the task is cancelled;
//! - any other brief is set WORKING, then COMPLETED with [`PEER_ANSWER`], at once.
//!
//! Either way the stream starts with the Task (SUBMITTED), as A2A asks of a streamed task.
//!
//! Its card advertises streaming and push notifications. The push sender does not validate URLs:
//! a push receiver under test is on loopback, which `a2a-server-lf` refuses by default.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{
    A2AError, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Part, Role, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{
    AgentExecutor, DefaultRequestHandler, ExecutorContext, HttpPushSender, HttpPushSenderConfig,
    InMemoryPushConfigStore, InMemoryTaskStore, RequestHandler, ServiceParams, StaticAgentCard,
};
use anyhow::Context;
use async_trait::async_trait;
use axum::Router;
use axum::routing::get;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

/// A brief containing this word parks its task in INPUT_REQUIRED.
pub const PARK_MARKER: &str = "bench:park";
/// The peer's answer to a brief it completes at once.
pub const PEER_ANSWER: &str = "42";
/// Where the peer serves its [`PeerStats`].
pub const STATS_PATH: &str = "/bench/stats";

/// What the peer has seen, served at [`STATS_PATH`].
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct PeerStats {
    pub tasks_created: u64,
    pub tasks_completed: u64,
    pub tasks_parked: u64,
    pub tasks_canceled: u64,
    pub gets: u64,
    pub subscriptions_opened: u64,
    /// SubscribeToTask streams open right now.
    pub subscriptions_open: u64,
    pub push_configs_created: u64,
    pub push_configs_deleted: u64,
}

#[derive(Default)]
struct Counters {
    tasks_created: AtomicU64,
    tasks_completed: AtomicU64,
    tasks_parked: AtomicU64,
    tasks_canceled: AtomicU64,
    gets: AtomicU64,
    subscriptions_opened: AtomicU64,
    subscriptions_open: AtomicU64,
    push_configs_created: AtomicU64,
    push_configs_deleted: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> PeerStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        PeerStats {
            tasks_created: load(&self.tasks_created),
            tasks_completed: load(&self.tasks_completed),
            tasks_parked: load(&self.tasks_parked),
            tasks_canceled: load(&self.tasks_canceled),
            gets: load(&self.gets),
            subscriptions_opened: load(&self.subscriptions_opened),
            subscriptions_open: load(&self.subscriptions_open),
            push_configs_created: load(&self.push_configs_created),
            push_configs_deleted: load(&self.push_configs_deleted),
        }
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// The peer's routes, for a peer reached at `url` (`http://127.0.0.1:PORT`): its card, JSON-RPC
/// at the root, and its stats.
pub fn router(url: &str) -> anyhow::Result<Router> {
    let counters = Arc::new(Counters::default());
    let executor = BenchExecutor {
        held: Arc::new(Mutex::new(HashMap::new())),
        counters: counters.clone(),
    };
    let push_sender = HttpPushSender::new(Some(HttpPushSenderConfig {
        timeout: Duration::from_secs(10),
        fail_on_error: false,
        validate_urls: false,
    }));
    let handler = DefaultRequestHandler::new(executor, InMemoryTaskStore::new())
        .with_push_notifications(InMemoryPushConfigStore::new(), push_sender);
    let handler = Arc::new(CountingHandler {
        inner: handler,
        counters: counters.clone(),
    });
    Ok(Router::new()
        .merge(a2a_server::agent_card::agent_card_router(Arc::new(
            StaticAgentCard::new(card(url)?),
        )))
        .merge(a2a_server::jsonrpc::jsonrpc_router(handler))
        .route(
            STATS_PATH,
            get(move || {
                let stats = counters.clone();
                async move { axum::Json(stats.snapshot()) }
            }),
        ))
}

fn card(url: &str) -> anyhow::Result<AgentCard> {
    let card = serde_json::json!({
        "name": "Bench peer",
        "description": "Answers at once, or parks the task in INPUT_REQUIRED.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{
            "id": "ledger",
            "name": "Ledger",
            "description": "Says what the ledger says.",
            "tags": ["bench"]
        }]
    });
    serde_json::from_value(card).context("building the bench peer's card")
}

/// WORKING then COMPLETED at once, or WORKING then INPUT_REQUIRED held until cancelled.
struct BenchExecutor {
    /// Parked executions, released by a cancel.
    held: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
    counters: Arc<Counters>,
}

fn status(ctx: &ExecutorContext, state: TaskState, text: Option<&str>) -> StreamResponse {
    let (task_id, context_id) = ctx.task_info();
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id,
        context_id,
        status: TaskStatus {
            state,
            message: text.map(|t| Message::new(Role::Agent, vec![Part::text(t)])),
            // The handler stamps it (a2a-server-lf backfills every status timestamp).
            timestamp: None,
        },
        metadata: None,
    })
}

impl AgentExecutor for BenchExecutor {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        bump(&self.counters.tasks_created);
        let brief: String = ctx
            .message
            .as_ref()
            .map(|m| {
                m.parts
                    .iter()
                    .filter_map(|p| p.as_text())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        // A2A: a streamed task starts with the Task itself. `DefaultRequestHandler` does not
        // send one of its own, so the executor does, as a2a-sdk's TaskUpdater flow does.
        let submitted = StreamResponse::Task(Task {
            id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: ctx.message.clone().map(|m| vec![m]),
            metadata: None,
        });
        let working = status(&ctx, TaskState::Working, None);
        if !brief.contains(PARK_MARKER) {
            bump(&self.counters.tasks_completed);
            let done = status(&ctx, TaskState::Completed, Some(PEER_ANSWER));
            return futures::stream::iter([Ok(submitted), Ok(working), Ok(done)]).boxed();
        }
        bump(&self.counters.tasks_parked);
        let (release, released) = oneshot::channel();
        lock(&self.held).insert(ctx.task_id.clone(), release);
        let parked = status(&ctx, TaskState::InputRequired, Some("Which ledger?"));
        let hold = futures::stream::once(async move {
            released.await.ok();
        })
        .filter_map(|()| async { None });
        futures::stream::iter([Ok(submitted), Ok(working), Ok(parked)])
            .chain(hold)
            .boxed()
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        bump(&self.counters.tasks_canceled);
        if let Some(release) = lock(&self.held).remove(&ctx.task_id) {
            release.send(()).ok();
        }
        futures::stream::iter([Ok(status(&ctx, TaskState::Canceled, None))]).boxed()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `DefaultRequestHandler`, counting what the bench wants to know (open subscriptions above all).
struct CountingHandler {
    inner: DefaultRequestHandler,
    counters: Arc<Counters>,
}

/// Decrements `subscriptions_open` when the subscription's stream is dropped.
struct OpenSubscription(Arc<Counters>);

impl Drop for OpenSubscription {
    fn drop(&mut self) {
        self.0.subscriptions_open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[async_trait]
impl RequestHandler for CountingHandler {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.inner.send_message(params, req).await
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.inner.send_streaming_message(params, req).await
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        bump(&self.counters.gets);
        self.inner.get_task(params, req).await
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        self.inner.list_tasks(params, req).await
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        self.inner.cancel_task(params, req).await
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let stream = self.inner.subscribe_to_task(params, req).await?;
        bump(&self.counters.subscriptions_opened);
        bump(&self.counters.subscriptions_open);
        let open = OpenSubscription(self.counters.clone());
        Ok(stream
            .map(move |event| {
                let _still_open = &open;
                event
            })
            .boxed())
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        bump(&self.counters.push_configs_created);
        self.inner.create_push_config(params, req).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.inner.get_push_config(params, req).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        self.inner.list_push_configs(params, req).await
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        bump(&self.counters.push_configs_deleted);
        self.inner.delete_push_config(params, req).await
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        self.inner.get_extended_agent_card(params, req).await
    }
}
