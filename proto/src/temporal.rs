//! The names Temporal knows Baton's workflows by, with the types each carries: the two workflow
//! types, their signals, updates and queries, and the search attributes a task is listed by.
//!
//! Clients (the gateway, the push receiver, tests) call workflows through these definitions and
//! need not link the workflow code. `baton-workflows` implements them with the SDK's macros and
//! a test there holds every name and type here to its implementation.

use std::marker::PhantomData;

use temporalio_common::data_converters::{TemporalDeserializable, TemporalSerializable};
use temporalio_common::search_attributes::SearchAttributeKey;
use temporalio_common::{
    HasWorkflowDefinition, QueryDefinition, SignalDefinition, UpdateDefinition, WorkflowDefinition,
};

use crate::{
    ChildDone, EventPage, InboxMessage, InboxReceipt, PushConfig, PushIn, RemoteStart, RemoteView,
    SubTaskReply, TaskStart, TaskView,
};

/// Declares a workflow type `$workflow`, known to Temporal by its own name, that takes `$input`
/// and returns `$output`.
macro_rules! workflow_definition {
    ($(#[$doc:meta])* $workflow:ident: $input:ty => $output:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $workflow;

        impl WorkflowDefinition for $workflow {
            type Input = $input;
            type Output = $output;
            fn name(&self) -> &str {
                stringify!($workflow)
            }
        }

        impl HasWorkflowDefinition for $workflow {
            type Run = Self;
        }
    };
}

workflow_definition! {
    /// `TaskWorkflow`: one per task; its workflow id is the task id.
    TaskWorkflow: TaskStart => TaskView
}

workflow_definition! {
    /// `RemoteTaskWorkflow`: the stand-in that watches one delegated A2A task.
    RemoteTaskWorkflow: RemoteStart => RemoteView
}

/// The handlers of [`TaskWorkflow`].
pub mod task_workflow {
    use super::*;

    /// How long Temporal waits for a worker to finish one workflow task of a task before it
    /// gives the task to a worker again (Temporal's default is 10 s). sdk-core 0.10, which
    /// temporalio-sdk 1.1.1 pins, can lose a workflow task when a query reaches the worker while
    /// that task waits on a local activity: the task then ends only by this timeout
    /// (docs/performance.md, "A lost workflow task, bounded to 5 s").
    /// Baton's workflow tasks take tens of milliseconds, at most 2.9 s seen on a 2-core machine
    /// that was also building; runs continue as new before their history is long enough to
    /// take seconds to replay.
    pub const WORKFLOW_TASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

    /// What the task looks like now.
    pub const TASK: Query<TaskWorkflow, (), TaskView> = Query::new("task");
    /// The task's event log after a cursor.
    pub const EVENTS_SINCE: Query<TaskWorkflow, u64, EventPage> = Query::new("events_since");
    /// The webhooks registered for the task's changes.
    pub const PUSH_CONFIGS: Query<TaskWorkflow, (), Vec<PushConfig>> = Query::new("push_configs");
    /// A participant's message; refused with a [`crate::Refusal`] before history is written.
    pub const INBOX: Update<TaskWorkflow, InboxMessage, InboxReceipt> = Update::new("inbox");
    /// The message that creates the task, with signal-with-start: taken as `inbox` takes it,
    /// without a receipt; one `inbox` would refuse is dropped.
    pub const FIRST_MESSAGE: Signal<TaskWorkflow, InboxMessage> = Signal::new("first_message");
    /// Registers, or replaces by id, a webhook.
    pub const SET_PUSH_CONFIG: Update<TaskWorkflow, PushConfig, PushConfig> =
        Update::new("set_push_config");
    /// Removes a webhook by id.
    pub const DELETE_PUSH_CONFIG: Update<TaskWorkflow, String, ()> =
        Update::new("delete_push_config");
    /// A stand-in's news of its sub-task.
    pub const CHILD_DONE: Signal<TaskWorkflow, ChildDone> = Signal::new("child_done");
    /// Ends the task as CANCELED, with the reason given.
    pub const CANCEL: Signal<TaskWorkflow, String> = Signal::new("cancel");
}

/// The handlers of [`RemoteTaskWorkflow`].
pub mod remote_task_workflow {
    use super::*;

    /// What the stand-in knows of its remote task.
    pub const TASK: Query<RemoteTaskWorkflow, (), RemoteView> = Query::new("task");
    /// A push from the remote agent, already authenticated by the gateway.
    pub const REMOTE_PUSH: Update<RemoteTaskWorkflow, PushIn, ()> = Update::new("remote_push");
    /// An answer for the remote task, from the parent.
    pub const REPLY: Signal<RemoteTaskWorkflow, SubTaskReply> = Signal::new("reply");
}

/// The search attributes a task carries, so Temporal visibility can list tasks by A2A context,
/// state, agent and participant (the gateway's ListTasks). They must be registered on the
/// namespace: Baton's embedded server registers them; on a cluster, `temporal operator
/// search-attribute create` does (docs/gateway.md).
pub mod search_attributes {
    use super::SearchAttributeKey;
    use temporalio_common::search_attributes::Timestamp;

    /// `A2AContextId`: the task's A2A context.
    pub const A2A_CONTEXT_ID: SearchAttributeKey<String> =
        SearchAttributeKey::keyword("A2AContextId");
    /// `A2ATaskState`: the task's current state, by its A2A name (`TASK_STATE_WORKING`).
    pub const A2A_TASK_STATE: SearchAttributeKey<String> =
        SearchAttributeKey::keyword("A2ATaskState");
    /// `BatonAgent`: the id of the agent the task runs on.
    pub const BATON_AGENT: SearchAttributeKey<String> = SearchAttributeKey::keyword("BatonAgent");
    /// `BatonParticipants`: the ids of the task's participants.
    pub const BATON_PARTICIPANTS: SearchAttributeKey<Vec<String>> =
        SearchAttributeKey::keyword_list("BatonParticipants");

    /// `A2AStatusTimestamp`: when the task's state last changed, the status timestamp A2A
    /// orders ListTasks by.
    pub const A2A_STATUS_TIMESTAMP: SearchAttributeKey<Timestamp> =
        SearchAttributeKey::datetime("A2AStatusTimestamp");

    /// Every attribute with its Temporal type, as `temporal server start-dev --search-attribute`
    /// and `temporal operator search-attribute create` take them.
    pub const REGISTRATIONS: [(&str, &str); 5] = [
        ("A2AContextId", "Keyword"),
        ("A2ATaskState", "Keyword"),
        ("A2AStatusTimestamp", "Datetime"),
        ("BatonAgent", "Keyword"),
        ("BatonParticipants", "KeywordList"),
    ];
}

/// The memo fields of [`TaskWorkflow`], which visibility returns with each listed run.
pub mod memo {
    /// `BatonListedTask`: what ListTasks shows of the task (a [`crate::TaskView`] made by
    /// [`crate::TaskView::listed`]), written with each change of state. Absent from tasks too
    /// large for it and from runs of workers before it; ListTasks then asks the task itself.
    pub const LISTED_TASK: &str = "BatonListedTask";
}

/// The types a definition stands for; a `fn` pointer, so the definition is `Send` and `Sync`
/// whatever they are.
type Types<T> = PhantomData<fn() -> T>;

/// Declares a definition of workflow `W` taking `I` and answering `O`: the struct, its `const`
/// constructor and its implementation of `$definition`. Queries and updates differ only in the
/// SDK trait they implement.
macro_rules! request_definition {
    ($(#[$doc:meta])* $kind:ident: $definition:ident) => {
        $(#[$doc])*
        pub struct $kind<W, I, O> {
            name: &'static str,
            types: Types<(W, I, O)>,
        }

        impl<W, I, O> $kind<W, I, O> {
            const fn new(name: &'static str) -> Self {
                Self {
                    name,
                    types: PhantomData,
                }
            }
        }

        impl<W, I, O> $definition for $kind<W, I, O>
        where
            W: WorkflowDefinition,
            I: TemporalSerializable + TemporalDeserializable + 'static,
            O: TemporalSerializable + TemporalDeserializable + 'static,
        {
            type Workflow = W;
            type Input = I;
            type Output = O;
            fn name(&self) -> &str {
                self.name
            }
        }
    };
}

request_definition! {
    /// A query of workflow `W` taking `I` and answering `O`.
    Query: QueryDefinition
}

request_definition! {
    /// An update of workflow `W` taking `I` and answering `O`.
    Update: UpdateDefinition
}

/// A signal of workflow `W` carrying `I`.
pub struct Signal<W, I> {
    name: &'static str,
    types: Types<(W, I)>,
}

impl<W, I> Signal<W, I> {
    const fn new(name: &'static str) -> Self {
        Self {
            name,
            types: PhantomData,
        }
    }
}

impl<W, I> SignalDefinition for Signal<W, I>
where
    W: WorkflowDefinition,
    I: TemporalSerializable + TemporalDeserializable + 'static,
{
    type Workflow = W;
    type Input = I;
    fn name(&self) -> &str {
        self.name
    }
}
