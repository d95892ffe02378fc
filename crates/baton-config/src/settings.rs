//! The whole settings file: parsing, defaults, the checks across sections, and loading from disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use baton_core::system_prompt::OperatorPrompt;
use toml::Table;

use crate::agent::{self, AgentSettings};
use crate::agents::{self, RemoteAgentSpec};
use crate::card::{self, CardSettings};
use crate::content::{self, ContentSettings};
use crate::error::{ConfigError, Errors};
use crate::health::{self, HealthSettings};
use crate::log::{self, LogSettings};
use crate::mcp::{self, McpServerSpec};
use crate::metrics::{self, MetricsSettings};
use crate::model::{self, ModelSettings};
use crate::prompt::{self, PromptSettings};
use crate::server::{self, ServerSettings};
use crate::temporal::{self, TemporalSettings};
use crate::trace::{self, TraceSettings};
use crate::walk::Section;

/// Everything in `baton.toml`, with defaults filled in and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `[agent]`: this agent's id.
    pub agent: AgentSettings,
    /// `[prompt]`: the operator's changes to sections of the system prompt.
    pub prompt: PromptSettings,
    /// `agents`: the remote agents this agent may delegate to; none by default.
    pub agents: Vec<RemoteAgentSpec>,
    /// `[[mcp]]`: the servers whose tools the model is offered; none by default.
    pub mcp: Vec<McpServerSpec>,
    /// `[server]`: the A2A gateway.
    pub server: ServerSettings,
    /// `[card]`: what the agent card says.
    pub(crate) card: CardSettings,
    /// `[temporal]`: the cluster, or the embedded dev server, that runs the tasks.
    pub temporal: TemporalSettings,
    /// `[model]`: the model endpoint.
    pub model: ModelSettings,
    /// `[content]`: where files and large parts are kept, and what a message may carry.
    pub content: ContentSettings,
    /// `[metrics]`: the Prometheus endpoint, if any.
    pub metrics: MetricsSettings,
    /// `[health]`: the probe listener besides the gateway's, if any.
    pub health: HealthSettings,
    /// `[log]`: how log lines are written.
    pub log: LogSettings,
    /// `[trace]`: where spans are exported, if anywhere.
    pub trace: TraceSettings,
    /// The file these settings were loaded from, if any.
    pub source: Option<PathBuf>,
}

const SECTIONS: [&str; 13] = [
    "agent", "prompt", "agents", "mcp", "server", "card", "temporal", "model", "content",
    "metrics", "health", "log", "trace",
];

/// How errors name the text given to [`Settings::parse`].
const UNNAMED_SOURCE: &str = "baton.toml";

impl Settings {
    /// Reads the file, resolves relative paths against the file's directory, and reads
    /// secrets from the process environment.
    pub fn load(path: &Path) -> Result<Settings, ConfigError> {
        let source_name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| {
            ConfigError::whole_file(&source_name, format!("cannot read {source_name}: {error}"))
        })?;
        let env = |name: &str| std::env::var(name).ok();
        let temporal_env = std::env::vars()
            .filter(|(name, value)| name.starts_with("TEMPORAL_") && !value.is_empty())
            .collect();
        let mut settings = read(
            &source_name,
            &text,
            &directory_of(path),
            &env,
            &temporal_env,
        )?;
        settings.source = Some(path.to_path_buf());
        Ok(settings)
    }

    /// Parses `text` without touching the process environment, and the file system only to
    /// read `agent.instructions_file`: relative paths resolve against `base_dir`, and `env`
    /// looks up environment variables.
    pub fn parse(
        text: &str,
        base_dir: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, ConfigError> {
        let temporal_env = crate::temporal_shared::VARIABLES
            .iter()
            .filter_map(|name| Some((name.to_string(), env(name).filter(|v| !v.is_empty())?)))
            .collect();
        read(UNNAMED_SOURCE, text, base_dir, env, &temporal_env)
    }
}

impl Settings {
    /// Everything the operator writes into this agent's prompt: its instructions and the
    /// sections it replaces or extends.
    pub fn operator_prompt(&self) -> OperatorPrompt {
        OperatorPrompt {
            instructions: self.agent.instructions.clone(),
            replace: self.prompt.replace.clone(),
            extend: self.prompt.extend.clone(),
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::parse("", Path::new("."), &|_| None).expect("the defaults are valid settings")
    }
}

fn read(
    source_name: &str,
    text: &str,
    base_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    temporal_env: &HashMap<String, String>,
) -> Result<Settings, ConfigError> {
    let table: Table = text.parse().map_err(|error: toml::de::Error| {
        ConfigError::whole_file(source_name, error.to_string())
    })?;
    let mut errors = Errors::default();
    let root = Section::root(&table);
    root.refuse_unknown(&SECTIONS, &mut errors);
    let agent = agent::read(root.field("agent"), base_dir, &mut errors);
    let prompt = prompt::read(root.field("prompt"), &mut errors);
    let agents = agents::read(root.field("agents"), env, &mut errors);
    let mcp = mcp::read(root.field("mcp"), base_dir, env, &mut errors);
    let server = server::read(root.field("server"), env, &mut errors);
    refuse_own_id_grants(&server, &agent.id, &mut errors);
    let card = card::read(root.field("card"), &mut errors);
    let temporal = temporal::read(
        root.field("temporal"),
        &agent.id,
        base_dir,
        temporal_env,
        &mut errors,
    );
    let model = model::read(root.field("model"), env, &mut errors);
    let content = content::read(root.field("content"), &agent.id, base_dir, &mut errors);
    let metrics = metrics::read(root.field("metrics"), &mut errors);
    let health = health::read(root.field("health"), &mut errors);
    let log = log::read(root.field("log"), &mut errors);
    let trace = trace::read(root.field("trace"), env, &mut errors);
    errors.into_result(source_name)?;
    let mut mcp = mcp;
    let secrets = secret_variables(&agents, &server, &mcp);
    mcp::withhold_secrets(&mut mcp, &secrets);
    Ok(Settings {
        agent,
        prompt,
        agents,
        mcp,
        server,
        card,
        temporal,
        model,
        content,
        metrics,
        health,
        log,
        trace,
        source: None,
    })
}

/// Every environment variable that holds one of Baton's own secrets: the fixed ones, and the
/// ones the file names for agents, callers and MCP servers.
fn secret_variables(
    agents: &[RemoteAgentSpec],
    server: &ServerSettings,
    mcp: &[McpServerSpec],
) -> Vec<String> {
    let fixed = [
        crate::DEPLOYMENT_SECRET_VARIABLE,
        "BATON_MODEL_API_KEY",
        "OPENAI_API_KEY",
        "TEMPORAL_API_KEY",
    ];
    let agent_secrets =
        agents
            .iter()
            .filter_map(|agent| agent.auth.as_ref())
            .map(|auth| match auth {
                crate::AgentAuth::Bearer(secret) | crate::AgentAuth::ApiKey(secret) => {
                    secret.variable.clone()
                }
                crate::AgentAuth::ClientCredentials(client) => {
                    client.client_secret.variable.clone()
                }
            });
    let caller_secrets = server
        .auth
        .tokens
        .iter()
        .map(|grant| grant.variable.clone());
    let mcp_secrets = mcp.iter().filter_map(|server| match &server.transport {
        crate::McpTransport::Http {
            bearer: Some(bearer),
            ..
        } => Some(bearer.variable.clone()),
        _ => None,
    });
    let mut variables: Vec<String> = fixed
        .into_iter()
        .map(str::to_string)
        .chain(agent_secrets)
        .chain(caller_secrets)
        .chain(mcp_secrets)
        .collect();
    variables.sort_unstable();
    variables.dedup();
    variables
}

/// A credential may not make its holder this agent: the agent's own calls prove themselves with
/// the deployment secret, and its id alone trusts nothing.
fn refuse_own_id_grants(server: &ServerSettings, agent_id: &str, errors: &mut Errors) {
    for (index, grant) in server.auth.tokens.iter().enumerate() {
        if grant.participant == agent_id {
            errors.push(
                format!("server.auth.tokens[{index}].participant"),
                format!(
                    "{agent_id:?} is this agent's own id: its own calls prove themselves with {}; grant another id",
                    crate::DEPLOYMENT_SECRET_VARIABLE
                ),
            );
        }
    }
}

/// The directory relative paths in the file resolve against, made absolute so that the
/// paths stay right if the process changes directory later.
fn directory_of(path: &Path) -> PathBuf {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::path::absolute(directory).unwrap_or_else(|_| directory.to_path_buf())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::net::SocketAddr;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use url::Url;

    use super::*;
    use crate::card::CardSkill;
    use crate::secret::Secret;
    use crate::test_support::*;
    use crate::{
        ClientCertificate, EmbeddedTemporal, Pem, PemSource, SqliteSync, TemporalMode, TemporalTls,
        Updates, WorkerTuning,
    };

    fn default_auth() -> crate::AuthSettings {
        crate::AuthSettings {
            mode: crate::AuthMode::Asserted,
            tokens: vec![],
            api_key_header: "X-API-Key".into(),
            oidc: None,
            deployment_secret: None,
        }
    }

    fn file_pem(setting: &str, path: &str) -> PemSource {
        PemSource {
            setting: setting.to_string(),
            pem: Pem::File(Path::new(BASE_DIR).join(path)),
        }
    }

    #[test]
    fn an_empty_file_gives_every_default() {
        let settings = parse("").unwrap();
        assert_eq!(
            settings,
            Settings {
                agent: AgentSettings {
                    id: "baton".into(),
                    instructions: None,
                    max_delegation_depth: 8,
                },
                prompt: PromptSettings::default(),
                agents: vec![],
                mcp: vec![],
                server: ServerSettings {
                    bind: "127.0.0.1:8080".parse().unwrap(),
                    base_url: None,
                    delegators: vec![],
                    max_request_bytes: 8 * 1024 * 1024,
                    rate_limit_per_minute: 600,
                    trusted_proxies: Vec::new(),
                    allow_private_push_urls: false,
                    temporal_timeout: Duration::from_secs(10),
                    blocking_timeout: Duration::from_secs(60),
                    max_connections: 1024,
                    header_timeout: Duration::from_secs(10),
                    drain_timeout: Duration::from_secs(5),
                    max_concurrent_requests: 256,
                    max_message_parts: 64,
                    auth: default_auth(),
                },
                card: CardSettings::default(),
                temporal: TemporalSettings {
                    mode: TemporalMode::Embedded,
                    address: None,
                    namespace: "default".into(),
                    task_queue: "baton".into(),
                    tls: false,
                    tls_files: TemporalTls::default(),
                    grpc_meta: BTreeMap::new(),
                    shared_sources: BTreeMap::new(),
                    search_attributes: true,
                    api_key: None,
                    follow_slots: 1000,
                    workflow_cache: 50,
                    identity: None,
                    worker: WorkerTuning {
                        workflow_slots: None,
                        activity_slots: None,
                        workflow_pollers: None,
                        activity_pollers: None,
                        drain_grace: Duration::from_secs(10),
                        deployment: None,
                        build_id: None,
                    },
                    embedded: EmbeddedTemporal {
                        binary: "temporal".into(),
                        database: Path::new(BASE_DIR).join(".baton/baton/temporal.sqlite"),
                        port: 7233,
                        ui_port: 8233,
                        sqlite_sync: SqliteSync::Normal,
                    },
                },
                model: ModelSettings {
                    base_url: Url::parse("https://api.openai.com/v1").unwrap(),
                    model: "gpt-4.1-mini".into(),
                    api_key: None,
                    api_key_withheld: None,
                    timeout: Duration::from_secs(60),
                    retry_for: Duration::from_secs(300),
                    context_budget: 100_000,
                    images: true,
                    prices: BTreeMap::new(),
                    currency: "USD".into(),
                },
                content: ContentSettings {
                    store: crate::ContentStoreSpec::Directory(
                        Path::new(BASE_DIR).join(".baton/baton/content")
                    ),
                    retry_for: Duration::from_secs(60),
                    max_part_bytes: 5 * 1024 * 1024,
                    max_task_bytes: 50 * 1024 * 1024,
                    media_types: vec!["*/*".into()],
                    fetch_urls: false,
                    keep_for: Duration::from_secs(30 * 24 * 3600),
                },
                metrics: MetricsSettings::default(),
                health: HealthSettings::default(),
                log: LogSettings::default(),
                trace: TraceSettings::default(),
                source: None,
            }
        );
    }

    #[test]
    fn default_is_the_empty_file_read_from_the_current_directory() {
        let defaults = Settings::default();
        assert_eq!(
            defaults,
            Settings::parse("", Path::new("."), &|_| None).unwrap()
        );
        assert_eq!(
            defaults.temporal.embedded.database,
            Path::new("./.baton/baton/temporal.sqlite")
        );
    }

    const FULL: &str = r#"
[agent]
id = "front-desk"
instructions = "Answer customers' questions."
max_delegation_depth = 4

[prompt.extend]
agents = "Prefer the ledger."

[[agents]]
id = "ledger"
url = "https://ledger.example.com/a2a"
version = "1.4.0"
updates = "follow"
follow_interval = "10s"

[[agents]]
id = "notes"
url = "http://127.0.0.1:9100"

[server]
bind = "0.0.0.0:9000"
base_url = "https://desk.example.com"
delegators = ["ops-console"]

[card]
name = "Front desk"
description = "Answers questions and delegates bookkeeping."
version = "0.3.0"

[[card.skills]]
id = "triage"
name = "Triage"
description = "Routes a request to the right agent."
tags = ["routing"]
examples = ["Who can reconcile March?"]

[temporal]
mode = "remote"
address = "desk.a1b2c.tmprl.cloud:7233"
namespace = "desk.a1b2c"
task_queue = "desk"
tls = true
tls_cert = "certs/desk.pem"
tls_key = "certs/desk.key"
follow_slots = 250
workflow_cache = 200
identity = "desk-1"
activity_slots = 40
drain_grace = "30s"

[temporal.embedded]
binary = "tools/temporal"
database = "/var/lib/baton/temporal.sqlite"
port = 0
ui_port = 0
sqlite_sync = "full"

[content]
store = "s3"
bucket = "desk-files"
endpoint = "https://s3.internal.example.com"
retry_for = "2m"
max_part_bytes = 1048576
media_types = ["image/*", "text/csv"]

[model]
base_url = "https://models.example.com/v1"
model = "gpt-4.1"
timeout = "1m30s"
currency = "EUR"

[model.prices]
"gpt-4.1" = { input = 2, output = 8 }

[metrics]
bind = "0.0.0.0:9464"
"#;

    #[test]
    fn a_full_file_reads_every_field() {
        let settings = parse_with_env(
            FULL,
            &[("TEMPORAL_API_KEY", "tk"), ("BATON_MODEL_API_KEY", "mk")],
        )
        .unwrap();
        assert_eq!(
            settings,
            Settings {
                agent: AgentSettings {
                    id: "front-desk".into(),
                    instructions: Some("Answer customers' questions.".into()),
                    max_delegation_depth: 4,
                },
                prompt: PromptSettings {
                    replace: BTreeMap::new(),
                    extend: BTreeMap::from([("agents".into(), "Prefer the ledger.".into())]),
                },
                agents: vec![
                    RemoteAgentSpec {
                        version: Some("1.4.0".into()),
                        updates: Updates::Follow,
                        follow_interval: Duration::from_secs(10),
                        ..RemoteAgentSpec::new(
                            "ledger",
                            Url::parse("https://ledger.example.com/a2a").unwrap(),
                        )
                    },
                    RemoteAgentSpec::new("notes", Url::parse("http://127.0.0.1:9100").unwrap()),
                ],
                mcp: vec![],
                server: ServerSettings {
                    bind: "0.0.0.0:9000".parse::<SocketAddr>().unwrap(),
                    base_url: Some(Url::parse("https://desk.example.com").unwrap()),
                    delegators: vec!["ops-console".into()],
                    max_request_bytes: 8 * 1024 * 1024,
                    rate_limit_per_minute: 600,
                    trusted_proxies: Vec::new(),
                    allow_private_push_urls: false,
                    temporal_timeout: Duration::from_secs(10),
                    blocking_timeout: Duration::from_secs(60),
                    max_connections: 1024,
                    header_timeout: Duration::from_secs(10),
                    drain_timeout: Duration::from_secs(5),
                    max_concurrent_requests: 256,
                    max_message_parts: 64,
                    auth: default_auth(),
                },
                card: CardSettings {
                    name: Some("Front desk".into()),
                    description: Some("Answers questions and delegates bookkeeping.".into()),
                    version: Some("0.3.0".into()),
                    skills: vec![CardSkill {
                        id: "triage".into(),
                        name: "Triage".into(),
                        description: "Routes a request to the right agent.".into(),
                        tags: vec!["routing".into()],
                        examples: vec!["Who can reconcile March?".into()],
                    }],
                    grpc_url: crate::GrpcUrlForm::Origin,
                },
                temporal: TemporalSettings {
                    mode: TemporalMode::Remote,
                    address: Some("desk.a1b2c.tmprl.cloud:7233".into()),
                    namespace: "desk.a1b2c".into(),
                    task_queue: "desk".into(),
                    tls: true,
                    tls_files: TemporalTls {
                        ca: None,
                        client: Some(ClientCertificate {
                            cert: file_pem("temporal.tls_cert", "certs/desk.pem"),
                            key: file_pem("temporal.tls_key", "certs/desk.key"),
                        }),
                        server_name: None,
                    },
                    search_attributes: false,
                    api_key: Some(Secret::new("tk")),
                    grpc_meta: BTreeMap::new(),
                    shared_sources: BTreeMap::from([(
                        "temporal.api_key".to_string(),
                        "TEMPORAL_API_KEY".to_string()
                    )]),
                    follow_slots: 250,
                    workflow_cache: 200,
                    identity: Some("desk-1".into()),
                    worker: WorkerTuning {
                        workflow_slots: None,
                        activity_slots: Some(40),
                        workflow_pollers: None,
                        activity_pollers: None,
                        drain_grace: Duration::from_secs(30),
                        deployment: None,
                        build_id: None,
                    },
                    embedded: EmbeddedTemporal {
                        binary: Path::new(BASE_DIR).join("tools/temporal"),
                        database: PathBuf::from("/var/lib/baton/temporal.sqlite"),
                        port: 0,
                        ui_port: 0,
                        sqlite_sync: SqliteSync::Full,
                    },
                },
                model: ModelSettings {
                    base_url: Url::parse("https://models.example.com/v1").unwrap(),
                    model: "gpt-4.1".into(),
                    api_key: Some(Secret::new("mk")),
                    api_key_withheld: None,
                    timeout: Duration::from_secs(90),
                    retry_for: Duration::from_secs(300),
                    context_budget: 100_000,
                    images: true,
                    prices: BTreeMap::from([(
                        "gpt-4.1".to_string(),
                        crate::ModelPrice {
                            input_micros_per_million: 2_000_000,
                            output_micros_per_million: 8_000_000,
                        }
                    )]),
                    currency: "EUR".into(),
                },
                content: ContentSettings {
                    store: crate::ContentStoreSpec::S3 {
                        bucket: "desk-files".into(),
                        prefix: "baton/front-desk".into(),
                        region: "us-east-1".into(),
                        endpoint: Some("https://s3.internal.example.com".into()),
                    },
                    retry_for: Duration::from_secs(120),
                    max_part_bytes: 1024 * 1024,
                    max_task_bytes: 50 * 1024 * 1024,
                    media_types: vec!["image/*".into(), "text/csv".into()],
                    fetch_urls: false,
                    keep_for: Duration::from_secs(30 * 24 * 3600),
                },
                metrics: MetricsSettings {
                    bind: Some("0.0.0.0:9464".parse().unwrap()),
                },
                health: HealthSettings::default(),
                log: LogSettings::default(),
                trace: TraceSettings::default(),
                source: None,
            }
        );
    }

    #[test]
    fn unknown_top_level_keys_are_refused() {
        assert_only_error(
            "colour = \"red\"",
            "colour",
            "unknown setting (allowed: agent, prompt, agents, mcp, server, card, temporal, model, content, metrics, health, log, trace)",
        );
        assert_only_error(
            "[openai]\nmodel = \"gpt-4.1\"",
            "openai",
            "unknown setting (allowed: agent, prompt, agents, mcp, server, card, temporal, model, content, metrics, health, log, trace)",
        );
    }

    #[test]
    fn keys_that_are_not_bare_words_are_quoted_in_the_path() {
        assert_only_error(
            "[server]\n\"bind address\" = \"x\"",
            "server.\"bind address\"",
            "unknown setting (allowed: bind, base_url, delegators, max_request_bytes, rate_limit_per_minute, trusted_proxies, allow_private_push_urls, temporal_timeout, blocking_timeout, max_connections, header_timeout, drain_timeout, max_concurrent_requests, max_message_parts, auth)",
        );
    }

    #[test]
    fn every_error_is_reported_together() {
        let errors = errors_of(parse(
            "colour = 1\n[agent]\nid = \"Desk\"\n[server]\nbind = 80\n\
             [card]\nname = \"\"\n[temporal]\nmode = \"remote\"\napi_key = \"k\"\n\
             [model]\ntimeout = \"5\"",
        ));
        let settings: Vec<&str> = errors.iter().map(|(setting, _)| setting.as_str()).collect();
        assert_eq!(
            settings,
            [
                "colour",
                "agent.id",
                "server.bind",
                "card.name",
                "temporal.api_key",
                "temporal.address",
                "model.timeout",
            ]
        );
    }

    #[test]
    fn the_error_display_names_the_source_and_each_setting() {
        let error = parse("[agent]\nid = 1\n[server]\nbind = true").unwrap_err();
        assert_eq!(
            error.to_string(),
            "baton.toml: invalid settings\n  \
             agent.id: must be a string like \"baton\" (got an integer)\n  \
             server.bind: must be a string like \"127.0.0.1:8080\" (got a boolean)"
        );
    }

    #[test]
    fn toml_syntax_errors_name_the_line() {
        let error = parse("[agent]\nid = \"baton\n").unwrap_err();
        assert_eq!(error.source_name, "baton.toml");
        assert_eq!(error.errors.len(), 1);
        assert_eq!(error.errors[0].setting, "");
        assert!(
            error.errors[0].message.contains("line 2"),
            "{}",
            error.errors[0].message
        );
    }

    #[test]
    fn a_duplicate_key_is_a_syntax_error() {
        let error = parse("[agent]\nid = \"a\"\nid = \"b\"").unwrap_err();
        assert_eq!(error.errors[0].setting, "");
        assert!(error.errors[0].message.contains("line 3"));
    }

    #[test]
    fn the_example_in_the_configuration_reference_is_valid() {
        let reference = include_str!("../../../docs/configuration.md");
        let example = reference
            .rsplit("```toml\n")
            .next()
            .and_then(|block| block.split("```").next())
            .unwrap();
        let settings = parse(example).unwrap();
        assert_eq!(settings.agent.id, "front-desk");
        assert_eq!(settings.agents.len(), 2);
        assert_eq!(settings.card.skills.len(), 1);
        assert_eq!(
            settings.metrics.bind,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        assert_eq!(
            settings.temporal.embedded.database,
            Path::new(BASE_DIR).join(".baton/front-desk/temporal.sqlite")
        );
    }

    /// A directory of its own under the system temp directory, removed when dropped.
    struct ScratchDir(PathBuf);

    impl ScratchDir {
        fn new(name: &str) -> ScratchDir {
            let path =
                std::env::temp_dir().join(format!("baton-config-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&path).unwrap();
            ScratchDir(path)
        }
    }

    impl Drop for ScratchDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn load_resolves_paths_against_the_file_directory() {
        let dir = ScratchDir::new("load");
        let path = dir.0.join("baton.toml");
        std::fs::write(
            &path,
            "[agent]\nid = \"desk\"\n[temporal.embedded]\nbinary = \"bin/temporal\"",
        )
        .unwrap();
        let settings = Settings::load(&path).unwrap();
        assert_eq!(settings.source.as_deref(), Some(path.as_path()));
        assert_eq!(
            settings.temporal.embedded.binary,
            dir.0.join("bin/temporal")
        );
        assert_eq!(
            settings.temporal.embedded.database,
            dir.0.join(".baton/desk/temporal.sqlite")
        );
    }

    #[test]
    fn load_names_the_file_in_errors() {
        let dir = ScratchDir::new("load-errors");
        let path = dir.0.join("baton.toml");
        std::fs::write(&path, "[agent]\nid = \"Desk\"").unwrap();
        let error = Settings::load(&path).unwrap_err();
        assert_eq!(error.source_name, path.display().to_string());
        assert!(error.to_string().starts_with(&format!(
            "{}: invalid settings\n  agent.id: ",
            path.display()
        )));
    }

    #[test]
    fn load_of_a_missing_file_names_the_path() {
        let path = Path::new("/nonexistent/baton/baton.toml");
        let error = Settings::load(path).unwrap_err();
        assert_eq!(error.source_name, "/nonexistent/baton/baton.toml");
        assert_eq!(error.errors.len(), 1);
        assert_eq!(error.errors[0].setting, "");
        assert!(
            error.errors[0]
                .message
                .starts_with("cannot read /nonexistent/baton/baton.toml: "),
            "{}",
            error.errors[0].message
        );
    }

    #[test]
    fn a_relative_file_resolves_against_an_absolute_directory() {
        let directory = directory_of(Path::new("baton.toml"));
        assert!(directory.is_absolute());
        assert_eq!(directory, std::env::current_dir().unwrap());
        assert_eq!(
            directory_of(Path::new("conf/baton.toml")),
            std::env::current_dir().unwrap().join("conf")
        );
    }
}
