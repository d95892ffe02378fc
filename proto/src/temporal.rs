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

/// `TaskWorkflow`: one per task; its workflow id is the task id.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskWorkflow;

impl WorkflowDefinition for TaskWorkflow {
    type Input = TaskStart;
    type Output = TaskView;
    fn name(&self) -> &str {
        "TaskWorkflow"
    }
}

impl HasWorkflowDefinition for TaskWorkflow {
    type Run = Self;
}

/// `RemoteTaskWorkflow`: the stand-in that watches one delegated A2A task.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoteTaskWorkflow;

impl WorkflowDefinition for RemoteTaskWorkflow {
    type Input = RemoteStart;
    type Output = RemoteView;
    fn name(&self) -> &str {
        "RemoteTaskWorkflow"
    }
}

impl HasWorkflowDefinition for RemoteTaskWorkflow {
    type Run = Self;
}

/// The handlers of [`TaskWorkflow`].
pub mod task_workflow {
    use super::*;

    /// What the task looks like now.
    pub const TASK: Query<TaskWorkflow, (), TaskView> = Query::new("task");
    /// The task's event log after a cursor.
    pub const EVENTS_SINCE: Query<TaskWorkflow, u64, EventPage> = Query::new("events_since");
    /// The webhooks registered for the task's changes.
    pub const PUSH_CONFIGS: Query<TaskWorkflow, (), Vec<PushConfig>> = Query::new("push_configs");
    /// A participant's message; refused with a [`crate::Refusal`] before history is written.
    pub const INBOX: Update<TaskWorkflow, InboxMessage, InboxReceipt> = Update::new("inbox");
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

    pub const A2A_CONTEXT_ID: SearchAttributeKey<String> =
        SearchAttributeKey::keyword("A2AContextId");
    pub const A2A_TASK_STATE: SearchAttributeKey<String> =
        SearchAttributeKey::keyword("A2ATaskState");
    pub const BATON_AGENT: SearchAttributeKey<String> = SearchAttributeKey::keyword("BatonAgent");
    pub const BATON_PARTICIPANTS: SearchAttributeKey<Vec<String>> =
        SearchAttributeKey::keyword_list("BatonParticipants");

    /// Every attribute with its Temporal type, as `temporal server start-dev --search-attribute`
    /// and `temporal operator search-attribute create` take them.
    pub const REGISTRATIONS: [(&str, &str); 4] = [
        ("A2AContextId", "Keyword"),
        ("A2ATaskState", "Keyword"),
        ("BatonAgent", "Keyword"),
        ("BatonParticipants", "KeywordList"),
    ];
}

/// The types a definition stands for; a `fn` pointer, so the definition is `Send` and `Sync`
/// whatever they are.
type Types<T> = PhantomData<fn() -> T>;

/// A query of workflow `W` taking `I` and answering `O`.
pub struct Query<W, I, O> {
    name: &'static str,
    types: Types<(W, I, O)>,
}

impl<W, I, O> Query<W, I, O> {
    const fn new(name: &'static str) -> Self {
        Self {
            name,
            types: PhantomData,
        }
    }
}

impl<W, I, O> QueryDefinition for Query<W, I, O>
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

/// An update of workflow `W` taking `I` and answering `O`.
pub struct Update<W, I, O> {
    name: &'static str,
    types: Types<(W, I, O)>,
}

impl<W, I, O> Update<W, I, O> {
    const fn new(name: &'static str) -> Self {
        Self {
            name,
            types: PhantomData,
        }
    }
}

impl<W, I, O> UpdateDefinition for Update<W, I, O>
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
