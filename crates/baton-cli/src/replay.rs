//! `baton replay`: replays workflow histories against this build's `TaskWorkflow` and
//! `RemoteTaskWorkflow`. A history this build cannot replay is one its workers would fail on, so
//! run the new build over the open tasks before upgrading workers:
//!
//! - `baton replay --config FILE` fetches the histories of the agent's running workflows from
//!   its Temporal (or those `--query` selects), and `--save DIR` keeps them as files;
//! - `baton replay FILE...` replays files saved that way.
//!
//! Exit code: 0 when every history replays, 1 when one does not, 2 when a history cannot be read.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use baton_config::Settings;
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow};
use futures::StreamExt;
use temporalio_client::{
    Client, UntypedWorkflow, WorkflowFetchHistoryOptions, WorkflowHistory, WorkflowListOptions,
};
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::history::v1::{
    History, WorkflowExecutionStartedEventAttributes,
};
use temporalio_sdk::workflow_replayer::{WorkflowReplayer, WorkflowReplayerOptions};

/// The most histories one `--config` run fetches.
const FETCH_LIMIT: usize = 1000;

/// The arguments of `baton replay`: a config to fetch histories with, or history files.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["config", "histories"])))]
pub struct ReplayArgs {
    /// Fetch the histories from this agent's Temporal.
    #[arg(long, short, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With --config: the visibility query that selects the workflows (default: the running
    /// workflows on the agent's task queue).
    #[arg(long, value_name = "QUERY", requires = "config")]
    pub query: Option<String>,
    /// With --config: also write each history to DIR/<workflow id>.json.
    #[arg(long, value_name = "DIR", requires = "config")]
    pub save: Option<PathBuf>,
    /// History files saved by --save.
    #[arg(value_name = "HISTORY", conflicts_with = "config")]
    pub histories: Vec<PathBuf>,
}

/// One history, and where it came from.
struct Source {
    name: String,
    history: History,
}

impl Source {
    fn started(&self) -> Option<&WorkflowExecutionStartedEventAttributes> {
        match self.history.events.first()?.attributes.as_ref()? {
            Attributes::WorkflowExecutionStartedEventAttributes(started) => Some(started),
            _ => None,
        }
    }

    /// Why Baton cannot replay it at all, if so.
    fn unreplayable(&self) -> Option<String> {
        let Some(started) = self.started() else {
            return Some("its first event is not WorkflowExecutionStarted".into());
        };
        match started.workflow_type.as_ref().map(|t| t.name.as_str()) {
            Some("TaskWorkflow" | "RemoteTaskWorkflow") => None,
            other => Some(format!(
                "a {} history: Baton runs only TaskWorkflow and RemoteTaskWorkflow",
                other.unwrap_or("(nameless)")
            )),
        }
    }

    /// The task queue it ran on, which workflow code reads.
    fn task_queue(&self) -> String {
        self.started()
            .and_then(|started| started.task_queue.as_ref())
            .map(|queue| queue.name.clone())
            .unwrap_or_default()
    }
}

/// `baton replay`: replays the histories `args` select, printing the outcome of each. Exit code
/// 0 when every one replays, 1 when one does not, 2 when one cannot be read.
pub async fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let sources = match &args.config {
        Some(config) => fetch(config, args.query.as_deref(), args.save.as_deref()).await?,
        None => match read_files(&args.histories) {
            Some(sources) => sources,
            None => return Ok(ExitCode::from(2)),
        },
    };
    let mut unreplayable = 0;
    for source in &sources {
        if let Some(reason) = source.unreplayable() {
            println!("unreadable {}: {reason}", source.name);
            unreplayable += 1;
        }
    }
    if unreplayable > 0 {
        return Ok(ExitCode::from(2));
    }
    let failed = replay(sources).await?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Reads every file, printing each one that is not a history; `None` if any was not.
fn read_files(paths: &[PathBuf]) -> Option<Vec<Source>> {
    let mut sources = Vec::new();
    let mut unreadable = false;
    for path in paths {
        let read = std::fs::read(path)
            .map_err(|e| format!("cannot read it: {e}"))
            .and_then(|bytes| {
                serde_json::from_slice::<History>(&bytes)
                    .map_err(|e| format!("not a history saved by `baton replay --save` ({e})"))
            });
        match read {
            Ok(history) if history.events.is_empty() => {
                println!("unreadable {}: the history has no events", path.display());
                unreadable = true;
            }
            Ok(history) => sources.push(Source {
                name: path.display().to_string(),
                history,
            }),
            Err(reason) => {
                println!("unreadable {}: {reason}", path.display());
                unreadable = true;
            }
        }
    }
    (!unreadable).then_some(sources)
}

/// The histories of the workflows `query` selects (default: the agent's running ones).
async fn fetch(
    config: &Path,
    query: Option<&str>,
    save: Option<&Path>,
) -> anyhow::Result<Vec<Source>> {
    let settings = Settings::load(config)?;
    let client = crate::temporal::join(&settings, "baton replay").await?;
    let query = query.map_or_else(
        || {
            format!(
                "TaskQueue = {:?} AND ExecutionStatus = \"Running\"",
                settings.temporal.task_queue
            )
        },
        str::to_string,
    );
    let ids = list(&client, &query).await?;
    if let Some(dir) = save {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--save: cannot create {}", dir.display()))?;
    }
    let mut sources = Vec::new();
    for id in ids {
        let events = client
            .get_workflow_handle::<UntypedWorkflow>(id.as_str())
            .fetch_history(WorkflowFetchHistoryOptions::default())
            .into_events()
            .await
            .with_context(|| format!("fetching the history of {id}"))?;
        let history = History { events };
        if let Some(dir) = save {
            let path = dir.join(format!("{}.json", file_name(&id)));
            std::fs::write(&path, serde_json::to_vec(&history)?)
                .with_context(|| format!("--save: cannot write {}", path.display()))?;
        }
        sources.push(Source { name: id, history });
    }
    println!("{} workflows match {query}", sources.len());
    Ok(sources)
}

async fn list(client: &Client, query: &str) -> anyhow::Result<Vec<String>> {
    let runs: Vec<_> = client
        .list_workflows(
            query.to_string(),
            WorkflowListOptions::builder().limit(FETCH_LIMIT).build(),
        )
        .collect()
        .await;
    let mut ids = Vec::new();
    let mut seen = HashSet::new();
    for run in runs {
        let id = run
            .with_context(|| format!("listing the workflows of {query:?}"))?
            .id()
            .to_string();
        if seen.insert(id.clone()) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// A workflow id as a file name: task ids may hold any character.
fn file_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Replays every history, printing one line each; returns how many failed.
async fn replay(sources: Vec<Source>) -> anyhow::Result<usize> {
    let mut by_queue: BTreeMap<String, Vec<Source>> = BTreeMap::new();
    for source in sources {
        by_queue
            .entry(source.task_queue())
            .or_default()
            .push(source);
    }
    let (mut replayed, mut failed) = (0, 0);
    for (task_queue, sources) in by_queue {
        let options = WorkflowReplayerOptions::new()
            .task_queue(task_queue)
            .register_workflow::<TaskWorkflow>()?
            .register_workflow::<RemoteTaskWorkflow>()?
            .build();
        let replayer = WorkflowReplayer::new(options)?;
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        let histories = sources
            .into_iter()
            .map(|s| WorkflowHistory::from(s.history));
        let results = replayer.replay_workflows(histories).await?;
        for (name, result) in names.iter().zip(results) {
            let events = result.history.events().len();
            match result.replay_failure {
                None => {
                    println!("ok {name} ({events} events)");
                    replayed += 1;
                }
                Some(failure) => {
                    println!("FAILED {name}: {failure}");
                    failed += 1;
                }
            }
        }
    }
    println!("{replayed} replayed, {failed} failed");
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_workflow_id_makes_a_safe_file_name() {
        assert_eq!(file_name("t-1.2"), "t-1.2");
        assert_eq!(file_name("t push/1"), "t_push_1");
        assert_eq!(file_name("../etc"), ".._etc");
    }
}
