//! The bench's in-process worker: the activities `baton worker` builds (`baton_cli::agent_process`), its
//! options, its follow queue's worker and its HTTP routes, plus the baseline's workflows and
//! activity on the same task queue.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use baton_config::Settings;
use baton_core::deployment_key::DeploymentKey;
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow};
use temporalio_client::Client;
use temporalio_sdk::{Worker, WorkerOptions};

use super::baseline::{BenchActivities, BenchChildWorkflow, BenchParentWorkflow};

/// Runs `body` while the worker of `settings` polls, then stops the worker gracefully and
/// waits for it. The worker's `run()` is not `Send`, so it is driven on this task while `body`
/// runs on the runtime's threads.
///
/// `max_cached_workflows` overrides `baton worker`'s workflow cache (an experiment knob).
pub async fn with_worker<T, F>(
    settings: &Settings,
    client: Client,
    max_cached_workflows: Option<usize>,
    body: F,
) -> anyhow::Result<T>
where
    T: Send + 'static,
    F: Future<Output = anyhow::Result<T>> + Send + 'static,
{
    // The bench is one process, so one deployment: a key of its own for this run.
    let deployment = Arc::new(DeploymentKey::from_secret(&baton_a2a::push::new_token()));
    let content = baton_cli::content_store::open(&settings.content)?;
    let activities =
        baton_cli::agent_process::activities(settings, &[], &deployment, content.clone()).await?;
    let metrics = baton_cli::metrics::serve(settings.metrics.bind)?;
    if let Some(endpoint) = &metrics {
        super::delegation::progress(&format!("worker metrics at {}", endpoint.url()));
    }
    let runtime = baton_cli::metrics::temporal_runtime(metrics.as_ref())?;
    let follow_options =
        baton_cli::agent_process::follow_worker_options(settings, activities.clone());
    let options = WorkerOptions::new(settings.temporal.task_queue.clone())
        .register_workflow::<TaskWorkflow>()?
        .register_workflow::<RemoteTaskWorkflow>()?
        .register_workflow::<BenchParentWorkflow>()?
        .register_workflow::<BenchChildWorkflow>()?
        .register_activities(activities)
        .register_activities(BenchActivities)
        .graceful_shutdown_period(settings.temporal.worker.drain_grace)
        .max_cached_workflows(max_cached_workflows.unwrap_or(settings.temporal.workflow_cache))
        // As `baton worker`: a dead worker's sticky tasks move on after 3 s, not 10.
        .sticky_queue_schedule_to_start_timeout(Duration::from_secs(3))
        .build();
    let mut worker =
        Worker::new(&runtime, client.clone(), options).context("creating the Temporal worker")?;
    let mut follow_worker = Worker::new(&runtime, client.clone(), follow_options)
        .context("creating the Temporal worker of the follow queue")?;
    let shutdown = worker.shutdown_handle();
    let shutdown_follows = follow_worker.shutdown_handle();
    let http = baton_cli::agent_process::serve_gateway(
        settings,
        &client,
        &deployment,
        &baton_cli::health::Readiness::default(),
        content,
    )
    .await?;

    let body = tokio::spawn(body);
    let abort = body.abort_handle();
    // A worker that stopped on its own leaves the body nothing to measure.
    let stop_all = || {
        abort.abort();
        shutdown();
        shutdown_follows();
    };
    let run = async {
        let ran = worker.run().await;
        stop_all();
        ran
    };
    let run_follows = async {
        let ran = follow_worker.run().await;
        stop_all();
        ran
    };
    let drive = async {
        let outcome = body.await;
        // The gateway first: its open streams read the tasks the workers are leaving.
        if let Some(http) = http {
            http.stop().await;
        }
        shutdown();
        shutdown_follows();
        outcome
    };
    let (ran, followed, outcome) = tokio::join!(run, run_follows, drive);
    ran.context("the Temporal worker stopped with an error")?;
    followed.context("the Temporal worker of the follow queue stopped with an error")?;
    outcome.context("the bench stopped before it finished")?
}
