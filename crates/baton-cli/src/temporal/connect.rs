use std::time::{Duration, Instant};

use baton_config::TemporalSettings;
use temporalio_client::{Connection, ConnectionOptions, TlsOptions, Url};
use temporalio_common::protos::temporal::api::workflowservice::v1::DescribeNamespaceRequest;

/// Why Baton could not reach its Temporal server.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("temporal.address: {address:?} is not a host:port Baton can connect to ({reason})")]
    BadAddress { address: String, reason: String },
    #[error("cannot connect to Temporal at {address}: {reason}")]
    Unreachable { address: String, reason: String },
    #[error(
        "Temporal at {address} answers, but namespace {namespace:?} does not: {reason}. \
         Create it (temporal operator namespace create {namespace}) or fix temporal.namespace"
    )]
    NoNamespace {
        address: String,
        namespace: String,
        reason: String,
    },
}

/// Connects to the Temporal frontend at `address` (host:port) with the namespace, TLS and API key
/// of `settings`, and checks that the namespace answers.
pub async fn connect(
    settings: &TemporalSettings,
    address: &str,
) -> Result<Connection, ConnectError> {
    let connection = open(settings, address, None).await?;
    describe_namespace(&connection, address, &settings.namespace).await?;
    Ok(connection)
}

/// Waits until the server at `address` accepts connections and its namespace answers, for at most
/// `timeout`. Used right after starting a server, which takes a moment to open its port.
pub async fn wait_until_ready(
    settings: &TemporalSettings,
    address: &str,
    timeout: Duration,
) -> Result<Connection, ConnectError> {
    let deadline = Instant::now() + timeout;
    loop {
        let attempt = match open(settings, address, Some(Duration::from_secs(1))).await {
            Ok(connection) => describe_namespace(&connection, address, &settings.namespace)
                .await
                .map(|()| connection),
            Err(error) => Err(error),
        };
        match attempt {
            Ok(connection) => return Ok(connection),
            Err(error @ ConnectError::BadAddress { .. }) => return Err(error),
            Err(error) if Instant::now() >= deadline => return Err(error),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn open(
    settings: &TemporalSettings,
    address: &str,
    connect_timeout: Option<Duration>,
) -> Result<Connection, ConnectError> {
    let scheme = if settings.tls { "https" } else { "http" };
    let target =
        Url::parse(&format!("{scheme}://{address}")).map_err(|e| ConnectError::BadAddress {
            address: address.to_string(),
            reason: e.to_string(),
        })?;
    let options = ConnectionOptions::new(target)
        .identity(format!("baton@{}", std::process::id()))
        .maybe_tls_options(settings.tls.then(TlsOptions::default))
        .maybe_api_key(
            settings
                .api_key
                .as_ref()
                .map(|key| key.expose().to_string()),
        )
        .maybe_connect_timeout(connect_timeout)
        .build();
    Connection::connect(options)
        .await
        .map_err(|e| ConnectError::Unreachable {
            address: address.to_string(),
            reason: e.to_string(),
        })
}

async fn describe_namespace(
    connection: &Connection,
    address: &str,
    namespace: &str,
) -> Result<(), ConnectError> {
    let request = DescribeNamespaceRequest {
        namespace: namespace.to_string(),
        ..Default::default()
    };
    connection
        .workflow_service()
        .describe_namespace(temporalio_client::tonic::Request::new(request))
        .await
        .map(|_| ())
        .map_err(|status| ConnectError::NoNamespace {
            address: address.to_string(),
            namespace: namespace.to_string(),
            reason: status.message().to_string(),
        })
}
