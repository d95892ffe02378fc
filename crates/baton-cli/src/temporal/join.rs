//! Joining a Temporal server that another Baton process already runs, for the commands that start
//! none of their own (`baton task`, `baton replay`).

use anyhow::Context;
use baton_config::{Settings, TemporalMode};
use temporalio_client::Client;

use super::connect;

/// The address [`join`] connects to.
pub fn joined_address(settings: &Settings) -> anyhow::Result<String> {
    Ok(match settings.temporal.mode {
        TemporalMode::Embedded => format!("127.0.0.1:{}", settings.temporal.embedded.port),
        TemporalMode::Remote => settings
            .temporal
            .address
            .clone()
            .context("temporal.address is required in remote mode")?,
    })
}

/// A client of the Temporal `settings` name, without starting a server: in embedded mode, the
/// dev server a `baton worker` (or `baton up`) already runs on `temporal.embedded.port`. `who`
/// names the command in the error when nothing answers.
pub async fn join(settings: &Settings, who: &str) -> anyhow::Result<Client> {
    let address = joined_address(settings)?;
    let connection = connect(&settings.temporal, &address).await.with_context(|| {
        match settings.temporal.mode {
            TemporalMode::Embedded => format!(
                "{who} joins the embedded Temporal server of `baton worker` at {address}: start the worker first"
            ),
            TemporalMode::Remote => format!("connecting to Temporal at {address}"),
        }
    })?;
    Ok(Client::new(
        connection,
        crate::tracing_export::client_options(settings.temporal.namespace.clone()),
    )?)
}
