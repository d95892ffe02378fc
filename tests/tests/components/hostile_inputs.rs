//! Bounded property tests of what strangers send: agent cards, task envelopes, A2A messages
//! (the JSON-RPC and HTTP+JSON intake) and push bodies, as arbitrary JSON and as published
//! payloads with one value replaced or one key removed. Each input must be taken or refused with
//! an error, never panic, and what is taken must keep the rules the code promises.

use a2a::{Message, StreamResponse};
use baton_a2a::card_validation::{SUPPORTED_BINDINGS, validate_card};
use baton_gateway::new_task;
use baton_gateway::{UnreadPush, pushed_task};
use baton_proto::{Lifecycle, TaskEnvelope, TaskInput};
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};

/// Keys the code looks for, so arbitrary objects reach past the first check.
const KEYS: &[&str] = &[
    "name",
    "description",
    "version",
    "supportedInterfaces",
    "url",
    "protocolBinding",
    "protocolVersion",
    "capabilities",
    "extensions",
    "uri",
    "required",
    "skills",
    "id",
    "securitySchemes",
    "securityRequirements",
    "schemes",
    "list",
    "messageId",
    "role",
    "parts",
    "text",
    "data",
    "mediaType",
    "raw",
    "metadata",
    "kind",
    "payload",
    "goal",
    "acceptance_criteria",
    "met",
    "participants",
    "lifecycle",
    "model",
    "reasoning_effort",
    "parent_tasks",
    "sub_tasks",
    "type",
    "task",
    "statusUpdate",
    "taskId",
    "contextId",
    "status",
    "state",
    "participant_id",
];

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop_oneof![
            "\\PC{0,12}",
            Just("1.0".to_string()),
            Just("JSONRPC".to_string()),
            Just("GRPC".to_string()),
            Just("http://127.0.0.1:9/".to_string()),
            Just("127.0.0.1:9".to_string()),
            Just("ROLE_USER".to_string()),
            Just("application/vnd.tiny-harness.event+json".to_string()),
            Just("delegated".to_string()),
            Just("\u{1b}[2J\n\u{0}".to_string()),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        prop::sample::select(KEYS).prop_map(str::to_string),
                        "\\PC{0,6}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every path to a value in `value`: object keys and array indexes.
fn paths(value: &Value) -> Vec<Vec<PathStep>> {
    let mut found = vec![vec![]];
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                for mut rest in paths(child) {
                    rest.insert(0, PathStep::Key(key.clone()));
                    found.push(rest);
                }
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                for mut rest in paths(child) {
                    rest.insert(0, PathStep::Index(index));
                    found.push(rest);
                }
            }
        }
        _ => {}
    }
    found
}

#[derive(Debug, Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// `base` with the value at one of its paths replaced by `with`, or removed when `remove`.
fn mutated(base: &Value, pick: prop::sample::Index, with: Value, remove: bool) -> Value {
    let all = paths(base);
    let path = &all[pick.index(all.len())];
    let mut copy = base.clone();
    let Some((last, parents)) = path.split_last() else {
        return with;
    };
    let mut at = &mut copy;
    for step in parents {
        at = match step {
            PathStep::Key(key) => &mut at[key.as_str()],
            PathStep::Index(index) => &mut at[*index],
        };
    }
    match (last, at) {
        (PathStep::Key(key), Value::Object(map)) if remove => {
            map.remove(key);
        }
        (PathStep::Index(index), Value::Array(items)) if remove => {
            items.remove(*index);
        }
        (PathStep::Key(key), parent) => parent[key.as_str()] = with,
        (PathStep::Index(index), parent) => parent[*index] = with,
    }
    copy
}

/// Arbitrary JSON, or `base` with one change.
fn near(base: Value) -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => arbitrary_json(),
        3 => (any::<prop::sample::Index>(), arbitrary_json(), any::<bool>())
            .prop_map(move |(pick, with, remove)| mutated(&base, pick, with, remove)),
    ]
}

fn fixture(name: &str) -> Value {
    let path = baton_tests::workspace()
        .join("tests/fixtures/tiny-harness-0.9.0")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn valid_card() -> Value {
    json!({
        "name": "Ledger", "description": "Knows the books", "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "127.0.0.1:9001", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:9000/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": true,
            "extensions": [{"uri": "https://example.com/ext", "required": false}]},
        "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
        "securityRequirements": [{"schemes": {"key": {"list": []}}}],
        "skills": [{"id": "books", "name": "Books", "description": "", "tags": []}]
    })
}

const CASES: u32 = 2000;

/// Runs `check` on `CASES` inputs of `strategy` (the smallest failing input is reported), and
/// asserts at least a tenth were taken: a property that refuses everything proves nothing.
fn run<S: Strategy>(strategy: S, check: impl Fn(S::Value) -> Result<bool, TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let taken = AtomicU32::new(0);
    let outcome = runner.run(&strategy, |input| {
        if check(input)? {
            taken.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    let taken = taken.into_inner();
    assert!(
        taken >= CASES / 10,
        "only {taken} of {CASES} inputs were taken"
    );
}

#[test]
fn a_card_is_validated_or_refused_and_what_is_taken_is_callable() {
    run(near(valid_card()), |card| {
        let Ok(valid) = validate_card("ledger", "http://127.0.0.1:9000", &card) else {
            return Ok(false);
        };
        let interface = &valid.interface;
        prop_assert!(SUPPORTED_BINDINGS.contains(&interface.protocol_binding.as_str()));
        prop_assert!(interface.protocol_version.starts_with('1'));
        prop_assert!(!interface.url.is_empty());
        Ok(true)
    });
}

#[test]
fn an_envelope_is_read_whole_or_refused() {
    let envelopes = prop_oneof![
        near(fixture("brief-to-itself.json")),
        near(fixture("brief-to-an-agent.json")["parts"][1]["data"].clone()),
    ];
    run(envelopes, |envelope| {
        let Ok(read) = serde_json::from_value::<TaskEnvelope>(envelope) else {
            return Ok(false);
        };
        let again: TaskEnvelope =
            serde_json::from_value(serde_json::to_value(&read).unwrap()).unwrap();
        prop_assert_eq!(again, read);
        Ok(true)
    });
}

#[test]
fn a_first_message_makes_a_task_that_keeps_the_trust_rules() {
    let to_an_agent = fixture("brief-to-an-agent.json");
    let mut to_itself = to_an_agent.clone();
    to_itself["parts"][1]["data"] = fixture("brief-to-itself.json");
    let messages = prop_oneof![near(to_an_agent), near(to_itself)];
    run((messages, any::<bool>()), |(message, trusted)| {
        let Ok(message) = serde_json::from_value::<Message>(message) else {
            return Ok(false);
        };
        let Ok(input) = new_task("alice", &message, "ctx", trusted, Lifecycle::Conversation) else {
            return Ok(false);
        };
        prop_assert!(!input.goal.trim().is_empty());
        prop_assert!(input.participants.iter().any(|p| p.id == "alice"));
        if !trusted {
            prop_assert_eq!(input.lifecycle, Lifecycle::Conversation);
            prop_assert!(input.model.is_none() && input.reasoning_effort.is_none());
            prop_assert!(input.participants.iter().all(|p| p.id == "alice"));
        }
        // What goes to Temporal comes back the same.
        let stored: TaskInput =
            serde_json::from_value(serde_json::to_value(&input).unwrap()).unwrap();
        prop_assert_eq!(stored, input);
        Ok(true)
    });
}

#[test]
fn a_push_body_names_its_task_or_is_refused() {
    let pushed = json!({"statusUpdate": {
        "taskId": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_COMPLETED",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}},
        "metadata": {"io.github.madarauchiha-314.tiny-harness/status": {"sub_state": "awaiting-next-message"}}
    }});
    run(near(pushed), |body| {
        let bytes = serde_json::to_vec(&body).unwrap();
        match pushed_task(&bytes) {
            Ok((task_id, _)) => {
                prop_assert!(!task_id.is_empty());
                let named = [
                    &body["statusUpdate"]["taskId"],
                    &body["artifactUpdate"]["taskId"],
                    &body["task"]["id"],
                    &body["message"]["taskId"],
                ];
                prop_assert!(named.iter().any(|id| id.as_str() == Some(task_id.as_str())));
                Ok(true)
            }
            Err(UnreadPush::NotA2a) => {
                prop_assert!(serde_json::from_slice::<StreamResponse>(&bytes).is_err());
                Ok(false)
            }
            Err(UnreadPush::NoTask) => Ok(false),
        }
    });
}
