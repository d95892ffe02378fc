//! `baton gateway`: Baton as an A2A 1.0 agent on `[server] bind`, with Temporal behind every
//! call. It never starts a Temporal server: in embedded mode it joins the one the worker started
//! on `temporal.embedded.port`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use baton_config::Settings;
use baton_config::agent_card::{public_url, served_card};
use baton_content::ContentStore;
use baton_core::deployment_key::DeploymentKey;
use baton_gateway::{
    Authenticator, Draining, GatewayConfig, Limits, PartLimits, TemporalHandler, gateway_routes,
};
use temporalio_client::Client;

use crate::health::{self, Readiness};
use crate::metrics;
use crate::shutdown::ShutdownSignals;
use crate::temporal::{join, joined_address};

/// `baton gateway`: serves the agent's gateway until SIGINT or SIGTERM.
pub async fn run(config: &Path) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    crate::logging::use_format(settings.log.format);
    crate::tracing_export::start(&settings.trace, &format!("baton-{}", settings.agent.id))?;
    let deployment = crate::deployment_secret::resolve(&settings)?;
    let client = join(&settings, "the gateway").await?;
    let metrics = metrics::serve(settings.metrics.bind)?;
    let readiness = Readiness::default().with_temporal(
        &client,
        &settings.temporal.namespace,
        &joined_address(&settings)?,
    );
    let probes = health::serve(settings.health.bind, &readiness).await?;
    let content = crate::content_store::open(&settings.content)?;
    let (gateway, draining) = routes(&settings, client, deployment, content);
    let app = health::beside(gateway, readiness.with_draining(&draining));
    let signals = ShutdownSignals::install().context("installing the signal handlers")?;
    let server = crate::http_server::start(&settings.server, app, draining).await?;
    let base = public_url(&settings);
    println!(
        "gateway ready: {base} (listening on {})",
        settings.server.bind
    );
    if let Some(endpoint) = &metrics {
        println!("metrics: {}", endpoint.url());
    }
    if let Some(probes) = &probes {
        println!("health: {}", probes.url());
    }
    tracing::info!(bind = %settings.server.bind, base_url = %base, "gateway ready");
    let signal = signals.requested().await;
    tracing::info!(
        "{signal}: stopping the gateway (server.drain_timeout {:?})",
        settings.server.drain_timeout
    );
    server.stop().await;
    Ok(ExitCode::SUCCESS)
}

/// The gateway's routes for `settings`, over `client`, for the deployment `deployment` is the
/// key of, keeping the files and data of messages in `content`; and what drains them.
pub fn routes(
    settings: &Settings,
    client: Client,
    deployment: Arc<DeploymentKey>,
    content: Arc<ContentStore>,
) -> (axum::Router, Draining) {
    let handler = TemporalHandler::new(
        client,
        GatewayConfig {
            agent_id: settings.agent.id.clone(),
            task_queue: settings.temporal.task_queue.clone(),
            delegators: settings.server.delegators.clone(),
            card: served_card(settings),
            temporal_timeout: settings.server.temporal_timeout,
            blocking_timeout: settings.server.blocking_timeout,
            allow_private_push_urls: settings.server.allow_private_push_urls,
            search_attributes: settings.temporal.search_attributes,
            public_url: public_url(settings),
            deployment: deployment.clone(),
            max_message_parts: settings.server.max_message_parts,
            part_limits: PartLimits {
                max_part_bytes: settings.content.max_part_bytes,
                media_types: settings.content.media_types.clone(),
                max_task_bytes: settings.content.max_task_bytes,
                fetch_urls: settings.content.fetch_urls,
            },
        },
        content,
    );
    let draining = handler.draining();
    let limits = Limits {
        max_request_bytes: settings.server.max_request_bytes,
        rate_limit_per_minute: settings.server.rate_limit_per_minute,
        trusted_proxies: settings.server.trusted_proxies.clone(),
        max_concurrent_requests: settings.server.max_concurrent_requests,
        max_message_parts: settings.server.max_message_parts,
    };
    let authenticator = Authenticator::new(
        &settings.server.auth,
        &settings.agent.id,
        deployment,
        reqwest::Client::new(),
    );
    let routes = gateway_routes(handler, authenticator, public_url(settings).path(), limits);
    (routes, draining)
}
