//! ListTasks: the tasks of this agent's task queue that the caller takes part in, newest first,
//! read from Temporal visibility alone: each task's workflow keeps its listed view in its memo
//! (`BatonListedTask`), written with each change of state. A task without one (too large for
//! the memo, or run by a worker before it) is read with its `task` query, as is every task of
//! the page when the caller asks for history or artifacts, which the memo leaves out.
//!
//! Visibility follows the workflows by a few milliseconds, and the gateway serves a listing
//! again for up to a second ([`crate::listing_cache`]): a listing may show a task's state from
//! just before its latest change. GetTask reads the task itself.

use a2a::{A2AError, ListTasksRequest, ListTasksResponse};
use a2a_server::ServiceParams;
use baton_a2a::rendering::Contents;
use baton_core::a2a_state::from_a2a;
use baton_proto::TaskView;
use baton_proto::temporal::memo::LISTED_TASK;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use temporalio_client::{WorkflowExecution, WorkflowListOptions};

use crate::a2a_task::task_of;
use crate::extensions::task_reader;
use crate::identity::{CallerKind, caller};
use crate::listing_cache::{ListingCache, ListingKey};
use crate::tasks::Tasks;

/// Whether a listing may be one the gateway read a moment ago.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// A listing read within the last second will do: ListTasks.
    MayBeKept,
    /// Visibility is asked now: what a new task is built on.
    Now,
}

const DEFAULT_PAGE_SIZE: i32 = 50;
const MAX_PAGE_SIZE: i32 = 100;
/// The most tasks one listing reads from visibility.
const SCAN_LIMIT: usize = 1000;
/// The tasks one listing reads at once.
const CONCURRENT_READS: usize = 16;

pub async fn list_tasks(
    tasks: &Tasks,
    listings: &ListingCache,
    params: &ServiceParams,
    req: ListTasksRequest,
    freshness: Freshness,
) -> Result<ListTasksResponse, A2AError> {
    let page_size = req.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(A2AError::invalid_params(format!(
            "pageSize must be between 1 and {MAX_PAGE_SIZE} (got {page_size})"
        )));
    }
    let offset: usize = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => 0,
        Some(token) => token
            .parse()
            .map_err(|_| A2AError::invalid_params("pageToken is not one this server issued"))?,
    };
    // An anonymous caller's tasks are reached by their ids alone: none is listed to anyone.
    let caller = caller(params);
    if caller.kind == CallerKind::Anonymous {
        return Ok(empty(page_size));
    }
    let key = ListingKey {
        caller: caller.id,
        context_id: req.context_id.clone(),
        state: req.status.as_ref().map(from_a2a),
        status_after: req.status_timestamp_after,
    };
    let views = match freshness {
        Freshness::MayBeKept => {
            listings
                .listing(key.clone(), || listing(tasks, &key))
                .await?
        }
        Freshness::Now => std::sync::Arc::new(listing(tasks, &key).await?),
    };

    let total = views.len();
    let include_artifacts = req.include_artifacts == Some(true);
    let mut page: Vec<TaskView> = views
        .iter()
        .skip(offset)
        .take(page_size as usize)
        .cloned()
        .collect();

    // The memo holds neither history nor the answer: a page that shows them reads its tasks.
    // A task that cannot be read now is listed as the memo has it, without them.
    if include_artifacts || req.history_length.is_some_and(|n| n > 0) {
        page = futures::stream::iter(page)
            .map(|listed| async move {
                match read_view(tasks, &listed.task_id).await {
                    Some(full) => full,
                    None => {
                        tracing::warn!(task = %listed.task_id, "listed without its history and artifacts: the task did not answer");
                        listed
                    }
                }
            })
            .buffered(CONCURRENT_READS)
            .collect()
            .await;
    }
    let page = page
        .iter()
        .map(|view| {
            // A listing names the files of the histories it shows; GetTask sends them.
            let mut task = task_of(
                view,
                req.history_length.or(Some(0)),
                task_reader(params),
                &Contents::none(),
            );
            if !include_artifacts {
                task.artifacts = None;
            }
            task
        })
        .collect();
    let next = offset + page_size as usize;
    Ok(ListTasksResponse {
        tasks: page,
        next_page_token: if next < total {
            next.to_string()
        } else {
            String::new()
        },
        page_size,
        total_size: total as i32,
    })
}

/// The caller's tasks that `key` filters on, newest first, from visibility.
async fn listing(tasks: &Tasks, key: &ListingKey) -> Result<Vec<TaskView>, A2AError> {
    let runs: Vec<_> = tasks
        .client
        .list_workflows(
            visibility_query(tasks, key),
            WorkflowListOptions::builder().limit(SCAN_LIMIT).build(),
        )
        .collect()
        .await;
    let runs = runs.into_iter().collect::<Result<Vec<_>, _>>().map_err(|e| {
        A2AError::internal(format!(
            "listing tasks failed: {e}. If Baton's search attributes are not registered on \
             this namespace, register them (docs/gateway.md) or set temporal.search_attributes = false"
        ))
    })?;
    let (mut views, unlisted) = listed_views(runs);
    let read = read_views(tasks, unlisted).await;
    views.extend(read);
    views.retain(|view| {
        let visible = view.participants.iter().any(|p| p.id == key.caller);
        let in_context = key
            .context_id
            .as_ref()
            .is_none_or(|c| view.context_id.as_deref() == Some(c.as_str()));
        let in_state = key.state.is_none_or(|s| s == view.state);
        let recent = key.status_after.is_none_or(|after| {
            view.updated_at
                .as_deref()
                .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
                .is_some_and(|at| at.with_timezone(&Utc) > after)
        });
        visible && in_context && in_state && recent
    });
    views.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
    Ok(views)
}

/// The visibility query: by task queue, and, when tasks carry Baton's search attributes, by the
/// caller, the context and the state too, so only their tasks are read.
fn visibility_query(tasks: &Tasks, key: &ListingKey) -> String {
    let quote = |value: &str| format!("'{}'", value.replace(['\'', '\\'], ""));
    let mut query = format!(
        "WorkflowType = 'TaskWorkflow' AND TaskQueue = {}",
        quote(&tasks.config.task_queue)
    );
    if tasks.config.search_attributes {
        query += &format!(" AND BatonParticipants = {}", quote(&key.caller));
        if let Some(context) = &key.context_id {
            query += &format!(" AND A2AContextId = {}", quote(context));
        }
        if let Some(after) = key.status_after {
            // Tasks from workers before the attribute have none: the listed view's own
            // timestamp decides for them.
            let after = after.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
            query += &format!(
                " AND (A2AStatusTimestamp > {} OR A2AStatusTimestamp IS NULL)",
                quote(&after)
            );
        }
        if let Some(state) = &key.state {
            let name = serde_json::to_value(state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            query += &format!(" AND A2ATaskState = {}", quote(&name));
        }
    }
    query
}

/// The listed view of each task in its memo, and the ids of the tasks without one. A task that
/// continued as new is listed once per run, newest first: only its first run counts.
fn listed_views(runs: Vec<WorkflowExecution>) -> (Vec<TaskView>, Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    let mut listed = Vec::new();
    let mut unlisted = Vec::new();
    for run in runs {
        if !seen.insert(run.id().to_string()) {
            continue;
        }
        match run.memo().get::<TaskView>(LISTED_TASK) {
            Ok(Some(view)) if view.task_id == run.id() => listed.push(view),
            _ => unlisted.push(run.id().to_string()),
        }
    }
    (listed, unlisted)
}

/// Each task's view from its own `task` query, several at once, a bounded few; a task that
/// cannot be read (ended and gone, its worker away) is left out.
async fn read_views(tasks: &Tasks, ids: Vec<String>) -> Vec<TaskView> {
    futures::stream::iter(ids)
        .map(|id| async move { read_view(tasks, &id).await })
        .buffer_unordered(CONCURRENT_READS)
        .filter_map(|view| async move { view })
        .collect()
        .await
}

/// The task's view from its `task` query, in half the call timeout, so that a listing whose
/// tasks do not answer still answers, within the whole timeout, with what visibility holds.
async fn read_view(tasks: &Tasks, task_id: &str) -> Option<TaskView> {
    let half = tasks.config.temporal_timeout / 2;
    match tokio::time::timeout(half, tasks.view(task_id)).await {
        Ok(Ok(view)) => Some(view),
        _ => None,
    }
}

fn empty(page_size: i32) -> ListTasksResponse {
    ListTasksResponse {
        tasks: Vec::new(),
        next_page_token: String::new(),
        page_size,
        total_size: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::{MessageRole, TaskMessage, TaskState};

    fn view(state: TaskState, status_message: Option<&str>) -> TaskView {
        let mut view: TaskView = serde_json::from_value(serde_json::json!({
            "task_id": "t-1", "name": "books", "state": "TASK_STATE_WORKING",
            "sub_tasks": [{"name": "ledger", "agent": "ledger", "stand_in_id": "t-1/ledger",
                "state": "TASK_STATE_WORKING", "remote_task_id": "r-1", "resolved": false}],
            "turns": 2, "context_id": "c-1", "event_seq": 9, "goal": "balance the books",
            "participants": [{"id": "alice", "kind": "human", "role": "reporter"}],
            "updated_at": "2026-12-02T10:00:00Z", "sub_state": "awaiting-next-message"
        }))
        .unwrap();
        view.state = state;
        view.status_message = status_message.map(str::to_string);
        view.messages = (0..4)
            .map(|n| TaskMessage {
                message_id: format!("m-{n}"),
                role: if n % 2 == 0 {
                    MessageRole::User
                } else {
                    MessageRole::Agent
                },
                text: format!("message {n}"),
                attachments: Vec::new(),
            })
            .collect();
        view.last_answer = Some("message 3".into());
        view
    }

    /// What ListTasks shows of a view: no history, no artifacts.
    fn listed_task(view: &TaskView) -> a2a::Task {
        let mut task = task_of(
            view,
            Some(0),
            crate::a2a_task::Reader {
                task_extension: true,
            },
            &Contents::none(),
        );
        task.artifacts = None;
        task
    }

    #[test]
    fn a_task_listed_from_its_memo_is_the_task_its_query_lists() {
        for state in TaskState::ALL {
            for status_message in [None, Some("turn limit reached")] {
                let full = view(state, status_message);
                let from_memo = full.listed().expect("a small view is listed");
                assert_eq!(
                    serde_json::to_value(listed_task(&from_memo)).unwrap(),
                    serde_json::to_value(listed_task(&full)).unwrap(),
                    "{state:?}, {status_message:?}"
                );
            }
        }
    }
}
