//! Turning an A2A message into a task: the brief it may carry (the task envelope) and the trust
//! rule for the fields only a trusted creator may set.

use a2a::{A2AError, Message, PartContent};
use baton_core::deadline::MAX_TASK_DEADLINE_SECS;
use baton_core::delegation_chain::MAX_CHAIN;
use baton_core::extensions::{BUDGET_EXTENSION, DEADLINE_EXTENSION, ENVELOPE_MEDIA_TYPE};
use baton_core::sub_task_reply::SUB_TASK_ID_METADATA;
use baton_core::usage::Budget;
use baton_proto::envelope::AcceptanceCriterion;

use crate::identity::{Caller, CallerKind};
use baton_proto::{
    InboxMessage, Lifecycle, Participant, ParticipantKind, ParticipantRole, TaskEnvelope,
    TaskEnvelopePayload, TaskInput, TaskLimits, TaskRef,
};

/// Who may brief a new task fully (lifecycle, model, reasoning effort, other participants).
pub struct Trust<'a> {
    /// `[server] delegators`: participants trusted to, once known (proven, or asserted where
    /// the mode takes asserted ids).
    pub delegators: &'a [String],
}

impl Trust<'_> {
    /// This deployment's own calls always are; an anonymous caller never is; anyone else when a
    /// delegator. An agent id alone is nothing: it must come with the deployment's token.
    pub fn trusts(&self, caller: &Caller) -> bool {
        match caller.kind {
            CallerKind::Deployment => true,
            CallerKind::Anonymous => false,
            CallerKind::Authenticated | CallerKind::Asserted => {
                self.delegators.contains(&caller.id)
            }
        }
    }
}

/// The goal of a task whose first message has no text, only files or data.
const ONLY_ATTACHMENTS_GOAL: &str = "The message has no text, only the attachments below.";

/// Whether the message carries a file or data part besides the task envelope.
fn carries_content(message: &Message) -> bool {
    message.parts.iter().any(|part| match &part.content {
        PartContent::Text(_) => false,
        PartContent::Data(_) => part.media_type.as_deref() != Some(ENVELOPE_MEDIA_TYPE),
        PartContent::Raw(_) | PartContent::Url(_) => true,
    })
}

/// The message's text parts, joined.
pub fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match &part.content {
            PartContent::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The task envelope the message carries, if any. A malformed one is an error, not ignored.
pub fn envelope_of(message: &Message) -> Result<Option<TaskEnvelopePayload>, A2AError> {
    let Some(part) = message
        .parts
        .iter()
        .find(|p| p.media_type.as_deref() == Some(ENVELOPE_MEDIA_TYPE))
    else {
        return Ok(None);
    };
    let PartContent::Data(data) = &part.content else {
        return Err(A2AError::invalid_params(
            "a task envelope must be a data part",
        ));
    };
    let envelope: TaskEnvelope = serde_json::from_value(data.clone())
        .map_err(|e| A2AError::invalid_params(format!("the task envelope is not valid: {e}")))?;
    if envelope.kind != baton_proto::ENVELOPE_KIND_TASK {
        return Err(A2AError::invalid_params(format!(
            "unsupported envelope kind {:?} (expected \"task\")",
            envelope.kind
        )));
    }
    Ok(Some(envelope.payload))
}

/// The input of a new task created by `sender` with `message`. Refuses the request whole when
/// an untrusted sender sets a server-controlled field or names other participants (abuse cases
/// 5 and 6): nothing is created. `unbriefed` is the lifecycle when the brief names none.
pub fn new_task(
    sender: &str,
    message: &Message,
    context_id: &str,
    trusted: bool,
    unbriefed: Lifecycle,
) -> Result<TaskInput, A2AError> {
    if sub_task_of(message)?.is_some() {
        return Err(A2AError::invalid_params(format!(
            "metadata {SUB_TASK_ID_METADATA} answers a sub-task of an existing task: send the \
             message with that task's taskId"
        )));
    }
    let text = text_of(message);
    let brief = envelope_of(message)?.unwrap_or_default();
    let deadline_secs = deadline_of(message)?;
    let budget = budget_of(message)?;
    let chain = brief.parent_tasks.as_deref().unwrap_or_default();
    if chain.len() > MAX_CHAIN {
        return Err(A2AError::invalid_params(format!(
            "task envelope's parent_tasks holds {} tasks; a chain of delegations holds at most {MAX_CHAIN}",
            chain.len()
        )));
    }
    if !trusted {
        let controlled: Vec<&str> = [
            ("lifecycle", brief.lifecycle.is_some()),
            ("model", brief.model.is_some()),
            ("reasoning_effort", brief.reasoning_effort.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        if !controlled.is_empty() {
            // As tiny-harness answers it: the operation is not offered to this sender.
            return Err(A2AError::unsupported_operation(format!(
                "task envelope cannot set server-controlled {}: participant {sender:?} is not a trusted delegator",
                controlled.join(", ")
            )));
        }
        if let Some(other) = brief.participants.iter().flatten().find(|p| p.id != sender) {
            return Err(A2AError::invalid_params(format!(
                "task envelope cannot name participant {:?}: participant {sender:?} is not a trusted delegator",
                other.id
            )));
        }
    }
    let goal = brief
        .goal
        .clone()
        .filter(|g| !g.trim().is_empty())
        .unwrap_or_else(|| text.clone());
    let goal = if goal.trim().is_empty() && carries_content(message) {
        ONLY_ATTACHMENTS_GOAL.to_string()
    } else {
        goal
    };
    if goal.trim().is_empty() {
        return Err(A2AError::invalid_params(
            "the message has no text and the envelope no goal: there is nothing to do",
        ));
    }
    let mut participants = brief.participants.unwrap_or_default();
    if !participants.iter().any(|p| p.id == sender) {
        participants.push(Participant {
            id: sender.to_string(),
            kind: ParticipantKind::Agent,
            role: ParticipantRole::Reporter,
            display_name: None,
        });
    }
    Ok(TaskInput {
        name: brief.name.unwrap_or_else(|| name_from(&goal)),
        goal,
        description: brief.description.unwrap_or_default(),
        acceptance_criteria: AcceptanceCriterion::texts(
            &brief.acceptance_criteria.unwrap_or_default(),
        ),
        participants,
        lifecycle: brief.lifecycle.unwrap_or(unbriefed),
        model: brief.model,
        reasoning_effort: brief.reasoning_effort,
        parent_tasks: brief
            .parent_tasks
            .iter()
            .flatten()
            .map(TaskRef::from)
            .collect(),
        limits: TaskLimits {
            deadline_secs,
            budget_tokens: budget.tokens,
            budget_cost_nanos: budget.cost_nanos,
            ..TaskLimits::default()
        },
        context_id: Some(context_id.to_string()),
        earlier: Vec::new(),
        carry: None,
    })
}

/// A message to an existing task: lifecycle and participants are fixed once the task exists
/// (abuse case 7).
pub fn follow_up(sender: &str, message: &Message) -> Result<InboxMessage, A2AError> {
    if let Some(brief) = envelope_of(message)?
        && (brief.lifecycle.is_some() || brief.participants.is_some())
    {
        return Err(A2AError::invalid_params(
            "lifecycle and participants can be set only on the first message of a new task",
        ));
    }
    Ok(InboxMessage {
        stand_in_id: sub_task_of(message)?,
        ..inbox_message(sender, message)
    })
}

/// The deadline the brief's delegator gives the task (the deadline extension), in seconds: a
/// whole number of at least 1, cut to [`MAX_TASK_DEADLINE_SECS`]; none when the brief names
/// none.
fn deadline_of(message: &Message) -> Result<Option<u64>, A2AError> {
    let seconds = whole_number_of(message, DEADLINE_EXTENSION, "seconds")?;
    Ok(seconds.map(|seconds| seconds.min(MAX_TASK_DEADLINE_SECS)))
}

/// The budget the brief's delegator gives the task (the budget extension): `{"tokens": N}`
/// model tokens, `{"cost_nanos": N}` billionths of `model.currency`, or both, each a whole
/// number of at least 1.
fn budget_of(message: &Message) -> Result<Budget, A2AError> {
    let Some(value) = metadata_value(message, BUDGET_EXTENSION) else {
        return Ok(Budget::default());
    };
    let refused = || {
        A2AError::invalid_params(format!(
            "metadata {BUDGET_EXTENSION} must be {{\"tokens\": N}}, {{\"cost_nanos\": N}} or \
             both, with each N a whole number of at least 1; it is {value}"
        ))
    };
    let field = |name: &str| match value.get(name) {
        None => Ok(None),
        Some(number) => whole_number(number).map(Some).ok_or_else(refused),
    };
    let budget = Budget {
        tokens: field("tokens")?,
        cost_nanos: field("cost_nanos")?,
    };
    if budget.tokens.is_none() && budget.cost_nanos.is_none() {
        return Err(refused());
    }
    Ok(budget)
}

/// A whole number of at least 1. `600.0` is a whole number too: a protobuf-based peer's metadata
/// (a `Struct`) holds every number as a double. A number past u64 is cut to its largest.
fn whole_number(value: &serde_json::Value) -> Option<u64> {
    let number = value
        .as_f64()
        .filter(|number| *number >= 1.0 && number.fract() == 0.0)?;
    // `as` saturates.
    Some(number as u64)
}

/// `metadata[extension][field]` of the message, a whole number of at least 1, when the message
/// names the extension.
fn whole_number_of(
    message: &Message,
    extension: &str,
    field: &str,
) -> Result<Option<u64>, A2AError> {
    let Some(value) = metadata_value(message, extension) else {
        return Ok(None);
    };
    match value.get(field).and_then(whole_number) {
        Some(number) => Ok(Some(number)),
        _ => Err(A2AError::invalid_params(format!(
            "metadata {extension} must be {{\"{field}\": N}} with N a whole number of at least \
             1; it is {value}"
        ))),
    }
}

/// The value of the message's metadata under `key`, when it has one.
fn metadata_value<'m>(message: &'m Message, key: &str) -> Option<&'m serde_json::Value> {
    message.metadata.as_ref()?.get(key)
}

/// The sub-task a message answers, by its metadata: a string id, or nothing.
fn sub_task_of(message: &Message) -> Result<Option<String>, A2AError> {
    let Some(value) = metadata_value(message, SUB_TASK_ID_METADATA) else {
        return Ok(None);
    };
    match value.as_str() {
        Some(id) if !id.trim().is_empty() => Ok(Some(id.to_string())),
        _ => Err(A2AError::invalid_params(format!(
            "metadata {SUB_TASK_ID_METADATA} must be the id of a sub-task of this task, as a \
             non-empty string; it is {value}"
        ))),
    }
}

pub fn inbox_message(sender: &str, message: &Message) -> InboxMessage {
    InboxMessage {
        message_id: message.message_id.clone(),
        participant_id: sender.to_string(),
        text: text_of(message),
        push_config: None,
        stand_in_id: None,
        attachments: Vec::new(),
    }
}

/// A short name from the goal's first words.
fn name_from(goal: &str) -> String {
    let words: Vec<&str> = goal.split_whitespace().take(8).collect();
    let name = words.join(" ");
    if name.chars().count() > 60 {
        name.chars().take(59).collect::<String>() + "…"
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(parts: serde_json::Value) -> Message {
        serde_json::from_value(json!({"messageId": "m", "role": "ROLE_USER", "parts": parts}))
            .unwrap()
    }

    #[test]
    fn a_first_message_of_files_alone_is_a_task_about_them() {
        let files = message(json!([{"raw": "AA==", "mediaType": "image/png"}]));
        let input = new_task("alice", &files, "ctx", false, Lifecycle::Delegated).unwrap();
        assert_eq!(input.goal, ONLY_ATTACHMENTS_GOAL);
        let envelope_only = message(json!([
            {"data": {"kind": "task", "payload": {}}, "mediaType": ENVELOPE_MEDIA_TYPE}
        ]));
        let refused =
            new_task("alice", &envelope_only, "ctx", false, Lifecycle::Delegated).unwrap_err();
        assert!(
            refused.message.contains("there is nothing to do"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn a_chain_of_parent_tasks_is_kept_up_to_its_bound_and_a_longer_one_refused() {
        let briefed = |tasks: usize| {
            let chain: Vec<serde_json::Value> = (0..tasks)
                .map(|n| json!({"task_id": format!("t{n}"), "agent": {"kind": "agent", "id": "https://a.example.com"}}))
                .collect();
            message(json!([
                {"text": "Check the ledger."},
                {"data": {"kind": "task", "payload": {"parent_tasks": chain}}, "mediaType": ENVELOPE_MEDIA_TYPE}
            ]))
        };
        let input = new_task(
            "alice",
            &briefed(MAX_CHAIN),
            "ctx",
            false,
            Lifecycle::Delegated,
        )
        .unwrap();
        assert_eq!(input.parent_tasks.len(), MAX_CHAIN);
        assert_eq!(
            input.parent_tasks[0].agent.as_deref(),
            Some("https://a.example.com")
        );
        let refused = new_task(
            "alice",
            &briefed(MAX_CHAIN + 1),
            "ctx",
            false,
            Lifecycle::Delegated,
        )
        .unwrap_err();
        assert!(
            refused
                .message
                .contains("parent_tasks holds 65 tasks; a chain of delegations holds at most 64"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn a_budget_a_delegator_gives_becomes_the_tasks_and_a_bad_one_is_refused() {
        let briefed = |budget: serde_json::Value| {
            new_task(
                "alice",
                &with_metadata(json!({ BUDGET_EXTENSION: budget })),
                "ctx",
                false,
                Lifecycle::Delegated,
            )
        };
        let input = briefed(json!({"tokens": 20000.0})).unwrap();
        assert_eq!(input.limits.budget_tokens, Some(20_000));
        assert_eq!(input.limits.budget_cost_nanos, None);
        let input = briefed(json!({"cost_nanos": 500000000})).unwrap();
        assert_eq!(
            (input.limits.budget_tokens, input.limits.budget_cost_nanos),
            (None, Some(500_000_000))
        );
        let input = briefed(json!({"tokens": 9, "cost_nanos": 8.0})).unwrap();
        assert_eq!(
            (input.limits.budget_tokens, input.limits.budget_cost_nanos),
            (Some(9), Some(8))
        );
        for bad in [
            json!({"tokens": 0}),
            json!({"tokens": 2.5}),
            json!({"tokens": 5, "cost_nanos": "0.5"}),
            json!({"cost_nanos": -1}),
            json!({"seconds": 9}),
            json!(7),
        ] {
            let refused = briefed(bad.clone()).unwrap_err();
            assert!(
                refused.message.contains(
                    "must be {\"tokens\": N}, {\"cost_nanos\": N} or both, with each N a whole number"
                ),
                "{bad}: {}",
                refused.message
            );
        }
        let none = new_task(
            "alice",
            &with_metadata(json!({})),
            "ctx",
            false,
            Lifecycle::Delegated,
        );
        assert_eq!(none.unwrap().limits.budget_tokens, None);
    }

    fn with_metadata(metadata: serde_json::Value) -> Message {
        serde_json::from_value(json!({
            "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Use savings."}],
            "metadata": metadata
        }))
        .unwrap()
    }

    #[test]
    fn a_follow_up_names_the_sub_task_it_answers_by_its_metadata() {
        let answer = follow_up("alice", &with_metadata(json!({"baton.subTaskId": "t.1"}))).unwrap();
        assert_eq!(answer.stand_in_id.as_deref(), Some("t.1"));
        assert_eq!(answer.text, "Use savings.");
        let plain = follow_up("alice", &with_metadata(json!({"other": 1}))).unwrap();
        assert_eq!(plain.stand_in_id, None);
    }

    #[test]
    fn a_sub_task_id_that_is_not_a_non_empty_string_is_refused_naming_the_key() {
        for bad in [
            json!(1),
            json!(""),
            json!(null),
            json!({"id": "t.1"}),
            json!(["t.1"]),
        ] {
            let refused =
                follow_up("alice", &with_metadata(json!({"baton.subTaskId": bad}))).unwrap_err();
            assert_eq!(refused.code, a2a::error_code::INVALID_PARAMS, "{bad}");
            assert!(
                refused.message.contains("baton.subTaskId"),
                "{}",
                refused.message
            );
        }
    }

    #[test]
    fn a_new_task_cannot_answer_a_sub_task() {
        let refused = new_task(
            "alice",
            &with_metadata(json!({"baton.subTaskId": "t.1"})),
            "ctx",
            true,
            Lifecycle::Conversation,
        )
        .unwrap_err();
        assert_eq!(refused.code, a2a::error_code::INVALID_PARAMS);
        assert!(
            refused.message.contains("existing task"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn a_deadline_a_delegator_gives_becomes_the_tasks_and_a_bad_one_is_refused() {
        let input = new_task(
            "alice",
            &with_metadata(json!({DEADLINE_EXTENSION: {"seconds": 90}})),
            "ctx",
            false,
            Lifecycle::Delegated,
        )
        .unwrap();
        assert_eq!(input.limits.deadline_secs, Some(90));
        let long = new_task(
            "alice",
            &with_metadata(json!({DEADLINE_EXTENSION: {"seconds": u64::MAX}})),
            "ctx",
            false,
            Lifecycle::Delegated,
        )
        .unwrap();
        assert_eq!(long.limits.deadline_secs, Some(MAX_TASK_DEADLINE_SECS));
        let none = new_task(
            "alice",
            &with_metadata(json!({})),
            "ctx",
            false,
            Lifecycle::Delegated,
        );
        assert_eq!(none.unwrap().limits.deadline_secs, None);
        let from_protobuf = new_task(
            "alice",
            &with_metadata(json!({DEADLINE_EXTENSION: {"seconds": 600.0}})),
            "ctx",
            false,
            Lifecycle::Delegated,
        )
        .unwrap();
        assert_eq!(from_protobuf.limits.deadline_secs, Some(600));
        for bad in [
            json!(90),
            json!({"seconds": 0}),
            json!({"seconds": -1}),
            json!({"seconds": 1.5}),
            json!({"seconds": "90"}),
            json!({}),
        ] {
            let refused = new_task(
                "alice",
                &with_metadata(json!({DEADLINE_EXTENSION: bad})),
                "ctx",
                false,
                Lifecycle::Delegated,
            )
            .unwrap_err();
            assert_eq!(refused.code, a2a::error_code::INVALID_PARAMS, "{bad}");
            assert!(
                refused.message.contains(DEADLINE_EXTENSION),
                "{}",
                refused.message
            );
        }
    }
}
