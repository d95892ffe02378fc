//! The task's status: recording a state (its event, its pushes, its listing and the Web UI's
//! details), delivering pushes, and the two ends, COMPLETED and FAILED.

use baton_activities::BatonActivities;
use baton_core::answer::{answer_artifacts, has_answered};
use baton_proto::temporal::memo::LISTED_TASK;
use baton_proto::temporal::search_attributes::{
    A2A_CONTEXT_ID, A2A_STATUS_TIMESTAMP, A2A_TASK_STATE,
};
use baton_proto::{PushDelivery, TaskEvent, TaskFailure, TaskState, TaskView};
use temporalio_sdk::{ApplicationFailure, WorkflowContext, WorkflowResult, WorkflowTermination};
use temporalio_workflow::WorkflowCancellationToken;

use super::TaskWorkflow;
use super::delegation::{record_delegation_ends, stop_open_sub_tasks};
use super::sweep::sweep_sub_task_contexts;
use crate::current_details::task_details;
use crate::event_time::event_time;
use crate::policies;

impl TaskWorkflow {
    pub(super) fn view(&self, task_id: &str) -> TaskView {
        TaskView {
            task_id: task_id.to_string(),
            name: self.input.name.clone(),
            state: self.durable.state,
            sub_state: self.durable.sub_state.clone(),
            status_message: self.durable.status_message.clone(),
            sub_tasks: self.durable.sub_tasks.clone(),
            last_answer: self.durable.last_answer.clone(),
            turns: self.durable.turns,
            context_id: self.input.context_id.clone(),
            messages: self.durable.messages.clone(),
            participants: self.input.participants.clone(),
            updated_at: self.durable.log.last_status_at(),
            event_seq: self.durable.log.next_seq,
            goal: self.input.goal.clone(),
            description: self.input.description.clone(),
            acceptance_criteria: self.input.acceptance_criteria.clone(),
            lifecycle: Some(self.input.lifecycle),
            model: self.input.model.clone(),
            reasoning_effort: self.input.reasoning_effort.clone(),
            parent_tasks: self.input.parent_tasks.clone(),
            earlier: self.input.earlier.clone(),
            tool_files: self.durable.tool_files.clone(),
            answer_files: self.durable.answer_files.clone(),
            usage: self.durable.usage,
        }
    }

    /// Records a status: the state, its event in the log, and a push of it to each webhook (with
    /// the task's artifacts, when the status gives its answer).
    /// Returns what the status says: its message, or the last answer once the task stops.
    pub(super) fn record_status(
        &mut self,
        now: Option<std::time::SystemTime>,
        task_id: &str,
        state: TaskState,
        sub_state: Option<String>,
        message: Option<String>,
    ) -> Option<String> {
        self.durable.state = state;
        self.durable.sub_state = sub_state.clone();
        self.durable.status_message = message.clone();
        self.durable.log.push(
            event_time(now),
            TaskEvent::Status {
                state,
                sub_state: sub_state.clone(),
                message: message.clone(),
            },
        );
        let says = message.or_else(|| {
            (state.is_terminal() || state.is_interrupted())
                .then(|| self.durable.last_answer.clone())
                .flatten()
        });
        let at = self.durable.log.last_status_at().unwrap_or_default();
        let context_id = self
            .input
            .context_id
            .clone()
            .unwrap_or_else(|| task_id.to_string());
        // Only a change that gives the answer pushes artifacts: no view is built for the rest.
        let gives_answer = has_answered(state, sub_state.as_deref());
        let artifacts = if self.durable.push_configs.is_empty() || !gives_answer {
            Vec::new()
        } else {
            answer_artifacts(&self.view(task_id))
        };
        for config in &self.durable.push_configs {
            self.durable.outbox.push(PushDelivery {
                config: config.clone(),
                task_id: task_id.to_string(),
                context_id: context_id.clone(),
                state,
                sub_state: sub_state.clone(),
                message: says.clone(),
                at: at.clone(),
                artifacts: artifacts.clone(),
            });
        }
        says
    }
}

pub(super) fn set_state(
    ctx: &WorkflowContext<TaskWorkflow>,
    state: TaskState,
    message: Option<String>,
) {
    record_state(ctx, state, None, message);
}

pub(super) fn set_sub_state(
    ctx: &WorkflowContext<TaskWorkflow>,
    state: TaskState,
    sub_state: Option<String>,
) {
    record_state(ctx, state, sub_state, None);
}

pub(super) fn record_state(
    ctx: &WorkflowContext<TaskWorkflow>,
    state: TaskState,
    sub_state: Option<String>,
    message: Option<String>,
) {
    let now = ctx.workflow_time();
    let task_id = ctx.workflow_id().to_string();
    let says = ctx.state_mut(|s| s.record_status(now, &task_id, state, sub_state.clone(), message));
    let listing = Listing::of(
        &ctx.search_attributes(),
        &ctx.state(|s| s.view(&task_id)),
        now,
    );
    if !listing.indexed.is_empty() {
        ctx.upsert_search_attributes(listing.indexed);
    }
    ctx.upsert_memo([(LISTED_TASK, listing.listed)])
        .expect("a task view always serialises");
    ctx.set_current_details(task_details(state, sub_state.as_deref(), says.as_deref()));
}

/// What a change of state tells visibility, so ListTasks can answer from it alone.
pub(super) struct Listing {
    /// The indexed state and its timestamp, for a task the gateway indexed; none otherwise.
    pub(super) indexed: Vec<temporalio_common::search_attributes::SearchAttributeUpdate>,
    /// The task's listed view; `None` removes a stale one when the view outgrew the memo.
    pub(super) listed: Option<temporalio_sdk::MemoValue>,
}

impl Listing {
    pub(super) fn of(
        attributes: &temporalio_common::search_attributes::SearchAttributes,
        view: &TaskView,
        now: Option<std::time::SystemTime>,
    ) -> Self {
        let mut indexed: Vec<_> = indexed_state(attributes, view.state).into_iter().collect();
        if let (false, Some(now)) = (indexed.is_empty(), now) {
            indexed.push(A2A_STATUS_TIMESTAMP.value_set(now.into()));
        }
        Listing {
            indexed,
            listed: view.listed().map(temporalio_sdk::MemoValue::new),
        }
    }
}

/// The update that keeps the indexed state of a task the gateway indexed for listing current;
/// none for a task it did not index.
pub(super) fn indexed_state(
    attributes: &temporalio_common::search_attributes::SearchAttributes,
    state: TaskState,
) -> Option<temporalio_common::search_attributes::SearchAttributeUpdate> {
    attributes.get(&A2A_CONTEXT_ID)?;
    let name = serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    Some(A2A_TASK_STATE.value_set(name))
}

/// Pushes the changes waiting in the outbox, in order. Delivery is at least once with bounded
/// retries; a webhook that stays down loses its pushes, never the task.
pub(super) async fn deliver_pushes(ctx: &mut WorkflowContext<TaskWorkflow>) {
    let deliveries = ctx.state_mut(|s| std::mem::take(&mut s.durable.outbox));
    let detached = WorkflowCancellationToken::new();
    for delivery in deliveries {
        let summary = format!("push {} to webhook {}", delivery.state, delivery.config.id);
        let options = policies::deliver_push(&detached, delivery.artifacts.len());
        ctx.execute_activity(
            BatonActivities::deliver_push,
            delivery,
            policies::summarized(options, summary),
        )
        .await
        .ok();
    }
}

/// Ends the task COMPLETED (its answer is its last one): its view is the workflow's result.
pub(super) async fn complete(ctx: &mut WorkflowContext<TaskWorkflow>) -> WorkflowResult<TaskView> {
    set_state(ctx, TaskState::Completed, None);
    deliver_pushes(ctx).await;
    record_delegation_ends(ctx).await;
    sweep_sub_task_contexts(ctx).await;
    let task_id = ctx.workflow_id().to_string();
    Ok(ctx.state(|s| s.view(&task_id)))
}

/// Ends the task FAILED for `reason`, its open sub-tasks cancelled first so that nothing is left
/// running. Returns the workflow's failure, so the Web UI shows it failed with the reason: the
/// caller returns it.
pub(super) async fn fail(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    reason: String,
) -> WorkflowTermination {
    stop_open_sub_tasks(ctx, &format!("the parent task failed: {reason}")).await;
    set_state(ctx, TaskState::Failed, Some(reason.clone()));
    deliver_pushes(ctx).await;
    record_delegation_ends(ctx).await;
    sweep_sub_task_contexts(ctx).await;
    let failure = TaskFailure {
        task_id: ctx.workflow_id().to_string(),
        reason: reason.clone(),
    };
    ctx.execute_local_activity(
        BatonActivities::report_task_failed,
        failure,
        policies::report_task_failed(),
    )
    .await
    .ok();
    ApplicationFailure::builder(Box::<dyn std::error::Error + Send + Sync>::from(reason))
        .type_name("task.failed".to_string())
        .non_retryable(true)
        .build()
        .into()
}
