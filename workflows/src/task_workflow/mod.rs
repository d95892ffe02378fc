//! `TaskWorkflow`: one per task; the workflow id is the task id.
//!
//! Each turn: move the sub-task notes into the history, call `invoke_model` (the activity puts
//! the worker's static prefix in front), run the tool calls, then decide: take another turn,
//! wait for sub-tasks, or finish. Deterministic work (the task section, validating
//! `spawn_subtask`, the brief, the rows, the completion rule) happens here, not in activities.

mod delegation;
mod messages;
mod status;
mod sweep;
mod turns;

use baton_core::deadline::{deadline_at_ms, task_deadline_exceeded, time_left};
use baton_proto::{
    ChildDone, EventPage, HistoryItem, InboxMessage, InboxReceipt, Lifecycle, MessageRole,
    PushConfig, Source, TaskCarry, TaskInput, TaskMessage, TaskStart, TaskState, TaskView,
};
use futures::FutureExt;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{SyncWorkflowContext, WorkflowContext, WorkflowContextView, WorkflowResult};
use temporalio_workflow::{TimerOptions, WorkflowCancellationToken, select};

use crate::current_details::task_details;

use messages::closed;
use status::{fail, set_state};
use turns::take_turns;

/// The most A2A history messages a task carries into its next run: a long conversation keeps
/// its newest, so what crosses continue-as-new stays bounded.
const MESSAGES_CARRIED: usize = 200;
/// How long a cancelled parent waits for its stand-ins to confirm before it ends anyway.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// One A2A task; its workflow id is the task id. It runs model turns, delegates through
/// stand-ins ([`RemoteTaskWorkflow`](crate::RemoteTaskWorkflow)), keeps a row per sub-task and
/// never completes while one is unresolved.
#[workflow]
pub struct TaskWorkflow {
    /// The task as its delegator gave it; its `carry` is always `None` here.
    input: TaskInput,
    /// Everything that crosses continue-as-new: declared once, in the contract, and carried whole
    /// (see [`TaskWorkflow::carry`]), so a new field cannot be left behind.
    durable: TaskCarry,
    /// What one run holds and the next does not need.
    this_run: ThisRun,
}

/// What a run holds that the next run does not need.
#[derive(Default)]
struct ThisRun {
    /// Model turns taken in this run: a run never continues as new before its first.
    turns: u32,
    /// What the model asked the participants in this turn, to pose once its tool calls have run.
    question: Option<String>,
    /// Why the start input could not be read, when it could not.
    invalid_input: Option<String>,
}

#[workflow_methods]
impl TaskWorkflow {
    /// The task from `start`: a new one (after the conversation of the task it continues, if
    /// any), or what the last run carried over when it continued as new. An unreadable input
    /// is kept for `run` to fail the task with.
    #[init]
    pub fn new(_ctx: &WorkflowContextView, start: TaskStart) -> Self {
        let (mut input, invalid_input) = match start {
            TaskStart::Valid(input) => (*input, None),
            TaskStart::Invalid { error, .. } => (unreadable_input(), Some(error)),
        };
        // A task that continues a context starts from the conversation of the one before it.
        let durable = input
            .carry
            .take()
            .unwrap_or_else(|| TaskCarry::new(input.earlier.iter().map(earlier_item).collect()));
        TaskWorkflow {
            input,
            durable,
            this_run: ThisRun {
                invalid_input,
                ..ThisRun::default()
            },
        }
    }

    /// Works the task to its end: model turns, sub-tasks and participant messages, continuing as
    /// new when its history grows long. It fails the task whose input is unreadable or whose
    /// delegator's deadline passes. Returns the task as it ended.
    #[run(name = "TaskWorkflow")]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<TaskView> {
        if let Some(error) = ctx.state(|s| s.this_run.invalid_input.clone()) {
            let reason = format!("the input is not a valid TaskInput: {error}");
            return Err(fail(ctx, reason).await);
        }
        if ctx.state(|s| s.durable.log.next_seq == 0) {
            set_state(ctx, TaskState::Submitted, None);
        } else {
            // A run continued as new starts with no details of its own.
            let details = ctx.state(|s| {
                task_details(
                    s.durable.state,
                    s.durable.sub_state.as_deref(),
                    s.durable.status_message.as_deref(),
                )
            });
            ctx.set_current_details(details);
        }
        let now = ctx.workflow_time();
        ctx.state_mut(|s| {
            if s.durable.deadline_at_ms.is_none() {
                s.durable.deadline_at_ms = s
                    .input
                    .limits
                    .deadline_secs
                    .zip(now)
                    .map(|(secs, now)| deadline_at_ms(now, secs));
            }
        });
        let Some(left) = task_deadline_left(ctx) else {
            return take_turns(ctx).await;
        };
        {
            // The delegator's deadline races the whole task: past it the task fails, and its
            // open sub-tasks are cancelled, wherever it was.
            let mut turns_ctx = ctx.clone();
            let mut turns = std::pin::pin!(take_turns(&mut turns_ctx).fuse());
            let timer_token = WorkflowCancellationToken::new();
            let mut deadline = std::pin::pin!(
                ctx.timer(
                    TimerOptions::builder(left)
                        .cancellation_token(timer_token.clone())
                        .build()
                )
            );
            select! {
                result = turns.as_mut() => {
                    timer_token.cancel();
                    return result;
                }
                _ = deadline.as_mut() => {}
            };
            if ctx.state(|s| s.durable.state.is_terminal()) {
                // It was already ending: let it end as it was.
                return turns.await;
            }
        }
        let secs = ctx.state(|s| s.input.limits.deadline_secs.unwrap_or_default());
        Err(fail(ctx, task_deadline_exceeded(secs)).await)
    }

    /// A stand-in heard a change on its remote task: the sub-task's row takes it, unless the row
    /// is unknown or already resolved.
    #[signal]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn child_done(&mut self, ctx: &mut SyncWorkflowContext<Self>, done: ChildDone) {
        self.take_child_change(ctx.workflow_time(), &done);
    }

    /// A participant's message. The gateway sends it, with update-with-start for a new task.
    /// Refused for a task that has ended, from a sender who is not a participant, or as an
    /// answer to a sub-task that waits for none.
    #[update]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn inbox(
        &mut self,
        ctx: &mut SyncWorkflowContext<Self>,
        message: InboxMessage,
    ) -> InboxReceipt {
        self.take_message(ctx, message)
    }

    /// Refuses, before history is written, a message to a closed task or from a stranger.
    #[update_validator(inbox)]
    fn validate_inbox(
        &self,
        _ctx: &WorkflowContextView,
        message: &InboxMessage,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        match self.refusal_of(message) {
            Some(refusal) => Err(refusal.into()),
            None => Ok(()),
        }
    }

    /// The message that creates the task, sent with signal-with-start so that the gateway
    /// answers a `returnImmediately` SendMessage once Temporal holds the task, without waiting
    /// for a worker. Taken as `inbox` takes a message; one `inbox` would refuse is dropped, since
    /// a signal has no caller to answer (the gateway never sends one: the sender of a new task is
    /// its participant, a retry repeats a message the task holds, and a closed task refuses the
    /// start instead).
    #[signal]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn first_message(&mut self, ctx: &mut SyncWorkflowContext<Self>, message: InboxMessage) {
        if self.refusal_of(&message).is_none() {
            self.take_message(ctx, message);
        }
    }

    /// Registers (or replaces, by id) a webhook for the task's changes. Refused for a task that
    /// has ended.
    #[update]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn set_push_config(
        &mut self,
        _ctx: &mut SyncWorkflowContext<Self>,
        config: PushConfig,
    ) -> PushConfig {
        self.keep_push_config(config.clone());
        config
    }

    #[update_validator(set_push_config)]
    fn validate_set_push_config(
        &self,
        _ctx: &WorkflowContextView,
        _config: &PushConfig,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if self.durable.state.is_terminal() {
            return Err(closed(self.durable.state).into());
        }
        Ok(())
    }

    /// Removes a webhook; removing one that is not there is not an error.
    #[update]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn delete_push_config(&mut self, _ctx: &mut SyncWorkflowContext<Self>, id: String) {
        self.durable.push_configs.retain(|c| c.id != id);
    }

    /// The webhooks registered for the task's changes.
    #[query]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn push_configs(&self, _ctx: &WorkflowContextView) -> Vec<PushConfig> {
        self.durable.push_configs.clone()
    }

    /// Cancels the task and every open sub-task, as a Temporal cancel does.
    #[signal]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn cancel(&mut self, _ctx: &mut SyncWorkflowContext<Self>, reason: String) {
        self.durable.cancel_reason.get_or_insert(reason);
    }

    /// The state, the sub-task rows and the last answer.
    #[query]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn task(&self, ctx: &WorkflowContextView) -> TaskView {
        self.view(ctx.workflow_id())
    }

    /// The events with `seq >= cursor`, in order.
    #[query]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn events_since(&self, _ctx: &WorkflowContextView, cursor: u64) -> EventPage {
        self.durable
            .log
            .since(cursor, self.durable.state.is_terminal())
    }
}

impl TaskWorkflow {
    /// What the next run starts from: the durable state whole, but for the event log and the
    /// messages, which keep their newest so that what crosses stays bounded.
    fn carry(&self) -> TaskInput {
        TaskInput {
            carry: Some(TaskCarry {
                log: self.durable.log.tail(),
                messages: newest(&self.durable.messages, MESSAGES_CARRIED),
                ..self.durable.clone()
            }),
            ..self.input.clone()
        }
    }
}

/// The newest `n` of `messages`, in order.
pub(super) fn newest(messages: &[TaskMessage], n: usize) -> Vec<TaskMessage> {
    messages[messages.len().saturating_sub(n)..].to_vec()
}

/// One message of an earlier task of the context, as the model's history holds it.
pub(super) fn earlier_item(message: &TaskMessage) -> HistoryItem {
    match message.role {
        MessageRole::User => HistoryItem::User {
            text: message.text.clone(),
            source: Source::Participant,
            attachments: message.attachments.clone(),
        },
        MessageRole::Agent => HistoryItem::Assistant {
            text: Some(message.text.clone()),
            tool_calls: Vec::new(),
        },
    }
}

/// The time left before the task's own deadline; none for a task without one.
pub(super) fn task_deadline_left(
    ctx: &WorkflowContext<TaskWorkflow>,
) -> Option<std::time::Duration> {
    let at = ctx.state(|s| s.durable.deadline_at_ms)?;
    Some(time_left(at, ctx.workflow_time()?))
}

/// The placeholder a workflow holds while it fails for an unreadable input.
pub(super) fn unreadable_input() -> TaskInput {
    TaskInput {
        name: "(unreadable input)".into(),
        goal: String::new(),
        description: String::new(),
        acceptance_criteria: Vec::new(),
        participants: Vec::new(),
        lifecycle: Lifecycle::Delegated,
        model: None,
        reasoning_effort: None,
        parent_tasks: Vec::new(),
        limits: Default::default(),
        context_id: None,
        earlier: Vec::new(),
        carry: None,
    }
}
