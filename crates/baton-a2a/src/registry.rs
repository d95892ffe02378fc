use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use baton_config::{RemoteAgentSpec, Settings, Updates};
use baton_core::agent_card::{agent_card, public_url};
use baton_core::roster::{Roster, build_roster};
use baton_core::spawn_subtask::SELF_AGENT;
use futures::future::join_all;

use crate::{AgentError, CardLimits, RemoteAgent};

/// How long a connection to an agent may take to open. Calls themselves are bounded by the
/// activities that make them, since a stream may rightly stay open for minutes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The outcome of registering one agent.
pub struct AgentCheck {
    pub id: String,
    pub result: Result<RemoteAgent, AgentError>,
}

/// Every agent one Baton agent can delegate to: `self` and each configured agent, keyed by id.
pub struct Registry {
    agents: BTreeMap<String, RemoteAgent>,
}

impl Registry {
    /// Registers `self` and every agent of `settings`. `same_process` holds the settings of the
    /// other Baton agents this process runs: an agent at one of their public URLs gets a card
    /// built from those settings, since that agent is not listening yet.
    ///
    /// Each refused agent is logged at ERROR; the first refusal (in id order) is returned, so
    /// startup fails naming the agent.
    pub async fn build(
        settings: &Settings,
        same_process: &[&Settings],
        limits: CardLimits,
    ) -> Result<Registry, AgentError> {
        let (registry, refused) =
            Self::from_checks(Self::check(settings, same_process, limits).await);
        match refused.into_iter().next() {
            Some(first) => Err(first),
            None => Ok(registry),
        }
    }

    /// Splits checks into a registry of the accepted agents and the refusals, in id order.
    pub fn from_checks(checks: Vec<AgentCheck>) -> (Registry, Vec<AgentError>) {
        let mut agents = BTreeMap::new();
        let mut refused = Vec::new();
        for check in checks {
            match check.result {
                Ok(agent) => {
                    agents.insert(check.id, agent);
                }
                Err(error) => refused.push(error),
            }
        }
        (Registry { agents }, refused)
    }

    /// Registers every agent and returns each outcome, refused ones included, sorted by id.
    pub async fn check(
        settings: &Settings,
        same_process: &[&Settings],
        limits: CardLimits,
    ) -> Vec<AgentCheck> {
        let http = &http_client();
        let participant = settings.agent.id.as_str();
        let self_spec = RemoteAgentSpec {
            id: SELF_AGENT.to_string(),
            url: public_url(settings),
            version: None,
            updates: Updates::Auto,
            follow_interval: Duration::from_secs(5),
            push_safety_fetch: baton_config::DEFAULT_PUSH_SAFETY_FETCH,
            create_timeout: baton_config::DEFAULT_CREATE_TIMEOUT,
        };
        let registered = std::iter::once((&self_spec, Some(settings)))
            .chain(settings.agents.iter().map(|spec| {
                let local = same_process
                    .iter()
                    .copied()
                    .find(|other| same_url(&public_url(other), &spec.url));
                (spec, local)
            }))
            .map(|(spec, local)| async move {
                let result = match local {
                    Some(local) => {
                        RemoteAgent::from_built_card(spec, &agent_card(local), participant, http)
                            .await
                    }
                    None => RemoteAgent::connect(spec, participant, http, limits).await,
                };
                if let Err(error) = &result {
                    tracing::error!(agent = %spec.id, code = error.code(), "{error}");
                }
                AgentCheck {
                    id: spec.id.clone(),
                    result,
                }
            });
        let mut checks = join_all(registered).await;
        checks.sort_by(|a, b| a.id.cmp(&b.id));
        checks
    }

    /// The registered ids, `self` included: the only values `spawn_subtask` accepts.
    pub fn ids(&self) -> BTreeSet<String> {
        self.agents.keys().cloned().collect()
    }

    pub fn get(&self, id: &str) -> Option<&RemoteAgent> {
        self.agents.get(id)
    }

    /// The agents in id order.
    pub fn agents(&self) -> impl Iterator<Item = &RemoteAgent> {
        self.agents.values()
    }

    /// The roster the model sees, built once; logs the ids at INFO and one WARNING per cut field.
    pub fn roster(&self) -> Roster {
        let entries: Vec<_> = self
            .agents
            .values()
            .map(RemoteAgent::roster_entry)
            .collect();
        let roster = build_roster(&entries);
        log_roster(&roster);
        roster
    }
}

/// Logs what the seeds require of a roster at startup.
fn log_roster(roster: &Roster) {
    let ids = if roster.ids.is_empty() {
        "(none)".to_string()
    } else {
        roster.ids.join(", ")
    };
    tracing::info!("agents roster: {ids}");
    for cut in &roster.truncated {
        tracing::warn!(
            "agent {}: card field {} truncated in the agents roster",
            cut.agent_id,
            cut.field
        );
    }
}

fn same_url(a: &url::Url, b: &url::Url) -> bool {
    a.as_str().trim_end_matches('/') == b.as_str().trim_end_matches('/')
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .expect("the TLS backend is compiled in, so the client always builds")
}
