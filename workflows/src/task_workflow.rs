//! `TaskWorkflow`: one per task; the workflow id is the task id.
//!
//! Each turn: move the sub-task notes into the history, call `invoke_model` (the activity puts
//! the worker's static prefix in front), run the tool calls, then decide: take another turn,
//! wait for sub-tasks, or finish. Deterministic work (the task section, validating
//! `spawn_subtask`, the brief, the rows, the completion rule) happens here, not in activities.

use std::collections::BTreeSet;

use crate::current_details::task_details;
use baton_activities::BatonActivities;
use baton_core::ask_participant::{ASK_PARTICIPANT, ASKED_CONTENT, validate_ask};
use baton_core::brief::{brief_envelope, brief_text};
use baton_core::completion::{Completion, decide_completion};
use baton_core::context::render_task_section;
use baton_core::deadline::{
    deadline_at_ms, task_deadline_exceeded, time_left, within_task_deadline,
};
use baton_core::derived_id::{delegation_ids, reply_message_id};
use baton_core::mcp_tool::tool_failure_content;
use baton_core::spawn_subtask::{SPAWN_SUBTASK, SpawnRequest, ToolError, validate_spawn};
use baton_core::sub_task_reply::{
    AWAITING_AUTHORISATION, Answerer, REPLY_TO_SUBTASK, SUB_TASK_NOT_WAITING, answerable,
    authorisation_request, mark_answered, participant_answered_note, replied_content,
    validate_reply,
};
use baton_core::sub_tasks::{AWAITING_ANSWER, AWAITING_NEXT_MESSAGE};
use baton_core::sub_tasks::{
    apply_child_done, creation_failed_note, delegation_end, map_remote_state,
};
use baton_core::tool_result::{spawned_content, tool_error_content};
use baton_core::turn_bounds::payload_too_large;
use baton_proto::{
    CancelContextIn, ChildDone, DelegationEnd, EventPage, ForwardedReply, HistoryItem,
    InboxMessage, InboxReceipt, InvokeModelIn, InvokeModelOut, InvokeToolIn, Lifecycle,
    MessageRole, OfferedTool, PushConfig, PushDelivery, Refusal, RefusalCode, RemoteSnapshot,
    RemoteStart, RemoteTaskIn, Source, StartAgentTaskIn, StartAgentTaskOut, SubTaskReply,
    SubTaskRow, TaskCarry, TaskEvent, TaskFailure, TaskInput, TaskMessage, TaskRef, TaskRoster,
    TaskStart, TaskState, TaskView, ToolCallRecord,
};
use futures::FutureExt;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityExecutionError, ApplicationFailure, CancellableFuture, ChildWorkflowOptions,
    ContinueAsNewOptions, ParentClosePolicy, SyncWorkflowContext, WorkflowContext,
    WorkflowContextView, WorkflowResult, WorkflowTermination,
};
use temporalio_workflow::{
    SignalWorkflowOptions, TimerOptions, WaitConditionOptions, WorkflowCancellationToken, select,
};

use crate::RemoteTaskWorkflow;
use crate::activity_failure;
use crate::event_log::EventLog;
use crate::policies;
use crate::remote_task_workflow::cancel_until_ended;
use baton_proto::temporal::memo::LISTED_TASK;
use baton_proto::temporal::search_attributes::{
    A2A_CONTEXT_ID, A2A_STATUS_TIMESTAMP, A2A_TASK_STATE,
};

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
    input: TaskInput,
    state: TaskState,
    sub_state: Option<String>,
    status_message: Option<String>,
    /// The task's A2A history: participant messages and the model's answers.
    messages: Vec<TaskMessage>,
    /// Participant messages the model has not had a turn for yet.
    unread_messages: u32,
    /// The texts of participant messages not yet in `history`: they join it when the next turn
    /// starts, so a message never lands inside a turn (between a tool call and its result).
    arrived: Vec<String>,
    history: Vec<HistoryItem>,
    sub_tasks: Vec<SubTaskRow>,
    /// Notes about sub-tasks the model has not read yet.
    pending_notes: Vec<String>,
    log: EventLog,
    turns: u32,
    /// Turns since the model last read a participant message (or the brief).
    turns_since_message: u32,
    turns_this_run: u32,
    last_answer: Option<String>,
    /// What the model asked the participants in this turn, to pose once its tool calls have run.
    question: Option<String>,
    cancel_reason: Option<String>,
    /// Why the start input could not be read, when it could not.
    invalid_input: Option<String>,
    /// Webhooks participants registered for this task's changes.
    push_configs: Vec<PushConfig>,
    /// Changes not yet pushed to those webhooks.
    outbox: Vec<PushDelivery>,
    /// Sub-tasks resolved since the metrics were last told.
    ended: Vec<DelegationEnd>,
    /// Participants' answers to sub-tasks not yet sent to their stand-ins.
    replies_out: Vec<ForwardedReply>,
    /// Answers sent to sub-tasks so far: numbers the next one's message id.
    replies_sent: u32,
    /// How many of the oldest history items turns left out for the context budget.
    compacted: u32,
    /// The ids of the roster the model was shown on the first turn: every turn shows the same.
    roster: Option<TaskRoster>,
    /// When the deadline its delegator gave the task passes, in ms since the Unix epoch.
    deadline_at_ms: Option<u64>,
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
        let carry = input.carry.take();
        // A task that continues a context starts from the conversation of the one before it.
        let history = if carry.is_none() {
            input.earlier.iter().map(earlier_item).collect()
        } else {
            Vec::new()
        };
        let mut workflow = TaskWorkflow {
            input,
            state: TaskState::Submitted,
            sub_state: None,
            status_message: None,
            messages: Vec::new(),
            unread_messages: 0,
            arrived: Vec::new(),
            history,
            sub_tasks: Vec::new(),
            pending_notes: Vec::new(),
            log: EventLog::default(),
            turns: 0,
            turns_since_message: 0,
            turns_this_run: 0,
            last_answer: None,
            question: None,
            cancel_reason: None,
            invalid_input,
            push_configs: Vec::new(),
            outbox: Vec::new(),
            ended: Vec::new(),
            replies_out: Vec::new(),
            replies_sent: 0,
            compacted: 0,
            roster: None,
            deadline_at_ms: None,
        };
        if let Some(carry) = carry {
            workflow.state = carry.state;
            workflow.history = carry.history;
            workflow.sub_tasks = carry.sub_tasks;
            workflow.pending_notes = carry.pending_notes;
            workflow.log = EventLog::restore(carry.events, carry.next_seq);
            workflow.turns = carry.turns;
            workflow.turns_since_message = carry.turns_since_message;
            workflow.last_answer = carry.last_answer;
            workflow.cancel_reason = carry.cancel_reason;
            workflow.messages = carry.messages;
            workflow.sub_state = carry.sub_state;
            workflow.unread_messages = carry.unread_messages;
            workflow.arrived = carry.arrived;
            workflow.push_configs = carry.push_configs;
            workflow.replies_out = carry.replies_out;
            workflow.replies_sent = carry.replies_sent;
            workflow.compacted = carry.compacted;
            workflow.roster = carry.roster;
            workflow.deadline_at_ms = carry.deadline_at_ms;
        }
        workflow
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
        if let Some(error) = ctx.state(|s| s.invalid_input.clone()) {
            let reason = format!("the input is not a valid TaskInput: {error}");
            return Err(fail(ctx, reason).await);
        }
        if ctx.state(|s| s.log.next_seq() == 0) {
            set_state(ctx, TaskState::Submitted, None);
        } else {
            // A run continued as new starts with no details of its own.
            let details = ctx.state(|s| {
                task_details(s.state, s.sub_state.as_deref(), s.status_message.as_deref())
            });
            ctx.set_current_details(details);
        }
        let now = ctx.workflow_time();
        ctx.state_mut(|s| {
            if s.deadline_at_ms.is_none() {
                s.deadline_at_ms = s
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
            if ctx.state(|s| s.state.is_terminal()) {
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
        let before = self.row(&done.workflow_id);
        if let Some(note) = apply_child_done(&mut self.sub_tasks, &done) {
            self.pending_notes.push(note);
        }
        let after = self.row(&done.workflow_id);
        self.ended
            .extend(delegation_end(before.as_ref(), after.as_ref()));
        if let Some(row) = after.filter(|row| Some(row) != before.as_ref()) {
            self.log
                .push(ctx.workflow_time(), TaskEvent::SubTask { row });
        }
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

    /// A participant's message, by `inbox` or `first_message`: its webhook first, then the
    /// message, unless the task holds its id already.
    fn take_message(
        &mut self,
        ctx: &mut SyncWorkflowContext<Self>,
        message: InboxMessage,
    ) -> InboxReceipt {
        let cursor = self.log.next_seq();
        if let Some(config) = message.push_config.clone() {
            self.keep_push_config(config);
        }
        let duplicate = self
            .messages
            .iter()
            .any(|m| m.role == MessageRole::User && m.message_id == message.message_id);
        if !duplicate {
            // The message that created the task is its brief: the model reads it in the task
            // section (goal, description, criteria), not a second time as a message.
            // Only before the first turn starts: a first message that lands during it (a task
            // started without one) is news the model must read.
            let is_the_brief =
                self.turns == 0 && self.messages.is_empty() && self.state == TaskState::Submitted;
            let entry = TaskMessage {
                message_id: message.message_id.clone(),
                role: MessageRole::User,
                text: message.text.clone(),
            };
            self.messages.push(entry.clone());
            self.log
                .push(ctx.workflow_time(), TaskEvent::Message { message: entry });
            if let Some(stand_in_id) = &message.sub_task_id {
                // An answer for a sub-task goes to its agent; the model reads only that it went.
                self.take_participant_answer(ctx, stand_in_id, &message);
            } else if !is_the_brief {
                let was_parked = self.awaits_next_message();
                self.arrived.push(message.text);
                self.unread_messages += 1;
                // The task works on the message from the moment it takes it, so whoever reads
                // it next (the sender's stream first) never sees it parked with the message in.
                if was_parked {
                    let task_id = ctx.workflow_id().to_string();
                    let now = ctx.workflow_time();
                    self.record_status(now, &task_id, TaskState::Working, None, None);
                    let listing = Listing::of(&ctx.search_attributes(), &self.view(&task_id), now);
                    if !listing.indexed.is_empty() {
                        ctx.upsert_search_attributes(listing.indexed);
                    }
                    ctx.upsert_memo([(LISTED_TASK, listing.listed)])
                        .expect("a task view always serialises");
                    ctx.set_current_details(task_details(TaskState::Working, None, None));
                }
            }
        }
        InboxReceipt {
            message_id: message.message_id,
            duplicate,
            state: self.state,
            cursor,
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
        if self.state.is_terminal() {
            return Err(closed(self.state).into());
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
        self.push_configs.retain(|c| c.id != id);
    }

    /// The webhooks registered for the task's changes.
    #[query]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn push_configs(&self, _ctx: &WorkflowContextView) -> Vec<PushConfig> {
        self.push_configs.clone()
    }

    /// Cancels the task and every open sub-task, as a Temporal cancel does.
    #[signal]
    #[allow(
        missing_docs,
        reason = "#[workflow_methods] adds a const of this name and does not copy the doc to it"
    )]
    pub fn cancel(&mut self, _ctx: &mut SyncWorkflowContext<Self>, reason: String) {
        self.cancel_reason.get_or_insert(reason);
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
        self.log.since(cursor, self.state.is_terminal())
    }
}

impl TaskWorkflow {
    /// A participant's answer to the sub-task `stand_in_id`, which the validator found waiting:
    /// the row works again, the answer waits to be sent, and the model gets a note that it went.
    fn take_participant_answer(
        &mut self,
        ctx: &SyncWorkflowContext<Self>,
        stand_in_id: &str,
        message: &InboxMessage,
    ) {
        let Some(row) = self.mark_row_answered(ctx.workflow_time(), stand_in_id) else {
            return;
        };
        self.pending_notes
            .push(participant_answered_note(&row, &message.participant_id));
        self.replies_out.push(ForwardedReply {
            stand_in_id: stand_in_id.to_string(),
            text: message.text.clone(),
        });
    }

    /// Marks the row of `stand_in_id` answered and logs it; returns the row.
    fn mark_row_answered(
        &mut self,
        now: Option<std::time::SystemTime>,
        stand_in_id: &str,
    ) -> Option<SubTaskRow> {
        let row = self
            .sub_tasks
            .iter_mut()
            .find(|row| row.workflow_id == stand_in_id)?;
        mark_answered(row);
        let row = row.clone();
        self.log.push(now, TaskEvent::SubTask { row: row.clone() });
        Some(row)
    }

    /// The next answer to the sub-task `stand_in_id`, numbered for its message id.
    fn next_reply(&mut self, first_run_id: &str, stand_in_id: &str, text: String) -> SubTaskReply {
        self.replies_sent += 1;
        SubTaskReply {
            message_id: reply_message_id(first_run_id, stand_in_id, self.replies_sent),
            text,
        }
    }

    /// Adds a webhook, replacing one with the same id.
    fn keep_push_config(&mut self, config: PushConfig) {
        self.push_configs.retain(|c| c.id != config.id);
        self.push_configs.push(config);
    }

    /// Why the task refuses a message: it is closed, the sender is a stranger, or the sub-task
    /// it answers waits for no answer.
    fn refusal_of(&self, message: &InboxMessage) -> Option<Refusal> {
        if self.state.is_terminal() {
            return Some(closed(self.state));
        }
        if !self
            .input
            .participants
            .iter()
            .any(|p| p.id == message.participant_id)
        {
            return Some(Refusal::new(
                RefusalCode::NotParticipant,
                "not a participant",
            ));
        }
        let stand_in_id = message.sub_task_id.as_ref()?;
        answerable(&self.sub_tasks, stand_in_id, Answerer::Participant)
            .err()
            .map(|refused| Refusal::new(RefusalCode::SubTaskNotAnswerable, refused.message))
    }

    fn view(&self, task_id: &str) -> TaskView {
        TaskView {
            task_id: task_id.to_string(),
            name: self.input.name.clone(),
            state: self.state,
            sub_state: self.sub_state.clone(),
            status_message: self.status_message.clone(),
            sub_tasks: self.sub_tasks.clone(),
            last_answer: self.last_answer.clone(),
            turns: self.turns,
            context_id: self.input.context_id.clone(),
            messages: self.messages.clone(),
            participants: self.input.participants.clone(),
            updated_at: self.log.last_status_at(),
            event_seq: self.log.next_seq(),
            goal: self.input.goal.clone(),
            description: self.input.description.clone(),
            acceptance_criteria: self.input.acceptance_criteria.clone(),
            lifecycle: Some(self.input.lifecycle),
            model: self.input.model.clone(),
            reasoning_effort: self.input.reasoning_effort.clone(),
            parent_tasks: self.input.parent_tasks.clone(),
            earlier: self.input.earlier.clone(),
        }
    }

    fn row(&self, workflow_id: &str) -> Option<SubTaskRow> {
        self.sub_tasks
            .iter()
            .find(|r| r.workflow_id == workflow_id)
            .cloned()
    }

    /// Records a status: the state, its event in the log, and a push of it to each webhook.
    /// Returns what the status says: its message, or the last answer once the task stops.
    fn record_status(
        &mut self,
        now: Option<std::time::SystemTime>,
        task_id: &str,
        state: TaskState,
        sub_state: Option<String>,
        message: Option<String>,
    ) -> Option<String> {
        self.state = state;
        self.sub_state = sub_state.clone();
        self.status_message = message.clone();
        self.log.push(
            now,
            TaskEvent::Status {
                state,
                sub_state: sub_state.clone(),
                message: message.clone(),
            },
        );
        let says = message.or_else(|| {
            (state.is_terminal() || state.is_interrupted())
                .then(|| self.last_answer.clone())
                .flatten()
        });
        let at = self.log.last_status_at().unwrap_or_default();
        let context_id = self
            .input
            .context_id
            .clone()
            .unwrap_or_else(|| task_id.to_string());
        for config in &self.push_configs {
            self.outbox.push(PushDelivery {
                config: config.clone(),
                task_id: task_id.to_string(),
                context_id: context_id.clone(),
                state,
                sub_state: sub_state.clone(),
                message: says.clone(),
                at: at.clone(),
            });
        }
        says
    }

    /// Whether the model has taken `max_turns` turns since the last participant message it
    /// read. A message waiting to be read starts a new count.
    fn turn_limit_reached(&self) -> bool {
        self.arrived.is_empty() && self.turns_since_message >= self.input.limits.max_turns
    }

    /// Moves the participant messages that arrived since the last turn into the history.
    fn take_arrived_messages(&mut self) {
        if !self.arrived.is_empty() {
            self.turns_since_message = 0;
        }
        for text in self.arrived.drain(..) {
            self.history.push(HistoryItem::User {
                text,
                source: Source::Participant,
            });
        }
    }

    /// Parked, with no new message yet: a conversation after its answer, or a task waiting for
    /// the answer to its question.
    fn awaits_next_message(&self) -> bool {
        self.state == TaskState::InputRequired
            && matches!(
                self.sub_state.as_deref(),
                Some(AWAITING_NEXT_MESSAGE | AWAITING_ANSWER)
            )
            && self.unread_messages == 0
    }

    /// Waiting for the answer to the question it asked (`ask_participant`).
    fn awaits_answer(&self) -> bool {
        self.sub_state.as_deref() == Some(AWAITING_ANSWER)
    }

    fn carry(&self) -> TaskInput {
        let (events, next_seq) = self.log.tail();
        TaskInput {
            carry: Some(TaskCarry {
                state: self.state,
                history: self.history.clone(),
                sub_tasks: self.sub_tasks.clone(),
                pending_notes: self.pending_notes.clone(),
                events,
                next_seq,
                turns: self.turns,
                turns_since_message: self.turns_since_message,
                last_answer: self.last_answer.clone(),
                cancel_reason: self.cancel_reason.clone(),
                messages: newest(&self.messages, MESSAGES_CARRIED),
                sub_state: self.sub_state.clone(),
                unread_messages: self.unread_messages,
                arrived: self.arrived.clone(),
                push_configs: self.push_configs.clone(),
                replies_out: self.replies_out.clone(),
                replies_sent: self.replies_sent,
                compacted: self.compacted,
                roster: self.roster.clone(),
                deadline_at_ms: self.deadline_at_ms,
            }),
            ..self.input.clone()
        }
    }
}

/// The refusal of anything sent to a task that has ended.
fn closed(state: TaskState) -> Refusal {
    Refusal::new(RefusalCode::TaskClosed, format!("task is closed ({state})"))
}

/// The newest `n` of `messages`, in order.
fn newest(messages: &[TaskMessage], n: usize) -> Vec<TaskMessage> {
    messages[messages.len().saturating_sub(n)..].to_vec()
}

/// One message of an earlier task of the context, as the model's history holds it.
fn earlier_item(message: &TaskMessage) -> HistoryItem {
    match message.role {
        MessageRole::User => HistoryItem::User {
            text: message.text.clone(),
            source: Source::Participant,
        },
        MessageRole::Agent => HistoryItem::Assistant {
            text: Some(message.text.clone()),
            tool_calls: Vec::new(),
        },
    }
}

/// The time left before the task's own deadline; none for a task without one.
fn task_deadline_left(ctx: &WorkflowContext<TaskWorkflow>) -> Option<std::time::Duration> {
    let at = ctx.state(|s| s.deadline_at_ms)?;
    Some(time_left(at, ctx.workflow_time()?))
}

/// The turn loop, until the task ends or continues as new.
async fn take_turns(ctx: &mut WorkflowContext<TaskWorkflow>) -> WorkflowResult<TaskView> {
    loop {
        forward_participant_answers(ctx).await;
        deliver_pushes(ctx).await;
        record_delegation_ends(ctx).await;
        if cancel_requested(ctx) {
            return cancel_everything(ctx).await;
        }
        if should_continue_as_new(ctx) {
            let next = ctx.state(TaskWorkflow::carry);
            let size = serde_json::to_vec(&next).map_or(usize::MAX, |bytes| bytes.len());
            if let Some(reason) = payload_too_large("what the task carries into its next run", size)
            {
                return Err(fail(ctx, reason).await);
            }
            match ctx.continue_as_new(TaskStart::from(next), ContinueAsNewOptions::default())? {}
        }
        if ctx.state(TaskWorkflow::awaits_next_message) {
            // Parked after an answer: the next participant message (or a cancel) wakes it;
            // a conversation left idle for its idle timeout ends with its last answer.
            match wait_for_next_message(ctx).await {
                Parked::Woken => {}
                Parked::Interrupted => continue,
                Parked::Idle if ctx.state(TaskWorkflow::awaits_answer) => {
                    let idle = ctx.state(|s| s.input.limits.idle_timeout_secs);
                    let reason = format!(
                        "no participant answered the question within {idle}s (limits.idle_timeout_secs)"
                    );
                    return Err(fail(ctx, reason).await);
                }
                Parked::Idle => {
                    return complete(ctx).await;
                }
            }
        }
        if ctx.state(TaskWorkflow::turn_limit_reached) {
            return Err(fail(ctx, "turn limit reached".into()).await);
        }

        let Some(turn) = model_turn(ctx).await? else {
            continue; // cancelled while the model was thinking
        };
        let answered_without_tools = turn.tool_calls.is_empty();
        for call in &turn.tool_calls {
            let content = run_tool_call(ctx, call, &turn).await;
            ctx.state_mut(|s| {
                s.history.push(HistoryItem::ToolResult {
                    call_id: call.id.clone(),
                    content,
                });
            });
        }
        if let Some(question) = ctx.state_mut(|s| s.question.take()) {
            pose_question(ctx, question);
            continue;
        }

        let decision = ctx.state(|s| {
            decide_completion(
                answered_without_tools,
                &s.sub_tasks,
                s.pending_notes.len(),
                s.unread_messages,
            )
        });
        match decision {
            Completion::TakeTurn => {}
            Completion::WaitForSubTasks => wait_for_sub_tasks(ctx).await,
            Completion::Complete => {
                if ctx.state(|s| s.input.lifecycle) == Lifecycle::Delegated {
                    return complete(ctx).await;
                }
                set_sub_state(
                    ctx,
                    TaskState::InputRequired,
                    Some(AWAITING_NEXT_MESSAGE.into()),
                );
            }
        }
    }
}

/// The placeholder a workflow holds while it fails for an unreadable input.
fn unreadable_input() -> TaskInput {
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

/// How a parked conversation's wait ended.
enum Parked {
    /// A participant's message arrived.
    Woken,
    /// A cancel, or the wait itself was cut: the loop looks again.
    Interrupted,
    /// Nothing arrived for the task's idle timeout.
    Idle,
}

/// Waits for the next participant message, a cancel, or the idle timeout
/// (`limits.idle_timeout_secs`; 0 waits for ever).
async fn wait_for_next_message(ctx: &mut WorkflowContext<TaskWorkflow>) -> Parked {
    let idle = ctx.state(|s| s.input.limits.idle_timeout_secs);
    let arrived = |s: &TaskWorkflow| s.unread_messages > 0 || s.cancel_reason.is_some();
    let woke = if idle > 0 {
        let mut timer = std::pin::pin!(ctx.timer(std::time::Duration::from_secs(idle)));
        let woke = select! {
            woke = ctx.wait_condition(arrived) => Some(woke),
            _ = timer.as_mut() => None,
        };
        match woke {
            Some(woke) => {
                timer.cancel();
                woke
            }
            None => return Parked::Idle,
        }
    } else {
        ctx.wait_condition(arrived).await
    };
    if woke.is_err() || ctx.state(|s| s.cancel_reason.is_some()) {
        Parked::Interrupted
    } else {
        Parked::Woken
    }
}

fn cancel_requested(ctx: &WorkflowContext<TaskWorkflow>) -> bool {
    ctx.cancellation_token().is_cancelled() || ctx.state(|s| s.cancel_reason.is_some())
}

/// Roll over before history passes its bound, never on a run's first turn.
fn should_continue_as_new(ctx: &WorkflowContext<TaskWorkflow>) -> bool {
    let bound = ctx.state(|s| s.input.limits.history_event_bound);
    ctx.state(|s| s.turns_this_run > 0)
        && (ctx.history_length() >= bound || ctx.continue_as_new_suggested())
}

fn set_state(ctx: &WorkflowContext<TaskWorkflow>, state: TaskState, message: Option<String>) {
    record_state(ctx, state, None, message);
}

fn set_sub_state(ctx: &WorkflowContext<TaskWorkflow>, state: TaskState, sub_state: Option<String>) {
    record_state(ctx, state, sub_state, None);
}

fn record_state(
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
struct Listing {
    /// The indexed state and its timestamp, for a task the gateway indexed; none otherwise.
    indexed: Vec<temporalio_common::search_attributes::SearchAttributeUpdate>,
    /// The task's listed view; `None` removes a stale one when the view outgrew the memo.
    listed: Option<temporalio_sdk::MemoValue>,
}

impl Listing {
    fn of(
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
fn indexed_state(
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

/// Tells the worker's metrics of the sub-tasks resolved since it last did, in a local activity:
/// its marker in history keeps a replay from counting them again.
async fn record_delegation_ends(ctx: &mut WorkflowContext<TaskWorkflow>) {
    if ctx.state(|s| s.ended.is_empty()) {
        return;
    }
    let ended = ctx.state_mut(|s| std::mem::take(&mut s.ended));
    ctx.execute_local_activity(
        BatonActivities::record_delegation_ends,
        ended,
        policies::record_delegation_ends(),
    )
    .await
    .ok();
}

/// Pushes the changes waiting in the outbox, in order. Delivery is at least once with bounded
/// retries; a webhook that stays down loses its pushes, never the task.
async fn deliver_pushes(ctx: &mut WorkflowContext<TaskWorkflow>) {
    let deliveries = ctx.state_mut(|s| std::mem::take(&mut s.outbox));
    let detached = WorkflowCancellationToken::new();
    for delivery in deliveries {
        let summary = format!("push {} to webhook {}", delivery.state, delivery.config.id);
        ctx.execute_activity(
            BatonActivities::deliver_push,
            delivery,
            policies::summarized(policies::deliver_push(&detached), summary),
        )
        .await
        .ok();
    }
}

/// One call to the model. `None` when the task was cancelled meanwhile.
async fn model_turn(
    ctx: &mut WorkflowContext<TaskWorkflow>,
) -> WorkflowResult<Option<InvokeModelOut>> {
    if ctx.state(|s| s.state) != TaskState::Working {
        set_state(ctx, TaskState::Working, None);
    }
    let request = ctx.state_mut(|s| {
        s.take_arrived_messages();
        s.unread_messages = 0;
        for note in s.pending_notes.drain(..) {
            s.history.push(HistoryItem::User {
                text: note,
                source: Source::Agent,
            });
        }
        InvokeModelIn {
            task_id: String::new(),
            model: s.input.model.clone(),
            reasoning_effort: s.input.reasoning_effort.clone(),
            task_section: render_task_section(&s.input, &s.sub_tasks),
            history: s.history.clone(),
            compacted: s.compacted,
            roster: s.roster.clone(),
        }
    });
    let request = InvokeModelIn {
        task_id: ctx.workflow_id().to_string(),
        ..request
    };
    let size = serde_json::to_vec(&request).map_or(usize::MAX, |bytes| bytes.len());
    if let Some(reason) = payload_too_large("the model's input", size) {
        return Err(fail(ctx, reason).await);
    }
    let summary = format!("model turn {}", ctx.state(|s| s.turns + 1));
    let call = ctx.cancellation_token().child_token();
    let options = policies::summarized(policies::invoke_model(&call), summary);
    let outcome = select! {
        out = ctx.execute_activity(BatonActivities::invoke_model, request, options) => Some(out),
        _ = ctx.wait_condition(|s: &TaskWorkflow| s.cancel_reason.is_some()) => None,
    };
    if outcome.is_none() {
        // A cancel that reached the task as A2A's CancelTask (which the workflow's own token
        // does not carry) stops the call: the activity hears it at its next heartbeat and drops
        // its HTTP request rather than run it to the end (a real model bills it).
        call.cancel();
    }
    let turn = match outcome {
        None => return Ok(None),
        Some(Ok(turn)) => turn,
        Some(Err(error)) if error.as_cancelled().is_some() => return Ok(None),
        Some(Err(error)) => {
            let reason = activity_failure::message(&error);
            return Err(fail(ctx, format!("the model call failed: {reason}")).await);
        }
    };
    let now = ctx.workflow_time();
    let task_id = ctx.workflow_id().to_string();
    ctx.state_mut(|s| {
        s.turns += 1;
        s.turns_since_message += 1;
        s.turns_this_run += 1;
        // What the turn left out for the context budget leaves the history for good.
        let cut = (turn.cut as usize).min(s.history.len());
        s.history.drain(..cut);
        s.compacted += cut as u32;
        if s.roster.is_none() {
            s.roster = Some(TaskRoster {
                agents: turn.agents.clone(),
            });
        }
        if turn.tool_calls.is_empty() {
            s.last_answer = turn.text.clone();
            if let Some(text) = &turn.text {
                let answer = TaskMessage {
                    message_id: format!("{task_id}:answer:{}", s.turns),
                    role: MessageRole::Agent,
                    text: text.clone(),
                };
                s.messages.push(answer.clone());
                s.log.push(now, TaskEvent::Message { message: answer });
            }
        }
        s.history.push(HistoryItem::Assistant {
            text: turn.text.clone(),
            tool_calls: turn.tool_calls.clone(),
        });
    });
    Ok(Some(turn))
}

/// Runs one tool call of `turn` and returns what the model reads as its result.
async fn run_tool_call(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    call: &ToolCallRecord,
    turn: &InvokeModelOut,
) -> String {
    if cancel_requested(ctx) {
        return tool_error_content(&ToolError {
            code: "task.cancelled".into(),
            message: "the task is being cancelled: nothing more is started".into(),
            rejected: Some(call.name.clone()),
            available: Vec::new(),
        });
    }
    if let Some(refusal) = &call.refused {
        return tool_error_content(&ToolError {
            code: "tool.refused".into(),
            message: refusal.clone(),
            rejected: Some(call.name.clone()),
            available: Vec::new(),
        });
    }
    if call.name == REPLY_TO_SUBTASK {
        return answer_sub_task(ctx, call).await;
    }
    if call.name == ASK_PARTICIPANT {
        return match validate_ask(&call.arguments) {
            Ok(question) => {
                ctx.state_mut(|s| {
                    s.question = Some(match s.question.take() {
                        Some(earlier) => format!("{earlier}\n{question}"),
                        None => question,
                    });
                });
                ASKED_CONTENT.to_string()
            }
            Err(error) => tool_error_content(&error),
        };
    }
    if let Some(tool) = turn.mcp_tools.iter().find(|tool| tool.name == call.name) {
        return call_mcp_tool(ctx, call, tool).await;
    }
    if call.name != SPAWN_SUBTASK {
        let available: Vec<String> = [SPAWN_SUBTASK, REPLY_TO_SUBTASK, ASK_PARTICIPANT]
            .into_iter()
            .map(str::to_string)
            .chain(turn.mcp_tools.iter().map(|tool| tool.name.clone()))
            .collect();
        return tool_error_content(&ToolError {
            code: "tool.not_found".into(),
            message: format!(
                "no tool {:?}; the tools are {}",
                call.name,
                available.join(", ")
            ),
            rejected: Some(call.name.clone()),
            available,
        });
    }
    let registered: BTreeSet<String> = turn.agents.iter().cloned().collect();
    match validate_spawn(&call.arguments, &registered) {
        Err(error) => tool_error_content(&error),
        Ok(request) => delegate(ctx, request).await,
    }
}

/// Puts the model's question to the participants: it joins the task's messages, and the task
/// waits INPUT_REQUIRED (`awaiting-answer`) with the question as its status, until a
/// participant's next message, which the model reads as the answer.
fn pose_question(ctx: &mut WorkflowContext<TaskWorkflow>, question: String) {
    let now = ctx.workflow_time();
    let task_id = ctx.workflow_id().to_string();
    ctx.state_mut(|s| {
        let asked = TaskMessage {
            message_id: format!("{task_id}:question:{}", s.turns),
            role: MessageRole::Agent,
            text: question.clone(),
        };
        s.messages.push(asked.clone());
        s.log.push(now, TaskEvent::Message { message: asked });
    });
    record_state(
        ctx,
        TaskState::InputRequired,
        Some(AWAITING_ANSWER.into()),
        Some(question),
    );
}

/// One call of an MCP tool, as an `invoke_tool` activity whose retries respect whether the tool
/// is safe to call again. A call that got no answer reaches the model as an error saying so; a
/// cancel of the task during the call ends it.
async fn call_mcp_tool(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    call: &ToolCallRecord,
    tool: &OfferedTool,
) -> String {
    let input = InvokeToolIn {
        task_id: ctx.workflow_id().to_string(),
        tool: tool.name.clone(),
        arguments: call.arguments.clone(),
    };
    let call_token = ctx.cancellation_token().child_token();
    let options = policies::summarized(
        policies::invoke_tool(tool.retry_safe, &call_token),
        format!("tool {}", tool.name),
    );
    let outcome = select! {
        out = ctx.execute_activity(BatonActivities::invoke_tool, input, options) => Some(out),
        _ = ctx.wait_condition(|s: &TaskWorkflow| s.cancel_reason.is_some()) => None,
    };
    if outcome.is_none() {
        // As for a model call: the cancel stops the tool call under way.
        call_token.cancel();
    }
    match outcome {
        Some(Ok(out)) => out.content,
        Some(Err(error)) if error.as_cancelled().is_none() => tool_failure_content(
            &tool.name,
            &activity_failure::message(&error),
            tool.retry_safe,
        ),
        _ => tool_error_content(&ToolError {
            code: "task.cancelled".into(),
            message: format!("the task is being cancelled: {} was stopped", tool.name),
            rejected: Some(call.name.clone()),
            available: Vec::new(),
        }),
    }
}

/// `reply_to_subtask`: the model's answer to a sub-task's question, sent to its stand-in. The row
/// works again from the moment the answer is taken, so the agent's next question is news.
async fn answer_sub_task(ctx: &mut WorkflowContext<TaskWorkflow>, call: &ToolCallRecord) -> String {
    let request = match ctx.state(|s| validate_reply(&call.arguments, &s.sub_tasks)) {
        Ok(request) => request,
        Err(error) => return tool_error_content(&error),
    };
    let now = ctx.workflow_time();
    let Some(row) = ctx.state_mut(|s| s.mark_row_answered(now, &request.stand_in_id)) else {
        unreachable!("validate_reply found the row");
    };
    if send_answer(ctx, &request.stand_in_id, request.text).await {
        return replied_content(&row);
    }
    tool_error_content(&ToolError {
        code: SUB_TASK_NOT_WAITING.into(),
        message: format!(
            "sub-task {} has ended, so the answer was not sent; its result arrives as a note",
            request.stand_in_id
        ),
        rejected: Some(request.stand_in_id),
        available: Vec::new(),
    })
}

/// Signals `text` to the stand-in `stand_in_id` as the next answer. False when the stand-in has
/// ended, and with it the sub-task: its end reaches the parent as a `child_done`.
async fn send_answer(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    stand_in_id: &str,
    text: String,
) -> bool {
    let first_run_id = ctx.info().first_execution_run_id().to_string();
    let reply = ctx.state_mut(|s| s.next_reply(&first_run_id, stand_in_id, text));
    ctx.external_workflow(stand_in_id.to_string(), None)
        .signal(
            RemoteTaskWorkflow::reply,
            reply,
            SignalWorkflowOptions::default(),
        )
        .await
        .is_ok()
}

/// Waits, while sub-tasks run, until the model has something to read (a note, a participant's
/// message) or the task is cancelled. Meanwhile it sends participants' answers on to their
/// sub-tasks and keeps the task's status telling its participants which sub-tasks wait for
/// their authorisation, and what each agent asked.
async fn wait_for_sub_tasks(ctx: &mut WorkflowContext<TaskWorkflow>) {
    // A participant's message wakes a waiting task too, so it is answered before the sub-tasks
    // end.
    let for_the_model = |s: &TaskWorkflow| {
        !s.pending_notes.is_empty() || s.cancel_reason.is_some() || s.unread_messages > 0
    };
    loop {
        forward_participant_answers(ctx).await;
        relay_authorisation_requests(ctx);
        deliver_pushes(ctx).await;
        let asked = ctx.state(|s| authorisation_request(&s.sub_tasks));
        let woke = ctx
            .wait_condition(move |s: &TaskWorkflow| {
                for_the_model(s)
                    || !s.replies_out.is_empty()
                    || authorisation_request(&s.sub_tasks) != asked
            })
            .await;
        if woke.is_err() || ctx.state(for_the_model) || cancel_requested(ctx) {
            return;
        }
    }
}

/// Sends each participant's answer waiting in `replies_out` to its stand-in. One whose stand-in
/// has ended is dropped with a note: the sub-task's end reaches the model as its own note.
async fn forward_participant_answers(ctx: &mut WorkflowContext<TaskWorkflow>) {
    let answers = ctx.state_mut(|s| std::mem::take(&mut s.replies_out));
    for answer in answers {
        if !send_answer(ctx, &answer.stand_in_id, answer.text).await {
            ctx.state_mut(|s| {
                s.pending_notes.push(format!(
                    "A participant's answer to sub-task {} was not sent: the sub-task has ended",
                    answer.stand_in_id
                ));
            });
        }
    }
}

/// Puts the task in AUTH_REQUIRED, with what each agent asked, while a sub-task waits for its
/// participants' authorisation, and back in WORKING once none does.
fn relay_authorisation_requests(ctx: &WorkflowContext<TaskWorkflow>) {
    let (asked, current) = ctx.state(|s| {
        (
            authorisation_request(&s.sub_tasks),
            (s.state, s.sub_state.clone(), s.status_message.clone()),
        )
    });
    match asked {
        Some(asked) => {
            let wanted = (
                TaskState::AuthRequired,
                Some(AWAITING_AUTHORISATION.to_string()),
                Some(asked.clone()),
            );
            if current != wanted {
                record_state(
                    ctx,
                    TaskState::AuthRequired,
                    Some(AWAITING_AUTHORISATION.into()),
                    Some(asked),
                );
            }
        }
        None if current.0 == TaskState::AuthRequired => set_state(ctx, TaskState::Working, None),
        None => {}
    }
}

/// Creates the remote task, then starts its stand-in. A creation that fails, or a child that
/// ended in its first answer, is resolved at once: never a stuck row. A creation that fails for
/// good, or that a cancel gives up on, cancels whatever it left in its context.
async fn delegate(ctx: &mut WorkflowContext<TaskWorkflow>, request: SpawnRequest) -> String {
    let parent_id = ctx.workflow_id().to_string();
    let first_run_id = ctx.info().first_execution_run_id().to_string();
    // A task with a deadline of its own gives its sub-tasks no more than it has left.
    let deadline_secs = within_task_deadline(request.deadline_secs, task_deadline_left(ctx));
    let (stand_in_id, brief) = ctx.state_mut(|s| {
        let stand_in_id = format!("{parent_id}.{}", s.sub_tasks.len() + 1);
        let ids = delegation_ids(&first_run_id, &stand_in_id);
        s.sub_tasks.push(SubTaskRow {
            workflow_id: stand_in_id.clone(),
            name: request.name.clone(),
            agent: request.agent.clone(),
            remote_task_id: None,
            context_id: Some(ids.context_id.clone()),
            state: TaskState::Submitted,
            sub_state: None,
            summary: None,
            resolved: false,
        });
        let parent_ref = TaskRef {
            task_id: parent_id.clone(),
            agent: None,
        };
        let brief = StartAgentTaskIn {
            agent: request.agent.clone(),
            stand_in_id: stand_in_id.clone(),
            message_id: ids.message_id,
            context_id: Some(ids.context_id),
            text: brief_text(
                &request.goal,
                &request.description,
                &request.acceptance_criteria,
            ),
            envelope: Some(brief_envelope(&request, &s.input, parent_ref)),
            deadline_secs,
        };
        (stand_in_id, brief)
    });
    let context = CancelContextIn {
        stand_in_id: stand_in_id.clone(),
        agent: request.agent.clone(),
        context_id: brief.context_id.clone().unwrap_or_default(),
        keep: None,
    };
    let created = create_remote_task(ctx, &request, brief).await;
    let (task, deadline_secs, watch, sent_again) = match created {
        Ok(StartAgentTaskOut::Started {
            task,
            deadline_secs,
            watch,
            sent_again,
        }) => (task, deadline_secs, watch, sent_again),
        Ok(StartAgentTaskOut::Answered { text }) => {
            let answered = RemoteSnapshot {
                remote_task_id: "-".into(),
                state: TaskState::Completed,
                sub_state: None,
                text: Some(text),
            };
            record_change(ctx, &stand_in_id, &answered);
            return spawned_content(&request.name, &request.agent, None, TaskState::Completed);
        }
        Ok(StartAgentTaskOut::Failed { reason }) => {
            cancel_context(ctx, context).await;
            return creation_failed(ctx, &stand_in_id, &reason);
        }
        Err(error) => {
            cancel_context(ctx, context).await;
            let reason = if error.as_cancelled().is_some() {
                "the task was cancelled before the agent created it".to_string()
            } else {
                activity_failure::message(&error)
            };
            return creation_failed(ctx, &stand_in_id, &reason);
        }
    };

    // A brief sent twice may have left a second task in the context: whoever ends the
    // delegation cancels it.
    let duplicates = sent_again.then(|| CancelContextIn {
        keep: Some(task.remote_task_id.clone()),
        ..context
    });
    let seen = map_remote_state(task.clone(), true);
    record_change(ctx, &stand_in_id, &seen);
    if seen.state.is_terminal() {
        if let Some(duplicates) = duplicates {
            cancel_context(ctx, duplicates).await;
        }
        return spawned_content(
            &request.name,
            &request.agent,
            Some(&task.remote_task_id),
            seen.state,
        );
    }
    let unwatched = RemoteTaskIn {
        stand_in_id: stand_in_id.clone(),
        agent: request.agent.clone(),
        remote_task_id: task.remote_task_id.clone(),
    };
    if cancel_requested(ctx) {
        // Cancelled while the agent created it: nobody will watch it, so stop it now.
        let after = cancel_unwatched(ctx, unwatched, &task).await;
        if let Some(duplicates) = duplicates {
            cancel_context(ctx, duplicates).await;
        }
        return spawned_content(
            &request.name,
            &request.agent,
            Some(&task.remote_task_id),
            after,
        );
    }
    let start = RemoteStart {
        parent_workflow_id: parent_id,
        agent: request.agent.clone(),
        name: request.name.clone(),
        delegated: true,
        last: task.clone(),
        history_event_bound: ctx.state(|s| s.input.limits.history_event_bound),
        carry: None,
        deadline_at_ms: deadline_secs
            .zip(ctx.workflow_time())
            .map(|(secs, now)| deadline_at_ms(now, secs)),
        deadline_secs,
        watch,
        duplicates_in: duplicates.as_ref().map(|d| d.context_id.clone()),
    };
    let options = ChildWorkflowOptions::builder()
        .workflow_id(stand_in_id.clone())
        .parent_close_policy(ParentClosePolicy::Abandon)
        .static_summary(format!("{} on {}", request.name, request.agent))
        .build();
    if let Err(error) = ctx
        .start_child_workflow(RemoteTaskWorkflow::run, start, options)
        .await
    {
        // Nobody would watch the remote task: cancel it rather than leave it running.
        cancel_unwatched(ctx, unwatched, &task).await;
        if let Some(duplicates) = duplicates {
            cancel_context(ctx, duplicates).await;
        }
        return creation_failed(
            ctx,
            &stand_in_id,
            &format!("its stand-in did not start: {error}"),
        );
    }
    spawned_content(
        &request.name,
        &request.agent,
        Some(&task.remote_task_id),
        seen.state,
    )
}

/// Runs `start_agent_task` on a token of its own. A cancel of the task lets the attempt under
/// way finish, for up to [`CANCEL_GRACE`], so the task it creates is known and can be
/// cancelled; past that it is given up, and the caller cancels the delegation's context.
async fn create_remote_task(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    request: &SpawnRequest,
    brief: StartAgentTaskIn,
) -> Result<StartAgentTaskOut, ActivityExecutionError> {
    let token = WorkflowCancellationToken::new();
    let summary = format!("create sub-task {} on {}", request.name, request.agent);
    let options = policies::summarized(policies::start_agent_task(&token), summary);
    let mut create =
        std::pin::pin!(ctx.execute_activity(BatonActivities::start_agent_task, brief, options));
    select! {
        out = create.as_mut() => return out,
        _ = ctx.cancelled() => {},
        _ = ctx.wait_condition(|s: &TaskWorkflow| s.cancel_reason.is_some()) => {},
    };
    // The workflow's own token is cancelled by now: the grace timer runs on the create's.
    let mut grace = ctx.timer(
        TimerOptions::builder(CANCEL_GRACE)
            .cancellation_token(token.clone())
            .build(),
    );
    select! {
        out = create.as_mut() => return out,
        _ = grace => {},
    };
    token.cancel();
    create.await
}

/// Cancels a created task no stand-in watches, and resolves its row as the cancel ended
/// (CANCELED once confirmed, FAILED when it was not). Returns the row's state.
async fn cancel_unwatched(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    task: RemoteTaskIn,
    seen: &RemoteSnapshot,
) -> TaskState {
    let cleanup = WorkflowCancellationToken::new();
    let summary = format!(
        "cancel unwatched task {} on {}",
        task.remote_task_id, task.agent
    );
    let stand_in_id = task.stand_in_id.clone();
    let after = cancel_until_ended(ctx, task, summary, &cleanup, seen, true)
        .await
        .into_row();
    record_change(ctx, &stand_in_id, &after);
    after.state
}

/// Cancels what a creation that did not finish, or that sent its brief twice, may have left in
/// its context, best effort.
async fn cancel_context(ctx: &mut WorkflowContext<TaskWorkflow>, context: CancelContextIn) {
    if context.context_id.is_empty() {
        return;
    }
    let cleanup = WorkflowCancellationToken::new();
    let summary = format!(
        "cancel what the creation of {} left on {}",
        context.stand_in_id, context.agent
    );
    ctx.execute_activity(
        BatonActivities::cancel_context_tasks,
        context,
        policies::summarized(policies::cancel_context_tasks(&cleanup), summary),
    )
    .await
    .ok();
}

/// Applies what the parent learned of a child, as a `child_done` would.
fn record_change(ctx: &WorkflowContext<TaskWorkflow>, stand_in_id: &str, seen: &RemoteSnapshot) {
    let now = ctx.workflow_time();
    ctx.state_mut(|s| {
        let before = s.row(stand_in_id);
        let done = ChildDone {
            workflow_id: stand_in_id.to_string(),
            remote_task_id: seen.remote_task_id.clone(),
            state: seen.state,
            sub_state: seen.sub_state.clone(),
            summary: seen.text.clone().unwrap_or_default(),
        };
        if let Some(note) = apply_child_done(&mut s.sub_tasks, &done) {
            s.pending_notes.push(note);
        }
        let after = s.row(stand_in_id);
        if let Some(row) = &after {
            s.log.push(now, TaskEvent::SubTask { row: row.clone() });
        }
        s.ended
            .extend(delegation_end(before.as_ref(), after.as_ref()));
    });
}

fn creation_failed(ctx: &WorkflowContext<TaskWorkflow>, stand_in_id: &str, reason: &str) -> String {
    let now = ctx.workflow_time();
    ctx.state_mut(|s| {
        let row = s
            .sub_tasks
            .iter_mut()
            .find(|r| r.workflow_id == stand_in_id)
            .expect("the row was pushed before the creation");
        row.state = TaskState::Failed;
        row.summary = Some(reason.to_string());
        row.resolved = true;
        let note = creation_failed_note(row, reason);
        let row = row.clone();
        s.ended.push(DelegationEnd {
            agent: row.agent.clone(),
            state: row.state,
        });
        s.log.push(now, TaskEvent::SubTask { row });
        note
    })
}

/// Cancels every open stand-in (each cancels its remote task with CancelTask), waits for them to
/// confirm, then ends CANCELED.
async fn cancel_everything(ctx: &mut WorkflowContext<TaskWorkflow>) -> WorkflowResult<TaskView> {
    let reason = ctx
        .state(|s| s.cancel_reason.clone())
        .or_else(|| ctx.cancellation_token().reason())
        .unwrap_or_else(|| "cancelled".into());
    let stopped_any = stop_open_sub_tasks(ctx, &reason).await;
    set_state(ctx, TaskState::Canceled, Some(reason));
    deliver_pushes(ctx).await;
    if stopped_any {
        record_delegation_ends(ctx).await;
    }
    Err(WorkflowTermination::cancelled())
}

/// Cancels every open stand-in with `reason` and waits, up to [`CANCEL_GRACE`], for each to
/// confirm. Returns whether there was any to cancel.
async fn stop_open_sub_tasks(ctx: &mut WorkflowContext<TaskWorkflow>, reason: &str) -> bool {
    let open: Vec<String> = ctx.state(|s| {
        s.sub_tasks
            .iter()
            .filter(|r| !r.resolved && r.remote_task_id.is_some())
            .map(|r| r.workflow_id.clone())
            .collect()
    });
    for stand_in in &open {
        ctx.external_workflow(stand_in.clone(), None)
            .cancel(Some(reason.to_string()))
            .await
            .ok();
    }
    if open.is_empty() {
        return false;
    }
    let cleanup = WorkflowCancellationToken::new();
    let mut all_resolved = ctx.wait_condition_with_options(
        |s: &TaskWorkflow| {
            s.sub_tasks
                .iter()
                .all(|r| r.resolved || r.remote_task_id.is_none())
        },
        WaitConditionOptions::builder()
            .cancellation_token(cleanup.clone())
            .build(),
    );
    let mut grace = ctx.timer(
        TimerOptions::builder(CANCEL_GRACE)
            .cancellation_token(cleanup.clone())
            .build(),
    );
    select! {
        _ = all_resolved => {},
        _ = grace => {},
    };
    true
}

/// Ends the task COMPLETED (its answer is its last one): its view is the workflow's result.
async fn complete(ctx: &mut WorkflowContext<TaskWorkflow>) -> WorkflowResult<TaskView> {
    set_state(ctx, TaskState::Completed, None);
    deliver_pushes(ctx).await;
    record_delegation_ends(ctx).await;
    let task_id = ctx.workflow_id().to_string();
    Ok(ctx.state(|s| s.view(&task_id)))
}

/// Ends the task FAILED for `reason`, its open sub-tasks cancelled first so that nothing is left
/// running. Returns the workflow's failure, so the Web UI shows it failed with the reason: the
/// caller returns it.
async fn fail(ctx: &mut WorkflowContext<TaskWorkflow>, reason: String) -> WorkflowTermination {
    stop_open_sub_tasks(ctx, &format!("the parent task failed: {reason}")).await;
    set_state(ctx, TaskState::Failed, Some(reason.clone()));
    deliver_pushes(ctx).await;
    record_delegation_ends(ctx).await;
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
