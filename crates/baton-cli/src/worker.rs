//! `baton worker`: a Temporal worker on the config's task queue that runs `TaskWorkflow`,
//! `RemoteTaskWorkflow` and every activity, and one on its follow queue. With `server.base_url`
//! set it also serves the gateway (the A2A surface and the push receiver) on `server.bind`: one
//! process is then a whole agent. `baton gateway` serves more gateways elsewhere; they keep no
//! state. SIGTERM or Ctrl-C stops it gracefully: running activities get a grace period to finish.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use baton_config::Settings;
use baton_core::deployment_key::DeploymentKey;

use crate::agent_process::{
    AgentProcess, print_addresses, raise_open_file_limit, run_until_stopped,
};
use crate::health::{self, Polling, Readiness};
use crate::metrics;
use crate::shutdown::ShutdownSignals;
use crate::temporal_client::TemporalSession;

/// `baton worker`: runs the agent's workers, and its gateway when `server.base_url` is set,
/// until a signal stops them or one of them stops.
pub async fn run(config: &Path) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    crate::logging::use_format(settings.log.format);
    crate::tracing_export::start(&settings.trace, &format!("baton-{}", settings.agent.id))?;
    let deployment = crate::deployment_secret::resolve(&settings)?;
    let session = TemporalSession::open(&settings).await?;
    let outcome = serve(&settings, &session, &deployment).await;
    session.stop().await;
    outcome.map(|()| ExitCode::SUCCESS)
}

async fn serve(
    settings: &Settings,
    session: &TemporalSession,
    deployment: &Arc<DeploymentKey>,
) -> anyhow::Result<()> {
    raise_open_file_limit(settings.temporal.follow_slots);
    let endpoint = metrics::serve(settings.metrics.bind)?;
    let runtime = metrics::temporal_runtime(endpoint.as_ref())?;
    let polling = Polling::default();
    let readiness = Readiness::default()
        .with_temporal(
            &session.client,
            &settings.temporal.namespace,
            &session.address,
        )
        .with_workers(&polling);
    let probes = health::serve(settings.health.bind, &readiness).await?;
    let agent = AgentProcess::start(
        settings,
        &session.client,
        &runtime,
        &[],
        deployment,
        &readiness,
    )
    .await?;
    let signals = ShutdownSignals::install().context("installing the signal handlers")?;
    let task_queue = &settings.temporal.task_queue;
    println!(
        "worker ready: task queue {task_queue} on {}",
        session.address
    );
    print_addresses(&session.ui_url, endpoint.as_ref(), probes.as_ref());
    tracing::info!(task_queue = %task_queue, address = %session.address, "worker ready");
    let mut agents = [agent];
    let ran = run_until_stopped(&mut agents, signals, &polling, session.lost()).await;
    let [agent] = agents;
    agent.close().await;
    ran
}
