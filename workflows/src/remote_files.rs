//! The files and data a sub-task made, collected into the content store once its task ended,
//! by the stand-in or, for a task that ended as it was created, by the parent.

use baton_activities::BatonActivities;
use baton_proto::{Attachment, RemoteFiles, RemoteSnapshot, RemoteTaskIn};
use temporalio_sdk::WorkflowContext;
use temporalio_workflow::WorkflowCancellationToken;

use crate::activity_failure;
use crate::policies;

/// The files and data of `task`'s artifacts, when `seen` ended it with some; and the summary
/// the parent keeps, which says what was left out and why.
pub(crate) async fn collected<W>(
    ctx: &WorkflowContext<W>,
    task: RemoteTaskIn,
    seen: &RemoteSnapshot,
    summary: &str,
) -> (Vec<Attachment>, String) {
    if !(seen.carries_files && seen.state.is_terminal()) {
        return (Vec::new(), summary.to_string());
    }
    let about = format!(
        "collect the files of {} on {}",
        task.remote_task_id, task.agent
    );
    let files = ctx
        .execute_activity(
            BatonActivities::collect_remote_files,
            task,
            policies::summarized(
                policies::collect_remote_files(&WorkflowCancellationToken::new()),
                about,
            ),
        )
        .await
        .unwrap_or_else(|error| RemoteFiles {
            attachments: Vec::new(),
            left_out: vec![format!(
                "the files could not be collected: {}",
                activity_failure::message(&error)
            )],
        });
    let summary = if files.left_out.is_empty() {
        summary.to_string()
    } else {
        format!("{summary}\n[Baton left out: {}]", files.left_out.join("; "))
    };
    (files.attachments, summary)
}
