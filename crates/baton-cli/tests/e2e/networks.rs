//! Chains of agents: a brief carries the chain of parent tasks, and a delegation back into its
//! own chain (A → B → A) or deeper than `agent.max_delegation_depth` is refused at the call,
//! with nothing created; a task's usage adds up over its tree, and a budget bounds it.

use baton_core::extensions::{BUDGET_EXTENSION, DEADLINE_EXTENSION};
use baton_proto::TaskState;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, Scripted, call, reply};
use baton_tests::sdk_client::SdkClient;
use baton_tests::wait::{HANG_GUARD, poll_until};
use serde_json::json;

use crate::common::{all_text, baton, replay_all, show_tree};

fn spawn(agent: &str, goal: &str) -> Scripted {
    call(
        "spawn_subtask",
        json!({"name": "step", "goal": goal, "agent": agent}),
    )
}

/// One Baton agent answered by `model`, its gateway on a free port, with `agent_settings` in its
/// `[agent]` table; its worker stops when this is dropped.
struct OneAgent {
    temporal: TestTemporal,
    config: WorkerConfig,
    url: String,
    worker: WorkerProcess,
}

async fn one_agent(model: &FakeModel, agent_settings: &str) -> OneAgent {
    let temporal = TestTemporal::start().await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let rendered = config
        .render()
        .replace("[agent]\n", &format!("[agent]\n{agent_settings}"));
    let worker = WorkerProcess::start(baton(), &rendered).await;
    OneAgent {
        temporal,
        config,
        url,
        worker,
    }
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
    let agent = one_agent(&model, "max_delegation_depth = 1\n").await;
    let (temporal, url) = (&agent.temporal, &agent.url);

    let sent = SdkClient::new(url, "JSONRPC", "alice")
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

/// The usage a task's A2A metadata reports (the budget extension): its own, and its tree's.
fn reported(task: &serde_json::Value) -> (u64, u64) {
    let report = &task["metadata"][BUDGET_EXTENSION];
    let tokens = |usage: &serde_json::Value| {
        usage["input_tokens"].as_f64().unwrap_or_default() as u64
            + usage["output_tokens"].as_f64().unwrap_or_default() as u64
    };
    (tokens(&report["usage"]), tokens(&report["total"]))
}

/// A model that delegates counting the coins to its own agent (`self`), answers "40 coins" as
/// that sub-task, and "There are 40." once the sub-task has answered.
async fn coin_counter() -> FakeModel {
    FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("40 coins") {
            reply("There are 40.")
        } else if text.contains("Count the coins.") {
            reply("40 coins")
        } else {
            spawn("self", "Count the coins.")
        }
    })
    .await
}

#[tokio::test]
async fn a_task_s_usage_adds_up_over_its_tree_and_its_sub_task_gets_half_of_what_is_left() {
    let model = coin_counter().await;
    let agent = one_agent(&model, "").await;
    let (temporal, url, config) = (&agent.temporal, &agent.url, &agent.config);
    let budget = json!({BUDGET_EXTENSION: {"tokens": 1_000_000}}).to_string();
    let alice = SdkClient::new(url, "JSONRPC", "alice");
    let sent = alice
        .call(
            "send",
            &["--text", "How many coins are there?", "--metadata", &budget],
        )
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");

    // The root's total is its own turns' and its sub-task's, exactly.
    let root = task["id"].as_str().unwrap();
    let view = temporal.task_view(root).await;
    let child_id = view.sub_tasks[0].remote_task_id.clone().unwrap();
    let child = temporal.task_view(&child_id).await;
    let (own, total) = reported(task);
    assert!(own > 0, "{task}");
    assert_eq!(own, view.usage.tokens());
    assert_eq!(
        view.sub_tasks[0].usage,
        Some(child.usage),
        "the child reported its own"
    );
    assert_eq!(total, own + child.usage.tokens());

    // The sub-task was given half of what the root had left after its first turn, and its
    // model read that in its task section.
    let requests = model.requests();
    let child_turn = requests
        .iter()
        .map(all_text)
        .find(|text| text.contains("Count the coins.") && !text.contains("40 coins"))
        .unwrap();
    let first_root_turn = model.requests()[0].clone();
    assert!(all_text(&first_root_turn).contains("budget: 1000000 of 1000000 model tokens left"));
    let share = child_turn
        .split("model tokens left")
        .next()
        .and_then(|before| before.rsplit(" of ").next())
        .and_then(|n| n.trim().parse::<u64>().ok())
        .expect("the child's budget line");
    assert!(share < 500_000 && share > 400_000, "{share}");

    // `baton task show --tree` prints the tree from Temporal, with the same totals.
    let config_path = agent.worker.config_path();
    let (code, text, logged) = show_tree(config_path, root).await;
    assert_eq!(code, Some(0), "{text}{logged}");
    // Token counts print with thousands separators.
    let plain = text.replace(',', "");
    let lines: Vec<&str> = plain.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let tokens = |n: u64| format!(" {n} tokens: ");
    assert!(
        lines[0].starts_with(&format!("task {root}: COMPLETED for "))
            && lines[0].contains(&tokens(total))
            && lines[0].ends_with("There are 40."),
        "{text}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "└─ step on self [task {child_id}]: COMPLETED for "
        )) && lines[1].contains(&tokens(child.usage.tokens()))
            && lines[1].ends_with("40 coins"),
        "{text}"
    );

    // Every history of the tree replays on this build (usage is counted from recorded turn
    // results, never twice), and the totals read the same afterwards.
    replay_all(config_path, &config.task_queue, &[root, &child_id]).await;
    assert_eq!(temporal.task_view(root).await.usage, view.usage);
    assert_eq!(temporal.task_view(&child_id).await.usage, child.usage);
}

#[tokio::test]
async fn a_task_that_spends_its_budget_delegates_no_more_and_fails_with_the_reason() {
    let model = FakeModel::responding(|_| spawn("self", "Count the coins.")).await;
    let agent = one_agent(&model, "").await;
    let (temporal, url) = (&agent.temporal, &agent.url);
    // Fewer tokens than the first turn alone reads.
    let budget = json!({BUDGET_EXTENSION: {"tokens": 50}}).to_string();
    let sent = SdkClient::new(url, "HTTP+JSON", "alice")
        .call(
            "send",
            &["--text", "How many coins are there?", "--metadata", &budget],
        )
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    let said = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.starts_with("budget spent: the task and its sub-tasks used")
            && said.ends_with("of the 50 model tokens its delegator gave it"),
        "{said}"
    );
    // Its one turn's delegation was refused, so nothing was created below it.
    assert_eq!(model.requests().len(), 1);
    let view = temporal.task_view(task["id"].as_str().unwrap()).await;
    assert!(view.sub_tasks.is_empty(), "{view:?}");
}

#[tokio::test]
async fn a_budget_that_is_not_a_whole_number_of_tokens_is_refused() {
    let model = FakeModel::responding(|_| reply("never")).await;
    let agent = one_agent(&model, "").await;
    let url = &agent.url;
    for bad in [
        json!({"tokens": 0}),
        json!({"tokens": "lots"}),
        json!({"tokens": 1.5}),
    ] {
        let budget = json!({ BUDGET_EXTENSION: bad }).to_string();
        let refused = SdkClient::new(url, "JSONRPC", "alice")
            .call("send", &["--text", "Count.", "--metadata", &budget])
            .await;
        assert_eq!(refused.reason(), "INVALID_PARAMS", "{bad}");
        assert!(
            refused.message().contains("\"tokens\": N"),
            "{}",
            refused.message()
        );
    }
    assert!(model.requests().is_empty());
}

/// A deadline given at the root runs out at the second hop first: that hop's task is ended
/// "deadline exceeded", the hop above reads it and still answers within its own deadline, and
/// so does the root.
#[tokio::test]
async fn a_deadline_runs_out_below_first_and_each_hop_above_still_answers() {
    // Each task answers what its last message says; the deepest one's model never answers.
    let model = FakeModel::responding(|request| {
        let last = request["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .map(ToString::to_string)
            .unwrap_or_default();
        if last.contains("deadline exceeded") {
            reply("The count ran out of time.")
        } else if last.contains("ran out of time") {
            reply("No count yet: it ran out of time.")
        } else if last.contains("started on") {
            reply("Waiting for the count.")
        } else if last.contains("Count them one by one.") {
            Scripted::Hang
        } else if last.contains("Count the coins.") {
            spawn("self", "Count them one by one.")
        } else {
            spawn("self", "Count the coins.")
        }
    })
    .await;
    let agent = one_agent(&model, "").await;
    // 20 s: its sub-task gets 18 s and that one's 16 s, each hop keeping a tenth to answer in.
    let deadline = json!({DEADLINE_EXTENSION: {"seconds": 20}}).to_string();
    let sent = SdkClient::new(&agent.url, "JSONRPC", "alice")
        .call(
            "send",
            &[
                "--text",
                "How many coins are there?",
                "--metadata",
                &deadline,
            ],
        )
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let root = agent.temporal.task_view(task["id"].as_str().unwrap()).await;
    assert_eq!(
        root.last_answer.as_deref(),
        Some("No count yet: it ran out of time.")
    );
    let child_id = root.sub_tasks[0].remote_task_id.clone().unwrap();
    let child = agent.temporal.task_view(&child_id).await;
    assert_eq!(child.state, TaskState::Completed);
    let grandchild = &child.sub_tasks[0];
    assert_eq!(grandchild.state, TaskState::Failed, "{grandchild:?}");
    assert!(
        grandchild
            .summary
            .as_deref()
            .is_some_and(|s| s.contains("deadline exceeded")),
        "{grandchild:?}"
    );
}

/// A task left running in a sub-task's context that no row knows of (as a crash between a send
/// and its record could leave one) is cancelled by the sweep the parent ends with.
#[tokio::test]
async fn a_task_left_in_a_sub_task_s_context_is_cancelled_by_the_sweep_its_parent_ends_with() {
    let peer = baton_tests::PythonPeer::start(&["--behaviour", "hang"]).await;
    let model = FakeModel::responding(|request| {
        if all_text(request).contains("started on ledger") {
            reply("Waiting for the ledger.")
        } else {
            spawn("ledger", "Close the year.")
        }
    })
    .await;
    let temporal = TestTemporal::start().await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent("ledger", &peer.url(), "");
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    temporal
        .start_task(
            &config.task_queue,
            "t-sweep",
            baton_tests::engine::task_input("year", "Close the year."),
        )
        .await;
    let context_id = poll_until("the sub-task created", HANG_GUARD, || async {
        let row = temporal
            .task_view("t-sweep")
            .await
            .sub_tasks
            .first()?
            .clone();
        row.remote_task_id.as_ref()?;
        row.context_id
    })
    .await;

    // A second task in the same context, which the parent never heard of.
    let rpc = format!("{}/rpc", peer.url());
    let brief = json!({"message": {"messageId": "m-stray", "role": "ROLE_USER",
        "contextId": context_id, "parts": [{"text": "Close the year again."}]}});
    // The agent holds the call open while its task works: it is never answered.
    let stray = tokio::spawn(async move {
        baton_tests::engine::a2a_rpc(&rpc, "SendMessage", brief, None).await
    });
    let in_context = |stats: &serde_json::Value| {
        stats["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["context_id"] == context_id.as_str())
            .map(|t| t["state"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    peer.wait_for("two tasks in the context", |stats| {
        in_context(stats).len() == 2
    })
    .await;

    // The live tree: the parent from Temporal, its sub-task read from the a2a-sdk agent itself.
    let (_, tree, _) = show_tree(worker.config_path(), "t-sweep").await;
    let lines: Vec<&str> = tree.lines().collect();
    let row = temporal.task_view("t-sweep").await.sub_tasks[0].clone();
    assert!(
        lines.len() == 2
            && lines[0].starts_with("task t-sweep: WORKING for ")
            && lines[1].starts_with(&format!(
                "└─ step on ledger [task {}]: WORKING for ",
                row.remote_task_id.unwrap()
            )),
        "{tree}"
    );

    temporal
        .client
        .get_workflow_handle::<baton_workflows::TaskWorkflow>("t-sweep")
        .cancel(temporalio_client::WorkflowCancelOptions::default())
        .await
        .unwrap();
    // The stand-in cancels its own task; the sweep, the one nobody watched.
    let stats = peer
        .wait_for("both tasks of the context cancelled", |stats| {
            in_context(stats) == ["TASK_STATE_CANCELED", "TASK_STATE_CANCELED"]
        })
        .await;
    stray.abort();
    let view = temporal.task_view("t-sweep").await;
    assert_eq!(view.state, TaskState::Canceled, "{view:#?}, {stats}");
}

/// `baton task show --tree` follows a sub-task on a Baton of another Temporal cluster over A2A:
/// its state, answer and reported usage as that agent shows them to this one, and the sub-task
/// rows it publishes.
#[tokio::test]
async fn the_tree_follows_a_sub_task_on_another_cluster_over_a2a() {
    let bank_model = coin_counter().await;
    let bank = one_agent(&bank_model, "").await;
    let desk_model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("There are 40.") {
            reply("The bank says there are 40.")
        } else if text.contains("started on bank") {
            reply("Waiting for the bank.")
        } else {
            spawn("bank", "How many coins are in the vault?")
        }
    })
    .await;
    let temporal = TestTemporal::start().await;
    let mut desk = WorkerConfig::new(&temporal, &desk_model.base_url())
        .with_push_receiver()
        .agent("bank", &bank.url, "");
    desk.agent_id = "desk".into();
    let desk_worker = WorkerProcess::start(baton(), &desk.render()).await;
    let sent = SdkClient::new(desk.base_url.as_ref().unwrap(), "JSONRPC", "alice")
        .call("send", &["--text", "How many coins?"])
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let root = task["id"].as_str().unwrap();
    let row = temporal.task_view(root).await.sub_tasks[0].clone();
    let bank_task = row.remote_task_id.clone().unwrap();
    let bank_view = bank.temporal.task_view(&bank_task).await;
    let coins_task = bank_view.sub_tasks[0].remote_task_id.clone().unwrap();

    let (code, text, _) = show_tree(desk_worker.config_path(), root).await;
    let text = text.replace(',', "");
    assert_eq!(code, Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let bank_total = bank_view.usage.tokens() + bank_view.sub_tasks[0].usage.unwrap().tokens();
    assert!(
        lines[1].starts_with(&format!("└─ step on bank [task {bank_task}]: "))
            && lines[1].contains(&format!(" {bank_total} tokens: "))
            && lines[1].ends_with("There are 40."),
        "{text}"
    );
    assert!(
        lines[2].starts_with(&format!(
            "   └─ step on self [task {coins_task}]: COMPLETED"
        )) && lines[2].ends_with("40 coins"),
        "{text}"
    );
}
