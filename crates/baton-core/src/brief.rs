//! The brief a parent sends to create a sub-task on an agent: as text, which
//! every agent reads, and as a task envelope, for agents whose card
//! advertises the task extension.
//!
//! Only `self` gets the full brief. Any other agent gets the open fields
//! alone: asking a peer to set the server-controlled fields (lifecycle,
//! model, reasoning_effort) would have a peer that does not trust this agent
//! refuse the whole request.

use baton_proto::envelope::{AcceptanceCriterion, ExtensionTaskRef};
use baton_proto::{Lifecycle, TaskEnvelope, TaskEnvelopePayload, TaskInput};

use crate::delegation_chain::chain_below;
use crate::spawn_subtask::{SELF_AGENT, SpawnRequest};

/// The brief as plain text:
///
/// ```text
/// {goal}
///
/// {description}
///
/// Acceptance criteria:
/// - {criterion}
/// ```
///
/// The description and its blank line are left out when it is blank; the
/// criteria block and its blank line when there are no criteria.
pub fn brief_text(goal: &str, description: &str, acceptance_criteria: &[String]) -> String {
    let mut blocks = vec![goal.to_string()];
    if !description.trim().is_empty() {
        blocks.push(description.to_string());
    }
    if !acceptance_criteria.is_empty() {
        blocks.push(criteria_block(acceptance_criteria));
    }
    blocks.join("\n\n")
}

/// The brief as a task envelope (`kind` `task`) for the agent `request`
/// names.
///
/// Every agent gets the open fields: name, goal, description, acceptance
/// criteria, and the chain of parent tasks (the parent's own, then the parent,
/// task `parent_id`), which bounds where the sub-task may delegate
/// ([`crate::delegation_chain`]). A sub-task on [`SELF_AGENT`] also gets
/// lifecycle [`Lifecycle::Delegated`] and the parent's model and reasoning
/// effort. No other agent ever gets those, nor participants. Criteria go as
/// published, `{"text": …, "met": false}`.
pub fn brief_envelope(request: &SpawnRequest, parent: &TaskInput, parent_id: &str) -> TaskEnvelope {
    let chain = chain_below(&parent.parent_tasks, parent_id);
    let open_fields = TaskEnvelopePayload {
        name: Some(request.name.clone()),
        goal: Some(request.goal.clone()),
        description: Some(request.description.clone()),
        acceptance_criteria: Some(AcceptanceCriterion::all_open(&request.acceptance_criteria)),
        parent_tasks: Some(chain.iter().map(ExtensionTaskRef::from).collect()),
        ..TaskEnvelopePayload::default()
    };
    let payload = if request.agent == SELF_AGENT {
        TaskEnvelopePayload {
            lifecycle: Some(Lifecycle::Delegated),
            model: parent.model.clone(),
            reasoning_effort: parent.reasoning_effort.clone(),
            ..open_fields
        }
    } else {
        open_fields
    };
    TaskEnvelope::task(payload)
}

fn criteria_block(acceptance_criteria: &[String]) -> String {
    let mut lines = vec!["Acceptance criteria:".to_string()];
    lines.extend(
        acceptance_criteria
            .iter()
            .map(|criterion| format!("- {criterion}")),
    );
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::{ENVELOPE_KIND_TASK, TaskRef};
    use serde_json::{Value, json};

    fn criteria(items: &[&str]) -> Vec<String> {
        items.iter().map(ToString::to_string).collect()
    }

    fn request(agent: &str) -> SpawnRequest {
        SpawnRequest {
            agent: agent.to_string(),
            name: "check".to_string(),
            goal: "Balance the ledger.".to_string(),
            description: "The books for March.".to_string(),
            acceptance_criteria: criteria(&["Debits equal credits.", "No open items."]),
            deadline_secs: None,
            attachments: Vec::new(),
        }
    }

    fn parent() -> TaskInput {
        TaskInput {
            name: "month-end".to_string(),
            goal: "Close the month.".to_string(),
            description: "Parent context the child must not see.".to_string(),
            acceptance_criteria: criteria(&["Parent criterion."]),
            participants: Vec::new(),
            lifecycle: Lifecycle::Conversation,
            model: Some("gpt-5-mini".to_string()),
            reasoning_effort: Some("low".to_string()),
            parent_tasks: Vec::new(),
            limits: Default::default(),
            context_id: None,
            earlier: Vec::new(),
            carry: None,
        }
    }

    fn parent_ref() -> TaskRef {
        TaskRef {
            task_id: "parent-1".to_string(),
            agent: None,
        }
    }

    fn envelope_json(agent: &str) -> Value {
        serde_json::to_value(brief_envelope(&request(agent), &parent(), "parent-1")).unwrap()
    }

    // brief_text

    #[test]
    fn the_text_has_goal_description_and_criteria() {
        assert_eq!(
            brief_text(
                "Balance the ledger.",
                "The books for March.",
                &criteria(&["Debits equal credits.", "No open items."])
            ),
            "Balance the ledger.\n\n\
             The books for March.\n\n\
             Acceptance criteria:\n\
             - Debits equal credits.\n\
             - No open items."
        );
    }

    #[test]
    fn an_empty_description_is_left_out_with_its_blank_line() {
        assert_eq!(
            brief_text("Goal.", "", &criteria(&["Done."])),
            "Goal.\n\nAcceptance criteria:\n- Done."
        );
    }

    #[test]
    fn a_blank_description_is_left_out_too() {
        assert_eq!(
            brief_text("Goal.", " \n ", &criteria(&["Done."])),
            "Goal.\n\nAcceptance criteria:\n- Done."
        );
    }

    #[test]
    fn no_criteria_leaves_out_the_block() {
        assert_eq!(brief_text("Goal.", "Context.", &[]), "Goal.\n\nContext.");
    }

    #[test]
    fn the_goal_alone_is_the_whole_text() {
        assert_eq!(brief_text("Goal.", "", &[]), "Goal.");
    }

    #[test]
    fn a_multi_line_description_is_kept() {
        assert_eq!(
            brief_text("Goal.", "Line one.\nLine two.", &[]),
            "Goal.\n\nLine one.\nLine two."
        );
    }

    // brief_envelope

    #[test]
    fn self_gets_the_full_brief() {
        let envelope = brief_envelope(&request(SELF_AGENT), &parent(), "parent-1");
        assert_eq!(
            envelope,
            TaskEnvelope {
                kind: ENVELOPE_KIND_TASK.to_string(),
                payload: TaskEnvelopePayload {
                    name: Some("check".to_string()),
                    goal: Some("Balance the ledger.".to_string()),
                    description: Some("The books for March.".to_string()),
                    acceptance_criteria: Some(vec![
                        AcceptanceCriterion::open("Debits equal credits."),
                        AcceptanceCriterion::open("No open items."),
                    ]),
                    lifecycle: Some(Lifecycle::Delegated),
                    model: Some("gpt-5-mini".to_string()),
                    reasoning_effort: Some("low".to_string()),
                    parent_tasks: Some(vec![ExtensionTaskRef::from(&parent_ref())]),
                    ..TaskEnvelopePayload::default()
                },
            }
        );
    }

    #[test]
    fn self_is_delegated_even_under_a_conversation_parent() {
        assert_eq!(parent().lifecycle, Lifecycle::Conversation);
        assert_eq!(
            envelope_json(SELF_AGENT)["payload"]["lifecycle"],
            "delegated"
        );
    }

    #[test]
    fn self_without_a_parent_model_sends_none() {
        let parent = TaskInput {
            model: None,
            reasoning_effort: None,
            ..parent()
        };
        let envelope = brief_envelope(&request(SELF_AGENT), &parent, "parent-1");
        assert_eq!(envelope.payload.model, None);
        assert_eq!(envelope.payload.reasoning_effort, None);
        assert_eq!(envelope.payload.lifecycle, Some(Lifecycle::Delegated));
    }

    #[test]
    fn another_agent_gets_only_the_open_fields() {
        assert_eq!(
            envelope_json("ledger"),
            json!({
                "kind": "task",
                "payload": {
                    "name": "check",
                    "goal": "Balance the ledger.",
                    "description": "The books for March.",
                    "acceptance_criteria": [
                        {"text": "Debits equal credits.", "met": false},
                        {"text": "No open items.", "met": false}
                    ],
                    "parent_tasks": [{"task_id": "parent-1"}]
                }
            })
        );
    }

    #[test]
    fn the_chain_goes_on_with_the_parent_at_its_end() {
        let parent = TaskInput {
            parent_tasks: vec![TaskRef {
                task_id: "root".into(),
                agent: Some("https://front.example.com".into()),
            }],
            ..parent()
        };
        for agent in [SELF_AGENT, "ledger"] {
            let payload = brief_envelope(&request(agent), &parent, "parent-1").payload;
            let chain: Vec<TaskRef> = payload
                .parent_tasks
                .unwrap()
                .iter()
                .map(TaskRef::from)
                .collect();
            assert_eq!(
                chain,
                [
                    parent.parent_tasks[0].clone(),
                    TaskRef {
                        task_id: "parent-1".into(),
                        agent: None
                    }
                ],
                "{agent}"
            );
        }
    }

    #[test]
    fn another_agent_never_gets_server_controlled_fields() {
        for agent in ["ledger", "Self", "self ", ""] {
            let payload = brief_envelope(&request(agent), &parent(), "parent-1").payload;
            assert_eq!(payload.lifecycle, None, "{agent:?}");
            assert_eq!(payload.model, None, "{agent:?}");
            assert_eq!(payload.reasoning_effort, None, "{agent:?}");
            assert_eq!(payload.participants, None, "{agent:?}");
        }
    }

    #[test]
    fn the_parent_brief_does_not_leak_into_the_child() {
        for agent in [SELF_AGENT, "ledger"] {
            let text = envelope_json(agent).to_string();
            assert!(!text.contains("Parent context"), "{agent}");
            assert!(!text.contains("Parent criterion"), "{agent}");
            assert!(!text.contains("month-end"), "{agent}");
        }
    }

    #[test]
    fn empty_optional_fields_are_still_sent() {
        let request = SpawnRequest {
            description: String::new(),
            acceptance_criteria: Vec::new(),
            ..request("ledger")
        };
        let payload = brief_envelope(&request, &parent(), "parent-1").payload;
        assert_eq!(payload.description.as_deref(), Some(""));
        assert_eq!(payload.acceptance_criteria, Some(Vec::new()));
    }

    #[test]
    fn the_envelope_round_trips_through_the_contract() {
        for agent in [SELF_AGENT, "ledger"] {
            let envelope = brief_envelope(&request(agent), &parent(), "parent-1");
            let json = serde_json::to_string(&envelope).unwrap();
            assert_eq!(
                serde_json::from_str::<TaskEnvelope>(&json).unwrap(),
                envelope
            );
        }
    }
}
