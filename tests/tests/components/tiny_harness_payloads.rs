//! The payloads Baton and tiny-harness exchange, held to the shapes tiny-harness 0.9.0 writes
//! and reads (tests/fixtures/tiny-harness-0.9.0/): Baton reads what a tiny-harness agent sends,
//! and what Baton writes passes the published models' constraints, which [`published`] states
//! field by field (the models are closed: `extra="forbid"`).

use a2a::Message;
use baton_core::brief::brief_envelope;
use baton_core::spawn_subtask::SpawnRequest;
use baton_gateway::{Caller, CallerKind, Trust, new_task, task_extension};
use baton_proto::envelope::{AcceptanceCriterion, TaskEnvelope, TaskEnvelopePayload};
use baton_proto::{Lifecycle, SubTaskRow, TaskInput, TaskRef, TaskState, TaskView};
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let path = baton_tests::workspace()
        .join("tests/fixtures/tiny-harness-0.9.0")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

// --- what tiny-harness sends, read by Baton --------------------------------------------------

#[test]
fn a_tiny_harness_brief_creates_a_task_with_its_criteria() {
    let message: Message = serde_json::from_value(fixture("brief-to-an-agent.json")).unwrap();
    let input = new_task(
        "tiny-harness",
        &message,
        "ctx-7d4e",
        false,
        Lifecycle::Conversation,
    )
    .unwrap();
    assert_eq!(input.name, "balance");
    assert_eq!(input.goal, "Is the March ledger balanced?");
    assert_eq!(input.description, "Use the closing balances of 31 March.");
    assert_eq!(
        input.acceptance_criteria,
        ["Say yes or no.", "Give the totals."]
    );
    // An untrusted creator opens a conversation, as tiny-harness does for it.
    assert_eq!(input.lifecycle, Lifecycle::Conversation);
    assert_eq!(input.participants[0].id, "tiny-harness");
}

#[test]
fn a_tiny_harness_brief_to_its_own_self_is_read_whole_when_trusted() {
    let envelope: TaskEnvelope = serde_json::from_value(fixture("brief-to-itself.json")).unwrap();
    let payload = &envelope.payload;
    assert_eq!(payload.lifecycle, Some(Lifecycle::Delegated));
    assert_eq!(payload.reasoning_effort.as_deref(), Some("low"));
    let parent = &payload.parent_tasks.as_ref().unwrap()[0];
    assert_eq!(TaskRef::from(parent).task_id, "3f1c2a7e");
    assert_eq!(TaskRef::from(parent).agent, None);

    let message = message_with(&envelope);
    // tiny-harness cannot prove who it is: it is trusted where asserted ids are taken and it is
    // a delegator.
    let delegators = ["tiny-harness".to_string()];
    let tiny_harness = Caller {
        id: "tiny-harness".into(),
        kind: CallerKind::Asserted,
    };
    let trusted = Trust {
        delegators: &delegators,
    }
    .trusts(&tiny_harness);
    assert!(trusted);
    let input = new_task(
        "tiny-harness",
        &message,
        "ctx",
        trusted,
        Lifecycle::Conversation,
    )
    .unwrap();
    assert_eq!(input.lifecycle, Lifecycle::Delegated);
    assert_eq!(
        input.parent_tasks,
        [TaskRef {
            task_id: "3f1c2a7e".into(),
            agent: None
        }]
    );
    // From a stranger, the server-controlled fields are refused whole, as tiny-harness does.
    let refused =
        new_task("stranger", &message, "ctx", false, Lifecycle::Conversation).unwrap_err();
    assert_eq!(
        refused.code,
        a2a::error_code::UNSUPPORTED_OPERATION,
        "{refused}"
    );
    assert!(refused.message.contains("server-controlled"), "{refused}");
}

#[test]
fn a_tiny_harness_task_extension_is_read_field_for_field() {
    let read: TaskEnvelopePayload = serde_json::from_value(fixture("task-extension.json")).unwrap();
    assert_eq!(read.name.as_deref(), Some("month-end"));
    assert_eq!(read.task_type, None);
    assert_eq!(
        read.acceptance_criteria,
        Some(vec![AcceptanceCriterion::open("The ledger balances.")])
    );
    assert_eq!(read.participants.as_ref().unwrap().len(), 2);
    let sub_tasks = read.sub_tasks.as_ref().unwrap();
    assert_eq!(sub_tasks[0].agent.as_ref().unwrap().id, "ledger");
    assert_eq!(sub_tasks[1].sub_state.as_deref(), Some("awaiting-answer"));
    assert!(read.plan.is_some());
    assert_eq!(read.lifecycle, Some(Lifecycle::Conversation));
}

#[test]
fn a_field_the_published_models_do_not_have_is_refused() {
    let mut extension = fixture("task-extension.json");
    extension["priority"] = json!("high");
    let error = serde_json::from_value::<TaskEnvelopePayload>(extension).unwrap_err();
    assert!(error.to_string().contains("priority"), "{error}");
}

// --- what Baton writes, in the published shapes ----------------------------------------------

#[test]
fn baton_s_brief_to_a_peer_passes_the_published_model() {
    let request = SpawnRequest {
        agent: "ledger".into(),
        name: "balance".into(),
        goal: "Is the March ledger balanced?".into(),
        description: "".into(),
        acceptance_criteria: vec!["Say yes or no.".into()],
        deadline_secs: None,
        attachments: Vec::new(),
    };
    // A task a front desk delegated: the chain names the front desk's task by its URL.
    let parent: TaskInput = serde_json::from_value(json!({
        "name": "books", "goal": "Close the books.",
        "parent_tasks": [{"task_id": "q1", "agent": "https://front.example.com"}]
    }))
    .unwrap();
    for agent in ["ledger", "self"] {
        let request = SpawnRequest {
            agent: agent.into(),
            ..request.clone()
        };
        let envelope = serde_json::to_value(brief_envelope(&request, &parent, "books-1")).unwrap();
        assert_eq!(envelope["kind"], "task");
        assert_eq!(
            envelope["payload"]["parent_tasks"],
            json!([
                {"task_id": "q1", "agent": {"kind": "agent", "id": "https://front.example.com"}},
                {"task_id": "books-1"}
            ])
        );
        published(&envelope["payload"]).unwrap_or_else(|e| panic!("{agent}: {e}: {envelope}"));
        assert_eq!(
            envelope["payload"]["acceptance_criteria"],
            json!([{"text": "Say yes or no.", "met": false}])
        );
    }
}

#[test]
fn baton_s_task_extension_passes_the_published_model() {
    let view: TaskView = serde_json::from_value(json!({
        "task_id": "books-1",
        "name": "books",
        "goal": "Close the March books.",
        "acceptance_criteria": ["The ledger balances."],
        "state": "TASK_STATE_WORKING",
        "turns": 2,
        "lifecycle": "conversation",
        "reasoning_effort": "minimal",
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}],
        "parent_tasks": [{"task_id": "q1", "agent": "planner"}],
        "sub_tasks": []
    }))
    .unwrap();
    let rows = vec![
        row(
            "books-1.1",
            "ledger",
            Some("9b2e41c0"),
            TaskState::AuthRequired,
            Some("awaiting-credentials"),
        ),
        row(
            "books-1.2",
            "self",
            Some("c1d2"),
            TaskState::InputRequired,
            Some("awaiting-answer"),
        ),
        row("books-1.3", "ledger", None, TaskState::Submitted, None),
    ];
    let view = TaskView {
        sub_tasks: rows,
        ..view
    };
    let extension = serde_json::to_value(task_extension(&view)).unwrap();
    published(&extension).unwrap_or_else(|e| panic!("{e}: {extension}"));
    assert_eq!(extension["goal"], "Close the March books.");
    assert_eq!(
        extension["sub_tasks"],
        json!([
            {"task_id": "9b2e41c0", "agent": {"kind": "agent", "id": "ledger"}, "state": "AUTH_REQUIRED"},
            {"task_id": "c1d2", "state": "INPUT_REQUIRED", "sub_state": "awaiting-answer"},
            {"task_id": "books-1.3", "agent": {"kind": "agent", "id": "ledger"}, "state": "SUBMITTED"}
        ])
    );
    assert_eq!(
        extension["parent_tasks"],
        json!([{"task_id": "q1", "agent": {"kind": "agent", "id": "planner"}}])
    );
    // An effort the published model does not take is left out, not published.
    assert!(extension.get("reasoning_effort").is_none());
    // Baton reads its own extension back.
    serde_json::from_value::<TaskEnvelopePayload>(extension).unwrap();
}

#[test]
fn the_checker_refuses_what_tiny_harness_would_refuse() {
    let good = fixture("task-extension.json");
    published(&good).unwrap();
    for (path, bad) in [
        ("acceptance_criteria", json!(["a string"])),
        ("sub_tasks", json!([{"task_id": "t", "agent": "ledger"}])),
        (
            "sub_tasks",
            json!([{"task_id": "t", "sub_state": "awaiting-credentials"}]),
        ),
        ("reasoning_effort", json!("minimal")),
        ("extra", json!(1)),
    ] {
        let mut value = good.clone();
        value[path] = bad.clone();
        assert!(published(&value).is_err(), "{path} = {bad}");
    }
    let mut no_goal = good.clone();
    no_goal.as_object_mut().unwrap().remove("goal");
    assert!(published(&no_goal).is_err());
}

fn row(
    id: &str,
    agent: &str,
    remote: Option<&str>,
    state: TaskState,
    sub_state: Option<&str>,
) -> SubTaskRow {
    SubTaskRow {
        stand_in_id: id.into(),
        name: "n".into(),
        agent: agent.into(),
        remote_task_id: remote.map(str::to_string),
        context_id: None,
        state,
        sub_state: sub_state.map(str::to_string),
        summary: None,
        resolved: false,
        attachments: Vec::new(),
        usage: None,
    }
}

fn message_with(envelope: &TaskEnvelope) -> Message {
    serde_json::from_value(json!({
        "messageId": "m-1", "role": "ROLE_USER",
        "parts": [
            {"text": "Is the March ledger balanced?"},
            {"data": envelope, "mediaType": "application/vnd.tiny-harness.event+json"}
        ]
    }))
    .unwrap()
}

// --- the published models, as constraints ----------------------------------------------------

/// Whether `value` is a `TaskExtensionData` of tiny-harness 0.9.0 would validate: its fields
/// only, `name` and `goal` given, and each field of the type and values the model takes.
fn published(value: &Value) -> Result<(), String> {
    const FIELDS: [&str; 12] = [
        "name",
        "type",
        "goal",
        "description",
        "acceptance_criteria",
        "participants",
        "parent_tasks",
        "sub_tasks",
        "plan",
        "lifecycle",
        "model",
        "reasoning_effort",
    ];
    let object = value.as_object().ok_or("not an object")?;
    only(object, &FIELDS)?;
    for required in ["name", "goal"] {
        object
            .get(required)
            .and_then(Value::as_str)
            .ok_or(format!("{required} missing"))?;
    }
    nullable_str(object, "type")?;
    nullable_str(object, "model")?;
    if let Some(description) = object.get("description") {
        description.as_str().ok_or("description not a string")?;
    }
    for criterion in list(object, "acceptance_criteria")? {
        let c = criterion
            .as_object()
            .ok_or("a criterion is not an object")?;
        only(c, &["text", "met"])?;
        c.get("text")
            .and_then(Value::as_str)
            .ok_or("a criterion has no text")?;
        if let Some(met) = c.get("met") {
            met.as_bool().ok_or("met is not a boolean")?;
        }
    }
    for participant in list(object, "participants")? {
        let p = participant
            .as_object()
            .ok_or("a participant is not an object")?;
        only(p, &["id", "kind", "role", "display_name"])?;
        one_of(p.get("kind"), &["human", "agent"], "kind")?;
        one_of(
            p.get("role"),
            &["assignee", "reporter", "watcher", "admin"],
            "role",
        )?;
    }
    for field in ["parent_tasks", "sub_tasks"] {
        for task in list(object, field)? {
            let t = task
                .as_object()
                .ok_or("a task reference is not an object")?;
            only(t, &["task_id", "agent", "state", "sub_state"])?;
            t.get("task_id")
                .and_then(Value::as_str)
                .ok_or("a task reference has no task_id")?;
            match t.get("agent") {
                None | Some(Value::Null) => {}
                Some(Value::Object(agent)) => only(agent, &["kind", "id", "version"])?,
                Some(other) => return Err(format!("agent is {other}, not an entity reference")),
            }
            nullable_str(t, "state")?;
            match t.get("sub_state") {
                None | Some(Value::Null) => {}
                other => one_of(
                    other,
                    &["awaiting-next-message", "awaiting-answer"],
                    "sub_state",
                )?,
            }
        }
    }
    for (field, allowed) in [
        ("lifecycle", &["conversation", "delegated"][..]),
        ("reasoning_effort", &["low", "medium", "high"][..]),
    ] {
        match object.get(field) {
            None | Some(Value::Null) => {}
            other => one_of(other, allowed, field)?,
        }
    }
    Ok(())
}

fn only(object: &serde_json::Map<String, Value>, fields: &[&str]) -> Result<(), String> {
    match object.keys().find(|k| !fields.contains(&k.as_str())) {
        Some(extra) => Err(format!("{extra} is not a field of the published model")),
        None => Ok(()),
    }
}

fn list<'a>(
    object: &'a serde_json::Map<String, Value>,
    field: &str,
) -> Result<&'a [Value], String> {
    match object.get(field) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(format!("{field} is {other}, not a list")),
    }
}

fn nullable_str(object: &serde_json::Map<String, Value>, field: &str) -> Result<(), String> {
    match object.get(field) {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
        Some(other) => Err(format!("{field} is {other}, not a string")),
    }
}

fn one_of(value: Option<&Value>, allowed: &[&str], field: &str) -> Result<(), String> {
    match value.and_then(Value::as_str) {
        Some(v) if allowed.contains(&v) => Ok(()),
        _ => Err(format!("{field} is {value:?}, not one of {allowed:?}")),
    }
}
