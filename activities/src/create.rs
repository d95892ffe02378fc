//! `start_agent_task`: send the brief with SendStreamingMessage and read until the agent names
//! the task (its first event, SUBMITTED included), then a moment longer while events keep
//! coming. The task's id is then the delegation's from its first event, so a cancel reaches a
//! task the agent keeps SUBMITTED; a fast agent finishes in that moment, and its delegation needs
//! no stand-in; staying longer would hold a stream the stand-in will reopen if it needs one.
//!
//! A creation is retried (a worker killed mid-call, an agent down for a while), and a create is
//! not idempotent, so every attempt after the first looks first: the brief opened a context of
//! its own, and a task found in it is what an earlier attempt created, adopted instead of made
//! again. An agent may list a task only once it has acted on the brief, which a slow agent does
//! late: when an earlier attempt had the brief taken (answered, or its request open past
//! [`TAKEN_AFTER`]; its heartbeat said so), the next one waits for the task to appear, up to
//! `agents[].listing_wait`, before it sends the brief again, saying so in its outcome
//! (`sent_again`): the delegation then cancels, when it ends, any other task the context comes
//! to hold. An agent that cannot list its tasks gets the same brief again, with the same
//! `messageId`, which an agent that deduplicates messages (Baton does) takes as a repeat.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a::{Message, Part, PartContent, Role, StreamResponse, Task};
use baton_a2a::snapshot::{after_event, message_text, of_status_update, of_task};
use baton_a2a::{AgentError, RemoteAgent};
use baton_core::answer::has_answered;
use baton_core::delegation_chain::chain_as_sent;
use baton_core::display::one_line;
use baton_core::extensions::{BUDGET_EXTENSION, DEADLINE_EXTENSION, ENVELOPE_MEDIA_TYPE};
use baton_core::spawn_subtask::SELF_AGENT;
use baton_proto::envelope::ExtensionTaskRef;
use baton_proto::{CancelContextIn, RemoteSnapshot, StartAgentTaskIn, StartAgentTaskOut, TaskRef};
use futures::StreamExt;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use crate::heartbeat::heartbeating_progress;
use crate::non_retryable;
use crate::remote_calls::read_whole;

/// How many tasks of one delegation's context are read: one is expected, a few more mean an
/// agent that ignored a repeated `messageId`.
const CONTEXT_PAGE: i32 = 20;

/// Creates the task, for a delegation that may run `deadline_secs` seconds.
pub async fn start_agent_task(
    ctx: &ActivityContext,
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
    files: &[Part],
    deadline_secs: u64,
) -> Result<StartAgentTaskOut, ActivityError> {
    let attempt = ctx.info().attempt;
    let sent_before = ctx
        .heartbeat_details()
        .deserialize::<bool>()
        .ok()
        .flatten()
        .unwrap_or(false);
    // Whether an attempt had the brief taken: every heartbeat says so, for the next attempt.
    let sent = AtomicBool::new(sent_before);
    let creation = attempt_creation(agent, input, files, deadline_secs, attempt, &sent);
    let progress = || sent.load(Ordering::Relaxed);
    let failure = match heartbeating_progress(ctx, progress, creation).await? {
        Ok(outcome) => return Ok(outcome),
        Err(failure) => failure,
    };
    let waited = crate::since_first_attempt(ctx.info());
    if waited >= agent.create_timeout() {
        // Out of time: the workflow resolves the row FAILED and cancels what the context holds.
        return Ok(StartAgentTaskOut::Failed {
            reason: format!(
                "{failure} (no answer after {attempt} attempts in {}s; agents[].create_timeout \
                 is {}s)",
                waited.as_secs(),
                agent.create_timeout().as_secs()
            ),
        });
    }
    tracing::warn!(
        stand_in = %input.stand_in_id,
        agent = %input.agent,
        attempt,
        "creating the sub-task failed, to be retried: {}",
        one_line(&failure)
    );
    Err(ActivityError::from(anyhow::anyhow!(failure)))
}

/// One attempt. `Err` is a failure worth another attempt, with its reason. `sent` says whether
/// this or an earlier attempt had the brief taken by the agent.
async fn attempt_creation(
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
    files: &[Part],
    deadline_secs: u64,
    attempt: u32,
    sent: &AtomicBool,
) -> Result<StartAgentTaskOut, String> {
    let mut sending_again = false;
    if attempt > 1
        && let Some(context_id) = &input.context_id
    {
        let taken_before = sent.load(Ordering::Relaxed);
        if let Some(task) = earlier_attempt(agent, input, context_id, taken_before).await? {
            tracing::info!(
                stand_in = %input.stand_in_id,
                agent = %input.agent,
                attempt,
                "adopted task {} that an earlier attempt created", task.remote_task_id
            );
            return Ok(StartAgentTaskOut::Started {
                task,
                deadline_secs: None,
                watch: None,
                sent_again: false,
            });
        }
        sending_again = taken_before;
    }
    let brief = brief_message(agent, input, files, deadline_secs);
    let mut created = create(agent, brief, sent).await?;
    if let StartAgentTaskOut::Started { sent_again, .. } = &mut created {
        *sent_again = sending_again;
    }
    Ok(created)
}

/// The task an earlier attempt created in `context_id`, if the agent can say. When an earlier
/// attempt had the brief taken (`sent_before`), a context still empty is looked at again every
/// [`SLOW_AGENT_LOOK`] for up to `agents[].listing_wait`: a slow agent lists the task only once it
/// acts on the brief. A lookup that got no answer fails the attempt (it is retried); an agent
/// that cannot list tasks is asked to create again.
async fn earlier_attempt(
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
    context_id: &str,
    sent_before: bool,
) -> Result<Option<RemoteSnapshot>, String> {
    let waiting_until = tokio::time::Instant::now() + agent.listing_wait();
    loop {
        match look_in_context(agent, input, context_id).await? {
            Some(found) => return Ok(Some(found)),
            None if sent_before && tokio::time::Instant::now() < waiting_until => {
                tokio::time::sleep(SLOW_AGENT_LOOK).await;
            }
            None => {
                if sent_before {
                    tracing::warn!(
                        stand_in = %input.stand_in_id,
                        agent = %input.agent,
                        "the agent took the brief but listed no task for it within \
                         {:?} (agents[].listing_wait): sending it again with the same messageId",
                        agent.listing_wait()
                    );
                }
                return Ok(None);
            }
        }
    }
}

/// One look under the delegation's context.
async fn look_in_context(
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
    context_id: &str,
) -> Result<Option<RemoteSnapshot>, String> {
    match agent.tasks_in_context(context_id, CONTEXT_PAGE).await {
        Ok(tasks) => adopt(agent, input, tasks).await,
        Err(error) if error.is_transient() => Err(format!(
            "looking for the task an earlier attempt may have created: {error}"
        )),
        Err(error) => {
            tracing::warn!(
                stand_in = %input.stand_in_id,
                agent = %input.agent,
                "the agent cannot list the tasks of a context, so the brief is sent again with \
                 the same messageId: {}",
                one_line(&error.to_string())
            );
            Ok(None)
        }
    }
}

/// Adopts one task of the context (an open one first) and cancels the others, best effort. A
/// listing shows no artifacts or history, so an adopted task that has ended is read whole: its
/// answer and its files may be only there; an agent that does not answer that read is asked
/// again on the next attempt.
async fn adopt(
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
    mut tasks: Vec<Task>,
) -> Result<Option<RemoteSnapshot>, String> {
    let open = tasks
        .iter()
        .position(|t| !of_task(t).state.is_terminal())
        .unwrap_or(0);
    if tasks.is_empty() {
        return Ok(None);
    }
    let adopted = tasks.swap_remove(open);
    for extra in tasks.iter().filter(|t| !of_task(t).state.is_terminal()) {
        tracing::warn!(
            stand_in = %input.stand_in_id,
            agent = %input.agent,
            "the agent made task {} for a brief it already had as task {}: cancelling it",
            extra.id,
            adopted.id
        );
        agent.cancel_task(&extra.id).await.ok();
    }
    let listed = of_task(&adopted);
    if !listed.state.is_terminal() {
        return Ok(Some(listed));
    }
    match agent.get_task(&adopted.id).await {
        Ok(whole) => Ok(Some(of_task(&whole))),
        Err(error) if error.is_transient() => Err(format!(
            "reading task {} that an earlier attempt created: {error}",
            adopted.id
        )),
        Err(error) => {
            tracing::warn!(
                stand_in = %input.stand_in_id,
                agent = %input.agent,
                "task {} ended, and reading it whole failed, so its answer is what the listing showed: {}",
                adopted.id,
                one_line(&error.to_string())
            );
            Ok(Some(listed))
        }
    }
}

/// The brief as its agent reads it: the tasks of the chain on this agent named with `identity`,
/// unless the agent is this one (`self`), for which they stay unnamed.
pub fn chain_named(mut input: StartAgentTaskIn, identity: &str) -> StartAgentTaskIn {
    if input.agent == SELF_AGENT {
        return input;
    }
    if let Some(chain) = input
        .envelope
        .as_mut()
        .and_then(|envelope| envelope.payload.parent_tasks.as_mut())
    {
        let tasks: Vec<TaskRef> = chain.iter().map(TaskRef::from).collect();
        *chain = chain_as_sent(&tasks, identity)
            .iter()
            .map(ExtensionTaskRef::from)
            .collect();
    }
    input
}

/// The brief: one text part, then `files`, and, when the card advertises the task extension,
/// the envelope; when it advertises the deadline extension, the delegation's deadline in its
/// metadata, and when it advertises the budget extension, the sub-task's budget.
fn brief_message(
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
    files: &[Part],
    deadline_secs: u64,
) -> Message {
    let mut parts = vec![Part::text(input.text.clone())];
    parts.extend_from_slice(files);
    if let Some(envelope) = input
        .envelope
        .as_ref()
        .filter(|_| agent.speaks_task_extension())
    {
        parts.push(Part {
            content: PartContent::Data(
                serde_json::to_value(envelope).expect("an envelope always serialises"),
            ),
            filename: None,
            media_type: Some(ENVELOPE_MEDIA_TYPE.to_string()),
            metadata: None,
        });
    }
    let takes = |extension: &str| agent.extensions().iter().any(|uri| uri == extension);
    let mut metadata = std::collections::HashMap::new();
    if takes(DEADLINE_EXTENSION) {
        metadata.insert(
            DEADLINE_EXTENSION.to_string(),
            serde_json::json!({ "seconds": deadline_secs }),
        );
    }
    let budget: serde_json::Map<String, serde_json::Value> = [
        ("tokens", input.budget_tokens),
        ("cost_nanos", input.budget_cost_nanos),
    ]
    .into_iter()
    .filter_map(|(field, value)| Some((field.to_string(), value?.into())))
    .collect();
    if !budget.is_empty() && takes(BUDGET_EXTENSION) {
        metadata.insert(BUDGET_EXTENSION.to_string(), budget.into());
    }
    Message {
        message_id: input.message_id.clone(),
        context_id: input.context_id.clone(),
        task_id: None,
        role: Role::User,
        parts,
        metadata: (!metadata.is_empty()).then_some(metadata),
        extensions: None,
        reference_task_ids: None,
    }
}

/// How often such an attempt looks again.
const SLOW_AGENT_LOOK: Duration = Duration::from_secs(2);
/// How long a brief's request must stay open, unrefused, to count as taken by the agent.
const TAKEN_AFTER: Duration = Duration::from_secs(2);

/// How long the agent may take to name the task before the attempt fails. Well inside the
/// activity's own timeout.
const READ_LIMIT: Duration = Duration::from_secs(90);

/// Once the agent named the task, how long the stream is read on for the next event. A fast
/// agent settles the task within it, and its row resolves from the create alone: no stand-in,
/// no watch, no extra model turn. Shorter than one Temporal step, so a slow agent's delegation
/// loses less than it would to a stand-in's first step.
const SETTLE_GRACE: Duration = Duration::from_millis(200);

/// Reads the stream until the agent names the task, then on while each next event comes
/// within [`SETTLE_GRACE`] and the task is not settled (terminal or interrupted). `Err` is a
/// failure worth another attempt (no answer, a broken stream, an internal error); the agent's
/// own refusal is the outcome `Failed`. The stream is dropped, so closed, on every return.
async fn create(
    agent: &RemoteAgent,
    message: Message,
    sent: &AtomicBool,
) -> Result<StartAgentTaskOut, String> {
    let sending = agent.send_streaming(message);
    tokio::pin!(sending);
    // A connection the agent refuses fails at once; a request still open after a moment has
    // reached it, though a slow agent may answer nothing until it acts on the brief.
    let sent_answer = tokio::select! {
        answer = &mut sending => answer,
        () = tokio::time::sleep(TAKEN_AFTER) => {
            sent.store(true, Ordering::Relaxed);
            sending.await
        }
    };
    let mut stream = match sent_answer {
        Ok(stream) => stream,
        Err(error) => return refused_or_retry(error),
    };
    sent.store(true, Ordering::Relaxed);
    let mut seen: Option<RemoteSnapshot> = None;
    let deadline = tokio::time::Instant::now() + READ_LIMIT;
    loop {
        let started = seen.is_some();
        let limit = if started {
            deadline.min(tokio::time::Instant::now() + SETTLE_GRACE)
        } else {
            deadline
        };
        let event = match tokio::time::timeout_at(limit, stream.next()).await {
            Ok(Some(event)) => event,
            Ok(None) => break,
            Err(_) => {
                return started_or_retry(
                    seen,
                    format!("the agent did not create the task within {READ_LIMIT:?}"),
                );
            }
        };
        let event = match event {
            Ok(event) => event,
            Err(error) => return started_or_retry(seen, format!("the stream failed: {error}")),
        };
        if let StreamResponse::Message(answer) = &event
            && seen.is_none()
        {
            return Ok(StartAgentTaskOut::Answered {
                text: message_text(answer).unwrap_or_default(),
            });
        }
        let next = match (&seen, &event) {
            (_, StreamResponse::Task(task)) => Some(of_task(task)),
            (Some(before), _) => after_event(before, &event),
            (None, StreamResponse::StatusUpdate(update)) => Some(of_status_update(update)),
            (None, _) => None,
        };
        if let Some(next) = next {
            let settled = next.state.is_terminal() || next.state.is_interrupted();
            if settled {
                let task = match event {
                    StreamResponse::Task(_) => next,
                    _ => {
                        let said_before = seen.as_ref().and_then(|s| s.text.as_deref());
                        read_whole(agent, next, said_before).await
                    }
                };
                return Ok(StartAgentTaskOut::Started {
                    task,
                    deadline_secs: None,
                    watch: None,
                    sent_again: false,
                });
            }
            seen = Some(next);
        }
    }
    started_or_retry(
        seen,
        "the agent closed the stream before creating a task".into(),
    )
}

/// The agent refused the brief: final. No answer at all: another attempt.
fn refused_or_retry(error: AgentError) -> Result<StartAgentTaskOut, String> {
    if error.is_transient() {
        Err(error.to_string())
    } else {
        Ok(StartAgentTaskOut::Failed {
            reason: error.to_string(),
        })
    }
}

/// A stream that ended early still created the task if it named one: the stand-in follows it.
fn started_or_retry(
    seen: Option<RemoteSnapshot>,
    reason: String,
) -> Result<StartAgentTaskOut, String> {
    match seen {
        Some(task) => Ok(StartAgentTaskOut::Started {
            task,
            deadline_secs: None,
            watch: None,
            sent_again: false,
        }),
        None => Err(reason),
    }
}

/// Cancels every unfinished task of a delegation's context but `keep`: what an attempt may have
/// created before the creation failed for good or was given up, a brief's duplicate, or what a
/// parent's end finds still running. A task that answered and awaits its next message is left
/// to complete. Returns how many it cancelled. An agent that cannot list the context fails it
/// for good: asking again would get the same answer.
pub async fn cancel_context_tasks(
    agent: &RemoteAgent,
    input: &CancelContextIn,
) -> Result<u32, ActivityError> {
    let tasks = match agent
        .tasks_in_context(&input.context_id, CONTEXT_PAGE)
        .await
    {
        Ok(tasks) => tasks,
        Err(error) if error.is_transient() => {
            return Err(ActivityError::from(anyhow::anyhow!(error.to_string())));
        }
        Err(error) => return Err(non_retryable(error.code(), error.to_string())),
    };
    let mut cancelled = 0;
    for task in tasks.iter().filter(|t| Some(&t.id) != input.keep.as_ref()) {
        // A conversation parked after its answer has done its work: it completes when it has
        // waited long enough, and a cancel would only hide that it answered.
        let seen = of_task(task);
        let ended = seen.state.is_terminal() || has_answered(seen.state, seen.sub_state.as_deref());
        if let Some(kept) = &input.keep {
            tracing::warn!(
                stand_in = %input.stand_in_id,
                agent = %input.agent,
                "the agent holds task {} beside task {kept} for the same brief, which was sent \
                 again after a worker was lost: {}",
                task.id,
                if ended { "it has ended or answered" } else { "cancelling it" }
            );
        }
        if ended {
            continue;
        }
        match agent.cancel_task(&task.id).await {
            Ok(_) => {}
            Err(error) if error.is_transient() => {
                return Err(ActivityError::from(anyhow::anyhow!(error.to_string())));
            }
            // Ended meanwhile, or not cancelable: nothing left to stop.
            Err(_) => continue,
        }
        tracing::info!(
            stand_in = %input.stand_in_id,
            agent = %input.agent,
            "cancelled task {} left running in context {}", task.id, input.context_id
        );
        cancelled += 1;
    }
    Ok(cancelled)
}
