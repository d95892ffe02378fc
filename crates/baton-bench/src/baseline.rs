//! The baseline of `baton-bench delegation`: a bare Temporal parent→child→signal round trip with
//! no A2A and no model. `BenchParentWorkflow` starts `BenchChildWorkflow` (parent-close policy
//! abandon, as the stand-ins are started), the child runs one no-op activity and signals the
//! parent, and the parent completes. It is the floor a delegation is measured against: the same
//! shape of Temporal steps, with nothing else.

use temporalio_macros::{activities, workflow, workflow_methods};
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::{
    ActivityOptions, ChildWorkflowOptions, ParentClosePolicy, SyncWorkflowContext, WorkflowContext,
    WorkflowResult,
};
use temporalio_workflow::SignalWorkflowOptions;

/// The no-op activity of the baseline's child.
pub struct BenchActivities;

#[activities]
impl BenchActivities {
    #[activity(name = "bench_noop")]
    pub async fn noop(_ctx: ActivityContext, _input: ()) -> Result<(), ActivityError> {
        Ok(())
    }
}

/// The baseline's parent: starts the child, waits for its signal, completes.
#[workflow]
#[derive(Default)]
pub struct BenchParentWorkflow {
    child_done: bool,
}

#[workflow_methods]
impl BenchParentWorkflow {
    #[run(name = "BenchParentWorkflow")]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<()> {
        let parent = ctx.workflow_id().to_string();
        let options = ChildWorkflowOptions::builder()
            .workflow_id(format!("{parent}.1"))
            .parent_close_policy(ParentClosePolicy::Abandon)
            .build();
        ctx.start_child_workflow(BenchChildWorkflow::run, parent, options)
            .await?;
        ctx.wait_condition(|s: &Self| s.child_done).await?;
        Ok(())
    }

    /// The child ran its activity.
    #[signal]
    pub fn child_done(&mut self, _ctx: &mut SyncWorkflowContext<Self>) {
        self.child_done = true;
    }
}

/// The baseline's child: one no-op activity, then a signal to the parent.
#[workflow]
#[derive(Default)]
pub struct BenchChildWorkflow;

#[workflow_methods]
impl BenchChildWorkflow {
    #[run(name = "BenchChildWorkflow")]
    pub async fn run(ctx: &mut WorkflowContext<Self>, parent: String) -> WorkflowResult<()> {
        ctx.execute_activity(
            BenchActivities::noop,
            (),
            ActivityOptions::start_to_close_timeout(std::time::Duration::from_secs(30)),
        )
        .await?;
        ctx.external_workflow(parent, None)
            .signal(
                BenchParentWorkflow::child_done,
                (),
                SignalWorkflowOptions::default(),
            )
            .await?;
        Ok(())
    }
}
