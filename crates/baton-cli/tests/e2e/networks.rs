//! Chains of agents: a brief carries the chain of parent tasks, and a delegation back into its
//! own chain (A → B → A) or deeper than `agent.max_delegation_depth` is refused at the call,
//! with nothing created.

use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, call, reply};
use baton_tests::sdk_client::SdkClient;
use baton_tests::wait::{HANG_GUARD, poll_until};
use serde_json::json;

use crate::common::{all_text, baton};

fn spawn(agent: &str, goal: &str) -> baton_tests::fake_model::Scripted {
    call(
        "spawn_subtask",
        json!({"name": "step", "goal": goal, "agent": agent}),
    )
}

#[tokio::test]
async fn a_delegation_back_into_its_own_chain_is_refused_and_nothing_is_created() {
    let temporal = TestTemporal::start().await;
    // The front desk asks the bank; the bank tries to ask the front desk back.
    let front_model = FakeModel::responding(|request| {
        if all_text(request).contains("Sub-task step") {
            reply("The bank answered.")
        } else {
            spawn("bank", "Check the balance.")
        }
    })
    .await;
    let bank_model = FakeModel::responding(|request| {
        if all_text(request).contains("delegation.cycle") {
            reply("The balance is 12.")
        } else {
            spawn("front", "Ask the customer.")
        }
    })
    .await;
    let mut front = WorkerConfig::new(&temporal, &front_model.base_url()).with_push_receiver();
    let mut bank = WorkerConfig::new(&temporal, &bank_model.base_url()).with_push_receiver();
    front.agent_id = "front".into();
    bank.agent_id = "bank".into();
    let (front_url, bank_url) = (
        front.base_url.clone().unwrap(),
        bank.base_url.clone().unwrap(),
    );
    let front = front.agent("bank", &bank_url, "");
    let bank = bank.agent("front", &front_url, "");
    // The front desk starts first, so it fetches the bank's card once the bank is up.
    let front_worker = WorkerProcess::start(baton(), &front.render()).await;
    let _bank_worker = WorkerProcess::start(baton(), &bank.render()).await;
    poll_until(
        "the front desk fetched the bank's card",
        HANG_GUARD,
        || async {
            (!front_worker
                .logged(&["its card is now available"])
                .is_empty())
            .then_some(())
        },
    )
    .await;

    let sent = SdkClient::new(&front_url, "JSONRPC", "alice")
        .call("send", &["--text", "What is my balance?"])
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");

    // The bank's task was briefed with the chain, the front desk's task named by its URL.
    let root = task["id"].as_str().unwrap();
    let row = &temporal.task_view(root).await.sub_tasks[0];
    let bank_task = temporal
        .task_view(row.remote_task_id.as_deref().unwrap())
        .await;
    assert_eq!(bank_task.parent_tasks.len(), 1, "{bank_task:?}");
    assert_eq!(bank_task.parent_tasks[0].task_id, root);
    assert_eq!(
        bank_task.parent_tasks[0].agent.as_deref(),
        Some(front_url.trim_end_matches('/'))
    );

    // Its call back to the front desk was refused with the reason, and created nothing: the
    // front desk's model saw only its own task's two turns.
    let bank_requests = bank_model.requests();
    assert_eq!(bank_requests.len(), 2);
    let refused = all_text(&bank_requests[1]);
    assert!(
        refused.contains("agent front is already in this task's chain of delegations"),
        "{refused}"
    );
    assert_eq!(front_model.requests().len(), 2);
}

#[tokio::test]
async fn a_task_as_deep_as_allowed_may_not_delegate_and_answers_itself() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("delegation.too_deep") {
            reply("I counted them myself: 40.")
        } else if text.contains("I counted them myself") {
            reply("There are 40 coins.")
        } else if text.contains("Count the coins.") {
            spawn("self", "Count them again.")
        } else {
            spawn("self", "Count the coins.")
        }
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let rendered = config
        .render()
        .replace("[agent]\n", "[agent]\nmax_delegation_depth = 1\n");
    let _worker = WorkerProcess::start(baton(), &rendered).await;

    let sent = SdkClient::new(&url, "JSONRPC", "alice")
        .call("send", &["--text", "How many coins are there?"])
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");

    // The root delegated once; its sub-task, one delegation below it, was refused the next.
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        4,
        "two turns of the root, two of its sub-task"
    );
    let refused = all_text(&requests[2]);
    assert!(
        refused.contains("at depth 1 below its root task")
            && refused.contains("agent.max_delegation_depth is 1"),
        "{refused}"
    );
    let root = task["id"].as_str().unwrap();
    let view = temporal.task_view(root).await;
    assert_eq!(view.sub_tasks.len(), 1);
    let child = temporal
        .task_view(view.sub_tasks[0].remote_task_id.as_deref().unwrap())
        .await;
    assert!(child.sub_tasks.is_empty(), "{child:?}");
    assert_eq!(child.parent_tasks[0].task_id, root);
    assert_eq!(child.parent_tasks[0].agent, None, "a task on this agent");
}
