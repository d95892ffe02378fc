//! Baton delegating to itself and to another Baton over A2A, and the trust rule on the first
//! message of a new task (abuse cases 5 to 7 of the seeds).

use std::time::Duration;

use crate::common::{WITHIN, baton};
use baton_core::deployment_key::DeploymentKey;
use baton_proto::{TaskState, TaskView};
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, history_text};
use baton_tests::fake_model::{FakeModel, ModelResponseSpec, Scripted, call, delegate, reply};
use futures::StreamExt;
use serde_json::{Value, json};
use temporalio_client::WorkflowListOptions;

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
    let view = temporal
        .run_to_end(&config.task_queue, "t-self", input, WITHIN)
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

/// The `sealed:…` values in a history's text.
fn sealed_values(history: &str) -> Vec<String> {
    history
        .match_indices("sealed:")
        .map(|(at, prefix)| {
            let hex: String = history[at + prefix.len()..]
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .collect();
            format!("{prefix}{hex}")
        })
        .collect()
}

#[tokio::test]
async fn a_self_delegations_push_token_reaches_the_child_sealed_and_is_never_read_back() {
    let temporal = TestTemporal::start().await;
    // The child's answer waits for the test, so the stand-in registers its push webhook while
    // the child works.
    let model = FakeModel::responding(|request| {
        if shown(request).contains("goal: What is 6 times 7?") {
            Scripted::Held(ModelResponseSpec {
                text: Some("42".into()),
                tool_calls: vec![],
            })
        } else {
            parent_and_child(request)
        }
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    temporal
        .start_task(
            &config.task_queue,
            "t-sealed",
            baton_tests::engine::task_input("parent", "Work out 6 times 7 with a sub-task."),
        )
        .await;
    let view = temporal
        .wait_for_task("t-sealed", WITHIN, |v| {
            v.sub_tasks.iter().any(|row| row.remote_task_id.is_some())
        })
        .await;
    let child_id = view.sub_tasks[0].remote_task_id.clone().unwrap();
    let stand_in_id = view.sub_tasks[0].stand_in_id.clone();

    let deadline = tokio::time::Instant::now() + WITHIN;
    let sealed = loop {
        let sealed = sealed_values(&history_text(temporal.history(&child_id).await).await);
        if !sealed.is_empty() {
            break sealed;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no push config reached the child"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let key = DeploymentKey::from_secret(baton_tests::TEST_DEPLOYMENT_SECRET);
    let tokens: Vec<String> = sealed
        .iter()
        .map(|s| key.open(s).expect("sealed under this deployment's secret"))
        .collect();
    assert!(
        tokens.iter().all(|t| t.len() == 64),
        "the stand-in's 256-bit token"
    );

    // Read back, even by this deployment itself, the config has no token.
    let listed = reqwest::Client::new()
        .get(format!("{url}/tasks/{child_id}/pushNotificationConfigs"))
        .header("A2A-Version", "1.0")
        .bearer_auth(key.self_call_token("front-desk"))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);
    let listed: Value = listed.json().await.unwrap();
    assert_eq!(
        listed["configs"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    assert!(listed["configs"][0].get("token").is_none(), "{listed}");

    // A stand-in is no task of the gateway's: read by its id, even by this deployment, it is
    // not found, and neither are its push configs.
    for path in [
        format!("{url}/tasks/{stand_in_id}"),
        format!("{url}/tasks/{stand_in_id}/pushNotificationConfigs"),
    ] {
        let read = reqwest::Client::new()
            .get(&path)
            .header("A2A-Version", "1.0")
            .bearer_auth(key.self_call_token("front-desk"))
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 404, "{path}: {}", read.text().await.unwrap());
    }

    model.release();
    let parent = temporal
        .wait_for_task("t-sealed", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(parent.state, TaskState::Completed, "{parent:#?}");
    for id in [child_id.as_str(), "t-sealed", stand_in_id.as_str()] {
        let history = history_text(temporal.history(id).await).await;
        for token in &tokens {
            assert!(
                !history.contains(token.as_str()),
                "the token is in {id}'s history"
            );
        }
    }
}

/// What the ledger's auth is and how the desk proves itself to it.
struct LedgerAuth {
    /// `[server]` lines of the ledger.
    server: Vec<String>,
    ledger_env: Vec<(&'static str, &'static str)>,
    /// More fields of the desk's `agents` entry for the ledger.
    desk_entry: &'static str,
    desk_env: Vec<(&'static str, &'static str)>,
}

/// The desk delegates "Does the ledger balance?" to the ledger, another Baton; returns the
/// desk's task and the ledger's, once the desk's task ended.
async fn desk_asks_the_ledger(auth: LedgerAuth) -> (TaskView, TaskView) {
    let temporal = TestTemporal::start().await;
    let ledger_model = FakeModel::responding(|_| reply("The ledger balances.")).await;
    let mut ledger = WorkerConfig::new(&temporal, &ledger_model.base_url()).with_push_receiver();
    ledger.agent_id = "ledger".into();
    ledger.server_extra = auth.server;
    let ledger_url = ledger.base_url.clone().unwrap();
    let _ledger = WorkerProcess::start_with_env(baton(), &ledger.render(), &auth.ledger_env).await;

    let desk_model = FakeModel::responding(|request| {
        let text = shown(request);
        if text.contains("is COMPLETED: The ledger balances.") {
            reply("Balanced, says the ledger.")
        } else if text.contains("started on") {
            reply("Asked the ledger.")
        } else {
            delegate("balance", "Does the ledger balance?", "ledger")
        }
    })
    .await;
    let desk = WorkerConfig::new(&temporal, &desk_model.base_url())
        .with_push_receiver()
        .agent("ledger", &ledger_url, auth.desk_entry);
    let _desk = WorkerProcess::start_with_env(baton(), &desk.render(), &auth.desk_env).await;

    let view = temporal
        .run_to_end(
            &desk.task_queue,
            "t-desk",
            baton_tests::engine::task_input("books", "Check the books."),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(
        view.last_answer.as_deref(),
        Some("Balanced, says the ledger.")
    );
    let ledger_task = temporal
        .task_view(view.sub_tasks[0].remote_task_id.as_ref().unwrap())
        .await;
    (view, ledger_task)
}

#[tokio::test]
async fn two_batons_delegate_to_each_other() {
    let (view, ledger_task) = desk_asks_the_ledger(LedgerAuth {
        server: vec![],
        ledger_env: vec![],
        desk_entry: "",
        desk_env: vec![],
    })
    .await;
    // The desk is not a trusted delegator of the ledger: it briefed only the open fields, so
    // the ledger made it a conversation, which parks awaiting the next message after its
    // answer; a delegated parent reads that as done.
    assert_eq!(view.sub_tasks[0].state, TaskState::Completed);
    assert_eq!(ledger_task.state, TaskState::InputRequired);
    assert_eq!(
        ledger_task.sub_state.as_deref(),
        Some("awaiting-next-message")
    );
    assert_eq!(ledger_task.participants[0].id, "front-desk");
}

#[tokio::test]
async fn a_baton_that_asks_for_a_token_is_delegated_to_with_the_token_and_knows_who_came() {
    const TOKEN: &str = "desk-at-ledger-9c2f61a0";
    let (view, ledger_task) = desk_asks_the_ledger(LedgerAuth {
        server: vec![
            "[server.auth]".into(),
            "mode = \"authenticated\"".into(),
            "tokens = [{ participant = \"desk-client\", secret_env = \"DESK_GRANT\" }]".into(),
        ],
        ledger_env: vec![("DESK_GRANT", TOKEN)],
        desk_entry: "auth = { bearer_env = \"LEDGER_TOKEN\" }",
        desk_env: vec![("LEDGER_TOKEN", TOKEN)],
    })
    .await;
    assert_eq!(view.sub_tasks[0].state, TaskState::Completed);
    // The ledger's task is the proven participant's, not whatever id the desk would claim.
    assert_eq!(ledger_task.participants[0].id, "desk-client");
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

#[tokio::test]
async fn a_task_ends_failed_when_the_deadline_its_delegator_gave_it_passes() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![Scripted::Hang]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let deadline = baton_core::extensions::DEADLINE_EXTENSION;
    let sent = rpc(
        url.trim_end_matches('/'),
        "desk",
        "SendMessage",
        json!({"message": {"messageId": "m-late", "role": "ROLE_USER",
            "parts": [{"text": "Take your time."}], "metadata": {deadline: {"seconds": 2}}},
            "configuration": {"returnImmediately": true}}),
        Some(deadline),
    )
    .await;
    let task_id = sent["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent}"))
        .to_string();
    // The model never answers; the task's own deadline ends it all the same.
    let view = temporal
        .wait_for_task(&task_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Failed, "{view:#?}");
    assert_eq!(
        view.status_message.as_deref(),
        Some(
            "deadline exceeded: the task was still running after 2s, the time its delegator gave it"
        )
    );

    // A deadline that is not one is refused before anything is created.
    let refused = rpc(
        url.trim_end_matches('/'),
        "desk",
        "SendMessage",
        json!({"message": {"messageId": "m-bad", "role": "ROLE_USER",
            "parts": [{"text": "x"}], "metadata": {deadline: {"seconds": "soon"}}}}),
        None,
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(task_count(&temporal).await, 1);
}
