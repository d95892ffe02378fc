//! The `/metrics` endpoint: the Temporal SDK's Prometheus exporter, whose meter then serves both
//! the Temporal runtime and [`Metrics`](crate::Metrics), by Prometheus's conventions: durations
//! in seconds with the unit in the name (`_seconds`), counters ending in `_total`.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use temporalio_common::telemetry::metrics::CoreMeter;
use temporalio_common::telemetry::{
    HistogramBucketOverrides, PrometheusExporterOptions, start_prometheus_metric_exporter,
};

/// The buckets of Baton's own duration histograms, in seconds: 1 ms to 60 s, so a gateway call
/// of a few milliseconds lands in a bucket of its own and a blocking send of a minute still
/// counts. Temporal's histograms keep the SDK's buckets.
pub const DURATION_BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0,
];
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
        let overrides = crate::DURATION_HISTOGRAMS
            .iter()
            .map(|name| (name.to_string(), DURATION_BUCKETS.to_vec()))
            .collect();
        let options = PrometheusExporterOptions::builder()
            .socket_addr(bind)
            .use_seconds_for_durations(true)
            .unit_suffix(true)
            .counters_total_suffix(true)
            .histogram_bucket_overrides(HistogramBucketOverrides { overrides })
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
