//! A participant's messages: taking them, refusing them, waiting for the next, and the questions
//! the model asks.

use baton_core::derived_id::reply_message_id;
use baton_core::sub_task_reply::{Answerer, answerable, mark_answered, participant_answered_note};
use baton_core::sub_tasks::{AWAITING_ANSWER, AWAITING_NEXT_MESSAGE};
use baton_proto::temporal::memo::LISTED_TASK;
use baton_proto::{
    Attachment, ForwardedReply, HistoryItem, InboxMessage, InboxReceipt, MessageRole, PushConfig,
    Refusal, RefusalCode, Source, SubTaskReply, SubTaskRow, TaskEvent, TaskMessage, TaskState,
};
use temporalio_sdk::{CancellableFuture, SyncWorkflowContext, WorkflowContext};
use temporalio_workflow::select;

use super::TaskWorkflow;
use super::status::{Listing, record_state};
use crate::current_details::task_details;
use crate::event_time::event_time;

/// What the model reads beside the files and data of the message that created the task.
const BRIEF_ATTACHMENTS: &str = "The brief came with these attachments.";

impl TaskWorkflow {
    /// A participant's message, by `inbox` or `first_message`: its webhook first, then the
    /// message, unless the task holds its id already.
    pub(super) fn take_message(
        &mut self,
        ctx: &mut SyncWorkflowContext<Self>,
        message: InboxMessage,
    ) -> InboxReceipt {
        let cursor = self.durable.log.next_seq;
        if let Some(config) = message.push_config.clone() {
            self.keep_push_config(config);
        }
        let duplicate = self
            .durable
            .messages
            .iter()
            .any(|m| m.role == MessageRole::User && m.message_id == message.message_id);
        if !duplicate {
            // The message that created the task is its brief: the model reads it in the task
            // section (goal, description, criteria), not a second time as a message.
            // Only before the first turn starts: a first message that lands during it (a task
            // started without one) is news the model must read.
            let is_the_brief = self.durable.turns == 0
                && self.durable.messages.is_empty()
                && self.durable.state == TaskState::Submitted;
            let entry = TaskMessage {
                message_id: message.message_id.clone(),
                role: MessageRole::User,
                text: message.text.clone(),
                attachments: message.attachments.clone(),
            };
            self.durable.messages.push(entry.clone());
            self.durable.log.push(
                event_time(ctx.workflow_time()),
                TaskEvent::Message { message: entry },
            );
            if let Some(stand_in_id) = &message.stand_in_id {
                // An answer for a sub-task goes to its agent; the model reads only that it went.
                self.take_participant_answer(ctx, stand_in_id, &message);
            } else if is_the_brief {
                // The brief's text is the task section's; its files and data are not.
                if !message.attachments.is_empty() {
                    self.durable.history.push(HistoryItem::User {
                        text: BRIEF_ATTACHMENTS.to_string(),
                        source: Source::Participant,
                        attachments: message.attachments,
                    });
                }
            } else {
                let was_parked = self.awaits_next_message();
                self.durable.arrived.push(HistoryItem::User {
                    text: message.text,
                    source: Source::Participant,
                    attachments: message.attachments,
                });
                self.durable.unread_messages += 1;
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
            state: self.durable.state,
            cursor,
        }
    }

    /// A participant's answer to the sub-task `stand_in_id`, which the validator found waiting:
    /// the row works again, the answer waits to be sent, and the model gets a note that it went.
    pub(super) fn take_participant_answer(
        &mut self,
        ctx: &SyncWorkflowContext<Self>,
        stand_in_id: &str,
        message: &InboxMessage,
    ) {
        let Some(row) = self.mark_row_answered(ctx.workflow_time(), stand_in_id) else {
            return;
        };
        self.add_note(
            participant_answered_note(&row, &message.participant_id),
            Vec::new(),
        );
        self.durable.replies_out.push(ForwardedReply {
            stand_in_id: stand_in_id.to_string(),
            text: message.text.clone(),
            attachments: message.attachments.clone(),
        });
    }

    /// Marks the row of `stand_in_id` answered and logs it; returns the row.
    pub(super) fn mark_row_answered(
        &mut self,
        now: Option<std::time::SystemTime>,
        stand_in_id: &str,
    ) -> Option<SubTaskRow> {
        let row = self
            .durable
            .sub_tasks
            .iter_mut()
            .find(|row| row.stand_in_id == stand_in_id)?;
        mark_answered(row);
        let row = row.clone();
        self.durable
            .log
            .push(event_time(now), TaskEvent::SubTask { row: row.clone() });
        Some(row)
    }

    /// The next answer to the sub-task `stand_in_id`, numbered for its message id.
    pub(super) fn next_reply(
        &mut self,
        first_run_id: &str,
        stand_in_id: &str,
        text: String,
        attachments: Vec<Attachment>,
    ) -> SubTaskReply {
        self.durable.replies_sent += 1;
        SubTaskReply {
            message_id: reply_message_id(first_run_id, stand_in_id, self.durable.replies_sent),
            text,
            attachments,
        }
    }

    /// Adds a webhook, replacing one with the same id.
    pub(super) fn keep_push_config(&mut self, config: PushConfig) {
        self.durable.push_configs.retain(|c| c.id != config.id);
        self.durable.push_configs.push(config);
    }

    /// Why the task refuses a message: it is closed, the sender is a stranger, or the sub-task
    /// it answers waits for no answer.
    pub(super) fn refusal_of(&self, message: &InboxMessage) -> Option<Refusal> {
        if self.durable.state.is_terminal() {
            return Some(closed(self.durable.state));
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
        let stand_in_id = message.stand_in_id.as_ref()?;
        answerable(&self.durable.sub_tasks, stand_in_id, Answerer::Participant)
            .err()
            .map(|refused| Refusal::new(RefusalCode::SubTaskNotAnswerable, refused.message))
    }

    /// Moves the participant messages that arrived since the last turn into the history.
    pub(super) fn take_arrived_messages(&mut self) {
        if !self.durable.arrived.is_empty() {
            self.durable.turns_since_message = 0;
        }
        self.durable.history.append(&mut self.durable.arrived);
    }

    /// Parked, with no new message yet: a conversation after its answer, or a task waiting for
    /// the answer to its question.
    pub(super) fn awaits_next_message(&self) -> bool {
        self.durable.state == TaskState::InputRequired
            && matches!(
                self.durable.sub_state.as_deref(),
                Some(AWAITING_NEXT_MESSAGE | AWAITING_ANSWER)
            )
            && self.durable.unread_messages == 0
    }

    /// Waiting for the answer to the question it asked (`ask_participant`).
    pub(super) fn awaits_answer(&self) -> bool {
        self.durable.sub_state.as_deref() == Some(AWAITING_ANSWER)
    }
}

/// The refusal of anything sent to a task that has ended.
pub(super) fn closed(state: TaskState) -> Refusal {
    Refusal::new(RefusalCode::TaskClosed, format!("task is closed ({state})"))
}

/// How a parked conversation's wait ended.
pub(super) enum Parked {
    /// A participant's message arrived.
    Woken,
    /// A cancel, or the wait itself was cut: the loop looks again.
    Interrupted,
    /// Nothing arrived for the task's idle timeout.
    Idle,
}

/// Waits for the next participant message, a cancel, or the idle timeout
/// (`limits.idle_timeout_secs`; 0 waits for ever).
pub(super) async fn wait_for_next_message(ctx: &mut WorkflowContext<TaskWorkflow>) -> Parked {
    let idle = ctx.state(|s| s.input.limits.idle_timeout_secs);
    let arrived =
        |s: &TaskWorkflow| s.durable.unread_messages > 0 || s.durable.cancel_reason.is_some();
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
    if woke.is_err() || ctx.state(|s| s.durable.cancel_reason.is_some()) {
        Parked::Interrupted
    } else {
        Parked::Woken
    }
}

/// Puts the model's question to the participants: it joins the task's messages, and the task
/// waits INPUT_REQUIRED (`awaiting-answer`) with the question as its status, until a
/// participant's next message, which the model reads as the answer.
pub(super) fn pose_question(ctx: &mut WorkflowContext<TaskWorkflow>, question: String) {
    let now = ctx.workflow_time();
    let task_id = ctx.workflow_id().to_string();
    ctx.state_mut(|s| {
        let asked = TaskMessage {
            message_id: format!("{task_id}:question:{}", s.durable.turns),
            role: MessageRole::Agent,
            text: question.clone(),
            attachments: Vec::new(),
        };
        s.durable.messages.push(asked.clone());
        s.durable
            .log
            .push(event_time(now), TaskEvent::Message { message: asked });
    });
    record_state(
        ctx,
        TaskState::InputRequired,
        Some(AWAITING_ANSWER.into()),
        Some(question),
    );
}
