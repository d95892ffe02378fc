//! Baton's workflows: deterministic code only. They reach the world through the activities of
//! `baton-activities`; time, randomness and waiting come from the Temporal SDK.
//!
//! - [`TaskWorkflow`]: one per task. It runs model turns, delegates with `spawn_subtask`, keeps
//!   a row per sub-task and never completes while one is unresolved.
//! - [`RemoteTaskWorkflow`]: the stand-in, one per delegation. It watches the remote A2A task
//!   (push, follow or off) and tells its parent of each change with `child_done`.

mod activity_failure;
mod current_details;
mod event_log;
mod policies;
mod remote_task_workflow;
pub mod search_attributes;
mod task_workflow;

pub use policies::follow_task_queue;
pub use remote_task_workflow::RemoteTaskWorkflow;
pub use task_workflow::TaskWorkflow;
