//! The Temporal connection of a config: the embedded dev server it starts, or the remote
//! cluster it names. Holding the value keeps an embedded server alive; `stop` ends it.

use anyhow::Context;
use baton_config::{Settings, TemporalMode};
use temporalio_client::{Client, Connection};

use crate::temporal::{EmbeddedServer, connect};

pub(crate) struct TemporalSession {
    pub client: Client,
    pub address: String,
    pub ui_url: Option<String>,
    embedded: Option<EmbeddedServer>,
}

impl TemporalSession {
    pub async fn open(settings: &Settings) -> anyhow::Result<TemporalSession> {
        let temporal = &settings.temporal;
        let (connection, address, embedded): (Connection, String, Option<EmbeddedServer>) =
            match temporal.mode {
                TemporalMode::Embedded => {
                    let (server, connection) = EmbeddedServer::start(temporal)
                        .await
                        .context("starting the embedded Temporal server")?;
                    (connection, server.address().to_string(), Some(server))
                }
                TemporalMode::Remote => {
                    let address = temporal
                        .address
                        .clone()
                        .context("temporal.address is required in remote mode")?;
                    let connection = connect(temporal, &address).await?;
                    (connection, address, None)
                }
            };
        let client = Client::new(
            connection,
            crate::tracing_export::client_options(temporal.namespace.clone()),
        )
        .context("creating the Temporal client")?;
        Ok(TemporalSession {
            client,
            address,
            ui_url: embedded.as_ref().map(|s| s.ui_url().to_string()),
            embedded,
        })
    }

    /// Answers once the embedded server this session started has died for good (it is started
    /// again a few times first); never for a remote cluster, whose outages the SDK rides out.
    pub async fn lost(&self) -> anyhow::Error {
        match &self.embedded {
            Some(server) => anyhow::Error::new(server.lost().await),
            None => std::future::pending().await,
        }
    }

    /// Stops the embedded server, if this session started one.
    pub async fn stop(self) {
        if let Some(server) = self.embedded {
            server.stop().await;
        }
    }
}
