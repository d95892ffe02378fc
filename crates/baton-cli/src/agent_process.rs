//! One agent's share of a process: its Temporal worker on the task queue, its worker on the
//! follow queue, and, when `server.base_url` is set, its gateway. `baton worker` runs one of
//! them; `baton up` runs one per config.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use baton_a2a::{CardLimits, Registry};
use baton_activities::{BatonActivities, Prefixes, TaskContent};
use baton_config::{Settings, WorkerTuning};
use baton_content::ContentStore;
use baton_core::deployment_key::DeploymentKey;
use baton_mcp::McpServers;
use baton_metrics::MetricsEndpoint;
use baton_model::ChatCompletions;
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow, follow_task_queue};
use futures::future::join_all;
use temporalio_client::Client;
use temporalio_common::ActivityDefinition;
use temporalio_common::worker::{
    VersioningBehavior, WorkerDeploymentOptions, WorkerDeploymentVersion,
};
use temporalio_sdk::activities::ExecutableActivity;
use temporalio_sdk::runtime::PollerBehavior;
use temporalio_sdk::runtime::worker_tuner::{FixedSizeSlotSupplier, TunerHolder, WorkerTuner};
use temporalio_sdk::worker_options_builder::State;
use temporalio_sdk::{Runtime, Worker, WorkerOptions, WorkerOptionsBuilder};

use crate::agent_span::AgentSpan;
use crate::health::{HealthServer, Polling, Readiness};
use crate::http_server::HttpServer;
use crate::shutdown::ShutdownSignals;
use crate::temporal::worker_identity;

/// How often a worker removes the content past `content.keep_for`.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// How long after it starts a worker first does, so a restart loop does not sweep each time.
const FIRST_SWEEP_AFTER: Duration = Duration::from_secs(300);

/// Removes from `store`, every [`SWEEP_EVERY`], the content no task has written for `keep_for`.
/// Several workers of one agent may sweep the same store: a removal is the same whoever makes
/// it.
fn sweep_content(store: Arc<ContentStore>, keep_for: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let start = tokio::time::Instant::now() + FIRST_SWEEP_AFTER;
        let mut every = tokio::time::interval_at(start, SWEEP_EVERY);
        loop {
            every.tick().await;
            let Some(cutoff) = std::time::SystemTime::now().checked_sub(keep_for) else {
                continue;
            };
            match store.sweep(cutoff).await {
                Ok(swept) if swept.objects > 0 => tracing::info!(
                    store = store.place(),
                    objects = swept.objects,
                    bytes = swept.bytes,
                    "removed the content no task has written for content.keep_for"
                ),
                Ok(_) => {}
                Err(error) => tracing::warn!("the content store was not swept: {error}"),
            }
        }
    })
}

/// What the SDK gives each kind of task when no tuner is set.
const SDK_DEFAULT_SLOTS: usize = 100;

/// A way to ask a running worker to stop.
type Stop = Box<dyn Fn()>;

pub(crate) struct AgentProcess {
    /// `temporal.drain_grace`: how long running activities may take once a stop is asked for.
    drain_grace: Duration,
    worker: Worker,
    follow_worker: Worker,
    http: Option<HttpServer>,
    /// Removes content past `content.keep_for`, every hour.
    sweeper: tokio::task::JoinHandle<()>,
}

impl AgentProcess {
    /// Builds the agent's registry (cards fetched, or built for `same_process` agents), its
    /// workers, and starts its gateway when `server.base_url` is set.
    pub async fn start(
        settings: &Settings,
        client: &Client,
        runtime: &Runtime,
        same_process: &[&Settings],
        deployment: &Arc<DeploymentKey>,
        readiness: &Readiness,
    ) -> anyhow::Result<AgentProcess> {
        // One store for the worker's activities and its gateway.
        let content = crate::content_store::open(&settings.content)?;
        let activities = activities(settings, same_process, deployment, content.clone()).await?;
        fetch_pending_cards(&activities);
        let follow_options = follow_worker_options(settings, activities.clone());
        let temporal = &settings.temporal;
        let tuning = &temporal.worker;
        let options = WorkerOptions::new(temporal.task_queue.clone())
            .register_workflow::<TaskWorkflow>()?
            .register_workflow::<RemoteTaskWorkflow>()?
            .register_activities(activities)
            .activity_inbound_interceptor(AgentSpan {
                agent_id: settings.agent.id.clone(),
            })
            .client_identity_override(worker_identity(
                temporal.identity.as_deref(),
                &settings.agent.id,
            ))
            .graceful_shutdown_period(tuning.drain_grace)
            .maybe_deployment_options(deployment_options(tuning))
            .max_cached_workflows(temporal.workflow_cache)
            .maybe_tuner(task_queue_tuner(tuning))
            .maybe_workflow_task_poller_behavior(
                tuning.workflow_pollers.map(PollerBehavior::SimpleMaximum),
            )
            .maybe_activity_task_poller_behavior(
                tuning.activity_pollers.map(PollerBehavior::SimpleMaximum),
            )
            // After a worker dies, its cached workflows' next tasks move to another worker after
            // this long, instead of the default 10 s (a push waits for that answer).
            .sticky_queue_schedule_to_start_timeout(Duration::from_secs(3))
            .max_heartbeat_throttle_interval(baton_activities::HEARTBEAT_SENT_EVERY)
            .build();
        let worker = Worker::new(runtime, client.clone(), options)
            .context("creating the Temporal worker")?;
        let follow_worker = Worker::new(runtime, client.clone(), follow_options)
            .context("creating the Temporal worker of the follow queue")?;
        let sweeper = sweep_content(content.clone(), settings.content.keep_for);
        let http = serve_gateway(settings, client, deployment, readiness, content).await?;
        Ok(AgentProcess {
            drain_grace: tuning.drain_grace,
            worker,
            follow_worker,
            http,
            sweeper,
        })
    }

    fn stops(&self) -> [Stop; 2] {
        [
            Box::new(self.worker.shutdown_handle()),
            Box::new(self.follow_worker.shutdown_handle()),
        ]
    }

    /// Stops the gateway; call after the workers have stopped.
    pub async fn close(self) {
        self.sweeper.abort();
        if let Some(http) = self.http {
            http.stop().await;
        }
    }
}

/// Runs every agent's workers until a signal asks them to stop (gracefully, within each one's
/// `temporal.drain_grace`) or one of them stops on its own, which stops the rest: a process
/// never runs half its agents. `temporal_lost` answering (the embedded server died for good)
/// stops them all too, and is the error returned.
/// `polling` is set while they run, for `/readyz`.
pub(crate) async fn run_until_stopped(
    agents: &mut [AgentProcess],
    signals: ShutdownSignals,
    polling: &Polling,
    temporal_lost: impl Future<Output = anyhow::Error>,
) -> anyhow::Result<()> {
    let stops: Vec<Stop> = agents.iter().flat_map(AgentProcess::stops).collect();
    let grace = agents
        .iter()
        .map(|agent| agent.drain_grace)
        .max()
        .unwrap_or_default();
    let stop_all = || {
        polling.set(false);
        stops.iter().for_each(|stop| stop());
    };
    polling.set(true);
    let running = join_all(agents.iter_mut().flat_map(|agent| {
        [
            (&mut agent.worker, "the Temporal worker"),
            (
                &mut agent.follow_worker,
                "the Temporal worker of the follow queue",
            ),
        ]
        .map(|(worker, what)| {
            let stop_all = &stop_all;
            async move {
                let ran = worker.run().await;
                stop_all();
                ran.with_context(|| format!("{what} stopped with an error"))
            }
        })
    }));
    tokio::pin!(running);
    let results = tokio::select! {
        results = &mut running => results,
        signal = signals.requested() => {
            tracing::info!("{signal}: stopping (drain grace {grace:?})");
            stop_all();
            running.await
        }
        error = temporal_lost => {
            tracing::error!("stopping: {error:#}");
            stop_all();
            running.await;
            return Err(error);
        }
    };
    results.into_iter().collect()
}

/// Prints where an operator reaches a ready process, after its ready line: each Web UI of
/// `ui_urls`, then the metrics endpoint and the probes when they are served.
pub fn print_addresses<'a>(
    ui_urls: impl IntoIterator<Item = &'a String>,
    endpoint: Option<&MetricsEndpoint>,
    probes: Option<&HealthServer>,
) {
    for ui in ui_urls {
        println!("Web UI: {ui}");
    }
    if let Some(endpoint) = endpoint {
        println!("metrics: {}", endpoint.url());
    }
    if let Some(probes) = probes {
        println!("health: {}", probes.url());
    }
}

/// The activities of an agent: its registry of agents (cards fetched and validated, or built
/// for agents of this process), the roster's static prefix, the model provider, and `content`,
/// where the files of tasks are kept.
pub async fn activities(
    settings: &Settings,
    same_process: &[&Settings],
    deployment: &Arc<DeploymentKey>,
    content: Arc<ContentStore>,
) -> anyhow::Result<BatonActivities> {
    let registry =
        Arc::new(Registry::build(settings, same_process, deployment, CardLimits::default()).await?);
    let mcp = Arc::new(
        McpServers::connect(&settings.mcp)
            .await
            .map_err(|error| anyhow::anyhow!("{error}"))
            .context("connecting to the [[mcp]] servers")?,
    );
    let prefixes = Prefixes::new(
        &settings.agent.id,
        settings.operator_prompt(),
        registry.clone(),
        mcp.tools(),
    );
    let model = &settings.model;
    if let Some(why) = &model.api_key_withheld {
        tracing::warn!("{why}");
    }
    let provider = ChatCompletions::new(
        model.base_url.clone(),
        model.api_key.as_ref().map(|key| key.expose().to_string()),
        model.timeout,
    );
    Ok(BatonActivities::new(
        Arc::new(provider),
        TaskContent {
            store: content,
            max_part_bytes: settings.content.max_part_bytes,
        },
        model,
        prefixes,
        &settings.server,
        deployment.clone(),
        settings.temporal.task_queue.clone(),
    )
    .with_mcp_servers(mcp)
    .with_max_delegation_depth(settings.agent.max_delegation_depth))
}

/// Fetches the cards that could not be fetched at startup again, in the background. Each agent
/// that joins is offered to the tasks that start after it; running tasks keep their roster.
fn fetch_pending_cards(activities: &BatonActivities) {
    let registry = activities.registry().clone();
    if registry.pending_ids().is_empty() {
        return;
    }
    tokio::spawn(async move {
        registry
            .fetch_pending(CardLimits::default(), |_| {
                registry.roster();
            })
            .await;
    });
}

/// The gateway (with the push receiver and the probes) on `server.bind`, when
/// `server.base_url` is set.
pub async fn serve_gateway(
    settings: &Settings,
    client: &Client,
    deployment: &Arc<DeploymentKey>,
    readiness: &Readiness,
    content: Arc<ContentStore>,
) -> anyhow::Result<Option<HttpServer>> {
    if settings.server.base_url.is_none() {
        return Ok(None);
    }
    let (gateway, draining) =
        crate::gateway::routes(settings, client.clone(), deployment.clone(), content);
    let routes = crate::health::beside(gateway, readiness.clone().with_draining(&draining));
    Ok(Some(
        crate::http_server::start(&settings.server, routes, draining).await?,
    ))
}

/// The worker of the follow queue (`<task_queue>-follow`): `follow_remote_task` alone, with
/// `temporal.follow_slots` activity slots. A follow holds its slot while its task is parked, so
/// on the main queue a hundred parked follows would leave no slot for a model turn.
pub fn follow_worker_options(settings: &Settings, activities: BatonActivities) -> WorkerOptions {
    let slots = |n| FixedSizeSlotSupplier::new(n);
    let tuner = TunerHolder::builder()
        .workflow_task_slot_supplier(slots(1))
        .activity_task_slot_supplier(slots(settings.temporal.follow_slots))
        .local_activity_task_slot_supplier(slots(1))
        .nexus_task_slot_supplier(slots(1))
        .build();
    let options = WorkerOptions::new(follow_task_queue(&settings.temporal.task_queue));
    with_activity(
        options,
        BatonActivities::follow_remote_task,
        Arc::new(activities),
    )
    .tuner(tuner)
    .activity_inbound_interceptor(AgentSpan {
        agent_id: settings.agent.id.clone(),
    })
    .client_identity_override(worker_identity(
        settings.temporal.identity.as_deref(),
        &settings.agent.id,
    ))
    .max_cached_workflows(0)
    .graceful_shutdown_period(settings.temporal.worker.drain_grace)
    .maybe_deployment_options(deployment_options(&settings.temporal.worker))
    .build()
}

/// The build id a worker gives its Worker Deployment Version unless `temporal.build_id` names
/// one: this binary's release and commit.
const BUILD_ID: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("BATON_COMMIT"));

/// Worker Deployment Versioning, when `temporal.deployment` names the deployment: the worker
/// polls as its version (`temporal.build_id`, else [`BUILD_ID`]), and each workflow stays
/// pinned to the version that started it, so a rolling upgrade never moves a running task to
/// another build. None keeps the SDK's unversioned default.
fn deployment_options(tuning: &WorkerTuning) -> Option<WorkerDeploymentOptions> {
    let deployment = tuning.deployment.as_deref()?;
    let version = WorkerDeploymentVersion::builder()
        .deployment_name(deployment)
        .build_id(tuning.build_id.as_deref().unwrap_or(BUILD_ID))
        .build();
    Some(
        WorkerDeploymentOptions::new(version)
            .use_worker_versioning(true)
            .default_versioning_behavior(VersioningBehavior::Pinned)
            .build(),
    )
}

/// The slots of `temporal.workflow_slots` and `activity_slots`, when either is set; the others
/// keep the SDK's default.
fn task_queue_tuner(tuning: &WorkerTuning) -> Option<WorkerTuner> {
    if tuning.workflow_slots.is_none() && tuning.activity_slots.is_none() {
        return None;
    }
    let slots = |n: Option<usize>| FixedSizeSlotSupplier::new(n.unwrap_or(SDK_DEFAULT_SLOTS));
    Some(
        TunerHolder::builder()
            .workflow_task_slot_supplier(slots(tuning.workflow_slots))
            .activity_task_slot_supplier(slots(tuning.activity_slots))
            .local_activity_task_slot_supplier(slots(None))
            .nexus_task_slot_supplier(slots(None))
            .build()
            .into(),
    )
}

/// Registers one activity of an implementer; the definition's value names its type.
fn with_activity<S: State, AD>(
    options: WorkerOptionsBuilder<S>,
    _definition: AD,
    implementer: Arc<AD::Implementer>,
) -> WorkerOptionsBuilder<S>
where
    AD: ActivityDefinition + ExecutableActivity,
    AD::Input: Send + Sync,
    AD::Output: Send + Sync,
{
    options.register_activity::<AD>(implementer)
}

/// Each followed sub-task holds a connection: raises the open-file limit, and warns when even
/// the hard limit is low for `follow_slots` follows.
pub fn raise_open_file_limit(follow_slots: usize) {
    match crate::open_files::raise_to_hard_limit() {
        Ok(limit) if (limit as usize) < follow_slots * 2 => tracing::warn!(
            limit,
            follow_slots,
            "the open-file limit is low for this many follows; raise it (ulimit -n) or lower temporal.follow_slots"
        ),
        Ok(_) => {}
        Err(error) => tracing::warn!("cannot read or raise the open-file limit: {error}"),
    }
}
