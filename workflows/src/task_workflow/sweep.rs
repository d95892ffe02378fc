//! The sweep a task ends with: every context it delegated into is listed on its agent and
//! whatever there has not ended is cancelled, so a task a crash or an unconfirmed cancel left
//! running below does not outlive its parent.

use baton_activities::BatonActivities;
use baton_proto::{CancelContextIn, SubTaskRow};
use temporalio_sdk::WorkflowContext;
use temporalio_workflow::WorkflowCancellationToken;

use super::TaskWorkflow;
use crate::policies;

/// Marks the histories that sweep at their end: a history written before the sweep has no
/// marker and replays without it.
pub(super) const SWEEP_AT_END: &str = "baton.sweep-sub-task-contexts";

/// Lists the context of every sub-task whose remote task was created and cancels whatever there
/// has not ended, all agents at once, best effort within the `cancel_context_tasks` bound. Runs
/// after the task's own end is recorded, so callers see the end at once.
pub(super) async fn sweep_sub_task_contexts(ctx: &mut WorkflowContext<TaskWorkflow>) {
    let contexts = ctx.state(|s| contexts_to_sweep(&s.durable.sub_tasks));
    if contexts.is_empty() || !ctx.patched(SWEEP_AT_END) {
        return;
    }
    let cleanup = WorkflowCancellationToken::new();
    let sweeps = contexts.into_iter().map(|context| {
        let summary = format!(
            "sweep the context of {} on {}",
            context.stand_in_id, context.agent
        );
        ctx.execute_activity(
            BatonActivities::cancel_context_tasks,
            context,
            policies::summarized(policies::cancel_context_tasks(&cleanup), summary),
        )
    });
    // Best effort: a failed sweep is logged by its activity and stays in its history event.
    futures::future::join_all(sweeps).await;
}

/// One sweep per row whose remote task was created (a creation that failed cleaned its context
/// when it did; an agent that answered without a task left none).
fn contexts_to_sweep(rows: &[SubTaskRow]) -> Vec<CancelContextIn> {
    rows.iter()
        .filter_map(|row| {
            let created = row.remote_task_id.as_deref().is_some_and(|id| id != "-");
            let context_id = row
                .context_id
                .clone()
                .filter(|c| created && !c.is_empty())?;
            Some(CancelContextIn {
                stand_in_id: row.stand_in_id.clone(),
                agent: row.agent.clone(),
                context_id,
                keep: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use baton_proto::TaskState;

    use super::*;

    fn row(
        stand_in_id: &str,
        remote_task_id: Option<&str>,
        context_id: Option<&str>,
    ) -> SubTaskRow {
        SubTaskRow {
            stand_in_id: stand_in_id.into(),
            name: "balance".into(),
            agent: "ledger".into(),
            remote_task_id: remote_task_id.map(Into::into),
            context_id: context_id.map(Into::into),
            state: TaskState::Completed,
            sub_state: None,
            summary: None,
            resolved: true,
            attachments: Vec::new(),
            usage: None,
        }
    }

    #[test]
    fn only_the_contexts_of_created_remote_tasks_are_swept() {
        let rows = [
            row("t.1", Some("r-1"), Some("c-1")),
            // The creation failed: its context was cleaned when it did.
            row("t.2", None, Some("c-2")),
            // The agent answered without a task.
            row("t.3", Some("-"), Some("c-3")),
            // No context to list (an empty one is no context).
            row("t.4", Some("r-4"), None),
            row("t.5", Some("r-5"), Some("")),
            row("t.6", Some("r-6"), Some("c-6")),
        ];
        let swept: Vec<(String, String, Option<String>)> = contexts_to_sweep(&rows)
            .into_iter()
            .map(|c| (c.stand_in_id, c.context_id, c.keep))
            .collect();
        assert_eq!(
            swept,
            [
                ("t.1".into(), "c-1".into(), None),
                ("t.6".into(), "c-6".into(), None)
            ]
        );
    }
}
