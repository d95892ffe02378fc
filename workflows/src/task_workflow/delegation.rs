//! Delegation: creating remote tasks and their stand-ins, the sub-task rows, answers to sub-tasks,
//! and cancelling what runs below the task.

use baton_activities::BatonActivities;
use baton_core::brief::{brief_envelope, brief_text};
use baton_core::deadline::{deadline_at_ms, within_task_deadline};
use baton_core::derived_id::delegation_ids;
use baton_core::spawn_subtask::{SpawnRequest, ToolError, pick_attachments};
use baton_core::sub_task_reply::{
    AWAITING_AUTHORISATION, SUB_TASK_NOT_WAITING, authorisation_request, replied_content,
    validate_reply,
};
use baton_core::sub_tasks::{
    apply_child_done, creation_failed_note, delegation_end, map_remote_state,
};
use baton_core::tool_result::{spawned_content, tool_error_content};
use baton_proto::{
    Attachment, CancelContextIn, ChildDone, DelegationEnd, HistoryItem, RemoteSnapshot,
    RemoteStart, RemoteTaskIn, Source, StartAgentTaskIn, StartAgentTaskOut, SubTaskRow, TaskEvent,
    TaskState, TaskView, ToolCallRecord, ToolFile,
};
use temporalio_sdk::{
    ActivityExecutionError, ChildWorkflowOptions, ParentClosePolicy, WorkflowContext,
    WorkflowResult, WorkflowTermination,
};
use temporalio_workflow::{
    SignalWorkflowOptions, TimerOptions, WaitConditionOptions, WorkflowCancellationToken, select,
};

use super::TaskWorkflow;
use super::status::{deliver_pushes, record_state, set_state};
use super::sweep::sweep_sub_task_contexts;
use super::turns::cancel_requested;
use super::{CANCEL_GRACE, task_deadline_left};
use crate::RemoteTaskWorkflow;
use crate::activity_failure;
use crate::event_time::event_time;
use crate::policies;
use crate::remote_files::collected;
use crate::remote_task_workflow::cancel_until_ended;

impl TaskWorkflow {
    /// What a stand-in (`child_done`) or the parent itself learned of a sub-task: its row takes
    /// it (unless the row is unknown or resolved), the model gets a note of what is news, and
    /// the change is logged and, once the row resolves, counted.
    pub(super) fn take_child_change(
        &mut self,
        now: Option<std::time::SystemTime>,
        done: &ChildDone,
    ) {
        let before = self.row(&done.stand_in_id);
        if let Some(note) = apply_child_done(&mut self.durable.sub_tasks, done) {
            self.add_note(note, done.attachments.clone());
        }
        let after = self.row(&done.stand_in_id);
        self.durable
            .ended
            .extend(delegation_end(before.as_ref(), after.as_ref()));
        if let Some(row) = after.filter(|row| Some(row) != before.as_ref()) {
            self.durable
                .log
                .push(event_time(now), TaskEvent::SubTask { row });
        }
    }

    /// A note for the model's next turn, with the files and data it brings (a sub-task's).
    pub(super) fn add_note(&mut self, text: String, attachments: Vec<Attachment>) {
        self.durable.pending_notes.push(HistoryItem::User {
            text,
            source: Source::Agent,
            attachments,
        });
    }

    /// The files and data the task holds: its messages', its tools', then its sub-tasks'.
    pub(super) fn held_attachments(&self) -> Vec<Attachment> {
        self.durable
            .messages
            .iter()
            .flat_map(|message| &message.attachments)
            .chain(self.durable.tool_files.iter().map(|file| &file.attachment))
            .chain(
                self.durable
                    .sub_tasks
                    .iter()
                    .flat_map(|row| &row.attachments),
            )
            .cloned()
            .collect()
    }

    /// The files a tool's answer gave: the task keeps them, and the model reads them in a note
    /// after the turn's tool results (a tool result itself is text only).
    pub(super) fn take_tool_files(&mut self, tool: &str, attachments: Vec<Attachment>) {
        self.durable
            .tool_files
            .extend(attachments.iter().map(|attachment| ToolFile {
                tool: tool.to_string(),
                attachment: attachment.clone(),
            }));
        self.add_note(format!("The files tool {tool} gave:"), attachments);
    }

    /// The row of the sub-task whose stand-in is `stand_in_id`.
    pub(super) fn row(&self, stand_in_id: &str) -> Option<SubTaskRow> {
        self.durable
            .sub_tasks
            .iter()
            .find(|r| r.stand_in_id == stand_in_id)
            .cloned()
    }
}

/// `reply_to_subtask`: the model's answer to a sub-task's question, sent to its stand-in. The row
/// works again from the moment the answer is taken, so the agent's next question is news.
pub(super) async fn answer_sub_task(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    call: &ToolCallRecord,
) -> String {
    let request = ctx.state(|s| {
        validate_reply(&call.arguments, &s.durable.sub_tasks).and_then(|request| {
            pick_attachments(&request.attachments, &s.held_attachments())
                .map(|files| (request, files))
        })
    });
    let (request, files) = match request {
        Ok(picked) => picked,
        Err(error) => return tool_error_content(&error),
    };
    let now = ctx.workflow_time();
    let Some(row) = ctx.state_mut(|s| s.mark_row_answered(now, &request.stand_in_id)) else {
        unreachable!("validate_reply found the row");
    };
    if send_answer(ctx, &request.stand_in_id, request.text, files).await {
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

/// Signals `text`, with `files`, to the stand-in `stand_in_id` as the next answer. False when
/// the stand-in has ended, and with it the sub-task: its end reaches the parent as a
/// `child_done`.
pub(super) async fn send_answer(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    stand_in_id: &str,
    text: String,
    files: Vec<Attachment>,
) -> bool {
    let first_run_id = ctx.info().first_execution_run_id().to_string();
    let reply = ctx.state_mut(|s| s.next_reply(&first_run_id, stand_in_id, text, files));
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
pub(super) async fn wait_for_sub_tasks(ctx: &mut WorkflowContext<TaskWorkflow>) {
    // A participant's message wakes a waiting task too, so it is answered before the sub-tasks
    // end.
    let for_the_model = |s: &TaskWorkflow| {
        !s.durable.pending_notes.is_empty()
            || s.durable.cancel_reason.is_some()
            || s.durable.unread_messages > 0
    };
    loop {
        forward_participant_answers(ctx).await;
        relay_authorisation_requests(ctx);
        deliver_pushes(ctx).await;
        let asked = ctx.state(|s| authorisation_request(&s.durable.sub_tasks));
        let woke = ctx
            .wait_condition(move |s: &TaskWorkflow| {
                for_the_model(s)
                    || !s.durable.replies_out.is_empty()
                    || authorisation_request(&s.durable.sub_tasks) != asked
            })
            .await;
        if woke.is_err() || ctx.state(for_the_model) || cancel_requested(ctx) {
            return;
        }
    }
}

/// Sends each participant's answer waiting in `replies_out` to its stand-in. One whose stand-in
/// has ended is dropped with a note: the sub-task's end reaches the model as its own note.
pub(super) async fn forward_participant_answers(ctx: &mut WorkflowContext<TaskWorkflow>) {
    let answers = ctx.state_mut(|s| std::mem::take(&mut s.durable.replies_out));
    for answer in answers {
        if !send_answer(ctx, &answer.stand_in_id, answer.text, answer.attachments).await {
            ctx.state_mut(|s| {
                let note = format!(
                    "A participant's answer to sub-task {} was not sent: the sub-task has ended",
                    answer.stand_in_id
                );
                s.add_note(note, Vec::new());
            });
        }
    }
}

/// Puts the task in AUTH_REQUIRED, with what each agent asked, while a sub-task waits for its
/// participants' authorisation, and back in WORKING once none does.
pub(super) fn relay_authorisation_requests(ctx: &WorkflowContext<TaskWorkflow>) {
    let (asked, current) = ctx.state(|s| {
        (
            authorisation_request(&s.durable.sub_tasks),
            (
                s.durable.state,
                s.durable.sub_state.clone(),
                s.durable.status_message.clone(),
            ),
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
pub(super) async fn delegate(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    request: SpawnRequest,
    attachments: Vec<Attachment>,
) -> String {
    let parent_id = ctx.workflow_id().to_string();
    let first_run_id = ctx.info().first_execution_run_id().to_string();
    // A task with a deadline of its own gives its sub-tasks no more than it has left, less the
    // time it keeps to answer in.
    let deadline_secs = within_task_deadline(request.deadline_secs, task_deadline_left(ctx));
    // A task with a budget gives each sub-task a share of what it has left.
    let share = ctx
        .state(TaskWorkflow::budget)
        .map(|(budget, used)| budget.share(used));
    let (stand_in_id, brief) = ctx.state_mut(|s| {
        let stand_in_id = format!("{parent_id}.{}", s.durable.sub_tasks.len() + 1);
        let ids = delegation_ids(&first_run_id, &stand_in_id);
        s.durable.sub_tasks.push(SubTaskRow {
            stand_in_id: stand_in_id.clone(),
            name: request.name.clone(),
            agent: request.agent.clone(),
            remote_task_id: None,
            context_id: Some(ids.context_id.clone()),
            state: TaskState::Submitted,
            sub_state: None,
            summary: None,
            resolved: false,
            attachments: Vec::new(),
            usage: None,
        });
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
            envelope: Some(brief_envelope(&request, &s.input, &parent_id)),
            deadline_secs,
            attachments,
            budget_tokens: share.and_then(|s| s.tokens),
            budget_cost_nanos: share.and_then(|s| s.cost_nanos),
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
                carries_files: false,
                usage: None,
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
    let unwatched = RemoteTaskIn {
        stand_in_id: stand_in_id.clone(),
        agent: request.agent.clone(),
        remote_task_id: task.remote_task_id.clone(),
    };
    // A task that ended as it was created has no stand-in: the parent keeps its files itself.
    let summary = seen.text.clone().unwrap_or_default();
    let (attachments, summary) = collected(ctx, unwatched.clone(), &seen, &summary).await;
    record_change_with(ctx, &stand_in_id, &seen, attachments, summary);
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
pub(super) async fn create_remote_task(
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
        _ = ctx.wait_condition(|s: &TaskWorkflow| s.durable.cancel_reason.is_some()) => {},
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
pub(super) async fn cancel_unwatched(
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
pub(super) async fn cancel_context(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    context: CancelContextIn,
) {
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
pub(super) fn record_change(
    ctx: &WorkflowContext<TaskWorkflow>,
    stand_in_id: &str,
    seen: &RemoteSnapshot,
) {
    let summary = seen.text.clone().unwrap_or_default();
    record_change_with(ctx, stand_in_id, seen, Vec::new(), summary);
}

/// As [`record_change`], with the files the child made and the summary that says what of them
/// was left out.
fn record_change_with(
    ctx: &WorkflowContext<TaskWorkflow>,
    stand_in_id: &str,
    seen: &RemoteSnapshot,
    attachments: Vec<Attachment>,
    summary: String,
) {
    let now = ctx.workflow_time();
    let done = ChildDone {
        stand_in_id: stand_in_id.to_string(),
        remote_task_id: seen.remote_task_id.clone(),
        state: seen.state,
        sub_state: seen.sub_state.clone(),
        summary,
        attachments,
        usage: seen.usage,
    };
    ctx.state_mut(|s| s.take_child_change(now, &done));
}

pub(super) fn creation_failed(
    ctx: &WorkflowContext<TaskWorkflow>,
    stand_in_id: &str,
    reason: &str,
) -> String {
    let now = ctx.workflow_time();
    ctx.state_mut(|s| {
        let row = s
            .durable
            .sub_tasks
            .iter_mut()
            .find(|r| r.stand_in_id == stand_in_id)
            .expect("the row was pushed before the creation");
        row.state = TaskState::Failed;
        row.summary = Some(reason.to_string());
        row.resolved = true;
        let note = creation_failed_note(row, reason);
        let row = row.clone();
        s.durable.ended.push(DelegationEnd {
            agent: row.agent.clone(),
            state: row.state,
        });
        s.durable
            .log
            .push(event_time(now), TaskEvent::SubTask { row });
        note
    })
}

/// Cancels every open stand-in (each cancels its remote task with CancelTask), waits for them to
/// confirm, then ends CANCELED.
pub(super) async fn cancel_everything(
    ctx: &mut WorkflowContext<TaskWorkflow>,
) -> WorkflowResult<TaskView> {
    let reason = ctx
        .state(|s| s.durable.cancel_reason.clone())
        .or_else(|| ctx.cancellation_token().reason())
        .unwrap_or_else(|| "cancelled".into());
    let stopped_any = stop_open_sub_tasks(ctx, &reason).await;
    set_state(ctx, TaskState::Canceled, Some(reason));
    deliver_pushes(ctx).await;
    if stopped_any {
        record_delegation_ends(ctx).await;
    }
    sweep_sub_task_contexts(ctx).await;
    Err(WorkflowTermination::cancelled())
}

/// Cancels every open stand-in with `reason` and waits, up to [`CANCEL_GRACE`], for each to
/// confirm. Returns whether there was any to cancel.
pub(super) async fn stop_open_sub_tasks(
    ctx: &mut WorkflowContext<TaskWorkflow>,
    reason: &str,
) -> bool {
    let open: Vec<String> = ctx.state(|s| {
        s.durable
            .sub_tasks
            .iter()
            .filter(|r| !r.resolved && r.remote_task_id.is_some())
            .map(|r| r.stand_in_id.clone())
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
            s.durable
                .sub_tasks
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

/// Tells the worker's metrics of the sub-tasks resolved since it last did, in a local activity:
/// its marker in history keeps a replay from counting them again.
pub(super) async fn record_delegation_ends(ctx: &mut WorkflowContext<TaskWorkflow>) {
    if ctx.state(|s| s.durable.ended.is_empty()) {
        return;
    }
    let ended = ctx.state_mut(|s| std::mem::take(&mut s.durable.ended));
    ctx.execute_local_activity(
        BatonActivities::record_delegation_ends,
        ended,
        policies::record_delegation_ends(),
    )
    .await
    .ok();
}
