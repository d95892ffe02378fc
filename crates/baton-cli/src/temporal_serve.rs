//! `baton temporal serve`: the embedded dev server on its own, for operators who want Baton's
//! tuned local Temporal without a worker.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use baton_config::{Settings, TemporalMode};

use crate::shutdown::ShutdownSignals;
use crate::temporal::EmbeddedServer;

/// `baton temporal serve`: runs the config's embedded Temporal dev server until SIGINT or
/// SIGTERM, starting it again if it dies (within a budget, then the command fails). A config in
/// remote mode is refused.
pub async fn run(config: &Path) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    crate::logging::use_format(settings.log.format);
    if settings.temporal.mode != TemporalMode::Embedded {
        anyhow::bail!(
            "temporal.mode is \"remote\" in {}: there is no embedded server to run",
            config.display()
        );
    }
    let signals = ShutdownSignals::install().context("installing the signal handlers")?;
    let (server, _connection) = EmbeddedServer::start(&settings.temporal)
        .await
        .context("starting the embedded Temporal server")?;
    tracing::info!(
        address = server.address(),
        namespace = %settings.temporal.namespace,
        "embedded Temporal is ready"
    );
    println!(
        "Temporal: {} (namespace {})",
        server.address(),
        settings.temporal.namespace
    );
    println!("Web UI:   {}", server.ui_url());
    tokio::select! {
        signal = signals.requested() => {
            tracing::info!("{signal}: stopping the embedded Temporal server");
            server.stop().await;
            Ok(ExitCode::SUCCESS)
        }
        lost = server.lost() => Err(lost.into()),
    }
}
