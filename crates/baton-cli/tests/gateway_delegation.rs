//! Baton delegating to itself and to another Baton over A2A, and the trust rule on the first
//! message of a new task (abuse cases 5 to 7 of the seeds).

use std::path::Path;
use std::time::Duration;

use baton_proto::TaskState;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, Scripted, call, reply};
use futures::StreamExt;
use serde_json::{Value, json};
use temporalio_client::WorkflowListOptions;

fn baton() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_baton"))
}

const WITHIN: Duration = Duration::from_secs(90);

fn shown(request: &Value) -> String {
    request["messages"].to_string()
}

/// A model that answers by what it is shown: the parent delegates, the child answers.
fn parent_and_child(request: &Value) -> Scripted {
    let text = shown(request);
    if text.contains("goal: What is 6 times 7?") {
        reply("42")
    } else if text.contains("is COMPLETED: 42") {
        reply("The sub-task says 42.")
    } else if text.contains("started on") {
        reply("Waiting for the sub-task.")
    } else {
        call(
            "spawn_subtask",
            json!({"name": "multiply", "goal": "What is 6 times 7?", "description": "Answer with the number only.", "agent": null}),
        )
    }
}

#[tokio::test]
async fn a_parent_delegates_to_self_over_a2a_and_the_child_sees_only_its_brief() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(parent_and_child).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let input = serde_json::from_value(json!({
        "name": "parent", "goal": "Work out 6 times 7 with a sub-task.",
        "description": "PARENT-ONLY CONTEXT"
    }))
    .unwrap();
    temporal
        .start_task(&config.task_queue, "t-self", input)
        .await;
    let view = temporal
        .wait_for_task("t-self", WITHIN, |v| v.state.is_terminal())
        .await;

    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("The sub-task says 42."));
    let row = &view.sub_tasks[0];
    assert_eq!(
        (row.agent.as_str(), row.state),
        ("self", TaskState::Completed)
    );

    // The child is a TaskWorkflow of its own, on this agent, briefed in full as a delegated task.
    let child_id = row.remote_task_id.clone().unwrap();
    let child = temporal.task_view(&child_id).await;
    assert_eq!(
        child.state,
        TaskState::Completed,
        "delegated: it completes, never parks"
    );
    assert_eq!(child.participants[0].id, "front-desk");
    let child_turns: Vec<String> = model
        .requests()
        .iter()
        .map(shown)
        .filter(|t| t.contains("goal: What is 6 times 7?"))
        .collect();
    assert!(!child_turns.is_empty());
    assert!(
        child_turns
            .iter()
            .all(|t| !t.contains("PARENT-ONLY CONTEXT")),
        "the child sees only its brief"
    );
}

#[tokio::test]
async fn two_batons_delegate_to_each_other() {
    let temporal = TestTemporal::start().await;
    let ledger_model = FakeModel::responding(|_| reply("The ledger balances.")).await;
    let ledger = WorkerConfig::new(&temporal, &ledger_model.base_url()).with_push_receiver();
    let ledger_url = ledger.base_url.clone().unwrap();
    let ledger_config = WorkerConfig {
        agent_id: "ledger".into(),
        ..ledger
    };
    let _ledger = WorkerProcess::start(baton(), &ledger_config.render()).await;

    let desk_model = FakeModel::responding(|request| {
        let text = shown(request);
        if text.contains("is COMPLETED: The ledger balances.") {
            reply("Balanced, says the ledger.")
        } else if text.contains("started on") {
            reply("Asked the ledger.")
        } else {
            call(
                "spawn_subtask",
                json!({"name": "balance", "goal": "Does the ledger balance?", "agent": "ledger"}),
            )
        }
    })
    .await;
    let desk = WorkerConfig::new(&temporal, &desk_model.base_url())
        .with_push_receiver()
        .agent("ledger", &ledger_url, "");
    let _desk = WorkerProcess::start(baton(), &desk.render()).await;

    temporal
        .start_task(
            &desk.task_queue,
            "t-desk",
            baton_tests::engine::task_input("books", "Check the books."),
        )
        .await;
    let view = temporal
        .wait_for_task("t-desk", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(
        view.last_answer.as_deref(),
        Some("Balanced, says the ledger.")
    );
    // The desk is not a trusted delegator of the ledger: it briefed only the open fields, so
    // the ledger made it a conversation, which parks awaiting the next message after its
    // answer; a delegated parent reads that as done.
    assert_eq!(view.sub_tasks[0].state, TaskState::Completed);
    let ledger_task = temporal
        .task_view(view.sub_tasks[0].remote_task_id.as_ref().unwrap())
        .await;
    assert_eq!(ledger_task.state, TaskState::InputRequired);
    assert_eq!(
        ledger_task.sub_state.as_deref(),
        Some("awaiting-next-message")
    );
    assert_eq!(ledger_task.participants[0].id, "front-desk");
}

async fn rpc(
    url: &str,
    participant: &str,
    method: &str,
    params: Value,
    extensions: Option<&str>,
) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", participant)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(extensions) = extensions {
        request = request.header("A2A-Extensions", extensions);
    }
    request.send().await.unwrap().json().await.unwrap()
}

fn with_envelope(message_id: &str, text: &str, payload: Value) -> Value {
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [
        {"text": text},
        {"data": {"kind": "task", "payload": payload}, "mediaType": "application/vnd.tiny-harness.event+json"}
    ]}, "configuration": {"returnImmediately": true}})
}

async fn task_count(temporal: &TestTemporal) -> usize {
    temporal
        .client
        .list_workflows(
            "WorkflowType = 'TaskWorkflow'",
            WorkflowListOptions::default(),
        )
        .count()
        .await
}

#[tokio::test]
async fn strangers_cannot_set_server_fields_or_name_others_and_nothing_is_created() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(|_| reply("Hello.")).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;

    let refusals = [
        // Abuse case 5: naming participants other than oneself: invalid params.
        (
            with_envelope(
                "m1",
                "hi",
                json!({"participants": [{"id": "bob", "kind": "human", "role": "assignee"}]}),
            ),
            -32602,
        ),
        // Abuse case 6: a model, a reasoning effort, a lifecycle: unsupported, as tiny-harness
        // answers it.
        (
            with_envelope("m2", "hi", json!({"model": "gpt-expensive"})),
            -32004,
        ),
        (
            with_envelope("m3", "hi", json!({"reasoning_effort": "high"})),
            -32004,
        ),
        (
            with_envelope("m4", "hi", json!({"lifecycle": "delegated"})),
            -32004,
        ),
    ];
    for (params, code) in refusals {
        let answer = rpc(&url, "mallory", "SendMessage", params.clone(), None).await;
        assert_eq!(answer["error"]["code"], code, "{params} -> {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("trusted delegator"),
            "{answer}"
        );
    }
    // An extension the card does not advertise.
    let answer = rpc(
        &url,
        "mallory",
        "SendMessage",
        with_envelope("m5", "hi", json!({})),
        Some("urn:example:unknown"),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32004, "{answer}");
    // Neither header nor metadata names a participant.
    let anonymous = reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": with_envelope("m6", "hi", json!({}))}))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert!(
        anonymous["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no participant asserted"),
        "{anonymous}"
    );
    assert_eq!(task_count(&temporal).await, 0, "no task was created");

    // Abuse case 7: a participant's own task, then a second message that tries to change it.
    let created = rpc(
        &url,
        "alice",
        "SendMessage",
        with_envelope("m7", "hi", json!({"name": "mine"})),
        None,
    )
    .await;
    let task_id = created["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut change = with_envelope("m8", "again", json!({"lifecycle": "delegated"}));
    change["message"]["taskId"] = json!(task_id);
    let answer = rpc(&url, "alice", "SendMessage", change, None).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only on the first message")
    );
    assert_eq!(task_count(&temporal).await, 1);
}
