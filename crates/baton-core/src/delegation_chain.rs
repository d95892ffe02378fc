//! The chain of parent tasks a delegation carries, and the two bounds it sets: a task does not
//! delegate back into its own chain (A → B → A), and not deeper than the worker allows.
//!
//! A brief carries the chain in its task envelope's `parent_tasks`, root first, ending with the
//! delegating task. An entry's agent is absent for a task on the agent that reads the chain;
//! before a brief goes to another agent, each such entry is named with the sender's identity:
//! the URL of its HTTP+JSON interface, as its card publishes it. An agent is in the chain when
//! one of its card's interface URLs is an entry's agent.

use baton_proto::{ClosedAgent, TaskRef};

use crate::spawn_subtask::SELF_AGENT;

/// Error code: the agent is already in the task's chain.
pub const CYCLE: &str = "delegation.cycle";
/// Error code: the task is as deep below its root as the worker allows delegations to go.
pub const TOO_DEEP: &str = "delegation.too_deep";
/// The most parent tasks a brief may carry: a longer chain is refused at the gateway.
pub const MAX_CHAIN: usize = 64;

/// The chain a sub-task of task `task_id` (whose own chain is `chain`) is briefed with.
pub fn chain_below(chain: &[TaskRef], task_id: &str) -> Vec<TaskRef> {
    chain
        .iter()
        .cloned()
        .chain(std::iter::once(TaskRef {
            task_id: task_id.to_string(),
            agent: None,
        }))
        .collect()
}

/// `chain` as another agent reads it: each task on this agent named with `identity`.
pub fn chain_as_sent(chain: &[TaskRef], identity: &str) -> Vec<TaskRef> {
    chain
        .iter()
        .map(|task| TaskRef {
            task_id: task.task_id.clone(),
            agent: Some(task.agent.clone().unwrap_or_else(|| identity.to_string())),
        })
        .collect()
}

/// One agent of a task's roster as the bounds see it: its id, and the URLs its card publishes.
pub struct RosterAgent<'a> {
    /// Its id in the roster.
    pub id: &'a str,
    /// Its card's interface URLs (none for `self`).
    pub interfaces: Vec<&'a str>,
}

/// The agents of `roster` a task whose chain is `chain`, on the agent named `identity`, may not
/// delegate to: every one once the chain is `max_depth` deep; otherwise each agent (not `self`)
/// that is this agent or is already in the chain.
pub fn closed_agents(
    chain: &[TaskRef],
    roster: &[RosterAgent<'_>],
    identity: &str,
    max_depth: u32,
) -> Vec<ClosedAgent> {
    if chain.len() >= max_depth as usize {
        let reason = format!(
            "this task is at depth {} below its root task, as deep as this agent lets \
             delegations go (agent.max_delegation_depth is {max_depth}): do the work yourself \
             or answer with what you have",
            chain.len()
        );
        return roster
            .iter()
            .map(|agent| ClosedAgent {
                agent: agent.id.to_string(),
                code: TOO_DEEP.to_string(),
                reason: reason.clone(),
            })
            .collect();
    }
    roster
        .iter()
        .filter(|agent| agent.id != SELF_AGENT)
        .filter_map(|agent| {
            let is = |url: &str| {
                agent
                    .interfaces
                    .iter()
                    .any(|interface| same_url(interface, url))
            };
            let reason = if is(identity) {
                format!("agent {} is this agent: delegate to self instead", agent.id)
            } else {
                let task = chain
                    .iter()
                    .find(|task| task.agent.as_deref().is_some_and(is))?;
                format!(
                    "agent {} is already in this task's chain of delegations (task {} on it): \
                     delegating to it again would loop",
                    agent.id, task.task_id
                )
            };
            Some(ClosedAgent {
                agent: agent.id.to_string(),
                code: CYCLE.to_string(),
                reason,
            })
        })
        .collect()
}

/// Whether two URLs name the same place, a trailing `/` aside.
fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, agent: Option<&str>) -> TaskRef {
        TaskRef {
            task_id: id.into(),
            agent: agent.map(str::to_string),
        }
    }

    const A: &str = "https://a.example.com";
    const B: &str = "https://b.example.com/agents/b";

    fn roster() -> Vec<RosterAgent<'static>> {
        vec![
            RosterAgent {
                id: "self",
                interfaces: Vec::new(),
            },
            RosterAgent {
                id: "front",
                interfaces: vec!["https://a.example.com/", A, "https://a.example.com:443"],
            },
            RosterAgent {
                id: "ledger",
                interfaces: vec!["https://c.example.com/"],
            },
        ]
    }

    #[test]
    fn a_sub_task_is_briefed_with_the_chain_and_its_parent_and_others_read_who_each_is_on() {
        let chain = chain_below(&[task("root", Some(A))], "t-1");
        assert_eq!(chain, [task("root", Some(A)), task("t-1", None)]);
        assert_eq!(
            chain_as_sent(&chain, B),
            [task("root", Some(A)), task("t-1", Some(B))]
        );
        assert_eq!(chain_below(&[], "t-1"), [task("t-1", None)]);
    }

    #[test]
    fn an_agent_already_in_the_chain_is_closed_and_the_others_are_not() {
        // A → B: B's task may not delegate back to A, whose card B knows as `front`.
        let closed = closed_agents(&[task("root", Some(A))], &roster(), B, 8);
        assert_eq!(closed.len(), 1, "{closed:?}");
        assert_eq!(closed[0].agent, "front");
        assert_eq!(closed[0].code, CYCLE);
        assert!(
            closed[0].reason.contains("(task root on it)"),
            "{}",
            closed[0].reason
        );
        // A root task (no chain) may delegate to anyone but an entry that is itself.
        assert!(closed_agents(&[], &roster(), B, 8).is_empty());
        let closed = closed_agents(&[], &roster(), "https://a.example.com/", 8);
        assert_eq!(closed[0].agent, "front");
        assert!(closed[0].reason.contains("is this agent"));
        // Tasks of this agent's own chain (agent absent) are on self, which stays open.
        assert!(closed_agents(&[task("up", None)], &roster(), B, 8).is_empty());
    }

    #[test]
    fn a_chain_as_deep_as_allowed_closes_every_agent_self_too() {
        let chain: Vec<TaskRef> = (0..3).map(|n| task(&format!("t{n}"), None)).collect();
        assert!(closed_agents(&chain, &roster(), B, 4).is_empty());
        let closed = closed_agents(&chain, &roster(), B, 3);
        let agents: Vec<&str> = closed.iter().map(|c| c.agent.as_str()).collect();
        assert_eq!(agents, ["self", "front", "ledger"]);
        assert!(closed.iter().all(|c| c.code == TOO_DEEP));
        assert!(
            closed[0].reason.contains("at depth 3 below its root task")
                && closed[0].reason.contains("agent.max_delegation_depth is 3"),
            "{}",
            closed[0].reason
        );
    }
}
