//! `start_agent_task`: send the brief with SendStreamingMessage and read until the agent has
//! the task past SUBMITTED. Leaving earlier could abandon a request the agent has not acted on;
//! staying longer would hold a stream the stand-in will reopen if it needs one.

use std::time::Duration;

use a2a::{Message, Part, PartContent, Role, StreamResponse};
use baton_a2a::RemoteAgent;
use baton_a2a::snapshot::{after_event, message_text, of_status_update, of_task};
use baton_core::extensions::ENVELOPE_MEDIA_TYPE;
use baton_proto::{RemoteSnapshot, StartAgentTaskIn, StartAgentTaskOut, TaskState};
use futures::StreamExt;
use temporalio_sdk::activities::ActivityContext;

use crate::heartbeat::heartbeating;

pub async fn start_agent_task(
    ctx: &ActivityContext,
    agent: &RemoteAgent,
    input: &StartAgentTaskIn,
) -> StartAgentTaskOut {
    let message = brief_message(agent, input);
    match heartbeating(ctx, create(agent, message)).await {
        Ok(outcome) => outcome,
        Err(_) => StartAgentTaskOut::Failed {
            reason: "the creation was cancelled".into(),
        },
    }
}

/// The brief: one text part and, when the card advertises the task extension, the envelope.
fn brief_message(agent: &RemoteAgent, input: &StartAgentTaskIn) -> Message {
    let mut parts = vec![Part::text(input.text.clone())];
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
    Message {
        message_id: input.message_id.clone(),
        context_id: None,
        task_id: None,
        role: Role::User,
        parts,
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    }
}

/// How long the agent may keep a new task SUBMITTED before the stand-in takes over watching it.
/// Well inside the activity's own timeout, so a task id already seen is never lost.
const READ_LIMIT: Duration = Duration::from_secs(90);

/// Reads the stream until the task exists past SUBMITTED. The stream is dropped, so closed, on
/// every return.
async fn create(agent: &RemoteAgent, message: Message) -> StartAgentTaskOut {
    let mut stream = match agent.send_streaming(message).await {
        Ok(stream) => stream,
        Err(error) => {
            return StartAgentTaskOut::Failed {
                reason: error.to_string(),
            };
        }
    };
    let mut seen: Option<RemoteSnapshot> = None;
    let deadline = tokio::time::Instant::now() + READ_LIMIT;
    loop {
        let event = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(Some(event)) => event,
            Ok(None) => break,
            Err(_) => {
                return failed_or_started(
                    seen,
                    format!("the agent did not create the task within {READ_LIMIT:?}"),
                );
            }
        };
        let event = match event {
            Ok(event) => event,
            Err(error) => return failed_or_started(seen, format!("the stream failed: {error}")),
        };
        if let StreamResponse::Message(answer) = &event
            && seen.is_none()
        {
            return StartAgentTaskOut::Answered {
                text: message_text(answer).unwrap_or_default(),
            };
        }
        let next = match (&seen, &event) {
            (_, StreamResponse::Task(task)) => Some(of_task(task)),
            (Some(before), _) => after_event(before, &event),
            (None, StreamResponse::StatusUpdate(update)) => Some(of_status_update(update)),
            (None, _) => None,
        };
        if let Some(next) = next {
            if next.state != TaskState::Submitted {
                return StartAgentTaskOut::Started { task: next };
            }
            seen = Some(next);
        }
    }
    failed_or_started(
        seen,
        "the agent closed the stream before creating a task".into(),
    )
}

/// A stream that ended early still created the task if it named one: the stand-in follows it.
fn failed_or_started(seen: Option<RemoteSnapshot>, reason: String) -> StartAgentTaskOut {
    match seen {
        Some(task) => StartAgentTaskOut::Started { task },
        None => StartAgentTaskOut::Failed { reason },
    }
}
