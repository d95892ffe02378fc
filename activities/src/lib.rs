//! Every activity Baton's workflows run. This is the only place a workflow reaches the world:
//! remote agents over A2A and the model. Activities never start or signal workflows.
//!
//! Type names are stable and readable (`start_agent_task`, `invoke_model`, …): they are what
//! the Web UI shows and what other SDKs would call.

#![warn(missing_docs)]

mod brief_files;
mod collect_files;
mod create;
mod delegation_metrics;
mod follow;
mod heartbeat;
mod model_turn;
mod once_per_run;
mod prefixes;
mod remote_calls;
mod reply;
mod tool_call;
mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use baton_a2a::webhook::{PushFailure, Webhooks};
use baton_a2a::{Registry, RemoteAgent};
use baton_config::ModelPrice;
use baton_content::ContentStore;
use baton_core::deadline::delegation_deadline;
use baton_core::delegation_chain::{RosterAgent, closed_agents};
use baton_mcp::McpServers;
use baton_metrics::ToolCallOutcome;
use baton_model::ModelProvider;
use baton_proto::failure_types::AGENT_UNKNOWN;
use baton_proto::{
    CancelContextIn, ClosedAgent, DelegationEnd, DeletePushIn, FollowIn, FollowOut, InvokeModelIn,
    InvokeModelOut, InvokeToolIn, InvokeToolOut, PushDelivery, RemoteFiles, RemoteReplyIn,
    RemoteReplyOut, RemoteSnapshot, RemoteTaskIn, RemoteWatch, StartAgentTaskIn, StartAgentTaskOut,
    TaskFailure, TaskRef,
};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use url::Url;

use crate::brief_files::{NotSent, brief_parts};
use crate::heartbeat::heartbeating;
use crate::once_per_run::OncePerRun;

pub use prefixes::Prefixes;

/// The longest a follow holds SubscribeToTask open before handing back to the workflow, so a
/// follow never outlives its activity timeout and the stand-in can roll over.
pub const FOLLOW_WINDOW: Duration = Duration::from_secs(600);
/// How long a stand-in keeps asking an agent to cancel its task (a refusal, an agent that cannot
/// be reached) before it reports the cancel unconfirmed, all attempts included.
pub const CANCEL_CONFIRM_BOUND: Duration = Duration::from_secs(600);
/// How often long activities record a heartbeat: at least as often as the worker sends them
/// (`HEARTBEAT_SENT_EVERY`), since a cancel reaches an activity only in a heartbeat's answer.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// The longest the task queue's worker holds a recorded heartbeat before sending it (the SDK's
/// default is 0.8 × the heartbeat timeout, 16 s for a model call): a cancelled task's model or
/// tool call is dropped within about this long, not run, and billed, to its end. The follow
/// queue's worker keeps the default, so a thousand quiet follows cost the server little.
pub const HEARTBEAT_SENT_EVERY: Duration = Duration::from_secs(2);
/// The engine's own bound on a creation, all attempts included: past the longest
/// `agents[].create_timeout`, which `start_agent_task` applies itself.
pub const CREATE_BACKSTOP: Duration =
    Duration::from_secs(baton_config::MAX_CREATE_TIMEOUT.as_secs() + 900);
/// The engine's own bound on a model turn, all attempts included: past the longest
/// `model.retry_for`, which `invoke_model` applies itself.
pub const MODEL_BACKSTOP: Duration =
    Duration::from_secs(baton_config::MAX_MODEL_RETRY_FOR.as_secs() + 900);

/// The engine's own bound on one attempt of a tool call: past the longest `[[mcp]].call_timeout`,
/// which `invoke_tool` applies itself.
pub const TOOL_BACKSTOP: Duration =
    Duration::from_secs(baton_config::MAX_MCP_CALL_TIMEOUT.as_secs() + 60);

/// What the activities need from the worker, shared by every activity task. A clone shares all
/// of it (the follow queue's worker holds one).
#[derive(Clone)]
pub struct BatonActivities {
    registry: Arc<Registry>,
    model: Arc<dyn ModelProvider>,
    /// Where the files and data of tasks are kept (`[content]`).
    content: TaskContent,
    default_model: String,
    /// `model.retry_for`: how long a model turn keeps retrying.
    model_retry_for: Duration,
    /// `model.context_budget`: the most tokens one turn sends.
    context_budget: usize,
    /// `model.images`: whether image files go to the model as images.
    model_reads_images: bool,
    /// `model.prices`: what each model's tokens cost.
    model_prices: BTreeMap<String, ModelPrice>,
    /// The static prefix of each task's model turns.
    prefixes: Arc<Prefixes>,
    /// The `[[mcp]]` servers whose tools the prefix offers.
    mcp: Arc<McpServers>,
    /// `server.base_url`: where agents can push to this Baton. Without it, nothing pushes.
    push_base: Option<Url>,
    follow_window: Duration,
    /// For pushes to participants' webhooks.
    webhooks: Webhooks,
    /// The agent's task queue, which labels the delegation metrics.
    task_queue: String,
    /// The local activities with effects outside Temporal this process has run.
    once_per_run: Arc<OncePerRun>,
    /// How this agent names itself in the chains of parent tasks its briefs carry.
    identity: String,
    /// `agent.max_delegation_depth`.
    max_delegation_depth: u32,
}

/// Where the files and data of tasks are kept, and the largest part a task keeps (`[content]`).
#[derive(Clone)]
pub struct TaskContent {
    /// The content store.
    pub store: Arc<ContentStore>,
    /// `content.max_part_bytes`.
    pub max_part_bytes: usize,
}

impl BatonActivities {
    /// The activities of one worker. They call the agents of the registry of `prefixes`, and
    /// `model` with a prefix of `prefixes` in front of every turn (as `model_settings` say);
    /// they push to webhooks as the `server` settings allow, opening what the gateway sealed
    /// with `deployment`; their metrics carry `task_queue`. The files and data tasks hold are
    /// read from `content`.
    pub fn new(
        model: Arc<dyn ModelProvider>,
        content: TaskContent,
        model_settings: &baton_config::ModelSettings,
        prefixes: Prefixes,
        server: &baton_config::ServerSettings,
        deployment: Arc<baton_core::deployment_key::DeploymentKey>,
        task_queue: String,
    ) -> Self {
        let push_base = server.base_url.clone();
        BatonActivities {
            registry: prefixes.registry().clone(),
            model,
            content,
            default_model: model_settings.model.clone(),
            model_retry_for: model_settings.retry_for,
            context_budget: model_settings.context_budget,
            model_reads_images: model_settings.images,
            model_prices: model_settings.prices.clone(),
            prefixes: Arc::new(prefixes),
            mcp: Arc::new(McpServers::none()),
            push_base: push_base.clone(),
            follow_window: FOLLOW_WINDOW,
            webhooks: Webhooks::new(
                server.allow_private_push_urls,
                push_base.clone(),
                deployment,
            ),
            task_queue,
            once_per_run: Arc::default(),
            identity: baton_config::agent_card::agent_identity(server),
            max_delegation_depth: baton_config::DEFAULT_MAX_DELEGATION_DEPTH,
        }
    }

    /// Bounds chains of delegations at `depth` (`agent.max_delegation_depth`).
    pub fn with_max_delegation_depth(mut self, depth: u32) -> Self {
        self.max_delegation_depth = depth;
        self
    }

    /// Calls the tools of `mcp`, which the prefix offers.
    pub fn with_mcp_servers(mut self, mcp: Arc<McpServers>) -> Self {
        self.mcp = mcp;
        self
    }

    /// Shortens the follow window (tests of the roll-over).
    pub fn with_follow_window(mut self, window: Duration) -> Self {
        self.follow_window = window;
        self
    }

    /// The registry of the agents the activities call.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The MCP servers whose tools the model is offered.
    pub fn mcp(&self) -> &Arc<McpServers> {
        &self.mcp
    }

    /// The agent `id`. One whose card the worker is still fetching is worth retrying; one the
    /// worker is not configured for is not.
    fn agent(&self, id: &str) -> Result<Arc<RemoteAgent>, ActivityError> {
        if let Some(agent) = self.registry.get(id) {
            return Ok(agent);
        }
        if self.registry.pending(id).is_some() {
            return Err(not_fetched_yet(id));
        }
        Err(non_retryable(
            AGENT_UNKNOWN,
            format!("agent {id:?} is not configured on this worker"),
        ))
    }
}

#[activities]
impl BatonActivities {
    /// Creates the remote task with the brief. Retried: each attempt after the first adopts
    /// the task an earlier one created, if any.
    #[activity(name = "start_agent_task")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn start_agent_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: StartAgentTaskIn,
    ) -> Result<StartAgentTaskOut, ActivityError> {
        if ctx.info().attempt == 1 {
            delegation_metrics::record_started(&self.task_queue, &input.agent);
        }
        let Some(agent) = self.registry.get(&input.agent) else {
            let reason = match self.registry.pending(&input.agent) {
                // Its card is still being fetched: the attempt fails and is retried, until the
                // agent's create_timeout.
                Some(spec) if since_first_attempt(ctx.info()) < spec.create_timeout => {
                    return Err(not_fetched_yet(&input.agent));
                }
                Some(spec) => format!(
                    "agent {:?}'s card could not be fetched within agents[].create_timeout ({}s)",
                    input.agent,
                    spec.create_timeout.as_secs()
                ),
                None => format!("agent {:?} is not configured on this worker", input.agent),
            };
            return Ok(StartAgentTaskOut::Failed { reason });
        };
        let input = create::chain_named(input, &self.identity);
        let deadline = delegation_deadline(agent.deadline(), input.deadline_secs);
        let files = match brief_parts(&agent, &self.content.store, &input.attachments).await {
            Ok(files) => files,
            Err(NotSent::Refused(reason)) => return Ok(StartAgentTaskOut::Failed { reason }),
            Err(NotSent::StoreDown(why)) => {
                return Err(ActivityError::from(anyhow::anyhow!(
                    "the files of the brief cannot be read now: {why}"
                )));
            }
        };
        let mut created = create::start_agent_task(&ctx, &agent, &input, &files, deadline).await?;
        if let StartAgentTaskOut::Started {
            deadline_secs,
            watch: chosen,
            ..
        } = &mut created
        {
            *deadline_secs = Some(deadline);
            *chosen = watch::unregistered(&agent, self.push_base.is_some());
        }
        Ok(created)
    }

    /// Cancels the unfinished tasks of a delegation's context, after its creation failed.
    #[activity(name = "cancel_context_tasks")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn cancel_context_tasks(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: CancelContextIn,
    ) -> Result<u32, ActivityError> {
        create::cancel_context_tasks(&*self.agent(&input.agent)?, &input).await
    }

    /// GetTask on the remote task.
    #[activity(name = "get_remote_task")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn get_remote_task(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteSnapshot, ActivityError> {
        remote_calls::get(&*self.agent(&input.agent)?, &input).await
    }

    /// Holds SubscribeToTask open until the task really changes, or the window ends.
    #[activity(name = "follow_remote_task")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn follow_remote_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FollowIn,
    ) -> Result<FollowOut, ActivityError> {
        let agent = self.agent(&input.task.agent)?;
        follow::follow(&ctx, &agent, &input, self.follow_window).await
    }

    /// Chooses the watch for a parked task and, for push, registers the webhook.
    #[activity(name = "register_remote_push")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn register_remote_push(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteWatch, ActivityError> {
        let agent = self.agent(&input.agent)?;
        Ok(watch::register(&agent, self.push_base.as_ref(), &input).await)
    }

    /// Deletes the stand-in's push config; the workflow treats a failure as logged, not fatal.
    #[activity(name = "delete_remote_push")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn delete_remote_push(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: DeletePushIn,
    ) -> Result<(), ActivityError> {
        remote_calls::delete_push(&*self.agent(&input.task.agent)?, &input).await
    }

    /// CancelTask on the remote task, as the delegating participant, until the agent shows it
    /// ended or [`CANCEL_CONFIRM_BOUND`] passes.
    #[activity(name = "cancel_remote_task")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn cancel_remote_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteSnapshot, ActivityError> {
        let agent = self.agent(&input.agent)?;
        let waited = since_first_attempt(ctx.info());
        heartbeating(
            &ctx,
            remote_calls::cancel_until_ended(&agent, &input, waited),
        )
        .await?
    }

    /// Keeps the files and data of an ended remote task's artifacts in the content store.
    #[activity(name = "collect_remote_files")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn collect_remote_files(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteFiles, ActivityError> {
        let agent = self.agent(&input.agent)?;
        let content = &self.content;
        let collect =
            collect_files::collect(&agent, &content.store, content.max_part_bytes, &input);
        heartbeating(&ctx, collect).await?
    }

    /// Sends the parent's answer to the remote task's question, once: a retry finds the answer
    /// an earlier attempt sent in the task's history.
    #[activity(name = "send_remote_reply")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn send_remote_reply(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: RemoteReplyIn,
    ) -> Result<RemoteReplyOut, ActivityError> {
        reply::send_reply(
            &*self.agent(&input.task.agent)?,
            &self.content.store,
            &input,
        )
        .await
    }

    /// The agents of `roster` a task whose chain of parent tasks is `chain` may not delegate to.
    fn closed_agents(&self, chain: &[TaskRef], roster: &[String]) -> Vec<ClosedAgent> {
        let agents: Vec<(&String, Option<Arc<RemoteAgent>>)> = roster
            .iter()
            .map(|id| (id, self.registry.get(id)))
            .collect();
        let entries: Vec<RosterAgent<'_>> = agents
            .iter()
            .map(|(id, agent)| RosterAgent {
                id,
                interfaces: agent.as_ref().map_or_else(Vec::new, |agent| {
                    agent
                        .card()
                        .supported_interfaces
                        .iter()
                        .map(|interface| interface.url.as_str())
                        .collect()
                }),
            })
            .collect();
        closed_agents(chain, &entries, &self.identity, self.max_delegation_depth)
    }

    /// Pushes one change of a task to a participant's webhook: the artifacts it gives (their
    /// files read from the content store), then its status.
    #[activity(name = "deliver_push")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn deliver_push(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: PushDelivery,
    ) -> Result<(), ActivityError> {
        baton_a2a::webhook::deliver(&self.webhooks, &self.content.store, &input)
            .await
            .map_err(|failure| match failure {
                PushFailure::Refused(why) => non_retryable("push.refused", why),
                PushFailure::Failed(why) => ActivityError::from(anyhow::anyhow!(why)),
            })
    }

    /// Counts the delegations the parent resolved since it last ran. The parent runs it as a
    /// local activity, so it is recorded in history and a replay never runs it again; one that
    /// runs again all the same counts nothing (see `once_per_run.rs`).
    #[activity(name = "record_delegation_ends")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn record_delegation_ends(
        self: Arc<Self>,
        ctx: ActivityContext,
        ends: Vec<DelegationEnd>,
    ) -> Result<(), ActivityError> {
        if self.once_per_run.first(&ctx) {
            delegation_metrics::record_ends(&self.task_queue, &ends);
        }
        Ok(())
    }

    /// Logs a task that failed, once: the task runs it as a local activity, whose marker keeps
    /// a replay from logging it again, and one that runs again all the same logs nothing
    /// (see `once_per_run.rs`).
    #[activity(name = "report_task_failed")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn report_task_failed(
        self: Arc<Self>,
        ctx: ActivityContext,
        failure: TaskFailure,
    ) -> Result<(), ActivityError> {
        if self.once_per_run.first(&ctx) {
            tracing::warn!(task = %failure.task_id, "task failed: {}", failure.reason);
        }
        Ok(())
    }

    /// One call of an MCP tool, bounded by its server's `call_timeout`. A call that got no answer
    /// fails the attempt; the workflow retries only a tool that is safe to call again.
    #[activity(name = "invoke_tool")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn invoke_tool(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: InvokeToolIn,
    ) -> Result<InvokeToolOut, ActivityError> {
        let tool = input.tool.clone();
        let outcome =
            heartbeating(&ctx, tool_call::invoke(&self.mcp, &self.content, input)).await?;
        let counted = match &outcome {
            Ok(out) if out.is_error => ToolCallOutcome::Error,
            Ok(_) => ToolCallOutcome::Answered,
            Err(_) => ToolCallOutcome::Failed,
        };
        baton_metrics::global().tool_call(&ctx.info().task_queue, &tool, counted);
        outcome
    }

    /// One model turn behind the worker's static prefix. Errors worth retrying are retried
    /// for `model.retry_for`, honouring the provider's `Retry-After`.
    #[activity(name = "invoke_model")]
    #[allow(
        missing_docs,
        reason = "#[activities] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn invoke_model(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: InvokeModelIn,
    ) -> Result<InvokeModelOut, ActivityError> {
        let task_id = input.task_id.clone();
        let chain = input.parent_tasks.clone();
        let prefix = self
            .prefixes
            .for_turn(input.roster.as_ref().map(|roster| roster.agents.as_slice()))
            .map_err(|missing| {
                ActivityError::from(anyhow::anyhow!(
                    "this task's roster, fixed on its first turn, shows agent {missing:?}, whose \
                     card this worker has not fetched yet; it keeps fetching it"
                ))
            })?;
        let turn = model_turn::invoke(
            self.model.as_ref(),
            &self.content.store,
            &self.default_model,
            &prefix,
            (self.context_budget, self.model_reads_images),
            &self.model_prices,
            input,
        );
        let turn = heartbeating(&ctx, turn).await?;
        let metrics = baton_metrics::global();
        let info = ctx.info();
        match turn {
            Ok(mut out) => {
                metrics.model_turn_answered(&info.task_queue, out.input_tokens, out.output_tokens);
                out.closed_agents = self.closed_agents(&chain, &out.agents);
                Ok(out)
            }
            Err(error) => {
                metrics.model_turn_failed(&info.task_queue);
                let waited = since_first_attempt(info);
                Err(model_turn::failed_attempt(
                    &task_id,
                    info.attempt,
                    waited,
                    self.model_retry_for,
                    error,
                ))
            }
        }
    }
}

/// The retryable failure of a call on an agent whose card the worker is still fetching.
fn not_fetched_yet(id: &str) -> ActivityError {
    ActivityError::from(anyhow::anyhow!(
        "agent {id:?}'s card could not be fetched yet; the worker keeps fetching it"
    ))
}

/// How long ago the first attempt of this activity was scheduled.
fn since_first_attempt(info: &temporalio_sdk::activities::ActivityInfo) -> Duration {
    info.scheduled_time
        .and_then(|first| first.elapsed().ok())
        .unwrap_or_default()
}

/// A failure the workflow must not retry, with a stable type name it can read.
pub(crate) fn non_retryable(type_name: &str, message: String) -> ActivityError {
    ActivityError::application(
        temporalio_sdk::ApplicationFailure::builder(anyhow::anyhow!(message))
            .type_name(type_name.to_string())
            .non_retryable(true)
            .build(),
    )
}
