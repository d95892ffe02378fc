//! The process's metrics endpoint (`[metrics] bind`) and the Temporal runtime that reports to it.

use std::net::SocketAddr;

use anyhow::{Context, bail};
use baton_config::Settings;
use baton_metrics::{Metrics, MetricsEndpoint};
use temporalio_common::telemetry::TelemetryOptions;
use temporalio_sdk::Runtime;
use temporalio_sdk::runtime::RuntimeOptions;

/// The one address the configs of a process agree to serve metrics on, if any sets one.
pub fn bind_of(all: &[Settings]) -> anyhow::Result<Option<SocketAddr>> {
    let mut chosen: Option<(SocketAddr, &Settings)> = None;
    for settings in all {
        let Some(bind) = settings.metrics.bind else {
            continue;
        };
        match chosen {
            Some((first, first_settings)) if first != bind => bail!(
                "metrics.bind is {first} in {} but {bind} in {}: one process serves one metrics endpoint",
                source_of(first_settings),
                source_of(settings)
            ),
            Some(_) => {}
            None => chosen = Some((bind, settings)),
        }
    }
    Ok(chosen.map(|(bind, _)| bind))
}

pub fn source_of(settings: &Settings) -> String {
    settings
        .source
        .as_ref()
        .map_or_else(|| "(no file)".to_string(), |p| p.display().to_string())
}

/// Starts the endpoint on `bind`, when there is one, and makes Baton's metrics record to it.
pub fn serve(bind: Option<SocketAddr>) -> anyhow::Result<Option<MetricsEndpoint>> {
    let Some(bind) = bind else {
        return Ok(None);
    };
    let endpoint = MetricsEndpoint::start(bind)?;
    baton_metrics::install(Metrics::new(endpoint.meter()));
    println!("metrics: http://{}/metrics", endpoint.address());
    tracing::info!(address = %endpoint.address(), "serving metrics");
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn settings(text: &str, file: &str) -> Settings {
        let mut settings = Settings::parse(text, Path::new("/srv"), &|_| None).unwrap();
        settings.source = Some(file.into());
        settings
    }

    #[test]
    fn no_config_that_sets_a_bind_serves_nothing() {
        let plain = settings("", "a.toml");
        assert_eq!(bind_of(&[plain.clone(), plain]).unwrap(), None);
    }

    #[test]
    fn configs_that_set_the_same_bind_or_none_share_it() {
        let with = settings("[metrics]\nbind = \"127.0.0.1:9464\"", "a.toml");
        let without = settings("", "b.toml");
        let same = settings("[metrics]\nbind = \"127.0.0.1:9464\"", "c.toml");
        assert_eq!(
            bind_of(&[without, with, same]).unwrap(),
            Some("127.0.0.1:9464".parse().unwrap())
        );
    }

    #[test]
    fn two_different_binds_are_refused_naming_both_files() {
        let one = settings("[metrics]\nbind = \"127.0.0.1:9464\"", "a.toml");
        let other = settings("[metrics]\nbind = \"127.0.0.1:9465\"", "b.toml");
        let error = bind_of(&[one, other]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "metrics.bind is 127.0.0.1:9464 in a.toml but 127.0.0.1:9465 in b.toml: one process serves one metrics endpoint"
        );
    }
}
