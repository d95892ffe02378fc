//! The process's metrics endpoint (`[metrics] bind`) and the Temporal runtime that reports to it.

use std::net::SocketAddr;

use anyhow::Context;
use baton_metrics::{Metrics, MetricsEndpoint};
use temporalio_common::telemetry::TelemetryOptions;
use temporalio_sdk::Runtime;
use temporalio_sdk::runtime::RuntimeOptions;

/// Starts the endpoint on `bind`, when there is one, and makes Baton's metrics record to it.
/// Commands print [`MetricsEndpoint::url`] with their other addresses.
pub fn serve(bind: Option<SocketAddr>) -> anyhow::Result<Option<MetricsEndpoint>> {
    let Some(bind) = bind else {
        return Ok(None);
    };
    let endpoint = MetricsEndpoint::start(bind)?;
    let metrics = Metrics::new(endpoint.meter());
    metrics.record_build(env!("CARGO_PKG_VERSION"));
    baton_metrics::install(metrics);
    tracing::info!(url = %endpoint.url(), "serving metrics");
    Ok(Some(endpoint))
}

/// The Temporal runtime of the process's workers, reporting to `metrics` when it is served.
pub fn temporal_runtime(metrics: Option<&MetricsEndpoint>) -> anyhow::Result<Runtime> {
    let telemetry = TelemetryOptions::builder()
        .maybe_metrics(metrics.map(MetricsEndpoint::meter))
        .build();
    let options = RuntimeOptions::builder()
        .telemetry_options(telemetry)
        .build()
        .map_err(|error| anyhow::anyhow!("the Temporal runtime's options: {error}"))?;
    Runtime::from_current_tokio(options).context("starting the Temporal runtime")
}
