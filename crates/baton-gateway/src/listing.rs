//! ListTasks: the tasks of this agent's task queue that the caller takes part in, newest first,
//! read from Temporal visibility and each task's own `task` query.

use a2a::{A2AError, ListTasksRequest, ListTasksResponse};
use a2a_server::ServiceParams;
use baton_core::a2a_state::from_a2a;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use temporalio_client::WorkflowListOptions;

use crate::a2a_task::task_of;
use crate::handler::TemporalHandler;
use crate::identity::{CallerKind, caller};

const DEFAULT_PAGE_SIZE: i32 = 50;
const MAX_PAGE_SIZE: i32 = 100;
/// The most tasks one listing reads from visibility.
const SCAN_LIMIT: usize = 1000;
/// The tasks one listing reads at once.
const CONCURRENT_READS: usize = 16;

pub async fn list_tasks(
    handler: &TemporalHandler,
    params: &ServiceParams,
    req: ListTasksRequest,
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
    let Some(caller) = caller(params).filter(|c| c.kind != CallerKind::Anonymous) else {
        return Ok(empty(page_size));
    };
    let caller = caller.id;

    let query = visibility_query(handler, &caller, &req);
    let runs: Vec<_> = handler
        .client
        .list_workflows(
            query,
            WorkflowListOptions::builder().limit(SCAN_LIMIT).build(),
        )
        .collect()
        .await;
    let ids = runs
        .into_iter()
        .map(|run| run.map(|r| r.id().to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            A2AError::internal(format!(
                "listing tasks failed: {e}. If Baton's search attributes are not registered on \
                 this namespace, register them (docs/gateway.md) or set temporal.search_attributes = false"
            ))
        })?;

    // Each read is a query its worker answers on its own: several at once, a bounded few.
    let read: Vec<_> = futures::stream::iter(dedup(ids))
        .map(|id| async move { handler.view(&id).await })
        .buffer_unordered(CONCURRENT_READS)
        .collect()
        .await;
    let mut views = Vec::new();
    for view in read {
        let Ok(view) = view else {
            continue;
        };
        let visible = view.participants.iter().any(|p| p.id == caller);
        let in_context = req
            .context_id
            .as_ref()
            .is_none_or(|c| view.context_id.as_deref() == Some(c.as_str()));
        let in_state = req
            .status
            .as_ref()
            .is_none_or(|s| from_a2a(s) == view.state);
        let recent = req.status_timestamp_after.is_none_or(|after| {
            view.updated_at
                .as_deref()
                .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
                .is_some_and(|at| at.with_timezone(&Utc) > after)
        });
        if visible && in_context && in_state && recent {
            views.push(view);
        }
    }
    views.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));

    let total = views.len();
    let include_artifacts = req.include_artifacts == Some(true);
    let tasks = views
        .iter()
        .skip(offset)
        .take(page_size as usize)
        .map(|view| {
            let mut task = task_of(view, req.history_length.or(Some(0)));
            if !include_artifacts {
                task.artifacts = None;
            }
            task
        })
        .collect();
    let next = offset + page_size as usize;
    Ok(ListTasksResponse {
        tasks,
        next_page_token: if next < total {
            next.to_string()
        } else {
            String::new()
        },
        page_size,
        total_size: total as i32,
    })
}

/// The visibility query: by task queue, and, when tasks carry Baton's search attributes, by the
/// caller, the context and the state too, so only their tasks are read.
fn visibility_query(handler: &TemporalHandler, caller: &str, req: &ListTasksRequest) -> String {
    let quote = |value: &str| format!("'{}'", value.replace(['\'', '\\'], ""));
    let mut query = format!(
        "WorkflowType = 'TaskWorkflow' AND TaskQueue = {}",
        quote(&handler.config.task_queue)
    );
    if handler.config.search_attributes {
        query += &format!(" AND BatonParticipants = {}", quote(caller));
        if let Some(context) = &req.context_id {
            query += &format!(" AND A2AContextId = {}", quote(context));
        }
        if let Some(state) = &req.status {
            let name = serde_json::to_value(state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            query += &format!(" AND A2ATaskState = {}", quote(&name));
        }
    }
    query
}

/// A task that continued as new is listed once per run: keep the first of each id.
fn dedup(ids: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.into_iter()
        .filter(|id| seen.insert(id.clone()))
        .collect()
}

fn empty(page_size: i32) -> ListTasksResponse {
    ListTasksResponse {
        tasks: Vec::new(),
        next_page_token: String::new(),
        page_size,
        total_size: 0,
    }
}
