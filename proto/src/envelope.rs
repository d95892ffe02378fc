//! The task extension as tiny-harness publishes it, so Baton and tiny-harness agents read each
//! other's briefs and tasks field for field:
//!
//! - the task envelope: a brief as one A2A data part with media type
//!   `application/vnd.tiny-harness.event+json`, `{"kind": "task", "payload": {...}}`;
//! - the task extension data, the envelope's payload, which is also what a task carries in
//!   `Task.metadata["io.github.madarauchiha-314.tiny-harness/task"]`.
//!
//! Both are closed: a field the published models do not have is refused, as tiny-harness
//! refuses it. Where the published shape differs from Baton's own (acceptance criteria are
//! `{text, met}` objects, a task's agent is an entity reference), these types carry the
//! published one and convert.

use serde::{Deserialize, Serialize};

use crate::task::{Lifecycle, Participant, TaskRef};

/// The `kind` of a task envelope: the only kind Baton writes or reads.
pub const ENVELOPE_KIND_TASK: &str = "task";
/// The kind of entity a remote agent is in a tiny-harness registry.
pub const ENTITY_KIND_AGENT: &str = "agent";

/// `{"kind": "task", "payload": {...}}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEnvelope {
    /// [`ENVELOPE_KIND_TASK`]; the gateway refuses any other kind.
    pub kind: String,
    /// The task extension data.
    pub payload: TaskEnvelopePayload,
}

/// The task extension data (tiny-harness `TaskExtensionData`): the brief of a new task in an
/// envelope, and a task's published extension in its metadata. The server-controlled fields
/// (lifecycle, model, reasoning_effort) are honoured only from this agent itself or a trusted
/// delegator. `sub_tasks` and `plan` are accepted and not used: Baton keeps its own rows and
/// has no plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEnvelopePayload {
    /// The task's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A free-form kind of task; Baton keeps none of its own.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// What the task must achieve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The context the task needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Checks that tell when the task is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_criteria: Option<Vec<AcceptanceCriterion>>,
    /// Who is on the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub participants: Option<Vec<Participant>>,
    /// Tasks this one serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tasks: Option<Vec<ExtensionTaskRef>>,
    /// The task's own sub-tasks; accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_tasks: Option<Vec<ExtensionTaskRef>>,
    /// tiny-harness's plan, any JSON; accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
    /// How the task ends its turns; honoured only from this agent or a trusted delegator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// The model; honoured only from this agent or a trusted delegator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning effort; honoured only from this agent or a trusted delegator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
}

impl TaskEnvelope {
    /// `payload` in an envelope of kind `task`.
    pub fn task(payload: TaskEnvelopePayload) -> TaskEnvelope {
        TaskEnvelope {
            kind: ENVELOPE_KIND_TASK.to_string(),
            payload,
        }
    }
}

/// One acceptance criterion as published: `{"text": "…", "met": false}`. A plain string, as
/// older Baton briefs carried, reads as a criterion not yet met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AcceptanceCriterion {
    /// The criterion.
    pub text: String,
    /// Whether it is met.
    pub met: bool,
}

impl AcceptanceCriterion {
    /// A criterion not yet met.
    pub fn open(text: impl Into<String>) -> AcceptanceCriterion {
        AcceptanceCriterion {
            text: text.into(),
            met: false,
        }
    }

    /// The criteria's texts, as a Baton task keeps them.
    pub fn texts(criteria: &[AcceptanceCriterion]) -> Vec<String> {
        criteria.iter().map(|c| c.text.clone()).collect()
    }

    /// Each of `texts` as a criterion not yet met.
    pub fn all_open(texts: &[String]) -> Vec<AcceptanceCriterion> {
        texts.iter().map(AcceptanceCriterion::open).collect()
    }
}

impl<'de> Deserialize<'de> for AcceptanceCriterion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Published {
            text: String,
            #[serde(default)]
            met: bool,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Published(Published),
            Text(String),
        }
        match Either::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom(
                "an acceptance criterion is {\"text\": \"…\", \"met\": false} or a string",
            )
        })? {
            Either::Published(c) => Ok(AcceptanceCriterion {
                text: c.text,
                met: c.met,
            }),
            Either::Text(text) => Ok(AcceptanceCriterion::open(text)),
        }
    }
}

/// A reference into a tiny-harness registry: `{"kind": "agent", "id": "ledger"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityRef {
    /// The kind of entity: [`ENTITY_KIND_AGENT`] for an agent.
    pub kind: String,
    /// The entity's id in the registry: for an agent, its agent id.
    pub id: String,
    /// The entity's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A task as the extension names it (tiny-harness `TaskRef`): on this agent when `agent` is
/// absent or null, else on the agent it references; `state` is the short state name
/// (`WORKING`) its parent last heard, `sub_state` one of the status extension's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtensionTaskRef {
    /// The task's id.
    pub task_id: String,
    /// The agent it lives on; absent or null: this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<EntityRef>,
    /// The short state name (`WORKING`) its parent last heard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// One of the status extension's sub-states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_state: Option<String>,
}

impl From<&TaskRef> for ExtensionTaskRef {
    fn from(task: &TaskRef) -> Self {
        ExtensionTaskRef {
            task_id: task.task_id.clone(),
            agent: task.agent.as_ref().map(|id| EntityRef {
                kind: ENTITY_KIND_AGENT.to_string(),
                id: id.clone(),
                version: None,
            }),
            state: None,
            sub_state: None,
        }
    }
}

impl From<&ExtensionTaskRef> for TaskRef {
    fn from(task: &ExtensionTaskRef) -> Self {
        TaskRef {
            task_id: task.task_id.clone(),
            agent: task.agent.as_ref().map(|agent| agent.id.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_criterion_reads_as_published_or_as_a_string_and_writes_as_published() {
        let read: Vec<AcceptanceCriterion> = serde_json::from_value(json!([
            {"text": "Say yes or no.", "met": false},
            {"text": "Give the totals.", "met": true},
            {"text": "No open items."},
            "A plain string."
        ]))
        .unwrap();
        assert_eq!(
            read,
            [
                AcceptanceCriterion::open("Say yes or no."),
                AcceptanceCriterion {
                    text: "Give the totals.".into(),
                    met: true
                },
                AcceptanceCriterion::open("No open items."),
                AcceptanceCriterion::open("A plain string."),
            ]
        );
        assert_eq!(
            serde_json::to_value(&read[0]).unwrap(),
            json!({"text": "Say yes or no.", "met": false})
        );
    }

    #[test]
    fn a_criterion_of_another_shape_is_refused_naming_both_shapes() {
        for bad in [
            json!(42),
            json!({"text": "x", "done": true}),
            json!({"met": true}),
        ] {
            let error = serde_json::from_value::<AcceptanceCriterion>(bad.clone()).unwrap_err();
            assert!(error.to_string().contains("{\"text\""), "{bad}: {error}");
        }
    }

    #[test]
    fn a_task_ref_converts_between_the_published_and_baton_shapes() {
        let published: ExtensionTaskRef = serde_json::from_value(json!({
            "task_id": "t-1", "agent": {"kind": "agent", "id": "planner", "version": null},
            "state": null, "sub_state": null
        }))
        .unwrap();
        let ours = TaskRef::from(&published);
        assert_eq!(ours.agent.as_deref(), Some("planner"));
        let back = ExtensionTaskRef::from(&ours);
        assert_eq!(
            serde_json::to_value(back).unwrap(),
            json!({"task_id": "t-1", "agent": {"kind": "agent", "id": "planner"}})
        );
        let here = ExtensionTaskRef::from(&TaskRef {
            task_id: "t-2".into(),
            agent: None,
        });
        assert_eq!(
            serde_json::to_value(here).unwrap(),
            json!({"task_id": "t-2"})
        );
    }
}
