//! `baton up CONFIG...`: every agent of the given configs in one process, each with its own task
//! queue, workers and gateway. Agents in embedded mode share one Temporal dev server, started
//! from the first embedded config's `[temporal.embedded]`; agents in remote mode connect to their
//! cluster. Agents of the process know each other's cards without fetching them. Ctrl-C or
//! SIGTERM stops everything.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use baton_config::{Settings, TemporalMode};
use baton_core::deployment_key::DeploymentKey;
use futures::future::select_all;

use crate::agent_process::{
    AgentProcess, print_addresses, raise_open_file_limit, run_until_stopped,
};
use crate::health::{self, Polling, Readiness};
use crate::metrics;
use crate::shutdown::ShutdownSignals;
use crate::temporal_client::TemporalSession;

/// `baton up`: runs the agents of `configs` in this process until a signal stops them or one of
/// them stops.
pub async fn run(configs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut all = Vec::new();
    for config in configs {
        all.push(Settings::load(config)?);
    }
    check_together(&all)?;
    crate::logging::use_format(all[0].log.format);
    let traced = all
        .iter()
        .find(|s| s.trace.endpoint.is_some())
        .unwrap_or(&all[0]);
    crate::tracing_export::start(&traced.trace, "baton")?;
    // One process is one deployment: its agents prove their calls to each other with one key,
    // kept (in embedded mode) beside the database of the dev server they share.
    let keeper = all
        .iter()
        .find(|s| s.temporal.mode == TemporalMode::Embedded)
        .unwrap_or(&all[0]);
    let deployment = crate::deployment_secret::resolve(keeper)?;
    let sessions = open_sessions(&all).await?;
    let outcome = serve(&all, &sessions, &deployment).await;
    for session in sessions.into_values() {
        session.stop().await;
    }
    outcome.map(|()| ExitCode::SUCCESS)
}

/// Refuses configs that cannot share a process: the same agent id twice, the same task queue
/// twice on one Temporal, two gateways on one address, two metrics endpoints or probe
/// listeners, two log formats, or two trace collectors.
fn check_together(all: &[Settings]) -> anyhow::Result<()> {
    metrics_bind(all)?;
    health_bind(all)?;
    trace_endpoint(all)?;
    if let Some(other) = all.iter().find(|s| s.log.format != all[0].log.format) {
        bail!(
            "log.format is {:?} in {} but {:?} in {}: one process writes one log format",
            all[0].log.format,
            source_of(&all[0]),
            other.log.format,
            source_of(other)
        );
    }
    let mut ids = BTreeMap::new();
    let mut queues = BTreeMap::new();
    let mut binds = BTreeMap::new();
    for settings in all {
        let id = &settings.agent.id;
        let source = source_of(settings);
        if let Some(first) = ids.insert(id.clone(), source.clone()) {
            bail!("agent.id {id:?} is in both {first} and {source}: each agent needs its own id");
        }
        let queue = (temporal_key(settings), settings.temporal.task_queue.clone());
        if let Some(first) = queues.insert(queue, source.clone()) {
            bail!(
                "temporal.task_queue {:?} is in both {first} and {source}: each agent needs its own task queue",
                settings.temporal.task_queue
            );
        }
        if settings.server.base_url.is_some()
            && let Some(first) = binds.insert(settings.server.bind, source.clone())
        {
            bail!(
                "server.bind {} is in both {first} and {source}: each gateway needs its own address",
                settings.server.bind
            );
        }
    }
    Ok(())
}

/// The one address the configs of a process agree to serve metrics on, if any sets one.
fn metrics_bind(all: &[Settings]) -> anyhow::Result<Option<SocketAddr>> {
    bind_of(all, "metrics.bind", "metrics endpoint", |s| s.metrics.bind)
}

/// The one address the configs of a process agree to serve the probes on, if any sets one.
fn health_bind(all: &[Settings]) -> anyhow::Result<Option<SocketAddr>> {
    bind_of(all, "health.bind", "probe listener", |s| s.health.bind)
}

/// The one collector the configs of a process agree to export traces to, if any sets one.
fn trace_endpoint(all: &[Settings]) -> anyhow::Result<()> {
    let mut set = all.iter().filter(|s| s.trace.endpoint.is_some());
    if let Some(first) = set.next()
        && let Some(other) = set.find(|s| s.trace.endpoint != first.trace.endpoint)
    {
        bail!(
            "trace.endpoint is {} in {} but {} in {}: one process exports to one collector",
            first.trace.endpoint.as_ref().map_or("", |u| u.as_str()),
            source_of(first),
            other.trace.endpoint.as_ref().map_or("", |u| u.as_str()),
            source_of(other)
        );
    }
    Ok(())
}

/// The one address every config that sets `setting` agrees on: a process serves one `what`.
fn bind_of(
    all: &[Settings],
    setting: &str,
    what: &str,
    bind: impl Fn(&Settings) -> Option<SocketAddr>,
) -> anyhow::Result<Option<SocketAddr>> {
    let mut chosen: Option<(SocketAddr, &Settings)> = None;
    for settings in all {
        let Some(bind) = bind(settings) else {
            continue;
        };
        match chosen {
            Some((first, first_settings)) if first != bind => bail!(
                "{setting} is {first} in {} but {bind} in {}: one process serves one {what}",
                source_of(first_settings),
                source_of(settings)
            ),
            Some(_) => {}
            None => chosen = Some((bind, settings)),
        }
    }
    Ok(chosen.map(|(bind, _)| bind))
}

fn source_of(settings: &Settings) -> String {
    settings
        .source
        .as_ref()
        .map_or_else(|| "(no file)".to_string(), |p| p.display().to_string())
}

/// Which Temporal a config uses: all embedded configs share one server.
fn temporal_key(settings: &Settings) -> String {
    let temporal = &settings.temporal;
    match temporal.mode {
        TemporalMode::Embedded => format!("embedded/{}", temporal.namespace),
        TemporalMode::Remote => format!(
            "{}/{}",
            temporal.address.as_deref().unwrap_or_default(),
            temporal.namespace
        ),
    }
}

/// One session per Temporal the configs use, keyed by [`temporal_key`].
async fn open_sessions(all: &[Settings]) -> anyhow::Result<BTreeMap<String, TemporalSession>> {
    let mut sessions = BTreeMap::new();
    for settings in all {
        let key = temporal_key(settings);
        if sessions.contains_key(&key) {
            continue;
        }
        match TemporalSession::open(settings).await {
            Ok(session) => {
                sessions.insert(key, session);
            }
            Err(error) => {
                for session in sessions.into_values() {
                    session.stop().await;
                }
                return Err(error).with_context(|| format!("for {}", source_of(settings)));
            }
        }
    }
    Ok(sessions)
}

async fn serve(
    all: &[Settings],
    sessions: &BTreeMap<String, TemporalSession>,
    deployment: &Arc<DeploymentKey>,
) -> anyhow::Result<()> {
    let follow_slots = all.iter().map(|s| s.temporal.follow_slots).sum();
    raise_open_file_limit(follow_slots);
    let endpoint = metrics::serve(metrics_bind(all)?)?;
    let runtime = metrics::temporal_runtime(endpoint.as_ref())?;
    let polling = Polling::default();
    let readiness = all.iter().fold(
        Readiness::default().with_workers(&polling),
        |readiness, settings| {
            let session = &sessions[&temporal_key(settings)];
            readiness.with_temporal(
                &session.client,
                &settings.temporal.namespace,
                &session.address,
            )
        },
    );
    let probes = health::serve(health_bind(all)?, &readiness).await?;
    let mut agents = Vec::new();
    for (index, settings) in all.iter().enumerate() {
        let others: Vec<&Settings> = all
            .iter()
            .enumerate()
            .filter(|(other, _)| *other != index)
            .map(|(_, s)| s)
            .collect();
        let session = &sessions[&temporal_key(settings)];
        match AgentProcess::start(
            settings,
            &session.client,
            &runtime,
            &others,
            deployment,
            &readiness,
        )
        .await
        {
            Ok(agent) => agents.push(agent),
            Err(error) => {
                for agent in agents {
                    agent.close().await;
                }
                return Err(error)
                    .with_context(|| format!("starting agent {:?}", settings.agent.id));
            }
        }
    }
    let signals = ShutdownSignals::install().context("installing the signal handlers")?;
    for settings in all {
        let session = &sessions[&temporal_key(settings)];
        let gateway = settings
            .server
            .base_url
            .as_ref()
            .map_or_else(|| "no gateway".to_string(), |url| format!("A2A at {url}"));
        println!(
            "agent {}: task queue {} on {}, {gateway}",
            settings.agent.id, settings.temporal.task_queue, session.address
        );
    }
    print_addresses(
        sessions
            .values()
            .filter_map(|session| session.ui_url.as_ref()),
        endpoint.as_ref(),
        probes.as_ref(),
    );
    println!("baton up: {} agents ready; Ctrl-C stops them", agents.len());
    tracing::info!(agents = agents.len(), "baton up ready");
    let lost = select_all(sessions.values().map(|session| Box::pin(session.lost())));
    let ran = run_until_stopped(&mut agents, signals, &polling, async { lost.await.0 }).await;
    for agent in agents {
        agent.close().await;
    }
    ran
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn settings(text: &str) -> Settings {
        Settings::parse(text, Path::new("/srv"), &|_| None).unwrap()
    }

    #[test]
    fn agents_that_can_share_a_process_pass() {
        let ledger = settings(
            "[agent]\nid = \"ledger\"\n[server]\nbind = \"127.0.0.1:8101\"\nbase_url = \"http://127.0.0.1:8101\"",
        );
        let desk = settings(
            "[agent]\nid = \"desk\"\n[server]\nbind = \"127.0.0.1:8102\"\nbase_url = \"http://127.0.0.1:8102\"",
        );
        assert!(check_together(&[ledger, desk]).is_ok());
    }

    #[test]
    fn a_repeated_id_queue_or_bind_is_refused_with_the_setting() {
        let one = "[agent]\nid = \"ledger\"\n[server]\nbind = \"127.0.0.1:8101\"\nbase_url = \"http://127.0.0.1:8101\"";
        let error = check_together(&[settings(one), settings(one)]).unwrap_err();
        assert!(error.to_string().contains("agent.id \"ledger\""), "{error}");

        let same_queue = "[agent]\nid = \"other\"\n[temporal]\ntask_queue = \"ledger\"";
        let error = check_together(&[settings(one), settings(same_queue)]).unwrap_err();
        assert!(
            error.to_string().contains("temporal.task_queue \"ledger\""),
            "{error}"
        );

        let same_bind = "[agent]\nid = \"other\"\n[server]\nbind = \"127.0.0.1:8101\"\nbase_url = \"http://127.0.0.1:8101\"";
        let error = check_together(&[settings(one), settings(same_bind)]).unwrap_err();
        assert!(
            error.to_string().contains("server.bind 127.0.0.1:8101"),
            "{error}"
        );
    }

    #[test]
    fn embedded_agents_share_one_server_and_remote_ones_their_cluster() {
        let a = settings("[agent]\nid = \"a\"");
        let b = settings("[agent]\nid = \"b\"");
        let c = settings(
            "[agent]\nid = \"c\"\n[temporal]\nmode = \"remote\"\naddress = \"t.example.com:7233\"",
        );
        assert_eq!(temporal_key(&a), temporal_key(&b));
        assert_ne!(temporal_key(&a), temporal_key(&c));
    }

    fn from_file(text: &str, file: &str) -> Settings {
        let mut settings = settings(text);
        settings.source = Some(file.into());
        settings
    }

    #[test]
    fn no_config_that_sets_a_bind_serves_nothing() {
        let plain = from_file("", "a.toml");
        assert_eq!(metrics_bind(&[plain.clone(), plain]).unwrap(), None);
    }

    #[test]
    fn configs_that_set_the_same_bind_or_none_share_it() {
        let with = from_file("[metrics]\nbind = \"127.0.0.1:9464\"", "a.toml");
        let without = from_file("", "b.toml");
        let same = from_file("[metrics]\nbind = \"127.0.0.1:9464\"", "c.toml");
        assert_eq!(
            metrics_bind(&[without, with, same]).unwrap(),
            Some("127.0.0.1:9464".parse().unwrap())
        );
    }

    #[test]
    fn two_different_binds_are_refused_naming_both_files() {
        let one = from_file("[metrics]\nbind = \"127.0.0.1:9464\"", "a.toml");
        let other = from_file("[metrics]\nbind = \"127.0.0.1:9465\"", "b.toml");
        let error = metrics_bind(&[one, other]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "metrics.bind is 127.0.0.1:9464 in a.toml but 127.0.0.1:9465 in b.toml: one process serves one metrics endpoint"
        );
        let one = from_file("[health]\nbind = \"127.0.0.1:8081\"", "a.toml");
        let other = from_file("[health]\nbind = \"127.0.0.1:8082\"", "b.toml");
        let error = health_bind(&[one, other]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "health.bind is 127.0.0.1:8081 in a.toml but 127.0.0.1:8082 in b.toml: one process serves one probe listener"
        );
    }

    #[test]
    fn two_log_formats_are_refused_naming_both_files() {
        let json = from_file("[agent]\nid = \"a\"\n[log]\nformat = \"json\"", "a.toml");
        let text = from_file("[agent]\nid = \"b\"", "b.toml");
        let error = check_together(&[json, text]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "log.format is Json in a.toml but Text in b.toml: one process writes one log format"
        );
    }

    #[test]
    fn two_trace_collectors_are_refused_and_one_is_shared() {
        let one = "[trace]\nendpoint = \"http://otel-a:4318\"";
        let other = "[agent]\nid = \"b\"\n[trace]\nendpoint = \"http://otel-b:4318\"";
        let none = "[agent]\nid = \"c\"";
        let error =
            check_together(&[from_file(one, "a.toml"), from_file(other, "b.toml")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "trace.endpoint is http://otel-a:4318/ in a.toml but http://otel-b:4318/ in b.toml: one process exports to one collector"
        );
        let same = "[agent]\nid = \"d\"\n[trace]\nendpoint = \"http://otel-a:4318\"";
        assert!(
            check_together(&[
                from_file(one, "a.toml"),
                from_file(none, "c.toml"),
                from_file(same, "d.toml")
            ])
            .is_ok()
        );
    }
}
