//! `baton worker`: a Temporal worker on the config's task queue that runs `TaskWorkflow`,
//! `RemoteTaskWorkflow` and every activity. With `server.base_url` set it also serves the
//! gateway (the A2A surface and the push receiver) on `server.bind`: one process is then a whole
//! agent. `baton gateway` serves more gateways elsewhere; they keep no state.
//! SIGTERM or Ctrl-C stops it gracefully: running activities get a grace period to finish.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use baton_a2a::{CardLimits, Registry};
use baton_activities::{BatonActivities, StaticPrefix};
use baton_config::Settings;
use baton_core::system_prompt::static_prefix;
use baton_model::ChatCompletions;
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow, follow_task_queue};
use temporalio_common::ActivityDefinition;
use temporalio_sdk::activities::ExecutableActivity;
use temporalio_sdk::runtime::worker_tuner::{FixedSizeSlotSupplier, TunerHolder};
use temporalio_sdk::worker_options_builder::State;
use temporalio_sdk::{Runtime, Worker, WorkerOptions, WorkerOptionsBuilder};

use crate::shutdown::ShutdownSignals;
use crate::temporal_client::TemporalSession;

/// How long running activities may take to finish after a shutdown is asked for.
const GRACE: Duration = Duration::from_secs(10);

/// Workflows kept in memory between their tasks. Most of a worker's memory is this cache, and a
/// parked sub-task is two idle workflows: at the SDK's default of 1,000, parking 1,000 sub-tasks
/// cost 70 MiB; at 100, 20 MiB, with no slower parking (docs/performance.md). An evicted
/// workflow replays from history when it wakes, which costs a fetch and a few milliseconds.
pub const WORKFLOW_CACHE: usize = 100;

pub async fn run(config: &Path) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    let session = TemporalSession::open(&settings).await?;
    let outcome = serve(&settings, &session).await;
    session.stop().await;
    outcome.map(|()| ExitCode::SUCCESS)
}

/// The activities of a worker for `settings`: the registry of agents (cards fetched and
/// validated), the roster's static prefix and the model provider.
pub async fn activities(settings: &Settings) -> anyhow::Result<BatonActivities> {
    let registry = Arc::new(Registry::build(settings, &[], CardLimits::default()).await?);
    let roster = registry.roster();
    let prefix = StaticPrefix::new(static_prefix(&settings.agent.id, &roster.text));
    let model = &settings.model;
    let provider = ChatCompletions::new(
        model.base_url.clone(),
        model.api_key.as_ref().map(|key| key.expose().to_string()),
        model.timeout,
    );
    Ok(BatonActivities::new(
        registry,
        Arc::new(provider),
        model.model.clone(),
        prefix,
        settings.server.base_url.clone(),
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
    .max_cached_workflows(0)
    .graceful_shutdown_period(GRACE)
    .build()
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

async fn serve(settings: &Settings, session: &TemporalSession) -> anyhow::Result<()> {
    match crate::open_files::raise_to_hard_limit() {
        Ok(limit) if (limit as usize) < settings.temporal.follow_slots * 2 => tracing::warn!(
            limit,
            follow_slots = settings.temporal.follow_slots,
            "the open-file limit is low for this many follows; raise it (ulimit -n) or lower temporal.follow_slots"
        ),
        Ok(_) => {}
        Err(error) => tracing::warn!("cannot read or raise the open-file limit: {error}"),
    }
    let activities = activities(settings).await?;
    let runtime =
        Runtime::from_current_tokio(Default::default()).context("starting the Temporal runtime")?;
    let task_queue = settings.temporal.task_queue.clone();
    let follow_options = follow_worker_options(settings, activities.clone());
    let options = WorkerOptions::new(task_queue.clone())
        .register_workflow::<TaskWorkflow>()?
        .register_workflow::<RemoteTaskWorkflow>()?
        .register_activities(activities)
        .graceful_shutdown_period(GRACE)
        .max_cached_workflows(WORKFLOW_CACHE)
        // After a worker dies, its cached workflows' next tasks move to another worker after
        // this long, instead of the default 10 s (a push waits for that answer).
        .sticky_queue_schedule_to_start_timeout(Duration::from_secs(3))
        .build();
    let mut worker = Worker::new(&runtime, session.client.clone(), options)
        .context("creating the Temporal worker")?;
    let mut follow_worker = Worker::new(&runtime, session.client.clone(), follow_options)
        .context("creating the Temporal worker of the follow queue")?;
    let shutdown = worker.shutdown_handle();
    let shutdown_follows = follow_worker.shutdown_handle();
    let signals = ShutdownSignals::install().context("installing the signal handlers")?;

    let http = match &settings.server.base_url {
        Some(_) => Some(
            crate::http_server::start(
                settings.server.bind,
                crate::gateway::routes(settings, session.client.clone()),
            )
            .await?,
        ),
        None => None,
    };
    println!(
        "worker ready: task queue {task_queue} on {}",
        session.address
    );
    if let Some(ui) = &session.ui_url {
        println!("Web UI: {ui}");
    }
    tracing::info!(task_queue = %task_queue, address = %session.address, "worker ready");

    // Either worker stopping stops the other, so the process never runs half a worker.
    let shutdown_both = || {
        shutdown();
        shutdown_follows();
    };
    let workers = async {
        tokio::join!(
            async {
                let ran = worker.run().await;
                shutdown_both();
                ran
            },
            async {
                let ran = follow_worker.run().await;
                shutdown_both();
                ran
            },
        )
    };
    tokio::pin!(workers);
    let (ran, followed) = tokio::select! {
        ran = &mut workers => ran,
        signal = signals.requested() => {
            tracing::info!("{signal}: stopping the worker (grace {GRACE:?})");
            shutdown_both();
            workers.await
        }
    };
    if let Some(http) = http {
        http.stop().await;
    }
    ran.context("the Temporal worker stopped with an error")?;
    followed.context("the Temporal worker of the follow queue stopped with an error")
}
