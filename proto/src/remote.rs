//! The `RemoteTaskWorkflow` (the stand-in) contract, and the payloads the workflows exchange
//! with their activities. These show in the Web UI, so they carry no secret: a push token
//! appears only as its SHA-256 digest.

use serde::{Deserialize, Serialize};

use crate::content::Attachment;
use crate::envelope::TaskEnvelope;
use crate::task::{HistoryItem, TaskState, ToolCallRecord};

/// What Baton knows of a remote task at one moment, as the agent reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteSnapshot {
    /// The task's id on the agent.
    pub remote_task_id: String,
    /// The task's state.
    pub state: TaskState,
    /// The task's sub-state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
    /// The agent's last answer or status message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The task's artifacts hold files or data, which the stand-in collects once it ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carries_files: bool,
    /// The model tokens the task used, its sub-tasks' included, as its agent reports them
    /// (Baton's budget extension); absent from an agent that does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::Usage>,
}

/// What `collect_remote_files` found in an ended remote task's artifacts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteFiles {
    /// Each file and data part, kept by reference, in artifact order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Why a part was left out (over `content.max_part_bytes`, or past the count kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// How a stand-in hears of changes between turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchKind {
    /// The agent pushes each change to Baton's receiver; the task is also fetched every
    /// `safety_fetch_secs`.
    Push,
    /// A SubscribeToTask stream, opened again after each one ends.
    Follow,
    /// Nothing registered: the task is followed only while SUBMITTED or WORKING, and left alone
    /// once parked.
    Off,
}

impl std::fmt::Display for WatchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WatchKind::Push => "push",
            WatchKind::Follow => "follow",
            WatchKind::Off => "off",
        })
    }
}

/// The watch a stand-in holds. A push watch keeps only the token's digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteWatch {
    /// How the stand-in hears of changes.
    pub kind: WatchKind,
    /// Push: the push config's id on the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_id: Option<String>,
    /// Push: the lower-case hex SHA-256 of the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_digest: Option<String>,
    /// How often a push-watched task is fetched anyway, in seconds (`agents[].push_safety_fetch`),
    /// so a lost push costs at most this long. Absent: 30 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_fetch_secs: Option<u64>,
}

impl RemoteWatch {
    /// A watch with nothing registered on the agent: follow or off.
    pub fn unregistered(kind: WatchKind) -> RemoteWatch {
        RemoteWatch {
            kind,
            config_id: None,
            token_digest: None,
            safety_fetch_secs: None,
        }
    }
}

/// The input of a `RemoteTaskWorkflow`, whose workflow id is `<parent id>.<n>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteStart {
    /// The parent task's workflow id: where `child_done` goes.
    pub parent_workflow_id: String,
    /// The agent id; every call on the task goes to it as the delegating participant.
    pub agent: String,
    /// The sub-task's name.
    pub name: String,
    /// The parent asked for a delegated task: a peer parked awaiting its next message is done.
    pub delegated: bool,
    /// The task as `start_agent_task` left it; once the stand-in continues as new, as it last
    /// saw it.
    pub last: RemoteSnapshot,
    /// Workflow history events before the stand-in continues as new.
    pub history_event_bound: u32,
    /// Set when the stand-in continues as new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry: Option<RemoteCarry>,
    /// When the delegation's deadline passes, in milliseconds since the Unix epoch: the
    /// stand-in then cancels the remote task and resolves the row FAILED. Absent in histories
    /// written before delegations had deadlines, which keep none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at_ms: Option<u64>,
    /// The deadline as it was given, in seconds, for the row's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_secs: Option<u64>,
    /// The watch `start_agent_task` found the agent needs, when it registers nothing (follow or
    /// off): the stand-in takes it without a `register_remote_push`. Absent for push, and in
    /// histories written before, whose stand-ins register as they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchKind>,
    /// The delegation's context, when its creation sent the brief twice: when the stand-in
    /// ends it cancels every task there but its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates_in: Option<String>,
}

/// What a stand-in carries into its next run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteCarry {
    /// The watch it holds, once it chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<RemoteWatch>,
    /// What the parent last heard, after mapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told: Option<RemoteSnapshot>,
    /// A verified push arrived that the stand-in has not fetched for yet.
    pub push_pending: bool,
    /// The state that push claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed: Option<TaskState>,
    /// Answers from the parent not yet sent to the agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<SubTaskReply>,
    /// The question the last answer went to, while the agent still shows it: not news.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<RemoteSnapshot>,
}

/// The `reply` signal a parent sends its stand-in: an answer to the question its remote task
/// asked, from the parent's model or from one of the parent's participants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubTaskReply {
    /// Derived from the parent's first run, the stand-in and the reply's number: the same on
    /// every attempt to send it, so the agent and the stand-in can tell a repeat.
    pub message_id: String,
    /// The answer.
    pub text: String,
    /// Files the parent holds, sent with the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// The `remote_push` update the push receiver sends a stand-in. It only wakes the stand-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushIn {
    /// The lower-case hex SHA-256 of the token the agent presented.
    pub token_digest: String,
    /// The task the push is about.
    pub remote_task_id: String,
    /// The state the push body claims: a hint, never applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_state: Option<TaskState>,
}

/// What the stand-in's `task` query returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteView {
    /// The agent id.
    pub agent: String,
    /// The task as last heard.
    pub last: RemoteSnapshot,
    /// The watch the stand-in holds, once chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<RemoteWatch>,
    /// True once the stand-in has ended: later pushes are refused.
    pub closed: bool,
}

// --- activity payloads -------------------------------------------------------------------

/// `start_agent_task`: create the task on the agent with the brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartAgentTaskIn {
    /// The agent id.
    pub agent: String,
    /// The stand-in the task is for, `<parent id>.<n>`, which the logs name.
    #[serde(default)]
    pub stand_in_id: String,
    /// Unique per delegation and the same on every attempt, so an agent can tell a retry.
    pub message_id: String,
    /// The context the brief opens on the agent, unique per delegation: every attempt after
    /// the first looks for the task under it before creating one. Absent in histories written
    /// before Baton retried creations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The brief's text part.
    pub text: String,
    /// Sent only when the agent's card advertises the task extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<TaskEnvelope>,
    /// The deadline the model asked for, in seconds; the agent's `deadline` caps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_secs: Option<u64>,
    /// Files the task holds, sent with the brief as file and data parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// The model tokens the sub-task may use: its share of what its task has left, sent to an
    /// agent that takes the budget extension. Absent for a task without a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// What the sub-task's model turns may cost, in billionths of `model.currency`: its share of
    /// what its task has left. Absent for a task without a budget in money.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_cost_nanos: Option<u64>,
}

/// What `start_agent_task` reports. A refusal by the agent or the network is an outcome, not an
/// activity failure: the row is resolved at once with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum StartAgentTaskOut {
    /// The agent has the task, past SUBMITTED (or the stream ended at SUBMITTED).
    Started {
        /// The task as the stream last showed it.
        task: RemoteSnapshot,
        /// How long the delegation may run, in seconds: the asked deadline within the agent's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_secs: Option<u64>,
        /// The watch the agent's settings choose, when it needs nothing registered (follow or
        /// off); absent when the stand-in must register a push webhook.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        watch: Option<WatchKind>,
        /// The brief was sent again: an earlier attempt had handed it to the agent, which listed
        /// no task for it within `agents[].listing_wait`. The context may come to hold a second
        /// task for it, cancelled when the delegation ends.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        sent_again: bool,
    },
    /// The agent answered with a message and no task: the child ended in its first answer.
    Answered {
        /// The agent's answer.
        text: String,
    },
    /// The creation failed for good: the agent refused the brief, or no attempt got an answer
    /// within the agent's `create_timeout`.
    Failed {
        /// Why, in words.
        reason: String,
    },
}

/// `cancel_context_tasks`: cancel every unfinished task of a delegation's context on the agent,
/// after its creation failed for good or was given up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelContextIn {
    /// The stand-in the delegation was for.
    pub stand_in_id: String,
    /// The agent id.
    pub agent: String,
    /// The context whose unfinished tasks are cancelled.
    pub context_id: String,
    /// The delegation's own task, left alone: every other task of the context is a duplicate
    /// of it, logged and cancelled. Absent after a creation that failed, which keeps nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
}

/// Every call a stand-in makes on its remote task names the task this way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteTaskIn {
    /// The stand-in's workflow id.
    pub stand_in_id: String,
    /// The agent id.
    pub agent: String,
    /// The task's id on the agent.
    pub remote_task_id: String,
}

/// `follow_remote_task`: hold SubscribeToTask open until the task differs from `known`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowIn {
    /// The task.
    pub task: RemoteTaskIn,
    /// What the stand-in already knows.
    pub known: RemoteSnapshot,
}

/// What `follow_remote_task` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowOut {
    /// The first real change, or nothing when the follow window ended without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<RemoteSnapshot>,
}

/// `send_remote_reply`: the parent's answer, as a message on the remote task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteReplyIn {
    /// The task.
    pub task: RemoteTaskIn,
    /// The answer's message id, the same on every attempt.
    pub message_id: String,
    /// The answer.
    pub text: String,
    /// Files the task holds, sent with the answer as file and data parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// What `send_remote_reply` reports. The agent's refusal is an outcome, not an activity
/// failure: the stand-in tells the parent the answer was not delivered, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RemoteReplyOut {
    /// The agent has the message (sent now, or by an earlier attempt); the task as it answered.
    Sent {
        /// The task as the agent answered.
        task: RemoteSnapshot,
    },
    /// The agent refused the answer, or the task has already ended.
    Refused {
        /// Why, in words.
        reason: String,
    },
}

/// `delete_remote_push`: remove the stand-in's push config, best effort.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletePushIn {
    /// The task.
    pub task: RemoteTaskIn,
    /// The push config's id.
    pub config_id: String,
}

/// `invoke_model`: one model turn. The activity puts the worker's static prefix (system prompt,
/// participants, roster) in front, so it never enters workflow history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeModelIn {
    /// The task's id.
    pub task_id: String,
    /// The task's model; absent: the worker's `[model] model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The task's reasoning effort; absent: none sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// The task section: name, goal, description, criteria, sub-tasks.
    pub task_section: String,
    /// The model's history, which follows the task section.
    pub history: Vec<HistoryItem>,
    /// How many of the oldest history items earlier turns left out for the context budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compacted: u32,
    /// The roster the task's model was shown on its first turn, which every later turn shows
    /// again; absent on the first turn, which gets the roster as it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roster: Option<TaskRoster>,
    /// The task's chain of parent tasks, root first, which bounds where it may delegate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parent_tasks: Vec<crate::TaskRef>,
}

/// The agents a task's model is shown for the task's life: the roster of its first turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRoster {
    /// The agents' ids, sorted; none when no agent was offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
}

/// What `invoke_model` reports: one answer of the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeModelOut {
    /// What the model said, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tools the model called, within the bounds of one answer.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRecord>,
    /// Tokens the model read, as the provider reported them.
    pub input_tokens: u64,
    /// Tokens the model wrote, as the provider reported them.
    pub output_tokens: u64,
    /// SHA-256 of the static prefix sent (its text, then its tools): the same on every turn of
    /// every task of one worker.
    pub prefix_sha256: String,
    /// The agent ids of the roster the model was shown: the only values `spawn_subtask` takes.
    pub agents: Vec<String>,
    /// How many of the oldest history items this turn left out for the context budget: the
    /// workflow drops them from the history it keeps.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut: u32,
    /// The MCP tools the model was offered beside Baton's own: the only other names a tool call
    /// may take, each with whether a failed call may be tried again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_tools: Vec<OfferedTool>,
    /// The agents of the roster this task may not delegate to, and why; none for a task
    /// that may delegate to all (and in histories from before the bound).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closed_agents: Vec<ClosedAgent>,
    /// What the turn cost, in billionths of `model.currency`, from the price of its model in
    /// `model.prices`: 0 where none is configured.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cost_nanos: u64,
}

/// An agent a task may not delegate to: it is already in the task's chain, or the chain is as
/// deep as the worker allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClosedAgent {
    /// The agent's id in the roster.
    pub agent: String,
    /// `delegation.cycle` or `delegation.too_deep`.
    pub code: String,
    /// Why, for the model.
    pub reason: String,
}

/// One MCP tool a turn offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferedTool {
    /// The tool's name.
    pub name: String,
    /// The server says the tool changes nothing, or nothing more when called again (MCP
    /// `readOnlyHint` or `idempotentHint`), so a call that failed may be made again; any other
    /// tool is called at most once.
    #[serde(default)]
    pub retry_safe: bool,
}

/// `invoke_tool`: one call of an MCP tool, as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeToolIn {
    /// The task's id.
    pub task_id: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments as the model wrote them: a JSON object, checked by the activity.
    pub arguments: String,
}

/// What one tool call gave the model to read: the tool's own output (capped and framed as
/// untrusted), or an error, the tool's own or Baton's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeToolOut {
    /// What the model reads: the tool's output, capped at 16,000 characters and framed as
    /// untrusted, or the error.
    pub content: String,
    /// `content` is an error: the tool's own (MCP `isError`), or Baton's (arguments that are not
    /// a JSON object, a server that refused the call).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The images, audio and embedded resources of the tool's result, kept by reference: files
    /// of the task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
