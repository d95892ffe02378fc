//! `[temporal]`: the Temporal cluster (or embedded dev server) that runs every task.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::Ipv6Addr;
use std::path::Path;

use crate::embedded_temporal::{self, EmbeddedTemporal};
use crate::error::Errors;
use crate::secret::{Secret, explain_secret_key};
use crate::temporal_shared::{self, SharedProfile, Sourced};
use crate::temporal_tls::{self, TemporalTls};
use crate::walk::Field;
use crate::worker_tuning::{self, WorkerTuning};

/// `[temporal]`: the Temporal cluster that runs every task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemporalSettings {
    /// Embedded (the default) or remote.
    pub mode: TemporalMode,
    /// `host:port` of the frontend; set whenever `mode` is remote.
    pub address: Option<String>,
    /// The Temporal namespace; default `default`.
    pub namespace: String,
    /// Defaults to the agent id.
    pub task_queue: String,
    /// Defaults to true in remote mode, false in embedded mode.
    pub tls: bool,
    /// The CA, client certificate and server name of a TLS connection (`tls_*`).
    pub tls_files: TemporalTls,
    /// From `TEMPORAL_API_KEY` or the profile, never from the file.
    pub api_key: Option<Secret>,
    /// gRPC metadata sent on every call (`TEMPORAL_GRPC_META_*`, a profile's `grpc_meta`), by
    /// header name; values are secrets, since they often carry credentials.
    pub grpc_meta: BTreeMap<String, Secret>,
    /// The settings that came from Temporal's shared client configuration rather than the
    /// file, each with the variable or profile that gave it (`temporal.address` →
    /// `TEMPORAL_ADDRESS`).
    pub shared_sources: BTreeMap<String, String>,
    /// Whether tasks carry Baton's search attributes (A2AContextId, A2ATaskState,
    /// A2AStatusTimestamp, BatonAgent, BatonParticipants) for ListTasks. True by default in embedded mode, which registers them;
    /// on a cluster, register them first, then set it.
    pub search_attributes: bool,
    /// How many sub-tasks one worker follows at once. Each follow holds a SubscribeToTask stream
    /// for as long as its task is parked, on the task queue `<task_queue>-follow`, which has
    /// this many activity slots of its own, so follows never starve model turns.
    pub follow_slots: usize,
    /// Workflows a worker keeps in memory between their tasks. Most of a worker's memory is
    /// this cache, and a parked sub-task is two idle workflows; an evicted workflow replays from
    /// history when it wakes, which costs a fetch and a few milliseconds (docs/performance.md).
    pub workflow_cache: usize,
    /// How this agent's workers show in Temporal (the Web UI's Workers tab, `temporal
    /// task-queue describe`). Defaults to `<agent id>:<pid>@<host name>`, which tells the pods
    /// of a Deployment apart.
    pub identity: Option<String>,
    /// The task queue worker's slots, pollers and drain grace.
    pub worker: WorkerTuning,
    /// `[temporal.embedded]`: the dev server started in embedded mode.
    pub embedded: EmbeddedTemporal,
}

/// Whether Baton starts its own Temporal dev server or connects to a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TemporalMode {
    /// Baton runs a Temporal dev server of its own (`[temporal.embedded]`).
    #[default]
    Embedded,
    /// Baton connects to the cluster at `temporal.address`.
    Remote,
}

impl TemporalMode {
    const CHOICES: [(&'static str, TemporalMode); 2] = [
        ("embedded", TemporalMode::Embedded),
        ("remote", TemporalMode::Remote),
    ];

    /// The word used in `baton.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            TemporalMode::Embedded => "embedded",
            TemporalMode::Remote => "remote",
        }
    }
}

impl fmt::Display for TemporalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Besides `tls_*` (after `tls`), the worker tuning and `embedded` (last).
const KEYS: [&str; 9] = [
    "mode",
    "address",
    "namespace",
    "task_queue",
    "tls",
    "search_attributes",
    "follow_slots",
    "workflow_cache",
    "identity",
];
const API_KEY_VARIABLES: [&str; 1] = ["TEMPORAL_API_KEY"];
const ADDRESS_EXAMPLE: &str = "my-namespace.a1b2c.tmprl.cloud:7233";
const DEFAULT_NAMESPACE: &str = "default";
const DEFAULT_FOLLOW_SLOTS: usize = 1000;
const MAX_FOLLOW_SLOTS: i64 = 100_000;
const DEFAULT_WORKFLOW_CACHE: usize = 50;
const MAX_WORKFLOW_CACHE: i64 = 100_000;

pub(crate) fn read(
    field: Field<'_>,
    agent_id: &str,
    base_dir: &Path,
    temporal_env: &HashMap<String, String>,
    errors: &mut Errors,
) -> TemporalSettings {
    let section = field.section("a table like [temporal]", errors);
    let allowed: Vec<&str> = [&KEYS[..5], &temporal_tls::KEYS, &KEYS[5..]]
        .concat()
        .into_iter()
        .chain(worker_tuning::KEYS)
        .chain(["embedded"])
        .collect();
    section.refuse_unknown_explained(&allowed, explain_secret_key(&API_KEY_VARIABLES), errors);
    let mode_field = section.field("mode");
    let chosen_mode = mode_field.choice(&TemporalMode::CHOICES, errors);
    let cluster_chosen = temporal_shared::CHOOSING_VARIABLES
        .iter()
        .any(|variable| temporal_env.contains_key(*variable));
    // The shared configuration is for a cluster: it is read in remote mode, and when the file
    // does not choose a mode but the environment chooses a cluster.
    let mut shared = match chosen_mode {
        Some(TemporalMode::Embedded) => SharedProfile::default(),
        None if !cluster_chosen => SharedProfile::default(),
        _ => temporal_shared::load(temporal_env).unwrap_or_else(|error| {
            errors.push("temporal", error);
            SharedProfile::default()
        }),
    };
    let mode = chosen_mode.unwrap_or(if shared.address.is_some() {
        TemporalMode::Remote
    } else {
        TemporalMode::Embedded
    });
    let mut shared_sources = BTreeMap::new();
    let mut from_shared = |setting: &str, value: Option<Sourced<String>>| {
        value.inspect(|value| {
            shared_sources.insert(format!("temporal.{setting}"), value.source.clone());
        })
    };
    let address_field = section.field("address");
    let shared_address = from_shared(
        "address",
        shared.address.take().filter(|_| !address_field.is_set()),
    )
    .map(|address| (address.source, toml::Value::String(address.value)));
    let address = match &shared_address {
        Some((source, value)) => {
            read_address(&Field::detached(source.clone(), value), errors).map(str::to_owned)
        }
        None => read_address(&address_field, errors).map(str::to_owned),
    };
    if mode == TemporalMode::Remote && !address_field.is_set() && shared_address.is_none() {
        address_field.fail(
            errors,
            format!(
                "required when temporal.mode is \"remote\" (a host and port like \
                 {ADDRESS_EXAMPLE:?}), unless TEMPORAL_ADDRESS or a temporal.toml profile gives it"
            ),
        );
    }
    let namespace_field = section.field("namespace");
    let namespace = match namespace_field.optional_text("a string like \"default\"", errors) {
        Some(namespace) => namespace.to_owned(),
        None if namespace_field.is_set() => DEFAULT_NAMESPACE.to_owned(),
        None => from_shared("namespace", shared.namespace.take())
            .map_or(DEFAULT_NAMESPACE.to_owned(), |namespace| namespace.value),
    };
    let task_queue = section
        .field("task_queue")
        .optional_text("a string like \"baton\"", errors)
        .unwrap_or(agent_id);
    let tls_field = section.field("tls");
    let shared_tls = shared.tls.take().filter(|_| !tls_field.is_set());
    if let Some(tls) = &shared_tls {
        shared_sources.insert("temporal.tls".to_string(), tls.source.clone());
    }
    let tls = tls_field
        .boolean(errors)
        .or(shared_tls.map(|tls| tls.value))
        .unwrap_or(mode == TemporalMode::Remote);
    let api_key = shared.api_key.take().map(|key| {
        shared_sources.insert("temporal.api_key".to_string(), key.source);
        key.value
    });
    if mode == TemporalMode::Remote && api_key.is_some() && !tls {
        tls_field.fail(
            errors,
            "must be true when TEMPORAL_API_KEY is set: the key would travel in clear text",
        );
    }
    let mut tls_files = temporal_tls::read(&section, tls, base_dir, errors);
    if tls {
        temporal_tls::fill_from_shared(&mut tls_files, &mut shared, errors);
    }
    let grpc_meta = std::mem::take(&mut shared.grpc_meta)
        .into_iter()
        .map(|(name, value)| {
            shared_sources.insert(format!("temporal grpc metadata {name}"), value.source);
            (name, value.value)
        })
        .collect();
    TemporalSettings {
        mode,
        address,
        namespace,
        task_queue: task_queue.to_owned(),
        tls,
        tls_files,
        api_key,
        grpc_meta,
        shared_sources,
        search_attributes: section
            .field("search_attributes")
            .boolean(errors)
            .unwrap_or(mode == TemporalMode::Embedded),
        follow_slots: read_follow_slots(&section.field("follow_slots"), errors)
            .unwrap_or(DEFAULT_FOLLOW_SLOTS),
        workflow_cache: read_workflow_cache(&section.field("workflow_cache"), errors)
            .unwrap_or(DEFAULT_WORKFLOW_CACHE),
        identity: section
            .field("identity")
            .optional_text("a string like \"baton-worker-1\"", errors)
            .map(str::to_owned),
        worker: worker_tuning::read(&section, errors),
        embedded: embedded_temporal::read(section.field("embedded"), agent_id, base_dir, errors),
    }
}

fn read_follow_slots(field: &Field<'_>, errors: &mut Errors) -> Option<usize> {
    field.count_between("an integer like 1000", (1, MAX_FOLLOW_SLOTS), "", errors)
}

/// At least 1: the Temporal SDK cannot run a local activity (the parent's metrics) in a worker
/// that caches no workflow.
fn read_workflow_cache(field: &Field<'_>, errors: &mut Errors) -> Option<usize> {
    field.count_between("an integer like 50", (1, MAX_WORKFLOW_CACHE), "", errors)
}

/// Checked in either mode: a malformed address is a mistake even where it is not used.
fn read_address<'a>(field: &Field<'a>, errors: &mut Errors) -> Option<&'a str> {
    let address = field.string(&format!("a string like {ADDRESS_EXAMPLE:?}"), errors)?;
    if !is_host_and_port(address) {
        field.fail(
            errors,
            format!(
                "must be a host and port like {ADDRESS_EXAMPLE:?} or \"localhost:7233\", \
                 without a scheme (got {address:?})"
            ),
        );
        return None;
    }
    Some(address)
}

/// `host:port` or `[ipv6]:port`, with a port from 1 to 65535.
fn is_host_and_port(text: &str) -> bool {
    let Some((host, port)) = text.rsplit_once(':') else {
        return false;
    };
    let host_is_valid = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(ipv6) => ipv6.parse::<Ipv6Addr>().is_ok(),
        None => {
            !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        }
    };
    let port_is_valid = !port.is_empty()
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u16>().is_ok_and(|port| port != 0);
    host_is_valid && port_is_valid
}

#[cfg(test)]
mod tests {
    use super::{TemporalMode, is_host_and_port};
    use crate::secret::Secret;
    use crate::test_support::*;

    const REMOTE: &str = "[temporal]\nmode = \"remote\"\naddress = \"ns.a1b2c.tmprl.cloud:7233\"";

    #[test]
    fn defaults_are_embedded_without_tls() {
        let temporal = parse("").unwrap().temporal;
        assert_eq!(temporal.mode, TemporalMode::Embedded);
        assert_eq!(temporal.address, None);
        assert_eq!(temporal.namespace, "default");
        assert_eq!(temporal.task_queue, "baton");
        assert!(!temporal.tls);
        assert_eq!(temporal.api_key, None);
        assert_eq!(temporal.follow_slots, 1000);
        assert_eq!(temporal.workflow_cache, 50);
    }

    #[test]
    fn workflow_cache_is_a_bounded_positive_integer() {
        for (value, expected) in [("1", 1), ("1000", 1000)] {
            let temporal = parse(&format!("[temporal]\nworkflow_cache = {value}"))
                .unwrap()
                .temporal;
            assert_eq!(temporal.workflow_cache, expected);
        }
        for (value, message) in [
            ("0", "must be between 1 and 100000 (got 0)"),
            ("-1", "must be between 1 and 100000 (got -1)"),
            ("100001", "must be between 1 and 100000 (got 100001)"),
            ("1.5", "must be an integer like 50 (got a float)"),
        ] {
            assert_only_error(
                &format!("[temporal]\nworkflow_cache = {value}"),
                "temporal.workflow_cache",
                message,
            );
        }
    }

    #[test]
    fn follow_slots_is_a_positive_bounded_integer() {
        let temporal = parse("[temporal]\nfollow_slots = 5000").unwrap().temporal;
        assert_eq!(temporal.follow_slots, 5000);
        for (value, message) in [
            ("0", "must be between 1 and 100000 (got 0)"),
            ("-3", "must be between 1 and 100000 (got -3)"),
            ("100001", "must be between 1 and 100000 (got 100001)"),
            ("\"many\"", "must be an integer like 1000 (got a string)"),
        ] {
            assert_only_error(
                &format!("[temporal]\nfollow_slots = {value}"),
                "temporal.follow_slots",
                message,
            );
        }
    }

    #[test]
    fn task_queue_defaults_to_the_agent_id() {
        let settings = parse("[agent]\nid = \"ledger\"").unwrap();
        assert_eq!(settings.temporal.task_queue, "ledger");
        let settings =
            parse("[agent]\nid = \"ledger\"\n[temporal]\ntask_queue = \"books\"").unwrap();
        assert_eq!(settings.temporal.task_queue, "books");
    }

    #[test]
    fn remote_mode_reads_every_field_and_defaults_to_tls() {
        let temporal = parse(&format!("{REMOTE}\nnamespace = \"ns.a1b2c\""))
            .unwrap()
            .temporal;
        assert_eq!(temporal.mode, TemporalMode::Remote);
        assert_eq!(
            temporal.address.as_deref(),
            Some("ns.a1b2c.tmprl.cloud:7233")
        );
        assert_eq!(temporal.namespace, "ns.a1b2c");
        assert!(temporal.tls);
        let plain = parse(&format!("{REMOTE}\ntls = false")).unwrap().temporal;
        assert!(!plain.tls);
    }

    #[test]
    fn mode_words() {
        assert_eq!(TemporalMode::Embedded.to_string(), "embedded");
        assert_eq!(TemporalMode::Remote.to_string(), "remote");
        assert_only_error(
            "[temporal]\nmode = \"cloud\"",
            "temporal.mode",
            "must be \"embedded\" or \"remote\" (got \"cloud\")",
        );
    }

    #[test]
    fn remote_mode_requires_an_address() {
        assert_only_error(
            "[temporal]\nmode = \"remote\"",
            "temporal.address",
            "required when temporal.mode is \"remote\" (a host and port like \
             \"my-namespace.a1b2c.tmprl.cloud:7233\"), unless TEMPORAL_ADDRESS or a temporal.toml \
             profile gives it",
        );
    }

    #[test]
    fn embedded_mode_allows_an_address() {
        let temporal = parse("[temporal]\naddress = \"localhost:7233\"")
            .unwrap()
            .temporal;
        assert_eq!(temporal.mode, TemporalMode::Embedded);
        assert_eq!(temporal.address.as_deref(), Some("localhost:7233"));
    }

    #[test]
    fn address_must_be_host_and_port() {
        for bad in [
            "https://ns.tmprl.cloud:7233",
            "ns.tmprl.cloud",
            ":7233",
            "host:0",
            "host:+80",
        ] {
            assert_only_error(
                &format!("[temporal]\nmode = \"remote\"\naddress = {bad:?}"),
                "temporal.address",
                &format!(
                    "must be a host and port like \"my-namespace.a1b2c.tmprl.cloud:7233\" or \"localhost:7233\", \
                     without a scheme (got {bad:?})"
                ),
            );
        }
    }

    #[test]
    fn host_and_port_forms() {
        for good in [
            "localhost:7233",
            "10.0.0.5:7233",
            "[::1]:7233",
            "ns.tmprl.cloud:65535",
        ] {
            assert!(is_host_and_port(good), "{good}");
        }
        for bad in [
            "localhost",
            "[::1:7233",
            "[nope]:7233",
            "a b:1",
            "host:65536",
            "host:",
        ] {
            assert!(!is_host_and_port(bad), "{bad}");
        }
    }

    #[test]
    fn blank_namespace_and_task_queue_are_refused() {
        for key in ["namespace", "task_queue"] {
            assert_only_error(
                &format!("[temporal]\n{key} = \" \""),
                &format!("temporal.{key}"),
                "must not be blank; leave it out to keep the default",
            );
        }
    }

    #[test]
    fn tls_must_be_a_boolean() {
        assert_only_error(
            "[temporal]\ntls = \"yes\"",
            "temporal.tls",
            "must be true or false (got a string)",
        );
    }

    #[test]
    fn api_key_comes_from_the_environment() {
        let settings = parse_with_env(REMOTE, &[("TEMPORAL_API_KEY", "tk-123")]).unwrap();
        assert_eq!(settings.temporal.api_key, Some(Secret::new("tk-123")));
        assert!(!format!("{settings:?}").contains("tk-123"));
        let empty = parse_with_env(REMOTE, &[("TEMPORAL_API_KEY", "")]).unwrap();
        assert_eq!(empty.temporal.api_key, None);
    }

    #[test]
    fn api_key_in_the_file_is_refused() {
        assert_only_error(
            "[temporal]\napi_key = \"tk-123\"",
            "temporal.api_key",
            "not allowed in the settings file: the API key is read from the environment only \
             (set TEMPORAL_API_KEY)",
        );
    }

    #[test]
    fn api_key_without_tls_is_refused_in_remote_mode() {
        assert_only_error_with_env(
            &format!("{REMOTE}\ntls = false"),
            &[("TEMPORAL_API_KEY", "tk-123")],
            "temporal.tls",
            "must be true when TEMPORAL_API_KEY is set: the key would travel in clear text",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            "[temporal]\nindexing = true",
            "temporal.indexing",
            "unknown setting (allowed: mode, address, namespace, task_queue, tls, tls_ca, tls_cert, tls_key, tls_server_name, search_attributes, follow_slots, workflow_cache, identity, workflow_slots, activity_slots, workflow_pollers, activity_pollers, drain_grace, deployment, build_id, embedded)",
        );
    }

    #[test]
    fn search_attributes_default_on_in_embedded_mode_only() {
        assert!(parse("").unwrap().temporal.search_attributes);
        let remote =
            parse("[temporal]\nmode = \"remote\"\naddress = \"localhost:7233\"\ntls = false")
                .unwrap()
                .temporal;
        assert!(!remote.search_attributes);
        let chosen = parse(
            "[temporal]\nmode = \"remote\"\naddress = \"localhost:7233\"\ntls = false\nsearch_attributes = true",
        )
        .unwrap()
        .temporal;
        assert!(chosen.search_attributes);
    }

    #[test]
    fn temporal_must_be_a_table() {
        assert_only_error(
            "temporal = \"remote\"",
            "temporal",
            "must be a table like [temporal] (got a string)",
        );
        assert_only_error(
            "[temporal]\nembedded = false",
            "temporal.embedded",
            "must be a table like [temporal.embedded] (got a boolean)",
        );
    }

    // Temporal's shared client configuration

    const PROFILES: &str = r#"
[profile.default]
address = "localhost:7233"

[profile.prod]
address = "prod.a1b2c.tmprl.cloud:7233"
namespace = "prod.a1b2c"
api_key = "profile-key"

[profile.prod.tls]
server_name = "prod.internal"
client_cert_data = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
client_key_path = "/etc/baton/prod.key"

[profile.prod.grpc_meta]
x-tenant = "books"
"#;

    fn profiles() -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), PROFILES).unwrap();
        file
    }

    #[test]
    fn a_profile_chosen_by_temporal_profile_gives_the_cluster_and_the_mode() {
        let file = profiles();
        let path = file.path().to_str().unwrap();
        let temporal = parse_with_env(
            "",
            &[("TEMPORAL_CONFIG_FILE", path), ("TEMPORAL_PROFILE", "prod")],
        )
        .unwrap()
        .temporal;
        assert_eq!(temporal.mode, TemporalMode::Remote);
        assert_eq!(
            temporal.address.as_deref(),
            Some("prod.a1b2c.tmprl.cloud:7233")
        );
        assert_eq!(temporal.namespace, "prod.a1b2c");
        assert_eq!(temporal.api_key, Some(Secret::new("profile-key")));
        assert!(temporal.tls);
        assert_eq!(
            temporal.tls_files.server_name.as_deref(),
            Some("prod.internal")
        );
        let client = temporal.tls_files.client.unwrap();
        assert!(matches!(client.cert.pem, crate::Pem::Inline(_)));
        assert_eq!(
            client.key.pem,
            crate::Pem::File(std::path::PathBuf::from("/etc/baton/prod.key"))
        );
        assert_eq!(temporal.grpc_meta["x-tenant"], Secret::new("books"));
        assert_eq!(
            temporal.shared_sources["temporal.address"],
            "profile \"prod\" of temporal.toml"
        );
    }

    #[test]
    fn variables_win_over_the_profile_and_the_file_wins_over_both() {
        let file = profiles();
        let path = file.path().to_str().unwrap();
        let env = [
            ("TEMPORAL_CONFIG_FILE", path),
            ("TEMPORAL_PROFILE", "prod"),
            ("TEMPORAL_NAMESPACE", "from-env"),
            ("TEMPORAL_API_KEY", "env-key"),
        ];
        let temporal = parse_with_env("[temporal]\naddress = \"file.example.com:7233\"", &env)
            .unwrap()
            .temporal;
        assert_eq!(
            temporal.mode,
            TemporalMode::Remote,
            "the chosen profile is a cluster"
        );
        assert_eq!(temporal.address.as_deref(), Some("file.example.com:7233"));
        assert_eq!(temporal.namespace, "from-env");
        assert_eq!(temporal.api_key, Some(Secret::new("env-key")));
        assert_eq!(
            temporal.shared_sources["temporal.namespace"],
            "TEMPORAL_NAMESPACE"
        );
        assert!(!temporal.shared_sources.contains_key("temporal.address"));
    }

    #[test]
    fn temporal_address_alone_connects_to_a_cluster_and_an_embedded_file_ignores_it() {
        let env = [
            ("TEMPORAL_ADDRESS", "temporal.internal:7233"),
            ("TEMPORAL_TLS", "false"),
        ];
        let temporal = parse_with_env("", &env).unwrap().temporal;
        assert_eq!(temporal.mode, TemporalMode::Remote);
        assert_eq!(temporal.address.as_deref(), Some("temporal.internal:7233"));
        assert!(!temporal.tls, "TEMPORAL_TLS=false");
        let temporal = parse_with_env("[temporal]\nmode = \"embedded\"", &env)
            .unwrap()
            .temporal;
        assert_eq!(temporal.mode, TemporalMode::Embedded);
        assert_eq!(temporal.address, None);
        assert!(temporal.shared_sources.is_empty());
    }

    #[test]
    fn mistakes_in_the_shared_configuration_name_their_variable() {
        assert_only_error_with_env(
            "",
            &[("TEMPORAL_ADDRESS", "https://temporal.internal")],
            "TEMPORAL_ADDRESS",
            "must be a host and port like \"my-namespace.a1b2c.tmprl.cloud:7233\" or \
             \"localhost:7233\", without a scheme (got \"https://temporal.internal\")",
        );
        let file = profiles();
        let errors = errors_of(parse_with_env(
            "",
            &[
                ("TEMPORAL_CONFIG_FILE", file.path().to_str().unwrap()),
                ("TEMPORAL_PROFILE", "staging"),
            ],
        ));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].0, "temporal");
        assert!(
            errors[0].1.contains("Profile 'staging' not found"),
            "{errors:?}"
        );
        assert_only_error_with_env(
            "",
            &[
                ("TEMPORAL_ADDRESS", "temporal.internal:7233"),
                ("TEMPORAL_TLS_DISABLE_HOST_VERIFICATION", "true"),
            ],
            "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION",
            "Baton always verifies the server's certificate: leave host verification on, and set \
             temporal.tls_server_name (or TEMPORAL_TLS_SERVER_NAME) to the name the certificate \
             is for",
        );
        assert_only_error_with_env(
            "",
            &[
                ("TEMPORAL_ADDRESS", "temporal.internal:7233"),
                ("TEMPORAL_TLS_CLIENT_CERT_PATH", "/etc/c.pem"),
            ],
            "TEMPORAL_TLS_CLIENT_CERT_PATH",
            "mTLS needs both a client certificate and its key (TEMPORAL_TLS_CLIENT_CERT_* and \
             TEMPORAL_TLS_CLIENT_KEY_*, or both in the profile)",
        );
    }
}
