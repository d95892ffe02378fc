//! Baton's workflows: deterministic code only. They reach the world through the activities of
//! `baton-activities`; time, randomness and waiting come from the Temporal SDK.
//!
//! - [`TaskWorkflow`]: one per task. It runs model turns, delegates with `spawn_subtask`, keeps
//!   a row per sub-task and never completes while one is unresolved.
//! - [`RemoteTaskWorkflow`]: the stand-in, one per delegation. It watches the remote A2A task
//!   (push, follow or off) and tells its parent of each change with `child_done`.

#![warn(missing_docs)]

mod activity_failure;
mod current_details;
mod event_time;
mod policies;
mod remote_files;
mod remote_task_workflow;
mod task_workflow;

pub use policies::follow_task_queue;
pub use remote_task_workflow::RemoteTaskWorkflow;
pub use task_workflow::TaskWorkflow;

#[cfg(test)]
mod contract_names {
    //! The contract's definitions (`baton_proto::temporal`) are what clients call; these are
    //! what the workers register. The bounds hold the types equal, the asserts the names.

    use baton_proto::temporal::{self, remote_task_workflow, task_workflow};
    use temporalio_common::{
        QueryDefinition, SignalDefinition, UpdateDefinition, WorkflowDefinition,
    };

    use super::{RemoteTaskWorkflow, TaskWorkflow};

    fn same_workflow<A, B>(contract: A, implementation: B)
    where
        A: WorkflowDefinition,
        B: WorkflowDefinition<Input = A::Input, Output = A::Output>,
    {
        assert_eq!(contract.name(), implementation.name());
    }

    fn same_query<A, B>(contract: A, implementation: B)
    where
        A: QueryDefinition,
        B: QueryDefinition<Input = A::Input, Output = A::Output>,
    {
        assert_eq!(contract.name(), implementation.name());
    }

    fn same_update<A, B>(contract: A, implementation: B)
    where
        A: UpdateDefinition,
        B: UpdateDefinition<Input = A::Input, Output = A::Output>,
    {
        assert_eq!(contract.name(), implementation.name());
    }

    fn same_signal<A, B>(contract: A, implementation: B)
    where
        A: SignalDefinition,
        B: SignalDefinition<Input = A::Input>,
    {
        assert_eq!(contract.name(), implementation.name());
    }

    #[test]
    fn the_task_workflow_answers_to_the_contract_s_names_and_types() {
        same_workflow(temporal::TaskWorkflow, TaskWorkflow::run);
        same_query(task_workflow::TASK, TaskWorkflow::task);
        same_query(task_workflow::EVENTS_SINCE, TaskWorkflow::events_since);
        same_query(task_workflow::PUSH_CONFIGS, TaskWorkflow::push_configs);
        same_update(task_workflow::INBOX, TaskWorkflow::inbox);
        same_update(
            task_workflow::SET_PUSH_CONFIG,
            TaskWorkflow::set_push_config,
        );
        same_update(
            task_workflow::DELETE_PUSH_CONFIG,
            TaskWorkflow::delete_push_config,
        );
        same_signal(task_workflow::CHILD_DONE, TaskWorkflow::child_done);
        same_signal(task_workflow::CANCEL, TaskWorkflow::cancel);
        same_signal(task_workflow::FIRST_MESSAGE, TaskWorkflow::first_message);
    }

    #[test]
    fn the_stand_in_answers_to_the_contract_s_names_and_types() {
        same_workflow(temporal::RemoteTaskWorkflow, RemoteTaskWorkflow::run);
        same_query(remote_task_workflow::TASK, RemoteTaskWorkflow::task);
        same_update(
            remote_task_workflow::REMOTE_PUSH,
            RemoteTaskWorkflow::remote_push,
        );
        same_signal(remote_task_workflow::REPLY, RemoteTaskWorkflow::reply);
    }
}
