//! Connecting to Temporal: the client with TLS and API key from `[temporal]`, the namespace check,
//! and the search attributes a task needs; each failure names the setting to change.

use std::time::{Duration, Instant};

use baton_config::{Pem, PemSource, TemporalSettings};
use temporalio_client::tonic::{Code, Request};
use temporalio_client::{ClientTlsOptions, Connection, ConnectionOptions, TlsOptions, Url};
use temporalio_common::protos::temporal::api::enums::v1::IndexedValueType;
use temporalio_common::protos::temporal::api::operatorservice::v1::ListSearchAttributesRequest;
use temporalio_common::protos::temporal::api::workflowservice::v1::DescribeNamespaceRequest;

use super::connect_error::{explain_connect_error, explain_status};
use super::identity::process_identity;

/// Why Baton could not reach its Temporal server, each naming the setting to change.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `temporal.address` is not a host:port.
    #[error("temporal.address: {address:?} is not a host:port Baton can connect to ({reason})")]
    BadAddress {
        /// The address as given.
        address: String,
        /// Why it does not parse.
        reason: String,
    },
    /// A TLS file cannot be read, or it (or PEM given inline) holds no PEM block of the kind
    /// it should.
    #[error("{setting}: cannot use {what}: {reason}")]
    TlsFile {
        /// The setting or variable that gives the PEM, like `temporal.tls_ca`.
        setting: String,
        /// The file, or "the PEM given inline".
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No connection, or the namespace check failed for another reason than a missing
    /// namespace.
    #[error("cannot connect to Temporal at {address}: {reason}")]
    Unreachable {
        /// The server's host:port.
        address: String,
        /// Why, with the setting to check where one is to blame.
        reason: String,
    },
    /// The server answers, but not for `temporal.namespace`.
    #[error(
        "Temporal at {address} answers, but namespace {namespace:?} does not: {reason}. \
         Create it (temporal operator namespace create {namespace}) or fix temporal.namespace"
    )]
    NoNamespace {
        /// The server's host:port.
        address: String,
        /// `temporal.namespace`.
        namespace: String,
        /// The server's message.
        reason: String,
    },
    /// `temporal.search_attributes` is true, but the namespace lacks some of Baton's.
    #[error(
        "temporal.search_attributes is true, but namespace {namespace:?} lacks {}. Register {} \
         ({}), or set temporal.search_attributes = false (ListTasks then cannot filter)",
        missing.iter().map(|(name, kind)| format!("{name} ({kind})")).collect::<Vec<_>>().join(", "),
        if missing.len() == 1 { "it" } else { "them" },
        register_command(namespace, missing)
    )]
    MissingSearchAttributes {
        /// `temporal.namespace`.
        namespace: String,
        /// Each missing attribute's name and type, like `("BatonAgent", "Keyword")`.
        missing: Vec<(&'static str, &'static str)>,
    },
}

/// Connects to the Temporal frontend at `address` (host:port) with the namespace, TLS and API key
/// of `settings`, checks that the namespace answers and, when tasks carry search attributes, that
/// the namespace has them all.
pub async fn connect(
    settings: &TemporalSettings,
    address: &str,
) -> Result<Connection, ConnectError> {
    let connection = open(settings, address, None).await?;
    describe_namespace(&connection, settings, address).await?;
    if settings.search_attributes {
        check_search_attributes(&connection, &settings.namespace).await?;
    }
    Ok(connection)
}

/// How soon a server that is starting is asked again. A refused connection to a local port or a
/// namespace call costs well under a millisecond, and every pause is added to Baton's cold
/// start: at 100 ms, the embedded server was seen ready 50 ms late on average.
const READY_POLL: Duration = Duration::from_millis(10);

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
            Ok(connection) => describe_namespace(&connection, settings, address)
                .await
                .map(|()| connection),
            Err(error) => Err(error),
        };
        match attempt {
            Ok(connection) => return Ok(connection),
            Err(error @ (ConnectError::BadAddress { .. } | ConnectError::TlsFile { .. })) => {
                return Err(error);
            }
            Err(error) if Instant::now() >= deadline => return Err(error),
            Err(_) => tokio::time::sleep(READY_POLL).await,
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
    let tls = if settings.tls {
        Some(tls_options(settings)?)
    } else {
        None
    };
    let options = ConnectionOptions::new(target)
        .identity(process_identity(settings.identity.as_deref()))
        .maybe_tls_options(tls)
        .maybe_api_key(
            settings
                .api_key
                .as_ref()
                .map(|key| key.expose().to_string()),
        )
        .maybe_connect_timeout(connect_timeout)
        .maybe_headers((!settings.grpc_meta.is_empty()).then(|| {
            settings
                .grpc_meta
                .iter()
                .map(|(name, value)| (name.clone(), value.expose().to_string()))
                .collect()
        }))
        .build();
    Connection::connect(options)
        .await
        .map_err(|error| ConnectError::Unreachable {
            address: address.to_string(),
            reason: explain_connect_error(&error, settings),
        })
}

/// The TLS options of `settings`, with the files of `tls_ca`, `tls_cert` and `tls_key` read and
/// checked to be PEM, so that a wrong file is named here rather than in a handshake error.
fn tls_options(settings: &TemporalSettings) -> Result<TlsOptions, ConnectError> {
    let files = &settings.tls_files;
    let ca = files
        .ca
        .as_ref()
        .map(|source| read_pem(source, "CERTIFICATE"))
        .transpose()?;
    let client = match &files.client {
        Some(client) => Some(
            ClientTlsOptions::builder()
                .client_cert(read_pem(&client.cert, "CERTIFICATE")?)
                .client_private_key(read_pem(&client.key, "PRIVATE KEY")?)
                .build(),
        ),
        None => None,
    };
    Ok(TlsOptions::builder()
        .maybe_server_root_ca_cert(ca)
        .maybe_domain(files.server_name.clone())
        .maybe_client_tls_options(client)
        .build())
}

/// The PEM of `source` (its file's, or its inline text), which must hold a PEM block whose
/// label ends with `label`.
fn read_pem(source: &PemSource, label: &str) -> Result<Vec<u8>, ConnectError> {
    let what = match &source.pem {
        Pem::File(path) => path.display().to_string(),
        Pem::Inline(_) => "the PEM given inline".to_string(),
    };
    let fail = |reason: String| ConnectError::TlsFile {
        setting: source.setting.clone(),
        what: what.clone(),
        reason,
    };
    let bytes = match &source.pem {
        Pem::File(path) => std::fs::read(path).map_err(|e| fail(e.to_string()))?,
        Pem::Inline(bytes) => bytes.clone(),
    };
    let text = String::from_utf8_lossy(&bytes);
    let holds_label = text.lines().any(|line| {
        line.strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
            .is_some_and(|found| found.ends_with(label))
    });
    if !holds_label {
        return Err(fail(format!(
            "it holds no PEM \"{label}\" block (expected -----BEGIN …{label}-----)"
        )));
    }
    Ok(bytes)
}

async fn describe_namespace(
    connection: &Connection,
    settings: &TemporalSettings,
    address: &str,
) -> Result<(), ConnectError> {
    let namespace = &settings.namespace;
    let request = DescribeNamespaceRequest {
        namespace: namespace.clone(),
        ..Default::default()
    };
    match connection
        .workflow_service()
        .describe_namespace(Request::new(request))
        .await
    {
        Ok(_) => Ok(()),
        Err(status) if status.code() == Code::NotFound => Err(ConnectError::NoNamespace {
            address: address.to_string(),
            namespace: namespace.clone(),
            reason: status.message().to_string(),
        }),
        Err(status) => Err(ConnectError::Unreachable {
            address: address.to_string(),
            reason: explain_status(&status, settings),
        }),
    }
}

/// Refuses a namespace that lacks one of the search attributes every task writes: otherwise the
/// worker would start, and the first task would fail. A server that will not list them (a
/// Temporal Cloud API key without that permission) is given the benefit of the doubt, with a
/// WARN.
async fn check_search_attributes(
    connection: &Connection,
    namespace: &str,
) -> Result<(), ConnectError> {
    let request = ListSearchAttributesRequest {
        namespace: namespace.to_string(),
    };
    let listed = match connection
        .operator_service()
        .list_search_attributes(Request::new(request))
        .await
    {
        Ok(response) => response.into_inner(),
        Err(status) => {
            tracing::warn!(
                namespace,
                reason = status.message(),
                "could not list the namespace's search attributes to check them; a task fails if one is missing"
            );
            return Ok(());
        }
    };
    let missing: Vec<(&str, &str)> = baton_proto::temporal::search_attributes::REGISTRATIONS
        .into_iter()
        .filter(|(name, kind)| {
            listed
                .custom_attributes
                .get(*name)
                .and_then(|found| IndexedValueType::try_from(*found).ok())
                .is_none_or(|found| found.as_str_name() != indexed_value_type_name(kind))
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ConnectError::MissingSearchAttributes {
            namespace: namespace.to_string(),
            missing,
        })
    }
}

/// `KeywordList` → `INDEXED_VALUE_TYPE_KEYWORD_LIST`, the proto enum's name.
fn indexed_value_type_name(kind: &str) -> String {
    let mut name = String::from("INDEXED_VALUE_TYPE");
    for c in kind.chars() {
        if c.is_ascii_uppercase() {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

fn register_command(namespace: &str, missing: &[(&str, &str)]) -> String {
    let names: String = missing
        .iter()
        .map(|(name, kind)| format!(" --name {name} --type {kind}"))
        .collect();
    format!("temporal operator search-attribute create --namespace {namespace}{names}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_proto_enum_names() {
        for (kind, expected) in [
            ("Keyword", IndexedValueType::Keyword),
            ("KeywordList", IndexedValueType::KeywordList),
            ("Datetime", IndexedValueType::Datetime),
        ] {
            assert_eq!(indexed_value_type_name(kind), expected.as_str_name());
        }
    }

    #[test]
    fn a_missing_search_attribute_names_the_setting_and_the_command() {
        let error = ConnectError::MissingSearchAttributes {
            namespace: "prod".into(),
            missing: vec![
                ("BatonAgent", "Keyword"),
                ("BatonParticipants", "KeywordList"),
            ],
        };
        assert_eq!(
            error.to_string(),
            "temporal.search_attributes is true, but namespace \"prod\" lacks BatonAgent \
             (Keyword), BatonParticipants (KeywordList). Register them (temporal operator \
             search-attribute create --namespace prod --name BatonAgent --type Keyword --name \
             BatonParticipants --type KeywordList), or set temporal.search_attributes = false \
             (ListTasks then cannot filter)"
        );
    }

    fn file(setting: &str, path: &std::path::Path) -> PemSource {
        PemSource {
            setting: setting.to_string(),
            pem: Pem::File(path.to_path_buf()),
        }
    }

    #[test]
    fn inline_pem_is_checked_for_its_block_and_never_shown() {
        let inline = |pem: &str| PemSource {
            setting: "TEMPORAL_TLS_CLIENT_KEY_DATA".to_string(),
            pem: Pem::Inline(pem.as_bytes().to_vec()),
        };
        let key = "-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n";
        assert_eq!(
            read_pem(&inline(key), "PRIVATE KEY").unwrap(),
            key.as_bytes()
        );
        let error = read_pem(&inline("MC4C-secret"), "PRIVATE KEY").unwrap_err();
        assert_eq!(
            error.to_string(),
            "TEMPORAL_TLS_CLIENT_KEY_DATA: cannot use the PEM given inline: it holds no PEM \
             \"PRIVATE KEY\" block (expected -----BEGIN …PRIVATE KEY-----)"
        );
        assert!(!format!("{:?}", inline(key)).contains("MC4C"));
    }

    #[test]
    fn pem_files_are_checked_for_their_block() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("client.pem");
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        assert!(read_pem(&file("temporal.tls_cert", &cert), "CERTIFICATE").is_ok());
        let error = read_pem(&file("temporal.tls_key", &cert), "PRIVATE KEY").unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "temporal.tls_key: cannot use {}: it holds no PEM \"PRIVATE KEY\" block \
                 (expected -----BEGIN …PRIVATE KEY-----)",
                cert.display()
            )
        );
        let ec_key = dir.path().join("client.key");
        std::fs::write(
            &ec_key,
            "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n",
        )
        .unwrap();
        assert!(read_pem(&file("temporal.tls_key", &ec_key), "PRIVATE KEY").is_ok());
        let absent = dir.path().join("absent.pem");
        let error = read_pem(&file("temporal.tls_ca", &absent), "CERTIFICATE").unwrap_err();
        assert!(
            error.to_string().starts_with(&format!(
                "temporal.tls_ca: cannot use {}: No such file",
                absent.display()
            )),
            "{error}"
        );
    }
}
