//! The registry: every agent one Baton agent may delegate to (`self` and each configured agent),
//! with its validated card, refetched in the background when a fetch failed, and the roster the
//! model is shown.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use baton_config::agent_card::{agent_card, public_url};
use baton_config::{RemoteAgentSpec, Settings};
use baton_core::deployment_key::DeploymentKey;
use baton_core::display::one_line;
use baton_core::roster::{Roster, build_roster};
use baton_core::spawn_subtask::SELF_AGENT;
use futures::future::join_all;

use crate::{AgentError, CardLimits, RemoteAgent};

/// Why `self` is out of the roster of an agent without a gateway.
pub const SELF_NOT_OFFERED: &str = "`self` is not offered to the model: a sub-task on this agent \
    is created through its own gateway, which runs only with server.base_url set; set it (for \
    example to \"http://127.0.0.1:8080\") to let the model run steps on this agent";

/// How long a connection to an agent may take to open. Calls themselves are bounded by the
/// activities that make them, since a stream may rightly stay open for minutes.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The outcome of registering one agent.
pub struct AgentCheck {
    /// The agent's id (`agents[].id`, or `self`).
    pub id: String,
    /// The agent, or why it could not be registered.
    pub result: Result<RemoteAgent, AgentError>,
}

/// The first and the longest pause between two fetches of a card that could not be fetched.
const REFETCH_FIRST: Duration = Duration::from_secs(1);
const REFETCH_MOST: Duration = Duration::from_secs(60);

/// Every agent one Baton agent can delegate to: `self` and each configured agent, keyed by id.
///
/// An agent whose card could not be fetched at startup (the agent down, the network split) is
/// pending: out of the roster, fetched again in the background by [`Registry::fetch_pending`]
/// until its card validates and it joins.
pub struct Registry {
    agents: RwLock<BTreeMap<String, Arc<RemoteAgent>>>,
    pending: Mutex<BTreeMap<String, RemoteAgentSpec>>,
    /// The id this agent delegates as, for the pending agents' clients.
    participant: String,
}

impl Registry {
    /// Registers `self` and every agent of `settings`. `same_process` holds the settings of the
    /// other Baton agents this process runs: an agent at one of their public URLs gets a card
    /// built from those settings, since that agent is not listening yet.
    ///
    /// An agent whose card could not be fetched is left pending, with a WARNING. Each refused
    /// agent (its card fetched but not acceptable) is logged at ERROR; the first refusal (in id
    /// order) is returned, so startup fails naming the agent.
    pub async fn build(
        settings: &Settings,
        same_process: &[&Settings],
        deployment: &DeploymentKey,
        limits: CardLimits,
    ) -> Result<Registry, AgentError> {
        let checks = Self::check(settings, same_process, deployment, limits).await;
        let (unreachable, checks): (Vec<_>, Vec<_>) = checks
            .into_iter()
            .partition(|check| check.result.as_ref().is_err_and(AgentError::is_transient));
        let (registry, refused) = Self::from_checks(&settings.agent.id, checks);
        if let Some(first) = refused.into_iter().next() {
            return Err(first);
        }
        let mut pending = registry.lock_pending();
        for check in unreachable {
            if let Err(error) = check.result {
                tracing::warn!(
                    agent = %check.id,
                    "{}: left out of the roster for now, and fetched again in the background",
                    one_line(&error.to_string())
                );
            }
            let spec = settings
                .agents
                .iter()
                .find(|spec| spec.id == check.id)
                .expect("every check is of a configured agent or self, whose card is built");
            pending.insert(check.id, spec.clone());
        }
        drop(pending);
        Ok(registry)
    }

    /// Splits checks into a registry of the accepted agents, for an agent delegating as
    /// `participant`, and the refusals, in id order.
    pub fn from_checks(participant: &str, checks: Vec<AgentCheck>) -> (Registry, Vec<AgentError>) {
        let mut agents = BTreeMap::new();
        let mut refused = Vec::new();
        for check in checks {
            match check.result {
                Ok(agent) => {
                    agents.insert(check.id, Arc::new(agent));
                }
                Err(error) => refused.push(error),
            }
        }
        let registry = Registry {
            agents: RwLock::new(agents),
            pending: Mutex::new(BTreeMap::new()),
            participant: participant.to_string(),
        };
        (registry, refused)
    }

    /// Fetches the pending agents' cards again, with backoff from 1 s to 1 minute, until each
    /// has joined (`joined` runs after each, for the caller to rebuild what the roster feeds)
    /// or was refused (logged at ERROR; it stays out). Returns when none is left pending.
    pub async fn fetch_pending(&self, limits: CardLimits, joined: impl Fn(&str)) {
        let http = agent_http_client();
        let mut pause = REFETCH_FIRST;
        loop {
            let specs: Vec<RemoteAgentSpec> = self.lock_pending().values().cloned().collect();
            if specs.is_empty() {
                return;
            }
            tokio::time::sleep(pause).await;
            for spec in specs {
                match RemoteAgent::connect(&spec, &self.participant, &http, limits).await {
                    Ok(agent) => {
                        self.lock_pending().remove(&spec.id);
                        self.write_agents().insert(spec.id.clone(), Arc::new(agent));
                        tracing::info!(agent = %spec.id, "its card is now available: it joins the roster");
                        joined(&spec.id);
                    }
                    Err(error) if error.is_transient() => {
                        tracing::warn!(agent = %spec.id, "still unreachable, fetching again within {REFETCH_MOST:?}: {}", one_line(&error.to_string()));
                    }
                    Err(error) => {
                        self.lock_pending().remove(&spec.id);
                        tracing::error!(agent = %spec.id, code = error.code(), "{}: it stays out of the roster", one_line(&error.to_string()));
                    }
                }
            }
            pause = (pause * 2).min(REFETCH_MOST);
        }
    }

    /// Registers every agent and returns each outcome, refused ones included, sorted by id.
    /// Calls to `self` and to the agents of `same_process` prove this agent with `deployment`'s
    /// self-call token for it: one process is one deployment.
    pub async fn check(
        settings: &Settings,
        same_process: &[&Settings],
        deployment: &DeploymentKey,
        limits: CardLimits,
    ) -> Vec<AgentCheck> {
        let http = &agent_http_client();
        let participant = settings.agent.id.as_str();
        let self_call_token = &deployment.self_call_token(participant);
        let self_spec = RemoteAgentSpec::new(SELF_AGENT, public_url(settings));
        let offers_self = settings.server.base_url.is_some();
        if !offers_self {
            tracing::warn!("{SELF_NOT_OFFERED}");
        }
        let registered = offers_self
            .then_some((&self_spec, Some(settings)))
            .into_iter()
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
                        RemoteAgent::from_built_card(
                            spec,
                            &agent_card(local),
                            participant,
                            self_call_token,
                            http,
                        )
                        .await
                    }
                    None => RemoteAgent::connect(spec, participant, http, limits).await,
                };
                // A refusal is logged here; an unreachable card by the caller, which decides
                // what it means (pending at startup, a failed row in `agents check`).
                if let Err(error) = &result
                    && !error.is_transient()
                {
                    tracing::error!(agent = %spec.id, code = error.code(), "{}", one_line(&error.to_string()));
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
        self.read_agents().keys().cloned().collect()
    }

    /// The registered agent `id`; `None` when it is unknown or still pending.
    pub fn get(&self, id: &str) -> Option<Arc<RemoteAgent>> {
        self.read_agents().get(id).cloned()
    }

    /// The settings of a configured agent whose card has not been fetched yet.
    pub fn pending(&self, id: &str) -> Option<RemoteAgentSpec> {
        self.lock_pending().get(id).cloned()
    }

    /// The ids of the agents still pending, in order.
    pub fn pending_ids(&self) -> Vec<String> {
        self.lock_pending().keys().cloned().collect()
    }

    /// The roster the model sees: built at startup and again only when a pending agent joins;
    /// logs the ids at INFO and one WARNING per cut field.
    pub fn roster(&self) -> Roster {
        let entries: Vec<_> = self
            .read_agents()
            .values()
            .map(|agent| agent.roster_entry())
            .collect();
        let roster = build_roster(&entries);
        log_roster(&roster);
        roster
    }

    /// The roster of the agents `ids`, in the same text [`Registry::roster`] gave when those were
    /// the registered agents, without logging it: what a task shown that roster keeps seeing.
    /// An agent this worker is not configured for (the operator removed it) is left out. `Err`
    /// names an agent whose card this worker has not fetched yet.
    pub fn roster_of(&self, ids: &[String]) -> Result<Roster, String> {
        let pending = self.pending_ids();
        let agents = self.read_agents();
        let mut entries = Vec::with_capacity(ids.len());
        for id in ids {
            match agents.get(id) {
                Some(agent) => entries.push(agent.roster_entry()),
                None if pending.contains(id) => return Err(id.clone()),
                None => {}
            }
        }
        Ok(build_roster(&entries))
    }

    // A panic while holding a lock leaves the maps whole: read on.
    fn read_agents(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<RemoteAgent>>> {
        self.agents
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write_agents(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<RemoteAgent>>> {
        self.agents
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_pending(&self) -> MutexGuard<'_, BTreeMap<String, RemoteAgentSpec>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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

/// The client of every call to an agent, the card fetch included. It follows a redirect only
/// to the same origin, at most five, so an agent cannot send Baton (and the participant id its
/// calls assert) to another host.
pub fn agent_http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(same_origin_redirects))
        .build()
        .expect("the TLS backend is compiled in, so the client always builds")
}

fn same_origin_redirects(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let first = attempt.previous().first().map(url::Url::origin);
    if attempt.previous().len() > 5 {
        attempt.error("more than 5 redirects")
    } else if first.is_some_and(|origin| origin != attempt.url().origin()) {
        let to = attempt.url().to_string();
        attempt.error(format!(
            "a redirect to another origin ({to}) is not followed"
        ))
    } else {
        attempt.follow()
    }
}
