//! `baton task show --tree`: the whole delegation tree below a task, read from Temporal. Every
//! Baton task is a `TaskWorkflow` whose id is its A2A task id, so a sub-task on any Baton agent
//! of the same Temporal namespace (this one, `self`, or another) is followed by querying the
//! workflow its row names. A sub-task elsewhere (another cluster, another kind of agent) is read
//! over A2A from the configured agent it is on, as this agent's participant: its state, answer
//! and reported usage, and, from a Baton, the sub-task rows it publishes, shown as that agent last
//! heard of them (reading further down would take being a participant there). A sub-task neither
//! reaches is shown as its parent last heard of it.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use a2a::Task;
use baton_a2a::snapshot::of_task;
use baton_a2a::{CardLimits, RemoteAgent, agent_http_client};
use baton_config::Settings;
use baton_core::spawn_subtask::SELF_AGENT;
use baton_core::usage::{money, tree_usage};
use baton_proto::temporal::{TaskWorkflow, task_workflow};
use baton_proto::{SubTaskRow, TaskState, TaskView, Usage};
use chrono::{DateTime, Utc};
use temporalio_client::{Client, WorkflowQueryOptions};

use super::render::sub_tasks_of;

/// The most levels of a tree followed below the task asked for: a chain is bounded by
/// `agent.max_delegation_depth` (at most 64) anyway.
const MAX_LEVELS: usize = 64;

/// One task of a tree, as the tree prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    /// `task <id>` for the task asked for; `<name> on <agent> [task <id>]` below it.
    pub label: String,
    /// Its state and sub-state.
    pub state: TaskState,
    pub sub_state: Option<String>,
    /// When it last changed state, when known.
    pub since: Option<SystemTime>,
    /// The model tokens its whole tree used, when known.
    pub usage: Option<Usage>,
    /// Its answer (or what its parent last heard), whose first line is printed.
    pub answer: Option<String>,
    /// Its sub-tasks.
    pub children: Vec<TreeNode>,
}

/// Where the tree is read from: Temporal, then the config's agents over A2A; and how long one
/// task's read may take (`server.temporal_timeout`: a task whose worker is down answers no
/// query).
pub struct Reader<'a> {
    pub client: &'a Client,
    pub settings: &'a Settings,
    pub timeout: Duration,
}

/// Reads the tree below task `task_id`.
pub async fn read_tree(reader: &Reader<'_>, task_id: &str) -> anyhow::Result<TreeNode> {
    let view = reader.query(task_id).await.ok_or_else(|| {
        anyhow::anyhow!(
            "no task {task_id} in this Temporal namespace, or no worker answered its query within {}s",
            reader.timeout.as_secs()
        )
    })?;
    let mut seen = HashSet::from([task_id.to_string()]);
    Ok(node_of(reader, format!("task {task_id}"), view, &mut seen, 0).await)
}

impl Reader<'_> {
    /// The task's view; none when there is no such task or it did not answer in time.
    async fn query(&self, task_id: &str) -> Option<TaskView> {
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        let query = handle.query(task_workflow::TASK, (), WorkflowQueryOptions::default());
        tokio::time::timeout(self.timeout, query).await.ok()?.ok()
    }

    /// The row's task, read with GetTask from the configured agent it is on; none for `self`,
    /// an agent not in the config, or one that does not answer in time.
    async fn get_over_a2a(&self, row: &SubTaskRow) -> Option<Task> {
        let task_id = row.remote_task_id.as_deref()?;
        let spec = self
            .settings
            .agents
            .iter()
            .find(|spec| spec.id == row.agent && spec.id != SELF_AGENT)?;
        let read = async {
            let http = agent_http_client();
            let agent =
                RemoteAgent::connect(spec, &self.settings.agent.id, &http, CardLimits::default())
                    .await
                    .ok()?;
            agent.get_task(task_id).await.ok()
        };
        tokio::time::timeout(self.timeout, read).await.ok()?
    }
}

fn node_of<'a>(
    reader: &'a Reader<'a>,
    label: String,
    view: TaskView,
    seen: &'a mut HashSet<String>,
    level: usize,
) -> futures::future::BoxFuture<'a, TreeNode> {
    Box::pin(async move {
        let mut children = Vec::with_capacity(view.sub_tasks.len());
        for row in &view.sub_tasks {
            let label = row_label(row);
            let below = match row.remote_task_id.as_deref() {
                Some(id) if level < MAX_LEVELS && seen.insert(id.to_string()) => {
                    reader.query(id).await
                }
                _ => None,
            };
            let child = match below {
                Some(view) => node_of(reader, label, view, seen, level + 1).await,
                None => match reader.get_over_a2a(row).await {
                    Some(task) => node_over_a2a(label, &task),
                    None => leaf_of(label, row),
                },
            };
            children.push(child);
        }
        TreeNode {
            label,
            state: view.state,
            sub_state: view.sub_state.clone(),
            since: view.updated_at.as_deref().and_then(parse_time),
            usage: Some(tree_usage(view.usage, &view.sub_tasks)),
            answer: view.status_message.clone().or(view.last_answer.clone()),
            children,
        }
    })
}

/// A sub-task read over A2A: as its agent shows it, with the sub-task rows a Baton publishes as
/// that agent last heard of them.
fn node_over_a2a(label: String, task: &Task) -> TreeNode {
    let seen = of_task(task);
    TreeNode {
        label,
        state: seen.state,
        sub_state: seen.sub_state,
        since: task.status.timestamp.map(SystemTime::from),
        usage: seen.usage,
        answer: seen.text,
        children: sub_tasks_of(task)
            .iter()
            .map(|row| leaf_of(row_label(row), row))
            .collect(),
    }
}

/// A sub-task no Temporal query reaches, as its parent last heard of it.
fn leaf_of(label: String, row: &SubTaskRow) -> TreeNode {
    TreeNode {
        label,
        state: row.state,
        sub_state: row.sub_state.clone(),
        since: None,
        usage: row.usage,
        answer: row.summary.clone(),
        children: Vec::new(),
    }
}

fn row_label(row: &SubTaskRow) -> String {
    match &row.remote_task_id {
        Some(id) => format!("{} on {} [task {id}]", row.name, row.agent),
        None => format!("{} on {}", row.name, row.agent),
    }
}

fn parse_time(at: &str) -> Option<SystemTime> {
    DateTime::parse_from_rfc3339(at)
        .ok()
        .map(|at| SystemTime::from(at.with_timezone(&Utc)))
}

/// How each line is written: `now` dates the states, costs are in `currency`
/// (`model.currency`).
pub struct Lines<'a> {
    pub now: SystemTime,
    pub currency: &'a str,
}

/// The tree as text, one task a line, each under its parent.
pub fn tree_text(root: &TreeNode, style: &Lines<'_>) -> String {
    let mut lines = vec![node_line(root, style)];
    push_children(&mut lines, &root.children, "", style);
    lines.join("\n")
}

fn push_children(lines: &mut Vec<String>, children: &[TreeNode], indent: &str, style: &Lines<'_>) {
    for (n, child) in children.iter().enumerate() {
        let last = n + 1 == children.len();
        let (branch, next) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        lines.push(format!("{indent}{branch}{}", node_line(child, style)));
        push_children(lines, &child.children, &format!("{indent}{next}"), style);
    }
}

/// `balance on ledger [task t-9]: COMPLETED for 2m10s, 2,001 tokens, cost 0.0035 USD: 42` (the
/// cost only where `model.prices` priced a turn of the tree).
fn node_line(node: &TreeNode, style: &Lines<'_>) -> String {
    let now = style.now;
    let mut line = format!("{}: {}", node.label, node.state.short_name());
    if let Some(sub_state) = &node.sub_state {
        line.push_str(&format!(" ({sub_state})"));
    }
    if let Some(held) = node.since.and_then(|since| now.duration_since(since).ok()) {
        line.push_str(&format!(" for {}", duration_words(held)));
    }
    if let Some(usage) = node.usage {
        line.push_str(&format!(", {} tokens", thousands(usage.tokens())));
        if usage.cost_nanos > 0 {
            line.push_str(&format!(
                ", cost {} {}",
                money(usage.cost_nanos),
                style.currency
            ));
        }
    }
    if let Some(answer) = node.answer.as_deref().and_then(|a| a.lines().next()) {
        let answer: String = answer.chars().take(80).collect();
        if !answer.trim().is_empty() {
            line.push_str(&format!(": {answer}"));
        }
    }
    line
}

/// `0s`, `42s`, `2m10s`, `3h5m`, `2d4h`: the two largest units.
fn duration_words(held: Duration) -> String {
    let secs = held.as_secs();
    let (days, hours, minutes, seconds) =
        (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, _) => format!("{minutes}m{seconds}s"),
        (0, _, _) => format!("{hours}h{minutes}m"),
        _ => format!("{days}d{hours}h"),
    }
}

/// `1234567` → `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(label: &str, state: TaskState, tokens: Option<u64>, answer: &str) -> TreeNode {
        TreeNode {
            label: label.into(),
            state,
            sub_state: None,
            since: None,
            usage: tokens.map(|t| Usage {
                input_tokens: t,
                output_tokens: 0,
                cost_nanos: t * 1_000,
            }),
            answer: Some(answer.into()),
            children: Vec::new(),
        }
    }

    #[test]
    fn a_tree_prints_each_task_under_its_parent_with_state_time_tokens_and_answer() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut root = node(
            "task t-1",
            TaskState::Completed,
            Some(6234),
            "There are 40.\nMore.",
        );
        root.since = Some(now - Duration::from_secs(130));
        let mut planner = node(
            "plan on planner [task p-1]",
            TaskState::Completed,
            Some(2001),
            "Counted.",
        );
        planner.children = vec![node(
            "count on self [task c-1]",
            TaskState::Failed,
            Some(999),
            "budget spent",
        )];
        let ledger = node("check on ledger [task l-1]", TaskState::Working, None, "");
        root.children = vec![planner, ledger];
        assert_eq!(
            tree_text(
                &root,
                &Lines {
                    now,
                    currency: "EUR"
                }
            ),
            "task t-1: COMPLETED for 2m10s, 6,234 tokens, cost 0.006234 EUR: There are 40.\n\
             ├─ plan on planner [task p-1]: COMPLETED, 2,001 tokens, cost 0.002001 EUR: Counted.\n\
             │  └─ count on self [task c-1]: FAILED, 999 tokens, cost 0.000999 EUR: budget spent\n\
             └─ check on ledger [task l-1]: WORKING"
        );
    }

    #[test]
    fn durations_and_counts_read_as_a_person_reads_them() {
        for (secs, words) in [
            (0, "0s"),
            (42, "42s"),
            (130, "2m10s"),
            (11_100, "3h5m"),
            (187_200, "2d4h"),
        ] {
            assert_eq!(duration_words(Duration::from_secs(secs)), words);
        }
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), text);
        }
    }
}
