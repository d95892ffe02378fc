//! The `/metrics` endpoint: the Temporal SDK's Prometheus exporter, whose meter then serves both
//! the Temporal runtime and [`Metrics`](crate::Metrics).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use temporalio_common::telemetry::metrics::CoreMeter;
use temporalio_common::telemetry::{PrometheusExporterOptions, start_prometheus_metric_exporter};
use tokio::task::AbortHandle;

/// A running endpoint; it stops when dropped.
pub struct MetricsEndpoint {
    meter: Arc<dyn CoreMeter>,
    address: SocketAddr,
    server: AbortHandle,
}

impl MetricsEndpoint {
    /// Listens on `bind` (the `metrics.bind` setting). Needs a Tokio runtime.
    pub fn start(bind: SocketAddr) -> anyhow::Result<MetricsEndpoint> {
        let options = PrometheusExporterOptions::builder()
            .socket_addr(bind)
            .build();
        let started = start_prometheus_metric_exporter(options)
            .with_context(|| format!("metrics.bind: cannot serve metrics on {bind}"))?;
        Ok(MetricsEndpoint {
            meter: started.meter,
            address: started.bound_addr,
            server: started.abort_handle,
        })
    }

    /// The meter to hand the Temporal runtime and [`Metrics::new`](crate::Metrics::new).
    pub fn meter(&self) -> Arc<dyn CoreMeter> {
        self.meter.clone()
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// What to scrape: `http://<address>/metrics`.
    pub fn url(&self) -> String {
        format!("http://{}/metrics", self.address)
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.server.abort();
    }
}
