//! The `TaskWorkflow` contract: its input, the `child_done` and `cancel` signals, and what its
//! `task` and `events_since` queries return.

use serde::{Deserialize, Serialize};

use crate::content::Attachment;

/// An A2A 1.0 task state, written with its A2A name (`"TASK_STATE_WORKING"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskState {
    /// Accepted, not yet started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Being worked on.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Waiting for a message: an answer, or the next request.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Waiting for an authorisation or a credential that only a participant can give.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Done. Terminal.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Ended without being done. Terminal.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Ended by a cancel. Terminal.
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Refused by the agent. Terminal.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
}

impl TaskState {
    /// Every state, in the order the A2A spec lists them.
    pub const ALL: [TaskState; 8] = [
        TaskState::Submitted,
        TaskState::Working,
        TaskState::InputRequired,
        TaskState::AuthRequired,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::Rejected,
    ];

    /// COMPLETED, FAILED, CANCELED or REJECTED: the task will not change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// INPUT_REQUIRED or AUTH_REQUIRED: the task waits for someone.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// The short upper-case name the model and the logs read: `COMPLETED`, `INPUT_REQUIRED`.
    pub fn short_name(self) -> &'static str {
        match self {
            TaskState::Submitted => "SUBMITTED",
            TaskState::Working => "WORKING",
            TaskState::InputRequired => "INPUT_REQUIRED",
            TaskState::AuthRequired => "AUTH_REQUIRED",
            TaskState::Completed => "COMPLETED",
            TaskState::Failed => "FAILED",
            TaskState::Canceled => "CANCELED",
            TaskState::Rejected => "REJECTED",
        }
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.short_name())
    }
}

/// How a task ends its turns: a conversation parks awaiting the next message after each
/// answer; a delegated task completes when its work is done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    /// Parks INPUT_REQUIRED (`awaiting-next-message`) after each answer, until the next message,
    /// a cancel or `limits.idle_timeout_secs`.
    Conversation,
    /// Completes when the model answers without tools and no sub-task is open. The default.
    #[default]
    Delegated,
}

/// What a participant is: `human` or `agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParticipantKind {
    /// A person.
    Human,
    /// An agent.
    Agent,
}

/// What a participant does on a task: `assignee`, `reporter`, `watcher` or `admin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParticipantRole {
    /// Does the work.
    Assignee,
    /// Asked for the task.
    Reporter,
    /// Follows the task.
    Watcher,
    /// May change the task.
    Admin,
}

/// Someone on a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Participant {
    /// The participant's id, as messages name the sender.
    pub id: String,
    /// A person or an agent.
    pub kind: ParticipantKind,
    /// What the participant does on the task.
    pub role: ParticipantRole,
    /// A name to show; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// A task somewhere: `agent` is the agent id it lives on, or absent for this Baton.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    /// The task's id on the agent it lives on.
    pub task_id: String,
    /// The agent id it lives on; absent: this Baton.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The input of a `TaskWorkflow`. The workflow id is the task id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// A short name, shown to the model and in the `task` query.
    pub name: String,
    /// What the task must achieve.
    pub goal: String,
    /// The context the task needs; default empty.
    #[serde(default)]
    pub description: String,
    /// Checks that tell when the task is done; default none.
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    /// Who is on the task; only they may send it messages. Default none.
    #[serde(default)]
    pub participants: Vec<Participant>,
    /// How the task ends its turns; default delegated.
    #[serde(default)]
    pub lifecycle: Lifecycle,
    /// The model to use, when not the worker's `[model] model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Passed to the model as `reasoning_effort`; absent: none sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Tasks this one serves; default none.
    #[serde(default)]
    pub parent_tasks: Vec<TaskRef>,
    /// Bounds on the task; a field left out keeps its default.
    #[serde(default)]
    pub limits: TaskLimits,
    /// The A2A context the task belongs to, when it was created over A2A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The conversation so far of the context's previous task, when this task continues a
    /// context: the model's history starts from it. Bounded by the gateway.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<TaskMessage>,
    /// Set only by the workflow itself when it continues as new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry: Option<TaskCarry>,
}

/// Bounds on one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaskLimits {
    /// Model turns after a participant message (or the brief) before the task fails with
    /// "turn limit reached".
    pub max_turns: u32,
    /// Workflow history events before the workflow continues as new.
    pub history_event_bound: u32,
    /// Seconds a conversation may wait for its next message before it completes; 0 waits for
    /// ever.
    pub idle_timeout_secs: u64,
    /// Seconds the task may run before it fails "deadline exceeded": what its delegator gave
    /// it (the deadline extension). None runs without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_secs: Option<u64>,
    /// Model tokens the task may use, its sub-tasks' included, before it fails "budget spent":
    /// what its delegator gave it (the budget extension). None runs without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// What the task's model turns may cost, its sub-tasks' included, in billionths of
    /// `model.currency`, before it fails "budget spent": what its delegator gave it (the budget
    /// extension). None runs without a budget in money.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_cost_nanos: Option<u64>,
}

/// How long a conversation waits for its next message by default: a week.
pub const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 7 * 24 * 3600;

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_turns: 50,
            history_event_bound: 10_000,
            idle_timeout_secs: DEFAULT_IDLE_TIMEOUT_SECS,
            deadline_secs: None,
            budget_tokens: None,
            budget_cost_nanos: None,
        }
    }
}

/// One item of the conversation the model sees, after the task itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryItem {
    /// A message to the model: from a participant, or a note about a sub-task.
    User {
        /// The message.
        text: String,
        /// Who wrote it.
        source: Source,
        /// The files and data it carried.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Attachment>,
    },
    /// What the model said, and the tools it called.
    Assistant {
        /// What the model said, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The tools the model called, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRecord>,
    },
    /// A tool's answer to one call.
    ToolResult {
        /// The id of the call answered.
        call_id: String,
        /// The answer, as the model reads it.
        content: String,
    },
}

/// Who wrote a user-side message. Anything from an agent is untrusted data to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A participant's message.
    Participant,
    /// A note, such as a sub-task's result: framed as untrusted data for the model.
    Agent,
}

/// One tool call of the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The call's id, as the model gave it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them; empty when the call is refused.
    pub arguments: String,
    /// Why the call does not run, when it is over a bound of one answer (too many calls, too
    /// large arguments); the model reads this as the call's tool error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// One delegation, as the parent tracks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubTaskRow {
    /// The stand-in's workflow id, `<parent id>.<n>`: the sub-task's id in Baton.
    pub stand_in_id: String,
    /// The sub-task's name, from the `spawn_subtask` call.
    pub name: String,
    /// The agent id, from the `spawn_subtask` call.
    pub agent: String,
    /// The task's own id on the agent, once it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_task_id: Option<String>,
    /// The A2A context the brief opened on the agent: where the task is looked for again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// As the agent last reported it; a delegated sub-task parked awaiting its next message is
    /// recorded COMPLETED.
    pub state: TaskState,
    /// As the agent last reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
    /// The agent's last answer, capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// True once the parent need not wait for it any more.
    pub resolved: bool,
    /// The files and data of the task's artifacts, kept by reference once it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// The model tokens the sub-task used, its own sub-tasks' included, as its agent last
    /// reported them; absent from an agent that does not report usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// Model tokens used, as the provider reported them, and what they cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens the model read.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens the model wrote.
    #[serde(default)]
    pub output_tokens: u64,
    /// What the tokens cost, in billionths of `model.currency`, from `model.prices`: 0 where no
    /// price is configured.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cost_nanos: u64,
}

impl Usage {
    /// Both counts together.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Whether nothing was used.
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }

    /// `self` and `other` together.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cost_nanos: self.cost_nanos.saturating_add(other.cost_nanos),
        }
    }
}

/// A delegation that ended, as the parent resolved its row: what `record_delegation_ends`
/// counts in the metrics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelegationEnd {
    /// The delegate's agent id.
    pub agent: String,
    /// COMPLETED, FAILED, CANCELED or REJECTED.
    pub state: TaskState,
}

/// A task that failed, as `report_task_failed` logs it in the worker's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskFailure {
    /// The task's id.
    pub task_id: String,
    /// Why it failed.
    pub reason: String,
}

/// The `child_done` signal a stand-in sends its parent on each change it hears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildDone {
    /// The stand-in's workflow id: the parent matches rows by it.
    pub stand_in_id: String,
    /// The task's id on the agent.
    pub remote_task_id: String,
    /// The task's state.
    pub state: TaskState,
    /// The task's sub-state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
    /// The agent's last answer or status message, capped at 4,000 characters; empty keeps the
    /// row's summary.
    #[serde(default)]
    pub summary: String,
    /// The files and data of the task's artifacts, once it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// The model tokens the task used, its sub-tasks' included, as its agent reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A message to the task, as the `inbox` update carries it: from a participant, over A2A.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InboxMessage {
    /// The sender's message id: a repeat of an accepted id is a duplicate, not a new message.
    pub message_id: String,
    /// The sender: one of the input's participants.
    pub participant_id: String,
    /// The message.
    pub text: String,
    /// A webhook sent with the message (SendMessage's `taskPushNotificationConfig`). It is
    /// registered before the message is taken, so the first change the message causes is pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_config: Option<PushConfig>,
    /// The sub-task this message answers (its row's id), when the participant answers a
    /// sub-task's question through this task: it goes to the sub-task's agent, not the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_in_id: Option<String>,
    /// The files and data the message carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// What the `inbox` update answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxReceipt {
    /// The message's id.
    pub message_id: String,
    /// The task already held this message id from a participant: nothing was added.
    pub duplicate: bool,
    /// The task's state when the message arrived.
    pub state: TaskState,
    /// The event log's next sequence number when the message arrived: stream from here.
    pub cursor: u64,
}

/// One message of the task's A2A history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMessage {
    /// The sender's message id; an answer of the model is `<task id>:answer:<turn>`.
    pub message_id: String,
    /// Who wrote it.
    pub role: MessageRole,
    /// The message.
    pub text: String,
    /// The files and data it carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// Who wrote a task message, as A2A names the sides: `user` or `agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    /// A participant.
    User,
    /// The task's model.
    Agent,
}

/// What the `task` query returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskView {
    /// The workflow id.
    pub task_id: String,
    /// The input's name.
    pub name: String,
    /// SUBMITTED before the first turn, WORKING while it runs, INPUT_REQUIRED or AUTH_REQUIRED
    /// while it waits for its participants, then COMPLETED, FAILED or CANCELED.
    pub state: TaskState,
    /// What a waiting task waits for: `awaiting-next-message`, `awaiting-answer` or
    /// `awaiting-sub-task-authorisation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
    /// Why the task is in its state, when that needs saying ("turn limit reached").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// One row per sub-task, in the order they were spawned.
    pub sub_tasks: Vec<SubTaskRow>,
    /// The text of the last model turn that called no tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_answer: Option<String>,
    /// Model turns taken, across continue-as-new.
    pub turns: u32,
    /// The input's `context_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task's messages, oldest first: what A2A calls its history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<TaskMessage>,
    /// The input's participants.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub participants: Vec<Participant>,
    /// When the task last changed state (workflow time, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// The event log's next sequence number when the view was taken: a stream that starts with
    /// this view goes on from there, so it never repeats what the view already shows. Absent
    /// (0) from workers before it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub event_seq: u64,
    /// The task's brief, as its input gave it; the gateway publishes it in the task extension.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub goal: String,
    /// The input's description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The input's acceptance criteria.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acceptance_criteria: Vec<String>,
    /// The input's lifecycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// The input's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The input's reasoning effort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// The input's parent tasks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parent_tasks: Vec<TaskRef>,
    /// The conversation the task started from, when it continued a context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<TaskMessage>,
    /// The files the task's tools gave, in order; a completed task's artifacts carry them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_files: Vec<ToolFile>,
    /// The files the model chose for its answer; absent: every file the task made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_files: Option<AnswerFiles>,
    /// The model tokens the task's own turns used (its sub-tasks' are on their rows).
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub usage: Usage,
}

/// The largest listed view a task keeps in its memo, serialised: a bigger one is left out and
/// ListTasks reads that task with a query instead. Every state change writes the memo into
/// history, so it must stay small.
pub const LISTED_VIEW_LIMIT: usize = 16 * 1024;

impl TaskView {
    /// The task `first` has just created from `input`, as the workflow shows it once it takes
    /// the message and before its first turn: SUBMITTED, with the message as its history.
    /// `at` is the status timestamp, RFC 3339.
    pub fn opened(task_id: &str, input: &TaskInput, first: &InboxMessage, at: String) -> TaskView {
        TaskView {
            task_id: task_id.to_string(),
            name: input.name.clone(),
            state: TaskState::Submitted,
            sub_state: None,
            status_message: None,
            sub_tasks: Vec::new(),
            last_answer: None,
            turns: 0,
            context_id: input.context_id.clone(),
            messages: vec![TaskMessage {
                message_id: first.message_id.clone(),
                role: MessageRole::User,
                text: first.text.clone(),
                attachments: first.attachments.clone(),
            }],
            participants: input.participants.clone(),
            updated_at: Some(at),
            event_seq: 1,
            goal: input.goal.clone(),
            description: input.description.clone(),
            acceptance_criteria: input.acceptance_criteria.clone(),
            lifecycle: Some(input.lifecycle),
            model: input.model.clone(),
            reasoning_effort: input.reasoning_effort.clone(),
            parent_tasks: input.parent_tasks.clone(),
            earlier: input.earlier.clone(),
            tool_files: Vec::new(),
            answer_files: None,
            usage: Usage::default(),
        }
    }

    /// What ListTasks shows of the task, for its memo: the view without its history, its answer
    /// or the conversation it continued, but with the agent message its status carries when it
    /// parks or ends with no status message of its own. `None` when that is still larger than
    /// [`LISTED_VIEW_LIMIT`].
    pub fn listed(&self) -> Option<TaskView> {
        let says_last_answer = self.status_message.is_none()
            && (self.state.is_terminal() || self.state.is_interrupted());
        let status_source = self
            .messages
            .iter()
            .rev()
            .find(|m| m.role == MessageRole::Agent)
            .filter(|_| says_last_answer)
            .cloned();
        let listed = TaskView {
            messages: status_source.into_iter().collect(),
            last_answer: None,
            earlier: Vec::new(),
            ..self.clone()
        };
        let size = serde_json::to_vec(&listed).map_or(usize::MAX, |bytes| bytes.len());
        (size <= LISTED_VIEW_LIMIT).then_some(listed)
    }
}

/// One entry of the ordered event log the gateway streams.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventEntry {
    /// The entry's sequence number: never repeated, across continue-as-new too.
    pub seq: u64,
    /// Workflow time, RFC 3339 in UTC.
    pub at: String,
    /// What happened.
    pub event: TaskEvent,
}

/// One change of a task, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskEvent {
    /// A message was added to the task's history.
    Message {
        /// The message: a participant's, or an answer of the model.
        message: TaskMessage,
    },
    /// The task changed state.
    Status {
        /// The new state.
        state: TaskState,
        /// The new sub-state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sub_state: Option<String>,
        /// Why the task is in the new state, such as the reason of a FAILED or CANCELED.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A sub-task row was added or changed.
    SubTask {
        /// The whole row, as it is now.
        row: SubTaskRow,
    },
}

/// What the `events_since(cursor)` query returns: the events with `seq >= cursor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventPage {
    /// The events, in order.
    pub events: Vec<EventEntry>,
    /// The cursor for the next call.
    pub next_seq: u64,
    /// True once the task is terminal: no event will follow.
    pub closed: bool,
}

/// Everything a `TaskWorkflow` carries into its next run when it continues as new.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCarry {
    /// The task's state.
    pub state: TaskState,
    /// The model's history.
    pub history: Vec<HistoryItem>,
    /// The sub-task rows.
    pub sub_tasks: Vec<SubTaskRow>,
    /// Notes the model has not read yet, as it will read them.
    pub pending_notes: Vec<HistoryItem>,
    /// The event log: its last 1,000 events and its next sequence number.
    #[serde(flatten)]
    pub log: EventLog,
    /// Model turns taken, in all.
    pub turns: u32,
    /// Turns since the model last read a participant message; absent in carries written
    /// before the turn limit counted per message.
    #[serde(default)]
    pub turns_since_message: u32,
    /// The text of the last model turn that called no tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_answer: Option<String>,
    /// A cancel not yet acted on, with its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
    /// The task's newest 200 messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<TaskMessage>,
    /// The task's sub-state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
    /// Participant messages that arrived since the model last took a turn.
    #[serde(default)]
    pub unread_messages: u32,
    /// Those messages, as the model will read them, not yet in `history`: they join it when the
    /// next turn starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arrived: Vec<HistoryItem>,
    /// The task's webhooks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub push_configs: Vec<PushConfig>,
    /// Answers to sub-tasks not yet sent to their stand-ins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replies_out: Vec<ForwardedReply>,
    /// How many answers the task has sent its sub-tasks: numbers the next one's message id.
    #[serde(default)]
    pub replies_sent: u32,
    /// How many of the oldest history items were left out for the context budget.
    #[serde(default)]
    pub compacted: u32,
    /// The roster the task's model is shown, fixed by its first turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roster: Option<crate::TaskRoster>,
    /// When the task's own deadline passes, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at_ms: Option<u64>,
    /// The task's status message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Changes not yet pushed to the task's webhooks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outbox: Vec<PushDelivery>,
    /// Sub-tasks resolved since the worker's metrics were last told.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ended: Vec<DelegationEnd>,
    /// The files the task's tools gave, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_files: Vec<ToolFile>,
    /// The files the model chose for its answer; absent: every file the task made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_files: Option<AnswerFiles>,
    /// The model tokens the task's own turns used (its sub-tasks' are on their rows).
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub usage: Usage,
}

/// A file one of the task's MCP tools gave (an image, audio, an embedded resource), kept by
/// reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFile {
    /// The tool's name.
    pub tool: String,
    /// The file.
    pub attachment: Attachment,
}

/// The files and data parts a task's model chose for its answer (`choose_answer_files`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerFiles {
    /// Each one's artifact id among the files the task made (`tool:<n>`, `<stand-in id>:<n>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
}

/// One artifact of a task that has given its answer: the answer's text, or a file or data part
/// the task made, by reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerArtifact {
    /// Unique in the task: `answer`, `tool:<n>`, or `<stand-in id>:<n>` (1-based).
    pub id: String,
    /// `answer`, or the file's name (`file <n>` for one that has none).
    pub name: String,
    /// What made the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The answer's text; absent for a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The file or data part; absent for the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachment: Option<Attachment>,
}

impl TaskCarry {
    /// The state of a task before its first run: SUBMITTED, with `history` (the conversation of
    /// the task it continues, if any) and nothing else.
    pub fn new(history: Vec<HistoryItem>) -> Self {
        TaskCarry {
            state: TaskState::Submitted,
            history,
            sub_tasks: Vec::new(),
            pending_notes: Vec::new(),
            log: EventLog::default(),
            turns: 0,
            turns_since_message: 0,
            last_answer: None,
            cancel_reason: None,
            messages: Vec::new(),
            sub_state: None,
            unread_messages: 0,
            arrived: Vec::new(),
            push_configs: Vec::new(),
            replies_out: Vec::new(),
            replies_sent: 0,
            compacted: 0,
            roster: None,
            deadline_at_ms: None,
            status_message: None,
            outbox: Vec::new(),
            ended: Vec::new(),
            tool_files: Vec::new(),
            answer_files: None,
            usage: Usage::default(),
        }
    }
}

/// A task's ordered event log, the one the gateway streams: sequence numbers never repeat, even
/// across continue-as-new.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLog {
    /// The events kept, oldest first.
    pub events: Vec<EventEntry>,
    /// The sequence number of the next event.
    pub next_seq: u64,
}

impl EventLog {
    /// How many events a task carries into its next run.
    pub const TAIL: usize = 1000;

    /// Appends `event`, recorded `at` (RFC 3339), with the next sequence number.
    pub fn push(&mut self, at: String, event: TaskEvent) {
        self.events.push(EventEntry {
            seq: self.next_seq,
            at,
            event,
        });
        self.next_seq += 1;
    }

    /// When the last status event was recorded.
    pub fn last_status_at(&self) -> Option<String> {
        self.events
            .iter()
            .rev()
            .find(|e| matches!(e.event, TaskEvent::Status { .. }))
            .map(|e| e.at.clone())
    }

    /// The events with `seq >= cursor`; `closed` once no event will follow.
    pub fn since(&self, cursor: u64, closed: bool) -> EventPage {
        EventPage {
            events: self
                .events
                .iter()
                .filter(|e| e.seq >= cursor)
                .cloned()
                .collect(),
            next_seq: self.next_seq,
            closed,
        }
    }

    /// The log the next run starts from: the newest [`EventLog::TAIL`] events, numbering on.
    pub fn tail(&self) -> EventLog {
        let skip = self.events.len().saturating_sub(Self::TAIL);
        EventLog {
            events: self.events[skip..].to_vec(),
            next_seq: self.next_seq,
        }
    }
}

/// A participant's answer to a sub-task, on its way to the sub-task's stand-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardedReply {
    /// The workflow id of the sub-task's stand-in.
    pub stand_in_id: String,
    /// The answer.
    pub text: String,
    /// The files and data the participant's answer carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// What a `TaskWorkflow` is started with: a [`TaskInput`], or the reason the JSON it was given
/// is not one. Starting never fails on bad JSON (the Temporal CLI accepts anything); the
/// workflow then fails at once, with serde's message, instead of retrying a task it cannot read.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskStart {
    /// JSON that reads as a [`TaskInput`].
    Valid(Box<TaskInput>),
    /// JSON that does not.
    Invalid {
        /// Serde's reason, led by the path of the field it is about.
        error: String,
        /// The JSON as it was given, which is also what this writes back.
        raw: serde_json::Value,
    },
}

impl From<TaskInput> for TaskStart {
    fn from(input: TaskInput) -> Self {
        TaskStart::Valid(Box::new(input))
    }
}

impl Serialize for TaskStart {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TaskStart::Valid(input) => input.serialize(serializer),
            TaskStart::Invalid { raw, .. } => raw.serialize(serializer),
        }
    }
}

/// The error with the path of the field it is about (`limits.max_turns: invalid type: …`); an
/// error about the input as a whole (a missing field) reads as it is.
fn located(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = error.path().to_string();
    if path == "." {
        error.inner().to_string()
    } else {
        format!("{path}: {}", error.inner())
    }
}

impl<'de> Deserialize<'de> for TaskStart {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = serde_json::Value::deserialize(deserializer)?;
        Ok(
            match serde_path_to_error::deserialize::<_, TaskInput>(&raw) {
                Ok(input) => TaskStart::Valid(Box::new(input)),
                Err(error) => TaskStart::Invalid {
                    error: located(&error),
                    raw,
                },
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_start_reads_a_valid_input_and_keeps_a_bad_one_with_its_reason() {
        let good: TaskStart = serde_json::from_value(json!({"name": "n", "goal": "g"})).unwrap();
        assert!(matches!(good, TaskStart::Valid(ref input) if input.goal == "g"));
        assert_eq!(serde_json::to_value(&good).unwrap()["goal"], "g");

        let bad: TaskStart = serde_json::from_value(json!({"name": "n", "gaol": "g"})).unwrap();
        let TaskStart::Invalid { error, raw } = &bad else {
            panic!("{bad:?}")
        };
        assert!(error.contains("gaol"), "{error}");
        assert_eq!(serde_json::to_value(&bad).unwrap(), *raw);
    }
}

/// A webhook a participant registered for a task's changes (A2A push notifications).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushConfig {
    /// The config's id: a config with the same id replaces it.
    pub id: String,
    /// Where each change is posted.
    pub url: String,
    /// Sent back in `A2A-Notification-Token` and `X-A2A-Notification-Token` with each push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Sent as `Authorization` with each push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushAuthentication>,
}

/// Sent as `Authorization: <scheme> <credentials>` with each push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushAuthentication {
    /// The scheme, such as `Bearer`.
    pub scheme: String,
    /// What follows the scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// `deliver_push`: one task change to one webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushDelivery {
    /// The webhook.
    pub config: PushConfig,
    /// The task's id.
    pub task_id: String,
    /// The task's A2A context; the task id for a task created without one.
    pub context_id: String,
    /// The task's new state.
    pub state: TaskState,
    /// The task's new sub-state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
    /// The status message: why the task is in its new state, else, once it has ended or while
    /// it waits, its last answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the change happened (workflow time, RFC 3339).
    pub at: String,
    /// The task's artifacts, pushed before the status, when the change is the one that gives
    /// the task's answer (it completed, or parked a conversation after its answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<AnswerArtifact>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod listed_view_tests {
    use super::*;

    fn message(n: usize, role: MessageRole, text: &str) -> TaskMessage {
        TaskMessage {
            message_id: format!("m-{n}"),
            role,
            text: text.to_string(),
            attachments: Vec::new(),
        }
    }

    fn view(state: TaskState, status_message: Option<&str>) -> TaskView {
        let mut view: TaskView = serde_json::from_value(serde_json::json!({
            "task_id": "t-1", "name": "n", "state": "TASK_STATE_WORKING", "sub_tasks": [],
            "turns": 2, "participants": [], "event_seq": 7, "goal": "g"
        }))
        .unwrap();
        view.state = state;
        view.status_message = status_message.map(str::to_string);
        view.messages = vec![
            message(0, MessageRole::User, "question"),
            message(1, MessageRole::Agent, "first answer"),
            message(2, MessageRole::User, "follow-up"),
            message(3, MessageRole::Agent, "last answer"),
            message(4, MessageRole::User, "late note"),
        ];
        view.last_answer = Some("last answer".into());
        view.earlier = vec![message(9, MessageRole::User, "an earlier task")];
        view
    }

    #[test]
    fn a_listed_view_keeps_only_the_agent_message_its_status_shows() {
        for state in TaskState::ALL {
            let shows_answer = state.is_terminal() || state.is_interrupted();
            let listed = view(state, None).listed().unwrap();
            let kept: Vec<&str> = listed.messages.iter().map(|m| m.text.as_str()).collect();
            let expected: &[&str] = if shows_answer { &["last answer"] } else { &[] };
            assert_eq!(kept, expected, "{state:?}");
            assert_eq!(listed.last_answer, None);
            assert!(listed.earlier.is_empty());
            assert_eq!(listed.state, state);
            assert_eq!(listed.event_seq, 7);

            let says_why = view(state, Some("turn limit reached")).listed().unwrap();
            assert!(says_why.messages.is_empty(), "{state:?}");
            assert_eq!(
                says_why.status_message.as_deref(),
                Some("turn limit reached")
            );
        }
    }

    #[test]
    fn a_view_too_large_for_the_memo_is_not_listed() {
        let mut big = view(TaskState::Working, None);
        big.goal = "g".repeat(LISTED_VIEW_LIMIT);
        assert_eq!(big.listed(), None);

        // History and the answer do not count: they are left out.
        let mut long_history = view(TaskState::Working, None);
        long_history.messages[0].text = "q".repeat(LISTED_VIEW_LIMIT);
        long_history.last_answer = Some("a".repeat(LISTED_VIEW_LIMIT));
        assert!(long_history.listed().is_some());
    }
}

#[cfg(test)]
mod start_tests {
    use serde_json::{Value, json};

    use super::TaskStart;

    fn error_of(input: Value) -> String {
        match serde_json::from_value::<TaskStart>(input).unwrap() {
            TaskStart::Invalid { error, .. } => error,
            TaskStart::Valid(input) => panic!("read as valid: {input:?}"),
        }
    }

    #[test]
    fn a_wrong_field_is_named_by_its_path() {
        let error = error_of(json!({"name": "n", "goal": "g", "limits": {"max_turns": "ten"}}));
        assert!(
            error.starts_with("limits.max_turns: invalid type: string \"ten\""),
            "{error}"
        );
        let error = error_of(json!({"name": "n", "goal": 42}));
        assert!(
            error.starts_with("goal: invalid type: integer `42`"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_field_is_named_and_a_missing_one_reads_as_it_is() {
        let error = error_of(json!({"name": "n", "gaol": "g"}));
        assert!(
            error.starts_with("gaol: unknown field `gaol`, expected one of"),
            "{error}"
        );
        let error = error_of(json!({"name": "n"}));
        assert_eq!(error, "missing field `goal`");
    }
}

#[cfg(test)]
mod event_log_tests {
    use serde_json::json;

    use super::*;

    fn status(state: TaskState) -> TaskEvent {
        TaskEvent::Status {
            state,
            sub_state: None,
            message: None,
        }
    }

    #[test]
    fn the_tail_keeps_the_newest_events_and_numbers_on_from_where_the_log_was() {
        let mut log = EventLog::default();
        for n in 0..EventLog::TAIL + 5 {
            log.push(format!("t{n}"), status(TaskState::Working));
        }
        let tail = log.tail();
        assert_eq!(tail.events.len(), EventLog::TAIL);
        assert_eq!(tail.events[0].seq, 5);
        assert_eq!(tail.next_seq, (EventLog::TAIL + 5) as u64);
        let mut next = tail.clone();
        next.push("later".into(), status(TaskState::Completed));
        assert_eq!(next.events.last().unwrap().seq, (EventLog::TAIL + 5) as u64);
        assert_eq!(next.last_status_at().as_deref(), Some("later"));
        let page = next.since(EventLog::TAIL as u64 + 4, true);
        assert_eq!(
            page.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1004, 1005]
        );
        assert!(page.closed);
    }

    #[test]
    fn a_carry_writes_its_log_as_events_and_next_seq_beside_its_other_fields() {
        let mut carry = TaskCarry::new(Vec::new());
        carry.log.push("t0".into(), status(TaskState::Submitted));
        let written = serde_json::to_value(&carry).unwrap();
        assert_eq!(written["next_seq"], json!(1));
        assert_eq!(written["events"][0]["seq"], json!(0));
        assert!(written.get("log").is_none(), "{written}");
        let read: TaskCarry = serde_json::from_value(written).unwrap();
        assert_eq!(read, carry);
    }
}
