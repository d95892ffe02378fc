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
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow};
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

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

async fn serve(settings: &Settings, session: &TemporalSession) -> anyhow::Result<()> {
    let activities = activities(settings).await?;
    let runtime =
        Runtime::from_current_tokio(Default::default()).context("starting the Temporal runtime")?;
    let task_queue = settings.temporal.task_queue.clone();
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
    let shutdown = worker.shutdown_handle();
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

    let stop = async {
        let signal = signals.requested().await;
        tracing::info!("{signal}: stopping the worker (grace {GRACE:?})");
        shutdown();
    };
    let (ran, ()) = tokio::join!(worker.run(), stop);
    if let Some(http) = http {
        http.stop().await;
    }
    ran.context("the Temporal worker stopped with an error")
}
