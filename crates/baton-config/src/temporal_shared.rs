//! Temporal's shared client configuration: the `TEMPORAL_*` variables and the profiles of
//! `temporal.toml` that the `temporal` CLI and every Temporal SDK read, loaded with the SDK's
//! own loader. `[temporal]` in `baton.toml` is applied over it, key by key.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use temporalio_common::envconfig::{
    ClientConfigProfile, DataSource, LoadClientConfigProfileOptions, load_client_config_profile,
};

use crate::secret::Secret;

/// The variables that choose a cluster: with one of them set, a file that does not say
/// `temporal.mode` connects to that cluster rather than starting its own.
pub(crate) const CHOOSING_VARIABLES: [&str; 3] = [
    "TEMPORAL_ADDRESS",
    "TEMPORAL_PROFILE",
    "TEMPORAL_CONFIG_FILE",
];

/// Every variable the loader reads by name; `TEMPORAL_GRPC_META_*` are read by prefix.
pub(crate) const VARIABLES: [&str; 14] = [
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
    "TEMPORAL_API_KEY",
    "TEMPORAL_PROFILE",
    "TEMPORAL_CONFIG_FILE",
    "TEMPORAL_TLS",
    "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_CLIENT_CERT_DATA",
    "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "TEMPORAL_TLS_CLIENT_KEY_DATA",
    "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "TEMPORAL_TLS_SERVER_CA_CERT_DATA",
    "TEMPORAL_TLS_SERVER_NAME",
    "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION",
];

/// A PEM file or PEM text, and the setting or variable that gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemSource {
    /// Where it was set, like `temporal.tls_ca` or `TEMPORAL_TLS_SERVER_CA_CERT_DATA`.
    pub setting: String,
    /// The PEM itself, or the file holding it.
    pub pem: Pem,
}

/// A file of PEM, or PEM given inline (`TEMPORAL_TLS_*_DATA`, a profile's `*_data`).
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    /// A file, read when Baton connects.
    File(PathBuf),
    /// The PEM text itself; a private key, so never printed.
    Inline(Vec<u8>),
}

impl std::fmt::Debug for Pem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pem::File(path) => f.debug_tuple("File").field(path).finish(),
            Pem::Inline(_) => f.write_str("Inline(***)"),
        }
    }
}

/// One profile of the shared configuration, with environment variables applied over it, and
/// where each value came from.
#[derive(Debug, Default)]
pub(crate) struct SharedProfile {
    pub address: Option<Sourced<String>>,
    pub namespace: Option<Sourced<String>>,
    pub api_key: Option<Sourced<Secret>>,
    /// Whether the profile or `TEMPORAL_TLS` turns TLS on or off.
    pub tls: Option<Sourced<bool>>,
    pub ca: Option<PemSource>,
    pub client_cert: Option<PemSource>,
    pub client_key: Option<PemSource>,
    pub server_name: Option<Sourced<String>>,
    /// Set when host verification is turned off, which Baton refuses to do.
    pub disable_host_verification: Option<String>,
    /// gRPC metadata sent on every call, by header name.
    pub grpc_meta: BTreeMap<String, Sourced<Secret>>,
}

/// A value and the variable or profile it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sourced<T> {
    pub value: T,
    pub source: String,
}

/// Loads the profile `TEMPORAL_PROFILE` names (else `default`) from the file
/// `TEMPORAL_CONFIG_FILE` names (else the CLI's own, when it exists), with the variables of
/// `env` applied over it. `Err` says what is wrong, naming the variable or the file.
pub(crate) fn load(env: &HashMap<String, String>) -> Result<SharedProfile, String> {
    let profile = load_client_config_profile(LoadClientConfigProfileOptions::default(), Some(env))
        .map_err(|error| {
            let file = env
                .get("TEMPORAL_CONFIG_FILE")
                .map_or("the temporal CLI's config file".to_string(), |path| {
                    format!("TEMPORAL_CONFIG_FILE ({path})")
                });
            format!("Temporal's shared client configuration, from {file}: {error}")
        })?;
    Ok(sourced(profile, env))
}

fn sourced(profile: ClientConfigProfile, env: &HashMap<String, String>) -> SharedProfile {
    let profile_name = env
        .get("TEMPORAL_PROFILE")
        .map_or("default", String::as_str)
        .to_string();
    let source = |variable: &str| {
        if env.contains_key(variable) {
            variable.to_string()
        } else {
            format!("profile {profile_name:?} of temporal.toml")
        }
    };
    let sourced_string = |value: Option<String>, variable: &str| {
        value
            .filter(|value| !value.is_empty())
            .map(|value| Sourced {
                value,
                source: source(variable),
            })
    };
    let mut shared = SharedProfile {
        address: sourced_string(profile.address, "TEMPORAL_ADDRESS"),
        namespace: sourced_string(profile.namespace, "TEMPORAL_NAMESPACE"),
        api_key: sourced_string(profile.api_key, "TEMPORAL_API_KEY").map(|key| Sourced {
            value: Secret::new(&key.value),
            source: key.source,
        }),
        ..SharedProfile::default()
    };
    for (name, value) in profile.grpc_meta {
        let variable = format!(
            "TEMPORAL_GRPC_META_{}",
            name.to_ascii_uppercase().replace('-', "_")
        );
        shared.grpc_meta.insert(
            name,
            Sourced {
                value: Secret::new(&value),
                source: source(&variable),
            },
        );
    }
    if let Some(tls) = profile.tls {
        shared.tls = Some(Sourced {
            value: !tls.disabled.unwrap_or(false),
            source: source("TEMPORAL_TLS"),
        });
        let pem = |data: Option<DataSource>, path_variable: &str, data_variable: &str| {
            let setting = if env.contains_key(data_variable) {
                data_variable.to_string()
            } else if env.contains_key(path_variable) {
                path_variable.to_string()
            } else {
                format!("profile {profile_name:?} of temporal.toml")
            };
            match data? {
                DataSource::Path(path) => Some(PemSource {
                    setting,
                    pem: Pem::File(PathBuf::from(path)),
                }),
                DataSource::Data(bytes) => Some(PemSource {
                    setting,
                    pem: Pem::Inline(bytes),
                }),
                _ => None,
            }
        };
        shared.ca = pem(
            tls.server_ca_cert,
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
            "TEMPORAL_TLS_SERVER_CA_CERT_DATA",
        );
        shared.client_cert = pem(
            tls.client_cert,
            "TEMPORAL_TLS_CLIENT_CERT_PATH",
            "TEMPORAL_TLS_CLIENT_CERT_DATA",
        );
        shared.client_key = pem(
            tls.client_key,
            "TEMPORAL_TLS_CLIENT_KEY_PATH",
            "TEMPORAL_TLS_CLIENT_KEY_DATA",
        );
        shared.server_name = sourced_string(tls.server_name, "TEMPORAL_TLS_SERVER_NAME");
        if tls.disable_host_verification {
            shared.disable_host_verification =
                Some(source("TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"));
        }
    }
    shared
}
