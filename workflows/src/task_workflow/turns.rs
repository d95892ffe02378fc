//! The turn loop: model turns, their tool calls, and when to park, wait, finish or continue as
//! new.

use std::collections::BTreeSet;

use baton_activities::BatonActivities;
use baton_core::ask_participant::{ASK_PARTICIPANT, ASKED_CONTENT, validate_ask};
use baton_core::choose_answer_files::{
    CHOOSE_ANSWER_FILES, choose, chosen_content, validate_choice,
};
use baton_core::completion::{Completion, decide_completion};
use baton_core::context::{render_task_section, with_budget};
use baton_core::mcp_tool::{BATON_TOOLS, tool_failure_content};
use baton_core::spawn_subtask::{SPAWN_SUBTASK, ToolError, pick_attachments, validate_spawn};
use baton_core::sub_task_reply::REPLY_TO_SUBTASK;
use baton_core::sub_tasks::AWAITING_NEXT_MESSAGE;
use baton_core::tool_result::tool_error_content;
use baton_core::turn_bounds::payload_too_large;
use baton_core::usage::{BUDGET_SPENT, Budget, tree_usage};
use baton_proto::{
    ClosedAgent, HistoryItem, InvokeModelIn, InvokeModelOut, InvokeToolIn, Lifecycle, MessageRole,
    OfferedTool, TaskEvent, TaskMessage, TaskRoster, TaskStart, TaskState, TaskView,
    ToolCallRecord, Usage,
};
use temporalio_sdk::{ContinueAsNewOptions, WorkflowContext, WorkflowResult};
use temporalio_workflow::select;

use super::TaskWorkflow;
use super::delegation::{
    answer_sub_task, cancel_everything, delegate, forward_participant_answers,
    record_delegation_ends, wait_for_sub_tasks,
};
use super::messages::{Parked, pose_question, wait_for_next_message};
use super::status::{complete, deliver_pushes, fail, set_state, set_sub_state};
use crate::activity_failure;
use crate::event_time::event_time;
use crate::policies;

impl TaskWorkflow {
    /// Whether the model has taken `max_turns` turns since the last participant message it
    /// read. A message waiting to be read starts a new count.
    pub(super) fn turn_limit_reached(&self) -> bool {
        self.durable.arrived.is_empty()
            && self.durable.turns_since_message >= self.input.limits.max_turns
    }

    /// The task's budget and what is left of it, when it has one: its own turns and its
    /// sub-tasks' reported usage count against it.
    pub(super) fn budget(&self) -> Option<(Budget, Usage)> {
        let budget = Budget::of(&self.input.limits)?;
        Some((
            budget,
            tree_usage(self.durable.usage, &self.durable.sub_tasks),
        ))
    }

    /// Why the task ends now, when its budget is spent.
    pub(super) fn budget_spent(&self) -> Option<String> {
        let (budget, used) = self.budget()?;
        budget.spent(used)
    }
}

/// The turn loop, until the task ends or continues as new.
pub(super) async fn take_turns(
    ctx: &mut WorkflowContext<TaskWorkflow>,
) -> WorkflowResult<TaskView> {
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
        if let Some(reason) = ctx.state(TaskWorkflow::budget_spent) {
            return Err(fail(ctx, reason).await);
        }

        let Some(turn) = model_turn(ctx).await? else {
            continue; // cancelled while the model was thinking
        };
        let answered_without_tools = turn.tool_calls.is_empty();
        for call in &turn.tool_calls {
            let content = run_tool_call(ctx, call, &turn).await;
            ctx.state_mut(|s| {
                s.durable.history.push(HistoryItem::ToolResult {
                    call_id: call.id.clone(),
                    content,
                });
            });
        }
        if let Some(question) = ctx.state_mut(|s| s.this_run.question.take()) {
            pose_question(ctx, question);
            continue;
        }

        let decision = ctx.state(|s| {
            decide_completion(
                answered_without_tools,
                &s.durable.sub_tasks,
                s.durable.pending_notes.len(),
                s.durable.unread_messages,
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

/// One call to the model. `None` when the task was cancelled meanwhile.
pub(super) async fn model_turn(
    ctx: &mut WorkflowContext<TaskWorkflow>,
) -> WorkflowResult<Option<InvokeModelOut>> {
    if ctx.state(|s| s.durable.state) != TaskState::Working {
        set_state(ctx, TaskState::Working, None);
    }
    let request = ctx.state_mut(|s| {
        s.take_arrived_messages();
        s.durable.unread_messages = 0;
        s.durable.history.append(&mut s.durable.pending_notes);
        InvokeModelIn {
            task_id: String::new(),
            model: s.input.model.clone(),
            reasoning_effort: s.input.reasoning_effort.clone(),
            task_section: with_budget(
                render_task_section(&s.input, &s.durable.sub_tasks),
                s.budget(),
            ),
            history: s.durable.history.clone(),
            compacted: s.durable.compacted,
            roster: s.durable.roster.clone(),
            parent_tasks: s.input.parent_tasks.clone(),
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
    let summary = format!("model turn {}", ctx.state(|s| s.durable.turns + 1));
    let call = ctx.cancellation_token().child_token();
    let options = policies::summarized(policies::invoke_model(&call), summary);
    let outcome = select! {
        out = ctx.execute_activity(BatonActivities::invoke_model, request, options) => Some(out),
        _ = ctx.wait_condition(|s: &TaskWorkflow| s.durable.cancel_reason.is_some()) => None,
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
        s.durable.turns += 1;
        s.durable.turns_since_message += 1;
        s.this_run.turns += 1;
        s.durable.usage = s.durable.usage.plus(Usage {
            input_tokens: turn.input_tokens,
            output_tokens: turn.output_tokens,
            cost_nanos: turn.cost_nanos,
        });
        // What the turn left out for the context budget leaves the history for good.
        let cut = (turn.cut as usize).min(s.durable.history.len());
        s.durable.history.drain(..cut);
        s.durable.compacted += cut as u32;
        if s.durable.roster.is_none() {
            s.durable.roster = Some(TaskRoster {
                agents: turn.agents.clone(),
            });
        }
        if turn.tool_calls.is_empty() {
            s.durable.last_answer = turn.text.clone();
            if let Some(text) = &turn.text {
                let answer = TaskMessage {
                    message_id: format!("{task_id}:answer:{}", s.durable.turns),
                    role: MessageRole::Agent,
                    text: text.clone(),
                    attachments: Vec::new(),
                };
                s.durable.messages.push(answer.clone());
                s.durable
                    .log
                    .push(event_time(now), TaskEvent::Message { message: answer });
            }
        }
        s.durable.history.push(HistoryItem::Assistant {
            text: turn.text.clone(),
            tool_calls: turn.tool_calls.clone(),
        });
    });
    Ok(Some(turn))
}

/// Runs one tool call of `turn` and returns what the model reads as its result.
pub(super) async fn run_tool_call(
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
                    s.this_run.question = Some(match s.this_run.question.take() {
                        Some(earlier) => format!("{earlier}\n{question}"),
                        None => question,
                    });
                });
                ASKED_CONTENT.to_string()
            }
            Err(error) => tool_error_content(&error),
        };
    }
    if call.name == CHOOSE_ANSWER_FILES {
        let task_id = ctx.workflow_id().to_string();
        let chosen = validate_choice(&call.arguments).and_then(|names| {
            let files = choose(&names, &ctx.state(|s| s.view(&task_id)))?;
            Ok((names, files))
        });
        return match chosen {
            Ok((names, files)) => {
                ctx.state_mut(|s| s.durable.answer_files = Some(files));
                chosen_content(&names)
            }
            Err(error) => tool_error_content(&error),
        };
    }
    if let Some(tool) = turn.mcp_tools.iter().find(|tool| tool.name == call.name) {
        return call_mcp_tool(ctx, call, tool).await;
    }
    if call.name != SPAWN_SUBTASK {
        let available: Vec<String> = BATON_TOOLS
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
    let request = validate_spawn(&call.arguments, &registered).and_then(|request| {
        if let Some(closed) = turn.closed_agents.iter().find(|c| c.agent == request.agent) {
            return Err(closed_agent_error(closed, turn));
        }
        if let Some(reason) = ctx.state(TaskWorkflow::budget_spent) {
            return Err(ToolError {
                code: BUDGET_SPENT.into(),
                message: reason,
                rejected: Some(request.agent.clone()),
                available: Vec::new(),
            });
        }
        let held = ctx.state(TaskWorkflow::held_attachments);
        pick_attachments(&request.attachments, &held).map(|files| (request, files))
    });
    match request {
        Err(error) => tool_error_content(&error),
        Ok((request, files)) => delegate(ctx, request, files).await,
    }
}

/// The refusal of a delegation to an agent this task may not reach, naming those it may.
fn closed_agent_error(closed: &ClosedAgent, turn: &InvokeModelOut) -> ToolError {
    let available: Vec<String> = turn
        .agents
        .iter()
        .filter(|agent| !turn.closed_agents.iter().any(|c| &c.agent == *agent))
        .cloned()
        .collect();
    ToolError {
        code: closed.code.clone(),
        message: closed.reason.clone(),
        rejected: Some(closed.agent.clone()),
        available,
    }
}

/// One call of an MCP tool, as an `invoke_tool` activity whose retries respect whether the tool
/// is safe to call again. A call that got no answer reaches the model as an error saying so; a
/// cancel of the task during the call ends it.
pub(super) async fn call_mcp_tool(
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
        _ = ctx.wait_condition(|s: &TaskWorkflow| s.durable.cancel_reason.is_some()) => None,
    };
    if outcome.is_none() {
        // As for a model call: the cancel stops the tool call under way.
        call_token.cancel();
    }
    match outcome {
        Some(Ok(out)) => {
            if !out.attachments.is_empty() {
                ctx.state_mut(|s| s.take_tool_files(&tool.name, out.attachments));
            }
            out.content
        }
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

pub(super) fn cancel_requested(ctx: &WorkflowContext<TaskWorkflow>) -> bool {
    ctx.cancellation_token().is_cancelled() || ctx.state(|s| s.durable.cancel_reason.is_some())
}

/// Roll over before history passes its bound, never on a run's first turn.
pub(super) fn should_continue_as_new(ctx: &WorkflowContext<TaskWorkflow>) -> bool {
    let bound = ctx.state(|s| s.input.limits.history_event_bound);
    ctx.state(|s| s.this_run.turns > 0)
        && (ctx.history_length() >= bound || ctx.continue_as_new_suggested())
}
