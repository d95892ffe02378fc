//! `docs/contract.md` is tested against the types in `proto/src`.
//!
//! Every ```json block of the page must sit right under a comment naming its type,
//! `<!-- type: TaskInput -->`. The block is deserialised into that type and serialised back, and
//! the JSON must come back unchanged: the examples are written in canonical form. A block
//! marked `<!-- type: TaskInput, partial -->` may leave out fields that have a default; every
//! field it gives must come back unchanged. The `--input '…'` of every Temporal CLI command in
//! the page's shell blocks is checked the same way against the type that command takes.

use std::collections::BTreeSet;

use baton_proto::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

const CONTRACT: &str = include_str!("../../docs/contract.md");
const ENVELOPE_MEDIA_TYPE: &str = "application/vnd.tiny-harness.event+json";

/// The types the page must show at least once.
const REQUIRED: &[&str] = &[
    "TaskInput",
    "TaskLimits",
    "ChildDone",
    "InboxMessage",
    "InboxReceipt",
    "TaskView",
    "TaskMessage",
    "SubTaskRow",
    "EventPage",
    "EventEntry",
    "TaskEvent",
    "TaskEnvelope",
    "TaskEnvelopePayload",
    "RemoteStart",
    "RemoteSnapshot",
    "RemoteWatch",
    "PushIn",
    "RemoteView",
    "StartAgentTaskIn",
    "StartAgentTaskOut",
    "CancelContextIn",
    "RemoteTaskIn",
    "FollowIn",
    "FollowOut",
    "DeletePushIn",
    "InvokeModelIn",
    "InvokeModelOut",
    "InvokeToolIn",
    "InvokeToolOut",
    "SubTaskReply",
    "RemoteReplyIn",
    "RemoteReplyOut",
    "RemoteFiles",
];

/// Every type a block may name: the public payload types of `proto/src`, the signal and query
/// inputs that are plain JSON values, and the A2A message that carries the envelope.
const KNOWN: &[&str] = &[
    "TaskInput",
    "TaskLimits",
    "TaskCarry",
    "Participant",
    "TaskRef",
    "HistoryItem",
    "ToolCallRecord",
    "ChildDone",
    "InboxMessage",
    "InboxReceipt",
    "TaskView",
    "TaskMessage",
    "SubTaskRow",
    "EventPage",
    "EventLog",
    "EventEntry",
    "TaskEvent",
    "TaskEnvelope",
    "TaskEnvelopePayload",
    "RemoteStart",
    "RemoteCarry",
    "RemoteSnapshot",
    "RemoteFiles",
    "RemoteWatch",
    "PushIn",
    "RemoteView",
    "StartAgentTaskIn",
    "StartAgentTaskOut",
    "CancelContextIn",
    "RemoteTaskIn",
    "FollowIn",
    "FollowOut",
    "DeletePushIn",
    "InvokeModelIn",
    "InvokeModelOut",
    "InvokeToolIn",
    "InvokeToolOut",
    "SubTaskReply",
    "RemoteReplyIn",
    "RemoteReplyOut",
    "ForwardedReply",
    "PushConfig",
    "PushDelivery",
    "DelegationEnd",
    "TaskFailure",
    "String",
    "u64",
    "a2a::Message",
];

/// The activity type names the worker registers; each has its own section.
const ACTIVITIES: &[&str] = &[
    "start_agent_task",
    "cancel_context_tasks",
    "get_remote_task",
    "follow_remote_task",
    "register_remote_push",
    "delete_remote_push",
    "cancel_remote_task",
    "collect_remote_files",
    "send_remote_reply",
    "invoke_model",
    "invoke_tool",
    "deliver_push",
    "record_delegation_ends",
    "report_task_failed",
];

/// One ```json block of the page.
#[derive(Debug)]
struct Example {
    line: usize,
    type_name: Option<String>,
    partial: bool,
    json: String,
}

/// One fenced block: its language, the line before the fence, and its text.
struct Fenced {
    line: usize,
    lang: String,
    before: String,
    body: String,
}

fn fenced_blocks(markdown: &str) -> Vec<Fenced> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            body.push(lines[i]);
            i += 1;
        }
        assert!(
            i < lines.len(),
            "the block at line {} is never closed",
            start + 1
        );
        blocks.push(Fenced {
            line: start + 1,
            lang: lang.trim().to_string(),
            before: if start == 0 {
                String::new()
            } else {
                lines[start - 1].trim().to_string()
            },
            body: body.join("\n"),
        });
        i += 1;
    }
    blocks
}

fn examples() -> Vec<Example> {
    fenced_blocks(CONTRACT)
        .into_iter()
        .filter(|block| block.lang == "json")
        .map(|block| {
            let annotation = block
                .before
                .strip_prefix("<!-- type:")
                .and_then(|rest| rest.strip_suffix("-->"))
                .map(str::trim);
            let (type_name, partial) = match annotation {
                None => (None, false),
                Some(text) => match text.split_once(',') {
                    Some((name, flag)) => {
                        assert_eq!(
                            flag.trim(),
                            "partial",
                            "line {}: the only flag is `partial`",
                            block.line
                        );
                        (Some(name.trim().to_string()), true)
                    }
                    None => (Some(text.to_string()), false),
                },
            };
            Example {
                line: block.line,
                type_name,
                partial,
                json: block.body,
            }
        })
        .collect()
}

fn via<T: Serialize + DeserializeOwned>(value: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// Deserialises `value` as `type_name` and serialises it back.
fn round_trip(type_name: &str, value: &Value) -> Result<Value, String> {
    match type_name {
        "TaskInput" => via::<TaskInput>(value),
        "TaskLimits" => via::<TaskLimits>(value),
        "TaskCarry" => via::<TaskCarry>(value),
        "Participant" => via::<Participant>(value),
        "TaskRef" => via::<TaskRef>(value),
        "HistoryItem" => via::<HistoryItem>(value),
        "ToolCallRecord" => via::<ToolCallRecord>(value),
        "ChildDone" => via::<ChildDone>(value),
        "InboxMessage" => via::<InboxMessage>(value),
        "InboxReceipt" => via::<InboxReceipt>(value),
        "TaskMessage" => via::<TaskMessage>(value),
        "TaskView" => via::<TaskView>(value),
        "SubTaskRow" => via::<SubTaskRow>(value),
        "EventPage" => via::<EventPage>(value),
        "EventEntry" => via::<EventEntry>(value),
        "TaskEvent" => via::<TaskEvent>(value),
        "TaskEnvelope" => via::<TaskEnvelope>(value),
        "TaskEnvelopePayload" => via::<TaskEnvelopePayload>(value),
        "RemoteStart" => via::<RemoteStart>(value),
        "RemoteCarry" => via::<RemoteCarry>(value),
        "SubTaskReply" => via::<SubTaskReply>(value),
        "RemoteReplyIn" => via::<RemoteReplyIn>(value),
        "RemoteReplyOut" => via::<RemoteReplyOut>(value),
        "ForwardedReply" => via::<ForwardedReply>(value),
        "RemoteSnapshot" => via::<RemoteSnapshot>(value),
        "RemoteFiles" => via::<RemoteFiles>(value),
        "RemoteWatch" => via::<RemoteWatch>(value),
        "PushIn" => via::<PushIn>(value),
        "RemoteView" => via::<RemoteView>(value),
        "StartAgentTaskIn" => via::<StartAgentTaskIn>(value),
        "StartAgentTaskOut" => via::<StartAgentTaskOut>(value),
        "CancelContextIn" => via::<CancelContextIn>(value),
        "TaskFailure" => via::<TaskFailure>(value),
        "RemoteTaskIn" => via::<RemoteTaskIn>(value),
        "FollowIn" => via::<FollowIn>(value),
        "FollowOut" => via::<FollowOut>(value),
        "DeletePushIn" => via::<DeletePushIn>(value),
        "InvokeModelIn" => via::<InvokeModelIn>(value),
        "InvokeModelOut" => via::<InvokeModelOut>(value),
        "InvokeToolIn" => via::<InvokeToolIn>(value),
        "InvokeToolOut" => via::<InvokeToolOut>(value),
        "PushConfig" => via::<PushConfig>(value),
        "PushDelivery" => via::<PushDelivery>(value),
        "DelegationEnd" => via::<DelegationEnd>(value),
        "String" => via::<String>(value),
        "u64" => via::<u64>(value),
        "a2a::Message" => {
            let message: a2a::Message =
                serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
            for part in &message.parts {
                if part.media_type.as_deref() == Some(ENVELOPE_MEDIA_TYPE) {
                    let a2a::PartContent::Data(data) = &part.content else {
                        return Err("the envelope part is not a data part".into());
                    };
                    let envelope = via::<TaskEnvelope>(data)?;
                    if &envelope != data {
                        return Err(format!("the envelope changed: {envelope}"));
                    }
                }
            }
            serde_json::to_value(&message).map_err(|e| e.to_string())
        }
        other => Err(format!("unknown type {other:?}")),
    }
}

/// Whether every field `given` has is in `full` with the same value (arrays: same length, item by
/// item).
fn contained(given: &Value, full: &Value) -> bool {
    match (given, full) {
        (Value::Object(given), Value::Object(full)) => given
            .iter()
            .all(|(key, value)| full.get(key).is_some_and(|other| contained(value, other))),
        (Value::Array(given), Value::Array(full)) => {
            given.len() == full.len() && given.iter().zip(full).all(|(a, b)| contained(a, b))
        }
        _ => given == full,
    }
}

fn check(type_name: &str, partial: bool, json: &str) -> Result<(), String> {
    let original: Value =
        serde_json::from_str(json).map_err(|e| format!("not JSON: {e}\n{json}"))?;
    let back = round_trip(type_name, &original)?;
    let lossless = if partial {
        contained(&original, &back)
    } else {
        original == back
    };
    if lossless {
        Ok(())
    } else {
        Err(format!(
            "the round trip through {type_name} changed it:\n  doc:  {original}\n  back: {back}"
        ))
    }
}

#[test]
fn every_json_example_names_a_known_type_and_round_trips_unchanged() {
    let examples = examples();
    assert!(examples.len() >= REQUIRED.len(), "{examples:#?}");
    let mut failures = Vec::new();
    for example in &examples {
        let Some(type_name) = &example.type_name else {
            failures.push(format!(
                "line {}: a ```json block needs `<!-- type: Name -->` on the line before it",
                example.line
            ));
            continue;
        };
        if let Err(error) = check(type_name, example.partial, &example.json) {
            failures.push(format!("line {} ({type_name}): {error}", example.line));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn every_contract_type_has_an_example() {
    let shown: BTreeSet<String> = examples()
        .into_iter()
        .filter(|example| !example.partial)
        .filter_map(|example| example.type_name)
        .collect();
    let missing: Vec<&&str> = REQUIRED
        .iter()
        .filter(|name| !shown.contains(**name))
        .collect();
    assert!(
        missing.is_empty(),
        "no canonical example of {missing:?}; shown: {shown:?}"
    );
    // A type the page names in backticks is a type it must show.
    let named_but_not_shown: Vec<&&str> = KNOWN
        .iter()
        .filter(|name| name.chars().next().is_some_and(char::is_uppercase))
        .filter(|name| CONTRACT.contains(&format!("`{name}`")))
        .filter(|name| !shown.contains(**name) && **name != "String")
        .collect();
    assert!(
        named_but_not_shown.is_empty(),
        "named but never shown: {named_but_not_shown:?}"
    );
}

#[test]
fn an_unknown_type_name_or_a_changed_field_fails() {
    assert!(
        check("TaskInputt", false, r#"{"name": "a", "goal": "b"}"#)
            .unwrap_err()
            .contains("unknown type")
    );
    // Not canonical: the defaults are missing, so only a partial block may leave them out.
    assert!(check("TaskInput", false, r#"{"name": "a", "goal": "b"}"#).is_err());
    assert!(check("TaskInput", true, r#"{"name": "a", "goal": "b"}"#).is_ok());
    // A strict type refuses a typo.
    assert!(
        check(
            "TaskInput",
            true,
            r#"{"name": "a", "goal": "b", "gaol": "c"}"#
        )
        .is_err()
    );
    // A state must be written with its A2A name.
    assert!(check("RemoteWatch", false, r#"{"kind": "push"}"#).is_ok());
    assert!(
        check(
            "RemoteSnapshot",
            false,
            r#"{"remote_task_id": "t", "state": "WORKING"}"#
        )
        .is_err()
    );
}

#[test]
fn every_activity_has_a_section() {
    for name in ACTIVITIES {
        assert!(
            CONTRACT.contains(&format!("### `{name}`")),
            "no section for the activity {name}"
        );
    }
}

#[test]
fn the_documented_limits_are_the_defaults() {
    let limits = TaskLimits::default();
    let shown = format!(
        r#"{{"max_turns": {}, "history_event_bound": {}, "idle_timeout_secs": {}}}"#,
        limits.max_turns, limits.history_event_bound, limits.idle_timeout_secs
    );
    assert!(CONTRACT.contains(&shown), "the page must show {shown}");
    let minimal: TaskInput =
        serde_json::from_str(r#"{"name": "books", "goal": "Check the books."}"#).unwrap();
    assert_eq!(minimal.limits, limits);
    assert_eq!(minimal.lifecycle, Lifecycle::Delegated);
    assert_eq!(minimal.description, "");
    assert!(minimal.carry.is_none() && minimal.model.is_none());
}

/// The commands of the page's shell blocks, continuation lines joined.
fn shell_commands() -> Vec<(usize, String)> {
    let mut commands = Vec::new();
    for block in fenced_blocks(CONTRACT) {
        if block.lang != "sh" {
            continue;
        }
        let mut current = String::new();
        for line in block.body.lines() {
            let line = line.trim();
            match line.strip_suffix('\\') {
                Some(start) => {
                    current.push_str(start);
                    current.push(' ');
                }
                None => {
                    current.push_str(line);
                    if !current.trim().is_empty() {
                        commands.push((block.line, std::mem::take(&mut current)));
                    }
                }
            }
        }
    }
    commands
}

/// The `'…'` after `--input` in a command.
fn quoted_input(command: &str) -> Option<&str> {
    let rest = command.split_once("--input '")?.1;
    Some(rest.split_once('\'').expect("a closing quote").0)
}

#[test]
fn every_cli_input_in_the_page_is_the_type_its_command_takes() {
    let commands = shell_commands();
    let mut checked = BTreeSet::new();
    for (line, command) in &commands {
        if !command.contains("--input") {
            continue;
        }
        let type_name = if command.contains("--type TaskWorkflow") {
            "TaskInput"
        } else if command.contains("--name cancel") {
            "String"
        } else if command.contains("--name inbox") {
            "InboxMessage"
        } else if command.contains("--type events_since") {
            "u64"
        } else {
            panic!("line {line}: no known type for the input of `{command}`")
        };
        let input = match quoted_input(command) {
            Some(quoted) => quoted.to_string(),
            None => command
                .split_once("--input ")
                .unwrap()
                .1
                .split_whitespace()
                .next()
                .unwrap()
                .to_string(),
        };
        if let Err(error) = check(type_name, true, &input) {
            panic!("line {line}: `{command}`: {error}");
        }
        checked.insert(type_name);
    }
    assert_eq!(
        checked,
        BTreeSet::from(["TaskInput", "String", "u64", "InboxMessage"]),
        "{commands:#?}"
    );
}
