//! The task envelope: a brief as one A2A data part with media type
//! `application/vnd.tiny-harness.event+json`, so Baton and tiny-harness agents read each other's.

use serde::{Deserialize, Serialize};

use crate::task::{Lifecycle, Participant, TaskRef};

pub const ENVELOPE_KIND_TASK: &str = "task";

/// `{"kind": "task", "payload": {...}}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEnvelope {
    pub kind: String,
    pub payload: TaskEnvelopePayload,
}

/// The brief of a new task. The server-controlled fields (lifecycle, model, reasoning_effort)
/// are honoured only from this agent itself or a trusted delegator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEnvelopePayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_criteria: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub participants: Option<Vec<Participant>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tasks: Option<Vec<TaskRef>>,
}

impl TaskEnvelope {
    pub fn task(payload: TaskEnvelopePayload) -> TaskEnvelope {
        TaskEnvelope {
            kind: ENVELOPE_KIND_TASK.to_string(),
            payload,
        }
    }
}
