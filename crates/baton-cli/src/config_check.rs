//! `baton config check`: loads and validates a config as a worker would, without contacting
//! anything, and prints the settings in effect, each with where its value came from (the file,
//! an environment variable, a Temporal profile, or Baton's default). Secrets print as `***`.

use std::path::Path;
use std::process::ExitCode;

use baton_config::{AuthMode, LogFormat, McpTransport, Pem, RootSampler, Settings, TemporalMode};
use toml::Table;

/// `baton config check`: exit code 0 when the config is valid; an invalid one is an error that
/// names each setting to change.
pub fn run(config: &Path) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    let file: Table = std::fs::read_to_string(config)?.parse()?;
    let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    println!("{}: valid\n", config.display());
    print!("{}", render(&effective(&settings, &file, &env)));
    Ok(ExitCode::SUCCESS)
}

/// One setting in effect: its name, its value as shown, and where the value came from.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    /// Like `temporal.address`.
    pub setting: String,
    /// The value, secrets masked.
    pub value: String,
    /// `file`, `default`, a variable's name or a Temporal profile.
    pub source: String,
}

const FILE: &str = "file";
const DEFAULT: &str = "default";
const MASKED: &str = "***";

/// The settings in effect, in the order of the reference (docs/configuration.md).
pub fn effective(
    settings: &Settings,
    file: &Table,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<Row> {
    let mut rows = Rows {
        file,
        rows: Vec::new(),
    };
    rows.file_or_default("agent.id", &settings.agent.id);
    match &settings.agent.instructions {
        Some(text) => rows.push(
            "agent.instructions",
            format!("{} bytes: {}", text.len(), first_line(text)),
            if is_set(file, "agent.instructions_file") {
                format!(
                    "file (agent.instructions_file = {})",
                    lookup_str(file, "agent.instructions_file")
                )
            } else {
                FILE.to_string()
            },
        ),
        None => rows.push("agent.instructions", "(none)", DEFAULT),
    }
    for (verb, sections) in [
        ("replace", &settings.prompt.replace),
        ("extend", &settings.prompt.extend),
    ] {
        for (name, text) in sections {
            rows.push(
                format!("prompt.{verb}.{name}"),
                format!("{} bytes", text.len()),
                FILE,
            );
        }
    }
    for agent in &settings.agents {
        rows.push(format!("agents.{}", agent.id), agent.url.to_string(), FILE);
    }
    for server in &settings.mcp {
        let reach = match &server.transport {
            McpTransport::Http { url, .. } => url.to_string(),
            stdio => stdio.describe(),
        };
        rows.push(format!("mcp.{}", server.id), reach, FILE);
    }
    let server = &settings.server;
    rows.file_or_default("server.bind", server.bind);
    match &server.base_url {
        Some(url) => rows.file_or_default("server.base_url", url),
        None => rows.push(
            "server.base_url",
            "(none: no gateway, no pushes, `self` not offered)",
            DEFAULT,
        ),
    }
    rows.file_or_default(
        "server.auth.mode",
        match server.auth.mode {
            AuthMode::Asserted => "asserted",
            AuthMode::Authenticated => "authenticated",
            AuthMode::Anonymous => "anonymous",
        },
    );
    rows.push(
        "BATON_DEPLOYMENT_SECRET",
        match (&server.auth.deployment_secret, settings.temporal.mode) {
            (Some(_), _) => MASKED,
            (None, TemporalMode::Embedded) => "(made and kept beside the embedded database)",
            (None, TemporalMode::Remote) => "(unset: required on a cluster)",
        },
        if server.auth.deployment_secret.is_some() {
            "environment"
        } else {
            DEFAULT
        },
    );

    let temporal = &settings.temporal;
    let shared = |setting: &str, rows: &Rows<'_>| {
        temporal
            .shared_sources
            .get(setting)
            .cloned()
            .unwrap_or_else(|| rows.source(setting).to_string())
    };
    let mode_source = if is_set(file, "temporal.mode") {
        FILE.to_string()
    } else if let Some(address) = temporal.shared_sources.get("temporal.address") {
        format!("{address} (a cluster chosen)")
    } else {
        DEFAULT.to_string()
    };
    rows.push("temporal.mode", temporal.mode.as_str(), mode_source);
    if temporal.mode == TemporalMode::Remote {
        let address = temporal.address.clone().unwrap_or_default();
        let source = shared("temporal.address", &rows);
        rows.push("temporal.address", address, source);
        let source = shared("temporal.namespace", &rows);
        rows.push("temporal.namespace", &temporal.namespace, source);
    } else {
        rows.file_or_default("temporal.namespace", &temporal.namespace);
    }
    rows.file_or_default("temporal.task_queue", &temporal.task_queue);
    let source = shared("temporal.tls", &rows);
    rows.push("temporal.tls", temporal.tls.to_string(), source);
    if let Some(ca) = &temporal.tls_files.ca {
        rows.push("temporal.tls_ca", pem(&ca.pem), pem_source(&ca.setting));
    }
    if let Some(client) = &temporal.tls_files.client {
        rows.push(
            "temporal.tls_cert",
            pem(&client.cert.pem),
            pem_source(&client.cert.setting),
        );
        rows.push(
            "temporal.tls_key",
            pem(&client.key.pem),
            pem_source(&client.key.setting),
        );
    }
    if let Some(name) = &temporal.tls_files.server_name {
        rows.file_or_default("temporal.tls_server_name", name);
    }
    match &temporal.api_key {
        Some(_) => {
            let source = shared("temporal.api_key", &rows);
            rows.push("temporal.api_key", MASKED, source);
        }
        None => rows.push("temporal.api_key", "(none)", DEFAULT),
    }
    for name in temporal.grpc_meta.keys() {
        let source = shared(&format!("temporal grpc metadata {name}"), &rows);
        rows.push(format!("temporal grpc metadata {name}"), MASKED, source);
    }

    let model = &settings.model;
    let base_url_source = ["BATON_MODEL_BASE_URL"]
        .into_iter()
        .find(|name| env(name).is_some())
        .map(str::to_string)
        .or_else(|| is_set(file, "model.base_url").then(|| FILE.to_string()))
        .or_else(|| env("OPENAI_BASE_URL").map(|_| "OPENAI_BASE_URL".to_string()))
        .unwrap_or_else(|| DEFAULT.to_string());
    rows.push(
        "model.base_url",
        model.base_url.to_string(),
        base_url_source,
    );
    let model_source = if env("BATON_MODEL").is_some() {
        "BATON_MODEL".to_string()
    } else {
        rows.source("model.model").to_string()
    };
    rows.push("model.model", &model.model, model_source);
    match (&model.api_key, &model.api_key_withheld) {
        (Some(_), _) => {
            let variable = ["BATON_MODEL_API_KEY", "OPENAI_API_KEY"]
                .into_iter()
                .find(|name| env(name).is_some())
                .unwrap_or("environment");
            rows.push("model.api_key", MASKED, variable);
        }
        (None, Some(why)) => rows.push("model.api_key", format!("(none: {why})"), "OPENAI_API_KEY"),
        (None, None) => rows.push("model.api_key", "(none)", DEFAULT),
    }
    rows.file_or_default("model.timeout", format!("{:?}", model.timeout));
    rows.file_or_default("model.retry_for", format!("{:?}", model.retry_for));
    rows.file_or_default("model.context_budget", model.context_budget);
    let or_none = |value: Option<String>| value.unwrap_or_else(|| "(none)".to_string());
    rows.file_or_default(
        "metrics.bind",
        or_none(settings.metrics.bind.map(|b| b.to_string())),
    );
    rows.file_or_default(
        "health.bind",
        or_none(settings.health.bind.map(|b| b.to_string())),
    );
    rows.file_or_default(
        "log.format",
        match settings.log.format {
            LogFormat::Text => "text",
            LogFormat::Json => "json",
        },
    );
    let trace_source = if is_set(file, "trace.endpoint") {
        FILE.to_string()
    } else {
        [
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ]
        .into_iter()
        .find(|name| env(name).is_some())
        .unwrap_or(DEFAULT)
        .to_string()
    };
    rows.push(
        "trace.spans_to",
        or_none(settings.trace.traces_url()),
        trace_source,
    );
    let sampler = &settings.trace.sampler;
    let root = match sampler.root {
        RootSampler::AlwaysOn => "always_on".to_string(),
        RootSampler::AlwaysOff => "always_off".to_string(),
        RootSampler::TraceIdRatio(millionths) => {
            format!("traceidratio {}", f64::from(millionths) / 1_000_000.0)
        }
    };
    let prefix = if sampler.parent_based {
        "parentbased_"
    } else {
        ""
    };
    let sampler_source = if env("OTEL_TRACES_SAMPLER").is_some() {
        "OTEL_TRACES_SAMPLER"
    } else {
        DEFAULT
    };
    rows.push("trace.sampler", format!("{prefix}{root}"), sampler_source);
    rows.rows
}

struct Rows<'a> {
    file: &'a Table,
    rows: Vec<Row>,
}

impl Rows<'_> {
    fn push(
        &mut self,
        setting: impl Into<String>,
        value: impl ToString,
        source: impl Into<String>,
    ) {
        self.rows.push(Row {
            setting: setting.into(),
            value: value.to_string(),
            source: source.into(),
        });
    }

    /// A setting the file sets or leaves to its default.
    fn file_or_default(&mut self, setting: &str, value: impl ToString) {
        let source = self.source(setting);
        self.push(setting, value, source);
    }

    fn source(&self, setting: &str) -> &'static str {
        if is_set(self.file, setting) {
            FILE
        } else {
            DEFAULT
        }
    }
}

/// Whether the dotted `path` is set in `file`.
fn is_set(file: &Table, path: &str) -> bool {
    lookup(file, path).is_some()
}

fn lookup<'a>(file: &'a Table, path: &str) -> Option<&'a toml::Value> {
    let mut keys = path.split('.');
    let mut value = file.get(keys.next()?)?;
    for key in keys {
        value = value.as_table()?.get(key)?;
    }
    Some(value)
}

fn lookup_str(file: &Table, path: &str) -> String {
    lookup(file, path)
        .and_then(toml::Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn pem(pem: &Pem) -> String {
    match pem {
        Pem::File(path) => path.display().to_string(),
        Pem::Inline(_) => "(PEM given inline)".to_string(),
    }
}

/// `file` for a `temporal.tls_*` key, else the variable or profile that gave the PEM.
fn pem_source(setting: &str) -> String {
    if setting.starts_with("temporal.") {
        FILE.to_string()
    } else {
        setting.to_string()
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    baton_core::display::one_line_capped(line, 60)
}

/// The rows as three aligned columns.
pub fn render(rows: &[Row]) -> String {
    let setting_width = rows
        .iter()
        .map(|r| r.setting.chars().count())
        .max()
        .unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|r| r.value.chars().count())
        .max()
        .unwrap_or(0)
        .min(70);
    let mut out = format!(
        "{:setting_width$}  {:value_width$}  SOURCE\n",
        "SETTING", "VALUE"
    );
    for row in rows {
        out.push_str(&format!(
            "{:setting_width$}  {:value_width$}  {}\n",
            row.setting, row.value, row.source
        ));
    }
    out
}
