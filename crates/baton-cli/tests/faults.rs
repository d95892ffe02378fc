//! The fault suite: delegations on a real Temporal dev server, `baton worker` as a real process
//! and real Python a2a-sdk agents, while things fail. `docs/reliability.md` states what Baton
//! promises under each fault; these tests are that promise.
//!
//! The promise, checked after every fault: every parent ends with its peer's answer (nothing
//! lost, nothing stuck), the peer saw exactly one task per delegation (nothing duplicated), and
//! no task is left open on the peer (nothing orphaned). Every wait is on something the test
//! can observe (the peer's statistics, a task's state, a proxy's count), never a fixed sleep.
//!
//! The kill tests print their figures on a `fault-suite:` line. `BATON_FAULT_TRIALS`,
//! `BATON_FAULT_PARENTS` and `BATON_FAULT_KILLS` scale them up for a longer run by hand.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use baton_proto::{TaskState, TaskView};
use baton_tests::PythonPeer;
use baton_tests::engine::{
    A2aProxy, GatewayProcess, TestTemporal, WorkerConfig, WorkerProcess, a2a_rpc, task_input,
};
use baton_tests::fake_model::{FakeModel, ModelResponseSpec, Scripted, call, delegate, reply};
use baton_tests::wait::poll_until;
use serde_json::{Value, json};

#[path = "e2e/common.rs"]
#[allow(
    dead_code,
    reason = "the fault suite takes only the binary from what the end-to-end tests share"
)]
mod common;
use common::baton;

/// The longest any one fault test waits for its parents to drain. Generous: a kill costs up to
/// a heartbeat timeout (15 s) per activity it cut, and CI machines are slow.
const WITHIN: Duration = Duration::from_secs(240);

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The goal of parent `n`: the peer's answer echoes it, so each parent's result is its own.
fn goal(n: usize) -> String {
    format!("Is ledger {n} balanced?")
}

/// A worker whose agent `ledger` is at `url`, with `settings` (such as `follow_interval =
/// "1s"`), and whose model is `model`.
async fn start_worker(
    temporal: &TestTemporal,
    model: &FakeModel,
    url: &str,
    settings: &str,
) -> (WorkerConfig, WorkerProcess) {
    let config = WorkerConfig::new(temporal, &model.base_url()).agent("ledger", url, settings);
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    (config, worker)
}

/// Task `task_id` completes, its sub-task's row resolved FAILED saying `why`.
async fn completes_with_its_sub_task_failed(temporal: &TestTemporal, task_id: &str, why: &str) {
    let view = temporal
        .wait_for_task(task_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let row = &view.sub_tasks[0];
    assert_eq!((row.state, row.resolved), (TaskState::Failed, true));
    assert!(
        row.summary.as_deref().is_some_and(|s| s.contains(why)),
        "{row:#?}"
    );
}

/// Starts task `task_id` ("books", with goal 0) on `config`'s worker.
async fn start_books(temporal: &TestTemporal, config: &WorkerConfig, task_id: &str) {
    temporal
        .start_task(&config.task_queue, task_id, task_input("books", &goal(0)))
        .await;
}

/// The remote task id of task `task_id`'s first sub-task, once its row is `state` and names it.
async fn remote_task_once_the_row_is(
    temporal: &TestTemporal,
    task_id: &str,
    state: TaskState,
) -> String {
    let view = temporal
        .wait_for_task(task_id, WITHIN, |v| {
            v.sub_tasks
                .first()
                .is_some_and(|r| r.state == state && r.remote_task_id.is_some())
        })
        .await;
    view.sub_tasks[0].remote_task_id.clone().unwrap()
}

/// A peer whose tasks work for a second, each held (by `hold`: `--hold-file` before it works,
/// `--hold-brief-file` before it even names the task) until `hold_file` exists.
async fn working_peer_held_by(hold: &str, hold_file: &std::path::Path) -> PythonPeer {
    let hold_file = hold_file.to_str().unwrap();
    PythonPeer::start(&[
        "--behaviour",
        "work",
        "--work-seconds",
        "1",
        hold,
        hold_file,
    ])
    .await
}

/// Kills the worker once task `task_id`'s create has heartbeated that the agent took the brief,
/// and starts it again.
async fn kill_once_the_brief_is_taken(
    temporal: &TestTemporal,
    task_id: &str,
    worker: &mut WorkerProcess,
) {
    poll_until(
        "the create's heartbeat saying the brief was taken",
        WITHIN,
        || async {
            let seen = temporal
                .pending_heartbeat(task_id, "start_agent_task")
                .await;
            (seen.as_deref() == Some("true")).then_some(())
        },
    )
    .await;
    worker.kill().await;
    worker.restart().await;
}

/// A model that delegates its task's goal to the ledger, waits (while the sub-task works or is
/// parked), and answers once the result is in. It answers by what it is shown, so a call cut
/// short by a crash and made again, or many parents at once, get the right answer.
async fn delegating_model() -> FakeModel {
    FakeModel::responding(|request| {
        let shown = request["messages"].to_string();
        if shown.contains("is COMPLETED") || shown.contains("is FAILED") {
            reply("Done.")
        } else if ["started on", "could not be created", "is INPUT_REQUIRED"]
            .iter()
            .any(|news| shown.contains(news))
        {
            reply("Waiting.")
        } else {
            call(
                "spawn_subtask",
                json!({"name": "balance", "goal": task_goal(request), "agent": "ledger"}),
            )
        }
    })
    .await
}

/// The `goal:` line of the task section, the first user message the model is shown.
fn task_goal(request: &Value) -> String {
    let section = request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    section
        .lines()
        .find_map(|line| line.strip_prefix("goal: "))
        .unwrap_or_default()
        .to_string()
}

/// What the peer holds, as the promise counts it.
#[derive(Debug, Default)]
struct PeerCount {
    /// Tasks the peer created.
    creations: usize,
    /// Tasks beyond the first in a context: a delegation the peer did twice.
    duplicates: usize,
    /// Tasks still open on the peer.
    orphans: usize,
}

fn count(stats: &Value) -> PeerCount {
    let tasks = stats["tasks"].as_array().cloned().unwrap_or_default();
    let mut per_context: BTreeMap<String, usize> = BTreeMap::new();
    for task in &tasks {
        *per_context
            .entry(task["context_id"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
    }
    PeerCount {
        creations: tasks.len(),
        duplicates: per_context.values().map(|n| n - 1).sum(),
        orphans: tasks
            .iter()
            .filter(|t| !is_ended(t["state"].as_str().unwrap_or_default()))
            .count(),
    }
}

/// Waits until every parent is terminal or `within` passes; returns the views and how many
/// were not terminal (stuck).
async fn drain(
    temporal: &TestTemporal,
    parents: &[String],
    within: Duration,
) -> (Vec<TaskView>, usize) {
    let deadline = Instant::now() + within;
    loop {
        let mut views = Vec::new();
        for id in parents {
            views.push(temporal.task_view(id).await);
        }
        let stuck = views.iter().filter(|v| !v.state.is_terminal()).count();
        if stuck == 0 || Instant::now() >= deadline {
            return (views, stuck);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every parent COMPLETED, its one row COMPLETED with its own peer's answer. The peer's
/// progress note ("working on it") may follow the answer when the stand-in never saw it as a
/// status of its own (docs/engine.md, the answer rule).
fn assert_each_has_its_answer(views: &[TaskView]) {
    for (n, view) in views.iter().enumerate() {
        assert_eq!(view.state, TaskState::Completed, "parent {n}: {view:#?}");
        assert_eq!(view.sub_tasks.len(), 1, "parent {n}: {view:#?}");
        let row = &view.sub_tasks[0];
        assert_eq!(row.state, TaskState::Completed, "parent {n}: {row:#?}");
        let answer = format!("done: {}", goal(n));
        let summary = row.summary.as_deref().unwrap_or_default();
        assert!(
            summary == answer || summary == format!("{answer}\n\nworking on it"),
            "parent {n}: {summary:?}"
        );
    }
}

// --- kill -9 of the worker during many delegations ------------------------------------------

#[tokio::test]
async fn worker_kills_during_followed_delegations_lose_duplicate_and_orphan_nothing() {
    kill_during_delegations(false).await;
}

#[tokio::test]
async fn worker_kills_during_pushed_delegations_lose_duplicate_and_orphan_nothing() {
    kill_during_delegations(true).await;
}

async fn kill_during_delegations(push: bool) {
    let trials = env_or("BATON_FAULT_TRIALS", 1);
    let parents = env_or("BATON_FAULT_PARENTS", 6);
    let kills = env_or("BATON_FAULT_KILLS", 3);
    for trial in 1..=trials {
        one_kill_trial(push, trial, parents, kills).await;
    }
}

async fn one_kill_trial(push: bool, trial: usize, parents: usize, kills: usize) {
    let mode = if push { "push" } else { "follow" };
    let temporal = TestTemporal::start().await;
    let mut peer_args = vec!["--behaviour", "work", "--work-seconds", "2"];
    if push {
        peer_args.push("--push");
    }
    let peer = PythonPeer::start(&peer_args).await;
    let model = delegating_model().await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &peer.url(),
        "follow_interval = \"1s\", push_safety_fetch = \"5s\"",
    );
    if push {
        config = config.with_push_receiver();
    }
    let mut worker = WorkerProcess::start(baton(), &config.render()).await;
    let ids: Vec<String> = (0..parents)
        .map(|n| format!("t-{mode}-{trial}-{n}"))
        .collect();
    for (n, id) in ids.iter().enumerate() {
        temporal
            .start_task(&config.task_queue, id, task_input("books", &goal(n)))
            .await;
    }

    // Kill k comes once the peer's progress (tasks created, then completed) passes k/(kills+1)
    // of the way: kills land while tasks are being created, watched and finished.
    let mut last_restart = Instant::now();
    for k in 1..=kills {
        let milestone = (k * 2 * parents).div_ceil(kills + 1);
        peer.wait_for_within("progress before the next kill", WITHIN, |s| {
            let tasks = s["tasks"].as_array().map_or(0, Vec::len);
            let done = s["tasks"].as_array().map_or(0, |t| {
                t.iter()
                    .filter(|t| t["state"] == "TASK_STATE_COMPLETED")
                    .count()
            });
            tasks + done >= milestone
        })
        .await;
        worker.kill().await;
        worker.restart().await;
        last_restart = Instant::now();
    }

    let (views, stuck) = drain(&temporal, &ids, WITHIN).await;
    let drained = last_restart.elapsed();
    let peer_count = count(&peer.stats().await);
    println!(
        "fault-suite: mode={mode} trial={trial} parents={parents} kills={kills} \
         creations={} duplicates={} orphans={} stuck={stuck} lost={} drain={:.1}s",
        peer_count.creations,
        peer_count.duplicates,
        peer_count.orphans,
        views
            .iter()
            .filter(|v| v
                .sub_tasks
                .first()
                .is_none_or(|r| r.state != TaskState::Completed))
            .count(),
        drained.as_secs_f64(),
    );
    assert_eq!(stuck, 0, "stuck parents");
    assert_each_has_its_answer(&views);
    assert_eq!(peer_count.creations, parents, "one task per delegation");
    assert_eq!(peer_count.duplicates, 0);
    assert_eq!(peer_count.orphans, 0);
}

// --- a kill in the create window --------------------------------------------------------------

/// An agent that keeps a new task SUBMITTED has it recorded from that first event: the row
/// names the remote task at once, its stand-in watches it, and a kill meanwhile loses nothing
/// and creates nothing twice.
#[tokio::test]
async fn a_task_the_agent_keeps_submitted_is_recorded_from_its_first_event_and_survives_a_kill() {
    let temporal = TestTemporal::start().await;
    let hold = tempfile::tempdir().unwrap();
    let hold_file = hold.path().join("release");
    let peer = working_peer_held_by("--hold-file", &hold_file).await;
    let model = delegating_model().await;
    let (config, mut worker) =
        start_worker(&temporal, &model, &peer.url(), "follow_interval = \"1s\"").await;
    start_books(&temporal, &config, "t-window").await;

    // The agent holds the task SUBMITTED: the row already names it.
    let remote = remote_task_once_the_row_is(&temporal, "t-window", TaskState::Submitted).await;
    assert_eq!(peer.stats().await["tasks"][0]["id"], remote.as_str());
    worker.kill().await;
    worker.restart().await;
    std::fs::write(&hold_file, b"").unwrap();

    let (views, stuck) = drain(&temporal, &["t-window".to_string()], WITHIN).await;
    assert_eq!(stuck, 0);
    assert_each_has_its_answer(&views);
    let peer_count = count(&peer.stats().await);
    assert_eq!((peer_count.creations, peer_count.orphans), (1, 0));
}

/// A slow agent takes the brief and lists no task for it until it acts on it: a worker killed
/// meanwhile leaves the next attempt a context that is still empty. Knowing from the killed
/// attempt's heartbeat that the agent has the brief, it waits for the task to appear rather than
/// send the brief again.
#[tokio::test]
async fn a_kill_while_a_slow_agent_holds_the_brief_waits_for_its_task_instead_of_sending_again() {
    let temporal = TestTemporal::start().await;
    let hold = tempfile::tempdir().unwrap();
    let hold_file = hold.path().join("release");
    let peer = working_peer_held_by("--hold-brief-file", &hold_file).await;
    let model = delegating_model().await;
    let (config, mut worker) =
        start_worker(&temporal, &model, &peer.url(), "follow_interval = \"1s\"").await;
    start_books(&temporal, &config, "t-slow").await;

    // The agent has the brief and lists nothing yet; the create has heartbeated that.
    peer.wait_for("the brief, held", |s| {
        s["messages"].as_array().is_some_and(|m| !m.is_empty())
    })
    .await;
    kill_once_the_brief_is_taken(&temporal, "t-slow", &mut worker).await;
    // The next attempt finds the context empty, and keeps looking.
    peer.wait_for_within("two looks under the context", WITHIN, |s| {
        s["lists"].as_array().is_some_and(|l| l.len() >= 2)
    })
    .await;
    assert_eq!(peer.stats().await["tasks_created"], 0, "nothing listed yet");
    std::fs::write(&hold_file, b"").unwrap();

    let (views, stuck) = drain(&temporal, &["t-slow".to_string()], WITHIN).await;
    assert_eq!(stuck, 0);
    assert_each_has_its_answer(&views);
    let peer_count = count(&peer.stats().await);
    assert_eq!(
        (peer_count.creations, peer_count.orphans),
        (1, 0),
        "one brief, one task"
    );
    assert!(
        !worker
            .logged(&["adopted task", "that an earlier attempt created"])
            .is_empty(),
        "the adoption is logged"
    );
}

/// The same slow agent, holding the brief past `listing_wait`: the next attempt sends it again,
/// and the agent makes a second task for it. When the delegation ends, the other task of the
/// context is logged as a duplicate and cancelled if it still runs: none is left running.
#[tokio::test]
async fn a_brief_sent_again_past_the_listing_wait_leaves_no_duplicate_running() {
    let temporal = TestTemporal::start().await;
    let hold = tempfile::tempdir().unwrap();
    let hold_file = hold.path().join("release");
    let peer = working_peer_held_by("--hold-brief-file", &hold_file).await;
    let model = delegating_model().await;
    let (config, mut worker) = start_worker(
        &temporal,
        &model,
        &peer.url(),
        "follow_interval = \"1s\", listing_wait = \"2s\"",
    )
    .await;
    start_books(&temporal, &config, "t-twice").await;
    kill_once_the_brief_is_taken(&temporal, "t-twice", &mut worker).await;
    // Past the listing wait the brief goes again, and the agent holds both.
    peer.wait_for_within("the brief, sent again", WITHIN, |s| {
        s["messages"].as_array().is_some_and(|m| m.len() >= 2)
    })
    .await;
    std::fs::write(&hold_file, b"").unwrap();

    let (views, stuck) = drain(&temporal, &["t-twice".to_string()], WITHIN).await;
    assert_eq!(stuck, 0);
    assert_each_has_its_answer(&views);
    // The stand-in tells the parent before it sweeps, so the sweep may come just after.
    let logged = poll_until("the duplicate logged", WITHIN, || async {
        let logged = worker.logged(&["beside task", "for the same brief"]);
        (!logged.is_empty()).then_some(logged)
    })
    .await;
    assert_eq!(logged.len(), 1, "the duplicate is logged once: {logged:?}");
    let stats = peer
        .wait_for_within("no task left running", WITHIN, |s| count(s).orphans == 0)
        .await;
    let peer_count = count(&stats);
    assert_eq!(
        (peer_count.creations, peer_count.duplicates),
        (2, 1),
        "two tasks for one brief"
    );
}

#[tokio::test]
async fn a_cancel_while_the_agent_creates_the_task_lets_it_finish_then_cancels_it() {
    let temporal = TestTemporal::start().await;
    let hold = tempfile::tempdir().unwrap();
    let hold_file = hold.path().join("release");
    let peer = PythonPeer::start(&[
        "--behaviour",
        "hang",
        "--hold-file",
        hold_file.to_str().unwrap(),
    ])
    .await;
    let model = delegating_model().await;
    let (config, _worker) =
        start_worker(&temporal, &model, &peer.url(), "follow_interval = \"1s\"").await;
    start_books(&temporal, &config, "t-cancel-create").await;
    peer.wait_for("the task, held SUBMITTED", |s| {
        s["tasks"][0]["state"] == "TASK_STATE_SUBMITTED"
    })
    .await;

    // The parent is cancelled while start_agent_task still reads the agent's stream.
    temporal
        .client
        .get_workflow_handle::<baton_workflows::TaskWorkflow>("t-cancel-create")
        .cancel(
            temporalio_client::WorkflowCancelOptions::builder()
                .reason("not needed".to_string())
                .build(),
        )
        .await
        .unwrap();
    std::fs::write(&hold_file, b"").unwrap();

    // The create finishes, and the task it made is cancelled: none is left on the agent.
    let view = temporal
        .wait_for_task("t-cancel-create", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Canceled, "{view:#?}");
    assert_eq!(view.sub_tasks[0].state, TaskState::Canceled, "{view:#?}");
    let stats = peer
        .wait_for("the task cancelled on the agent", |s| {
            s["tasks"][0]["state"] == "TASK_STATE_CANCELED"
        })
        .await;
    assert_eq!(count(&stats).creations, 1);
    assert_eq!(
        stats["cancels"].as_array().map(Vec::len),
        Some(1),
        "{stats}"
    );
}

#[tokio::test]
async fn a_stand_in_whose_agent_left_the_config_resolves_its_row_failed() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "park"]).await;
    let model = delegating_model().await;
    let with_ledger = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &peer.url(),
        "updates = \"follow\", follow_interval = \"1s\"",
    );
    let mut worker = WorkerProcess::start(baton(), &with_ledger.render()).await;
    temporal
        .start_task(
            &with_ledger.task_queue,
            "t-removed",
            task_input("books", "Which account?"),
        )
        .await;
    wait_until_parked(&temporal, "t-removed").await;

    // The operator removes the ledger from the config and restarts the worker.
    worker.kill().await;
    let without = WorkerConfig {
        agents: Vec::new(),
        ..with_ledger
    };
    let _worker = WorkerProcess::start(baton(), &without.render()).await;
    completes_with_its_sub_task_failed(
        &temporal,
        "t-removed",
        "agent ledger is no longer configured on this worker",
    )
    .await;
}

// --- the Temporal server killed and started again -------------------------------------------

#[tokio::test]
async fn a_temporal_server_killed_and_restarted_on_its_database_loses_nothing() {
    let mut temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "work", "--work-seconds", "3"]).await;
    let model = delegating_model().await;
    let (config, _worker) =
        start_worker(&temporal, &model, &peer.url(), "follow_interval = \"1s\"").await;
    let ids: Vec<String> = (0..3).map(|n| format!("t-temporal-{n}")).collect();
    for (n, id) in ids.iter().enumerate() {
        temporal
            .start_task(&config.task_queue, id, task_input("books", &goal(n)))
            .await;
    }
    peer.wait_for("every delegation created", |s| {
        s["tasks_created"].as_u64() == Some(3)
    })
    .await;

    temporal.kill();
    temporal.start_again().await;

    let (views, stuck) = drain(&temporal, &ids, WITHIN).await;
    assert_eq!(stuck, 0);
    assert_each_has_its_answer(&views);
    let peer_count = count(&peer.stats().await);
    assert_eq!(
        (
            peer_count.creations,
            peer_count.duplicates,
            peer_count.orphans
        ),
        (3, 0, 0)
    );
}

// --- a peer that goes away --------------------------------------------------------------------

#[tokio::test]
async fn a_peer_down_while_its_task_is_created_is_waited_out_and_gets_the_brief_once() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "work", "--work-seconds", "1"]).await;
    let proxy = A2aProxy::start(&peer.url()).await;
    let model = delegating_model().await;
    let (config, _worker) =
        start_worker(&temporal, &model, &proxy.url(), "follow_interval = \"1s\"").await;

    proxy.set_down(true);
    start_books(&temporal, &config, "t-down").await;
    // Down for three attempts of the creation (the first, and two retries).
    wait_until("three refused calls", || proxy.refused_while_down() >= 3).await;
    proxy.set_down(false);

    let (views, stuck) = drain(&temporal, &["t-down".to_string()], WITHIN).await;
    assert_eq!(stuck, 0);
    assert_each_has_its_answer(&views);
    let peer_count = count(&peer.stats().await);
    assert_eq!((peer_count.creations, peer_count.orphans), (1, 0));
}

#[tokio::test]
async fn a_cancel_the_agent_cannot_take_yet_is_asked_again_until_its_task_has_ended() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "hang"]).await;
    let proxy = A2aProxy::start(&peer.url()).await;
    let model = delegating_model().await;
    let (config, _worker) =
        start_worker(&temporal, &model, &proxy.url(), "follow_interval = \"1s\"").await;
    start_books(&temporal, &config, "t-stubborn").await;
    let remote = remote_task_once_the_row_is(&temporal, "t-stubborn", TaskState::Working).await;

    // The agent is down when the cancel is sent, then refuses it twice as not cancelable.
    proxy.set_down(true);
    proxy.not_cancelable(2);
    temporal
        .client
        .get_workflow_handle::<baton_workflows::TaskWorkflow>("t-stubborn")
        .cancel(temporalio_client::WorkflowCancelOptions::builder().build())
        .await
        .unwrap();
    wait_until("two cancels refused by the outage", || {
        proxy.refused_while_down() >= 2
    })
    .await;
    proxy.set_down(false);

    let stats = peer
        .wait_for_within("the task cancelled on the agent", WITHIN, |s| {
            s["tasks"][0]["state"] == "TASK_STATE_CANCELED"
        })
        .await;
    assert_eq!(
        stats["cancels"],
        json!([remote]),
        "it reached the agent once"
    );
    let declined = proxy
        .calls()
        .iter()
        .filter(|(method, refused)| method == "CancelTask" && *refused)
        .count();
    assert_eq!(declined, 2, "{:?}", proxy.calls());
    let parent = temporal
        .wait_for_task("t-stubborn", WITHIN, |v| {
            v.state.is_terminal() && v.sub_tasks[0].state.is_terminal()
        })
        .await;
    assert_eq!(parent.state, TaskState::Canceled, "{parent:#?}");
    assert_eq!(
        parent.sub_tasks[0].state,
        TaskState::Canceled,
        "{parent:#?}"
    );
}

#[tokio::test]
async fn a_peer_down_while_its_task_is_followed_keeps_its_state_and_the_answer_arrives() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "park"]).await;
    let proxy = A2aProxy::start(&peer.url()).await;
    let model = delegating_model().await;
    let (config, _worker) = start_worker(
        &temporal,
        &model,
        &proxy.url(),
        "updates = \"follow\", follow_interval = \"1s\"",
    )
    .await;
    temporal
        .start_task(
            &config.task_queue,
            "t-outage",
            task_input("books", "Which account?"),
        )
        .await;
    let parked = wait_until_parked(&temporal, "t-outage").await;
    let remote = parked.sub_tasks[0].remote_task_id.clone().unwrap();

    // The agent is unreachable for a while; meanwhile someone answers it directly.
    proxy.set_down(true);
    wait_until("the follow to fail against the outage", || {
        proxy.refused_while_down() >= 2
    })
    .await;
    let answered = a2a_rpc(
        &format!("{}/rpc", peer.url()),
        "SendMessage",
        json!({"message": {"messageId": "m-answer", "taskId": remote, "role": "ROLE_USER",
            "parts": [{"text": "the main account"}]}}),
        None,
    )
    .await;
    assert!(answered.get("error").is_none(), "{answered}");
    proxy.set_down(false);

    let view = temporal
        .wait_for_task("t-outage", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(
        view.sub_tasks[0].summary.as_deref(),
        Some("answered: the main account")
    );
    assert_eq!(count(&peer.stats().await).creations, 1);
}

#[tokio::test]
async fn a_peer_restarted_without_its_tasks_resolves_the_row_failed_and_the_parent_goes_on() {
    let temporal = TestTemporal::start().await;
    let mut peer = PythonPeer::start(&["--behaviour", "park"]).await;
    let model = delegating_model().await;
    let (config, _worker) = start_worker(
        &temporal,
        &model,
        &peer.url(),
        "updates = \"follow\", follow_interval = \"1s\"",
    )
    .await;
    temporal
        .start_task(
            &config.task_queue,
            "t-forgot",
            task_input("books", "Which account?"),
        )
        .await;
    wait_until_parked(&temporal, "t-forgot").await;

    peer.restart().await;
    completes_with_its_sub_task_failed(&temporal, "t-forgot", "no longer knows task").await;
}

#[tokio::test]
async fn a_worker_started_while_a_peer_is_down_serves_and_takes_the_peer_in_when_it_comes() {
    let temporal = TestTemporal::start().await;
    let port = baton_tests::free_port();
    let model = delegating_model().await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &format!("http://127.0.0.1:{port}"),
        "follow_interval = \"1s\"",
    );
    // Nothing listens where the ledger should be: the worker starts all the same.
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    assert!(
        !worker
            .logged(&["ledger", "left out of the roster"])
            .is_empty()
    );

    let peer = PythonPeer::start_on(port, &["--behaviour", "work", "--work-seconds", "1"]).await;
    wait_until("the ledger to join the roster", || {
        !worker.logged(&["ledger", "joins the roster"]).is_empty()
    })
    .await;
    start_books(&temporal, &config, "t-late-peer").await;
    let (views, stuck) = drain(&temporal, &["t-late-peer".to_string()], WITHIN).await;
    assert_eq!(stuck, 0);
    assert_each_has_its_answer(&views);
    // The model was shown the ledger in its roster.
    assert!(
        model.requests()[0]["messages"][0]["content"]
            .as_str()
            .is_some_and(|system| system.contains("id: ledger"))
    );
    assert_eq!(count(&peer.stats().await).creations, 1);
}

#[tokio::test]
async fn an_answer_whose_reply_was_lost_is_found_by_the_retry_and_reaches_the_agent_once() {
    let temporal = TestTemporal::start().await;
    // The agent works on the answer for a while, so the retry finds the task still open.
    let peer = PythonPeer::start(&["--behaviour", "park", "--reply-seconds", "4"]).await;
    let proxy = A2aProxy::start(&peer.url()).await;
    let model = FakeModel::responding(|request| {
        let shown = request["messages"].to_string();
        if shown.contains("is COMPLETED") {
            reply("Done.")
        } else if !shown.contains("started on") {
            delegate("balance", "g", "ledger")
        } else if shown.contains("is INPUT_REQUIRED: which account?")
            && !shown.contains("answer sent")
        {
            call(
                "reply_to_subtask",
                json!({"sub_task": "t-lost.1", "text": "savings"}),
            )
        } else {
            reply("Waiting.")
        }
    })
    .await;
    let (config, _worker) =
        start_worker(&temporal, &model, &proxy.url(), "updates = \"follow\"").await;
    // The agent takes the answer, and the stand-in never hears that it did.
    proxy.lose_answers("SendMessage", 1);
    temporal
        .start_task(&config.task_queue, "t-lost", task_input("books", "g"))
        .await;

    let (views, stuck) = drain(&temporal, &["t-lost".to_string()], WITHIN).await;
    assert_eq!(stuck, 0);
    let row = &views[0].sub_tasks[0];
    assert_eq!(row.state, TaskState::Completed, "{row:?}");
    assert_eq!(row.summary.as_deref(), Some("answered: savings"));
    // The retry read the task, found the answer in its history, and did not send it again.
    let sends = proxy
        .calls()
        .iter()
        .filter(|(method, _)| method == "SendMessage")
        .count();
    assert_eq!(sends, 1, "{:?}", proxy.calls());
    let stats = peer.stats().await;
    let answers = stats["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["text"] == "savings")
        .count();
    assert_eq!(answers, 1, "{stats}");
}

// --- the model goes away --------------------------------------------------------------------

#[tokio::test]
async fn a_model_outage_longer_than_a_few_retries_is_ridden_out() {
    let temporal = TestTemporal::start().await;
    // Twenty rate limits a second apart: longer than the old budget of five attempts (~15 s).
    let mut script: Vec<Scripted> = (0..20)
        .map(|_| Scripted::RateLimited {
            retry_after_secs: 1,
        })
        .collect();
    script.push(reply("Balanced after all."));
    let model = FakeModel::start(script).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    start_books(&temporal, &config, "t-model-out").await;
    let view = temporal
        .wait_for_task("t-model-out", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("Balanced after all."));
    assert_eq!(model.requests().len(), 21);
    // Every failed attempt is in the worker's log, with the task.
    let failed = worker.logged(&["t-model-out", "the model call failed, to be retried"]);
    assert_eq!(failed.len(), 20, "{failed:#?}");
}

#[tokio::test]
async fn a_model_that_stays_down_fails_the_task_with_the_reason_and_cancels_its_sub_tasks() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "hang"]).await;
    let mut script = vec![delegate("balance", "g", "ledger")];
    script.extend((0..10).map(|_| Scripted::RateLimited {
        retry_after_secs: 1,
    }));
    let model = FakeModel::start(script).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &peer.url(),
        "updates = \"follow\", follow_interval = \"1s\"",
    );
    let config_text = config.render().replace(
        "timeout = \"10s\"\n",
        "timeout = \"10s\"\nretry_for = \"3s\"\n",
    );
    let worker = WorkerProcess::start(baton(), &config_text).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-model-gone",
            task_input("books", "g"),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Failed, "{view:#?}");
    let reason = view.status_message.clone().unwrap_or_default();
    assert!(reason.contains("model.retry_for is 3s"), "{reason}");
    // The open sub-task was cancelled on the way out, nothing left running on the agent.
    assert_eq!(view.sub_tasks[0].state, TaskState::Canceled, "{view:#?}");
    let stats = peer.stats().await;
    assert_eq!(
        stats["cancels"].as_array().map(Vec::len),
        Some(1),
        "{stats}"
    );
    assert_eq!(count(&stats).orphans, 0);
    let logged = worker.logged(&["t-model-gone", "task failed"]);
    assert_eq!(
        logged.len(),
        1,
        "one WARN line for the failed task: {logged:#?}"
    );
}

// --- bounded turns, and conversations that end ----------------------------------------------

#[tokio::test]
async fn an_answer_with_1500_tool_calls_is_bounded_and_the_task_goes_on() {
    let temporal = TestTemporal::start().await;
    let calls: Vec<(String, Value)> = (0..1500)
        .map(|n| {
            (
                "look_up".to_string(),
                json!({"n": n, "padding": "x".repeat(3000)}),
            )
        })
        .collect();
    let model = FakeModel::start(vec![
        Scripted::Reply(ModelResponseSpec {
            text: None,
            tool_calls: calls,
        }),
        reply("Done with fewer calls."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-many-calls",
            task_input("books", "g"),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let second = &model.requests()[1]["messages"];
    let messages = second.as_array().unwrap();
    let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["tool_calls"].as_array().unwrap().len(), 64);
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(
        results.len(),
        64,
        "a result for every kept call, right after it"
    );
    let refused = results
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .unwrap_or_default()
                .contains("tool.refused")
        })
        .count();
    assert_eq!(refused, 64 - 16);
    // The next turn's input stayed far under Temporal's payload limit.
    assert!(
        second.to_string().len() < 200_000,
        "{}",
        second.to_string().len()
    );
}

#[tokio::test]
async fn a_conversation_left_idle_completes_with_its_last_answer() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("Hello Alice.")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let input = serde_json::from_value(json!({
        "name": "chat", "goal": "Say hello.", "lifecycle": "conversation",
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}],
        "limits": {"idle_timeout_secs": 2}
    }))
    .unwrap();
    let view = temporal
        .run_to_end(&config.task_queue, "t-idle", input, WITHIN)
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("Hello Alice."));
    assert_eq!(view.turns, 1);
    // It parked first, and ended on the idle timer, not on a turn.
    let events = temporal.history("t-idle").await;
    assert!(
        events
            .iter()
            .any(|e| format!("{:?}", e.event_type()) == "TimerFired"),
        "the idle timer fired"
    );
}

// --- the gateway ----------------------------------------------------------------------------

/// `baton gateway` on its own, with a 2 s call timeout: the gateway, its JSON-RPC URL, and the
/// config of a worker for the same agent that serves no gateway of its own.
async fn gateway_alone(
    temporal: &TestTemporal,
    model: &FakeModel,
) -> (GatewayProcess, String, WorkerConfig) {
    let config = WorkerConfig {
        server_extra: vec!["temporal_timeout = \"2s\"".into()],
        ..WorkerConfig::new(temporal, &model.base_url()).with_push_receiver()
    };
    let rpc = format!("{}/", config.base_url.clone().unwrap());
    let gateway = GatewayProcess::start(baton(), &config.render()).await;
    let mut worker_config = config;
    worker_config.base_url = None;
    (gateway, rpc, worker_config)
}

#[tokio::test]
async fn a_gateway_with_no_worker_answers_in_time_and_nothing_sent_is_lost() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("Here it is.")]).await;
    let (gateway, rpc, worker_config) = gateway_alone(&temporal, &model).await;

    // No worker: Temporal takes the new task, no worker reads it.
    let sent = a2a_rpc(
        &rpc,
        "SendMessage",
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER",
            "parts": [{"text": "Is the March ledger balanced?"}]},
            "configuration": {"returnImmediately": true}}),
        Some("alice"),
    )
    .await;
    assert_eq!(
        sent["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{sent}"
    );
    let task_id = sent["result"]["task"]["id"].as_str().unwrap().to_string();
    let read = a2a_rpc(&rpc, "GetTask", json!({"id": task_id}), Some("alice")).await;
    assert_eq!(read["error"]["code"], -32603, "{read}");
    let message = read["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("took longer than 2s"), "{message}");
    assert!(
        read["error"]["data"]
            .to_string()
            .contains("google.rpc.RetryInfo"),
        "{read}"
    );

    // A worker comes: the task runs on what Temporal kept.
    let _worker = WorkerProcess::start(baton(), &worker_config.render()).await;
    let view = temporal
        .wait_for_task(&task_id, WITHIN, |v| v.last_answer.is_some())
        .await;
    assert_eq!(view.last_answer.as_deref(), Some("Here it is."));
    let read = a2a_rpc(&rpc, "GetTask", json!({"id": task_id}), Some("alice")).await;
    assert_eq!(
        read["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{read}"
    );
    drop(gateway);
}

#[tokio::test]
async fn tasks_are_listed_from_visibility_alone_even_with_no_worker_to_ask() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("March balances."), reply("April does not.")]).await;
    let (gateway, rpc, worker_config) = gateway_alone(&temporal, &model).await;
    let mut worker = WorkerProcess::start(baton(), &worker_config.render()).await;

    let mut task_ids = Vec::new();
    for (n, question) in ["Is March balanced?", "Is April?"].iter().enumerate() {
        let sent = a2a_rpc(
            &rpc,
            "SendMessage",
            json!({"message": {"messageId": format!("m-{n}"), "role": "ROLE_USER",
                "parts": [{"text": question}]}}),
            Some("alice"),
        )
        .await;
        assert_eq!(
            sent["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{sent}"
        );
        task_ids.push(sent["result"]["task"]["id"].as_str().unwrap().to_string());
    }
    let list = |params: Value| a2a_rpc(&rpc, "ListTasks", params, Some("alice"));
    // Visibility follows the workflows by a moment: wait until it shows both tasks ended.
    let listed = poll_until("both tasks listed as completed", WITHIN, || async {
        let listed = list(json!({})).await;
        let states: Vec<&str> = listed["result"]["tasks"]
            .as_array()?
            .iter()
            .filter_map(|t| t["status"]["state"].as_str())
            .collect();
        (states == ["TASK_STATE_COMPLETED"; 2]).then_some(listed)
    })
    .await;
    let tasks = listed["result"]["tasks"].as_array().unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [task_ids[1].as_str(), task_ids[0].as_str()],
        "newest first"
    );
    // What a listing shows of a task is what GetTask shows, less its history and artifacts.
    let mut reads = Vec::new();
    for task in tasks {
        let read = a2a_rpc(
            &rpc,
            "GetTask",
            json!({"id": task["id"], "historyLength": 0}),
            Some("alice"),
        )
        .await;
        let mut listed_part = read["result"].clone();
        listed_part.as_object_mut().unwrap().remove("artifacts");
        assert_eq!(*task, listed_part);
        reads.push(read["result"].clone());
    }
    let since_first = tasks[1]["status"]["timestamp"].clone();

    // No worker is left to answer a query: GetTask reads an ended task from its workflow's
    // result instead, and the listing answers in full. The read outlasts the second a gateway
    // serves a listing again, so the listings below read visibility.
    worker.kill().await;
    let unqueried = a2a_rpc(
        &rpc,
        "GetTask",
        json!({"id": tasks[0]["id"], "historyLength": 0}),
        Some("alice"),
    )
    .await;
    assert_eq!(unqueried["result"], reads[0], "{unqueried}");
    let cancel = a2a_rpc(
        &rpc,
        "CancelTask",
        json!({"id": task_ids[1]}),
        Some("alice"),
    )
    .await;
    assert_eq!(
        cancel["error"]["code"], -32002,
        "TaskNotCancelable: {cancel}"
    );
    assert_eq!(list(json!({})).await, listed);
    let newer = list(json!({"statusTimestampAfter": since_first})).await;
    let ids: Vec<&str> = newer["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [task_ids[1].as_str()], "{newer}");
    let answered = list(json!({"status": "TASK_STATE_COMPLETED", "pageSize": 1})).await;
    assert_eq!(answered["result"]["tasks"][0], tasks[0]);
    assert_eq!(answered["result"]["totalSize"], 2);
    // History and artifacts are not in visibility: with no worker, the tasks come without them.
    let asked_for_more = list(json!({"includeArtifacts": true})).await;
    assert_eq!(asked_for_more, listed);
    assert!(
        list(json!({}))
            .await
            .to_string()
            .contains("April does not."),
        "the status carries the answer"
    );
    assert_eq!(model.requests().len(), 2);
    drop(gateway);
}

#[tokio::test]
async fn a_repeated_message_id_is_answered_at_once_with_the_task_as_it_is() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("The ledger balances.")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let rpc = format!("{}/", config.base_url.clone().unwrap());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let message = json!({"message": {"messageId": "m-retry", "role": "ROLE_USER",
        "parts": [{"text": "Is the March ledger balanced?"}]}});

    let first = a2a_rpc(&rpc, "SendMessage", message.clone(), Some("alice")).await;
    assert_eq!(
        first["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{first}"
    );
    let task_id = first["result"]["task"]["id"].clone();

    // The client retries: the same task, as it is, without waiting for another answer.
    let again = a2a_rpc(&rpc, "SendMessage", message.clone(), Some("alice")).await;
    assert_eq!(again["result"]["task"]["id"], task_id, "{again}");
    assert_eq!(
        again["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        model.requests().len(),
        1,
        "the retry was not answered twice"
    );

    // Sent again to return at once: the same, not Temporal's refusal to start a task that ended.
    let mut immediate = message.clone();
    immediate["configuration"] = json!({"returnImmediately": true});
    let again = a2a_rpc(&rpc, "SendMessage", immediate, Some("alice")).await;
    assert_eq!(again["result"]["task"]["id"], task_id, "{again}");
    assert_eq!(
        again["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    // Streaming, the retry gets the task and the end of the stream.
    let body =
        json!({"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": message});
    let response = reqwest::Client::new()
        .post(&rpc)
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", "alice")
        .json(&body)
        .send()
        .await
        .unwrap();
    let text = tokio::time::timeout(WITHIN, response.text())
        .await
        .expect("the stream of a repeated message ends")
        .unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| serde_json::from_str(data.trim()).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    assert_eq!(events[0]["result"]["task"]["id"], task_id);
}

/// A `returnImmediately` send that creates a task is answered once Temporal holds the task and
/// its message (signal-with-start), before any worker reads it: SUBMITTED, with the message as
/// its history, as GetTask then shows it. A client's retry lands on the same task and adds
/// nothing.
#[tokio::test]
async fn a_task_sent_to_return_immediately_is_answered_as_temporal_holds_it_and_a_retry_adds_nothing()
 {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![Scripted::Held(ModelResponseSpec {
        text: Some("The ledger balances.".into()),
        tool_calls: Vec::new(),
    })])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let rpc = format!("{}/", config.base_url.clone().unwrap());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let send = json!({"message": {"messageId": "m-now", "role": "ROLE_USER",
        "parts": [{"text": "Is the March ledger balanced?"}]},
        "configuration": {"returnImmediately": true}});

    let sent = a2a_rpc(&rpc, "SendMessage", send.clone(), Some("alice")).await;
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED", "{sent}");
    let history = task["history"]
        .as_array()
        .expect("the message is the history");
    assert_eq!(history.len(), 1, "{sent}");
    assert_eq!(history[0]["messageId"], "m-now");
    assert_eq!(history[0]["role"], "ROLE_USER");
    assert_eq!(
        history[0]["parts"][0]["text"],
        "Is the March ledger balanced?"
    );
    let task_id = task["id"].as_str().unwrap().to_string();

    wait_until("the first model call", || !model.requests().is_empty()).await;
    let read = a2a_rpc(&rpc, "GetTask", json!({"id": task_id}), Some("alice")).await;
    assert_eq!(
        read["result"]["status"]["state"], "TASK_STATE_WORKING",
        "{read}"
    );
    assert_eq!(read["result"]["contextId"], task["contextId"]);
    assert_eq!(read["result"]["history"][0]["messageId"], "m-now", "{read}");
    assert_eq!(read["result"]["history"][0]["parts"], history[0]["parts"]);

    // The client retries, having missed the answer: the same task, nothing added to it.
    let again = a2a_rpc(&rpc, "SendMessage", send, Some("alice")).await;
    assert_eq!(again["result"]["task"]["id"], task_id.as_str(), "{again}");
    model.release();
    completed_with_message_once(&temporal, &task_id, "m-now").await;
    assert_eq!(
        model.requests().len(),
        1,
        "the retry was not answered again"
    );
}

/// A `returnImmediately` send while Temporal is down is told, in time, to retry; retried once
/// Temporal is back, it opens the task once, and the task runs.
#[tokio::test]
async fn a_task_sent_to_return_immediately_during_a_temporal_outage_is_opened_once_by_the_retry() {
    let mut temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("The ledger balances.")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let rpc = format!("{}/", config.base_url.clone().unwrap());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let send = json!({"message": {"messageId": "m-outage", "role": "ROLE_USER",
        "parts": [{"text": "Is the March ledger balanced?"}]},
        "configuration": {"returnImmediately": true}});

    temporal.kill();
    let refused = a2a_rpc(&rpc, "SendMessage", send.clone(), Some("alice")).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["data"]
            .to_string()
            .contains("google.rpc.RetryInfo"),
        "{refused}"
    );

    temporal.start_again().await;
    let sent = poll_until("the retried send taken", WITHIN, || async {
        let sent = a2a_rpc(&rpc, "SendMessage", send.clone(), Some("alice")).await;
        sent.get("result").is_some().then_some(sent)
    })
    .await;
    let task_id = sent["result"]["task"]["id"].as_str().unwrap().to_string();
    completed_with_message_once(&temporal, &task_id, "m-outage").await;
    assert_eq!(model.requests().len(), 1);
}

/// Waits for the task to end, and checks it completed with the message `message_id` in its
/// history once.
async fn completed_with_message_once(temporal: &TestTemporal, task_id: &str, message_id: &str) {
    let view = temporal
        .wait_for_task(task_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let taken = view
        .messages
        .iter()
        .filter(|m| m.message_id == message_id)
        .count();
    assert_eq!(taken, 1, "{:#?}", view.messages);
}

#[tokio::test]
async fn a_message_that_arrives_during_a_turn_waits_for_the_next_one_and_is_answered() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![
        Scripted::Held(ModelResponseSpec {
            text: None,
            tool_calls: vec![("look_up".into(), json!({"what": "march"}))],
        }),
        reply("March balances, and so does April."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let rpc = format!("{}/", config.base_url.clone().unwrap());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let send = |id: &str, text: &str, task: Option<&Value>| {
        let mut message = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]});
        if let Some(task) = task {
            message["taskId"] = task.clone();
        }
        json!({"message": message, "configuration": {"returnImmediately": true}})
    };
    let first = a2a_rpc(
        &rpc,
        "SendMessage",
        send("m-1", "Is March balanced?", None),
        Some("alice"),
    )
    .await;
    let task_id = first["result"]["task"]["id"].clone();
    wait_until("the first model call", || !model.requests().is_empty()).await;

    // While the model thinks, the participant adds a question.
    let second = a2a_rpc(
        &rpc,
        "SendMessage",
        send("m-2", "And April?", Some(&task_id)),
        Some("alice"),
    )
    .await;
    assert!(second.get("error").is_none(), "{second}");
    model.release();

    let view = temporal
        .wait_for_task(task_id.as_str().unwrap(), WITHIN, |v| {
            v.last_answer.as_deref() == Some("March balances, and so does April.")
        })
        .await;
    // A client that activated no extension gets a task that completes with its answer.
    assert_eq!(view.state, TaskState::Completed);
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        2,
        "one turn for the call, one for the answer"
    );
    // The second turn reads the tool call, its result right after it, then the new message.
    let roles: Vec<String> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user"],
        "{roles:?}"
    );
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "And April?");
    // The first turn never saw it.
    assert!(!requests[0]["messages"].to_string().contains("And April?"));
}

/// Waits until parent `id`'s sub-task is parked in INPUT_REQUIRED.
async fn wait_until_parked(temporal: &TestTemporal, id: &str) -> TaskView {
    temporal
        .wait_for_task(id, WITHIN, |v| {
            v.sub_tasks
                .first()
                .is_some_and(|r| r.state == TaskState::InputRequired)
        })
        .await
}

/// Polls `condition` every 50 ms until it holds; panics naming `what` after [`WITHIN`].
async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + WITHIN;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// --- a cancel down a chain of Baton agents, the middle one down ------------------------------

/// Whether the model already called a tool in the conversation it is shown.
fn called_a_tool(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .is_some_and(|messages| messages.iter().any(|m| m["tool_calls"].is_array()))
}

#[tokio::test]
async fn a_cancel_crosses_a_chain_of_three_batons_whose_middle_worker_is_down_when_it_comes() {
    let temporal = TestTemporal::start().await;
    // The last agent asks a question nobody answers: its task runs until it is cancelled.
    let last_model = FakeModel::responding(|request| {
        if called_a_tool(request) {
            reply("Waiting for the answer.")
        } else {
            call("ask_participant", json!({"question": "Which year?"}))
        }
    })
    .await;
    let mut last = WorkerConfig::new(&temporal, &last_model.base_url()).with_push_receiver();
    last.agent_id = "last".into();
    let last_url = last.base_url.clone().unwrap();
    let _last = WorkerProcess::start(baton(), &last.render()).await;

    // Each agent above delegates once, then waits for its sub-task.
    let middle_model = FakeModel::responding(delegating_to("last")).await;
    let mut middle = WorkerConfig::new(&temporal, &middle_model.base_url())
        .with_push_receiver()
        .agent("last", &last_url, "");
    middle.agent_id = "middle".into();
    let middle_url = middle.base_url.clone().unwrap();
    let mut middle_worker = WorkerProcess::start(baton(), &middle.render()).await;

    let first_model = FakeModel::responding(delegating_to("middle")).await;
    let first = WorkerConfig::new(&temporal, &first_model.base_url())
        .with_push_receiver()
        .agent("middle", &middle_url, "");
    let _first = WorkerProcess::start(baton(), &first.render()).await;
    temporal
        .start_task(
            &first.task_queue,
            "t-chain",
            task_input("year", "Close the year."),
        )
        .await;

    // The whole chain runs: the last agent's task waits on its question.
    let middle_id = poll_until("the middle agent's task", WITHIN, || async {
        let view = temporal.task_view("t-chain").await;
        view.sub_tasks.first()?.remote_task_id.clone()
    })
    .await;
    let last_id = poll_until("the last agent's task", WITHIN, || async {
        let view = temporal.task_view(&middle_id).await;
        view.sub_tasks.first()?.remote_task_id.clone()
    })
    .await;
    temporal
        .wait_for_task(&last_id, WITHIN, |v| v.state == TaskState::InputRequired)
        .await;

    // The middle agent's worker, which serves its gateway, dies; the first task is cancelled.
    middle_worker.kill().await;
    temporal
        .client
        .get_workflow_handle::<baton_workflows::TaskWorkflow>("t-chain")
        .cancel(temporalio_client::WorkflowCancelOptions::default())
        .await
        .unwrap();
    // The cancel is tried again while the middle agent is down, and lands once it is back.
    middle_worker.restart().await;
    let middle_view = temporal
        .wait_for_task(&middle_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(middle_view.state, TaskState::Canceled, "{middle_view:#?}");
    let last_view = temporal
        .wait_for_task(&last_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(last_view.state, TaskState::Canceled, "{last_view:#?}");
    // The first task ends CANCELED, its row once the middle agent's task has ended, not merely
    // once it was asked to.
    let first_view = temporal
        .wait_for_task("t-chain", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(first_view.state, TaskState::Canceled, "{first_view:#?}");
    let row = &first_view.sub_tasks[0];
    assert_eq!(
        (row.state, row.resolved),
        (TaskState::Canceled, true),
        "{row:#?}"
    );
}

// --- a chain of agents cancelled at its root ----------------------------------------------------

/// A model that delegates its task to `agent` once, then waits for the agent below.
fn delegating_to(agent: &str) -> impl Fn(&Value) -> Scripted + Send + Sync + 'static {
    let agent = agent.to_string();
    move |request: &Value| {
        if called_a_tool(request) {
            reply("Waiting for the agent below.")
        } else {
            call(
                "spawn_subtask",
                json!({"name": "year", "goal": "Close the year.", "agent": agent}),
            )
        }
    }
}

/// One Baton agent of a chain: its id, config and worker (and the model it runs on).
struct Hop {
    id: &'static str,
    config: WorkerConfig,
    worker: WorkerProcess,
    model: FakeModel,
}

impl Hop {
    /// Agent `id` on `model`, with its gateway, delegating to the agent `below` (its id and
    /// URL); `extra` is added to its config.
    async fn start(
        temporal: &TestTemporal,
        id: &'static str,
        model: FakeModel,
        below: &(String, String),
        extra: &str,
    ) -> Hop {
        let mut config = WorkerConfig::new(temporal, &model.base_url())
            .with_push_receiver()
            .agent(&below.0, &below.1, "");
        config.agent_id = id.into();
        let rendered = format!("{}{extra}", config.render());
        let worker = WorkerProcess::start(baton(), &rendered).await;
        Hop {
            id,
            config,
            worker,
            model,
        }
    }

    /// The agent above this one delegates to it by this id at this URL.
    fn as_below(&self) -> (String, String) {
        (self.id.to_string(), self.config.base_url.clone().unwrap())
    }

    /// ListTasks on this agent's gateway as `caller` sees it: each listed task's state.
    async fn listed_states(&self, caller: &str) -> Vec<String> {
        let rpc = format!("{}/", self.config.base_url.clone().unwrap());
        let listed = a2a_rpc(&rpc, "ListTasks", json!({}), Some(caller)).await;
        listed["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("ListTasks on {} as {caller}: {listed}", self.id))
            .iter()
            .map(|t| {
                t["status"]["state"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }
}

/// The ids of the chain's tasks that exist so far, root first: each Baton task's first row names
/// the task below it (the last one's, the a2a-sdk agent's).
async fn chain_so_far(temporal: &TestTemporal, root: &str, batons: usize) -> Vec<String> {
    let mut ids = vec![root.to_string()];
    while ids.len() <= batons {
        let view = temporal.task_view(ids.last().unwrap()).await;
        match view
            .sub_tasks
            .first()
            .and_then(|r| r.remote_task_id.clone())
        {
            Some(below) => ids.push(below),
            None => break,
        }
    }
    ids
}

/// The chain: four Batons (a → b → c → d) ending at an a2a-sdk agent whose task runs
/// until it is cancelled. The root is cancelled at a moment chosen at random (how much of the
/// chain exists by then: `BATON_CHAIN_STAGE` = 1 to 5 picks it), with b's worker, which serves
/// b's gateway, killed just before and started again just after. Every task on every agent ends
/// CANCELED, and ListTasks on each agent, as the agent above it, shows nothing left open.
#[tokio::test]
async fn a_cancel_at_the_root_ends_every_task_of_four_batons_and_an_sdk_agent_with_a_worker_killed()
{
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "hang"]).await;
    let mut below = ("tool".to_string(), peer.url());
    let mut hops = Vec::new();
    for id in ["d", "c", "b", "a"] {
        let model = FakeModel::responding(delegating_to(&below.0)).await;
        let hop = Hop::start(&temporal, id, model, &below, "").await;
        below = hop.as_below();
        hops.push(hop);
    }
    hops.reverse();
    let stage = std::env::var("BATON_CHAIN_STAGE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| 1 + std::process::id() as usize % 5);

    let a_rpc = format!("{}/", hops[0].config.base_url.clone().unwrap());
    let sent = a2a_rpc(
        &a_rpc,
        "SendMessage",
        json!({"message": {"messageId": "m-chain", "role": "ROLE_USER",
            "parts": [{"text": "Close the year."}]},
            "configuration": {"returnImmediately": true}}),
        Some("alice"),
    )
    .await;
    let root = sent["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent}"))
        .to_string();
    let before = poll_until("the chain to reach the chosen stage", WITHIN, || async {
        let ids = chain_so_far(&temporal, &root, hops.len()).await;
        (ids.len() >= stage).then_some(ids)
    })
    .await;

    hops[1].worker.kill().await;
    let cancelled = Instant::now();
    // CancelTask answers once the root has ended, which waits on b: b comes back meanwhile.
    let (answer, ()) = tokio::join!(
        a2a_rpc(&a_rpc, "CancelTask", json!({"id": root}), Some("alice")),
        hops[1].worker.restart()
    );
    assert_eq!(
        answer["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{answer}"
    );

    // Quiet: every Baton task of the chain has ended (none ends before what it started below
    // it), every agent lists only ended tasks for the agent above it, and the a2a-sdk agent
    // holds none open.
    let callers = ["alice", "a", "b", "c"];
    let (chain, listed) = poll_until("every agent of the chain quiet", WITHIN, || async {
        let chain = chain_so_far(&temporal, &root, hops.len()).await;
        for id in chain.iter().take(hops.len()) {
            if !temporal.task_view(id).await.state.is_terminal() {
                return None;
            }
        }
        let mut listed = Vec::new();
        for (hop, caller) in hops.iter().zip(callers) {
            let states = hop.listed_states(caller).await;
            if states.iter().any(|s| !is_ended(s)) {
                return None;
            }
            listed.push(states.len());
        }
        let peer_open = count(&peer.stats().await).orphans;
        (peer_open == 0).then_some((chain, listed))
    })
    .await;
    let quiet_after = cancelled.elapsed();
    for id in chain.iter().take(hops.len()) {
        let view = temporal.task_view(id).await;
        assert_eq!(view.state, TaskState::Canceled, "{id}: {view:#?}");
    }
    let peer_tasks = count(&peer.stats().await);

    // The tree as a's operator sees it: the Batons from Temporal, the a2a-sdk agent's task as d
    // last heard of it, every one ended.
    let (_, tree, _) = common::show_tree(hops[0].worker.config_path(), &root).await;
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(lines.len(), chain.len(), "{tree}");
    assert!(
        lines.iter().all(|line| line.contains(": CANCELED")),
        "{tree}"
    );
    println!(
        "fault-suite: a chain of {} Batons and an a2a-sdk agent, cancelled at stage {stage} of 5 \
         ({} tasks then, {} in the end), b's worker killed during the cancel: every task ended \
         {:.1} s after the cancel; listed per agent {listed:?}, the a2a-sdk agent's tasks {}",
        hops.len(),
        before.len(),
        chain.len(),
        quiet_after.as_secs_f64(),
        peer_tasks.creations,
    );
    assert_eq!(peer_tasks.duplicates, 0, "{peer_tasks:?}");
}

/// Whether an A2A task state (as JSON names it) is one a task ends in.
fn is_ended(state: &str) -> bool {
    [
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
    ]
    .contains(&state)
}

// --- a budget spent down a chain --------------------------------------------------------------

/// What each Baton's model turns cost in these tests: 0.4 and 1.6 per million tokens, so a turn
/// costs 400 nanos a token read and 1,600 a token written.
const PRICED: &str = "\n[model.prices]\n\"fake-model\" = { input = 0.4, output = 1.6 }\n";

/// A root budget of 100,000 tokens down a → b → c: each gets half of what its parent has left,
/// so c gets about a quarter; c's one turn writes about 35,000 tokens, past its share but not
/// past what b has left. c's delegation to d is refused and c ends FAILED "budget spent"; b and a
/// read it and answer. a's and b's workers are killed and restarted while it runs. The cost tree
/// (tokens and money, priced per model) adds up exactly: each row holds the total its task
/// reported, and the root's total is the sum of every task's own turns, before and after
/// `baton replay` of every history.
#[tokio::test]
async fn a_budget_spent_at_the_third_hop_ends_it_there_and_the_cost_tree_adds_up_through_kills() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&[]).await;
    let c_model = FakeModel::responding(|request| {
        if called_a_tool(request) {
            reply("Not reached: the budget is spent.")
        } else {
            Scripted::Reply(ModelResponseSpec {
                text: Some("Thinking it over at length. ".repeat(5_000)),
                tool_calls: vec![(
                    "spawn_subtask".into(),
                    json!({"name": "year", "goal": "Close the year.", "agent": "d"}),
                )],
            })
        }
    })
    .await;
    let mut below = ("d".to_string(), peer.url());
    let mut hops = Vec::new();
    // c runs on the spending model; b and a each delegate one hop down.
    let mut spending = Some(c_model);
    for id in ["c", "b", "a"] {
        let model = match spending.take() {
            Some(c_model) => c_model,
            None => FakeModel::responding(delegating_to(&below.0)).await,
        };
        let hop = Hop::start(&temporal, id, model, &below, PRICED).await;
        below = hop.as_below();
        hops.push(hop);
    }
    hops.reverse();

    let a_rpc = format!("{}/", hops[0].config.base_url.clone().unwrap());
    let sent = a2a_rpc(
        &a_rpc,
        "SendMessage",
        json!({"message": {"messageId": "m-budget", "role": "ROLE_USER",
            "parts": [{"text": "Close the year."}],
            "metadata": {"urn:baton:a2a:ext:budget:v1": {"tokens": 100_000}}},
            "configuration": {"returnImmediately": true}}),
        Some("alice"),
    )
    .await;
    let root = sent["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent}"))
        .to_string();
    poll_until("c's task created", WITHIN, || async {
        (chain_so_far(&temporal, &root, 2).await.len() == 3).then_some(())
    })
    .await;
    for hop in &mut hops[..2] {
        hop.worker.kill().await;
    }
    for hop in &mut hops[..2] {
        hop.worker.restart().await;
    }

    let a = temporal
        .wait_for_task(&root, WITHIN, |v| v.state.is_terminal())
        .await;
    let chain = chain_so_far(&temporal, &root, 2).await;
    let b = temporal.task_view(&chain[1]).await;
    let c = temporal.task_view(&chain[2]).await;
    // b answered and parked awaiting its next message, as a delegated Baton task does (a's row
    // records it COMPLETED); a's end leaves it parked, to complete when it has waited long enough.
    assert_eq!(
        (
            a.state,
            a.sub_tasks[0].state,
            b.state,
            b.sub_state.as_deref(),
            c.state
        ),
        (
            TaskState::Completed,
            TaskState::Completed,
            TaskState::InputRequired,
            Some("awaiting-next-message"),
            TaskState::Failed
        ),
        "{b:#?}\n{c:#?}"
    );
    let why = c.status_message.clone().unwrap_or_default();
    assert!(
        why.starts_with("budget spent: the task and its sub-tasks used ")
            && why.contains(" model tokens its delegator gave it"),
        "{why}"
    );
    assert!(c.sub_tasks.is_empty(), "c's delegation was refused");
    assert_eq!(peer.stats().await["tasks"], json!([]), "d got nothing");

    // Each task's own turns are priced; each row holds the total its task reported; the root's
    // total is every task's own usage added up.
    for view in [&a, &b, &c] {
        let own = view.usage;
        assert_eq!(
            own.cost_nanos,
            own.input_tokens * 400 + own.output_tokens * 1_600,
            "{own:?}"
        );
    }
    let c_total = c.usage;
    let b_total = b.usage.plus(c_total);
    assert_eq!(b.sub_tasks[0].usage, Some(c_total));
    assert_eq!(a.sub_tasks[0].usage, Some(b_total));
    let root_total = a.usage.plus(b_total);
    let listed = a2a_rpc(&a_rpc, "GetTask", json!({"id": root}), Some("alice")).await;
    let reported = &listed["result"]["metadata"]["urn:baton:a2a:ext:budget:v1"]["total"];
    // Metadata is a protobuf Struct: its numbers come as doubles.
    let number = |field: &str| reported[field].as_f64().map(|n| n as u64);
    assert_eq!(
        (
            number("input_tokens"),
            number("output_tokens"),
            number("cost_nanos")
        ),
        (
            Some(root_total.input_tokens),
            Some(root_total.output_tokens),
            Some(root_total.cost_nanos)
        ),
        "{listed}"
    );
    // c read its share in its task section, and its one turn overran it.
    let c_section = common::all_text(&hops[2].model.requests()[0]);
    let share: u64 = c_section
        .split(" model tokens left")
        .next()
        .and_then(|before| before.rsplit(" of ").next())
        .and_then(|n| n.trim().parse().ok())
        .expect("c's budget line");
    assert!(
        share < 25_000 && c.usage.tokens() > share,
        "share {share}, used {:?}",
        c.usage
    );

    // Every history on every agent replays on this build, and the totals read the same after.
    for (hop, task) in hops.iter().zip(&chain) {
        common::replay_all(
            hop.worker.config_path(),
            &hop.config.task_queue,
            &[task.as_str()],
        )
        .await;
    }
    assert_eq!(temporal.task_view(&root).await.usage, a.usage);
    assert_eq!(temporal.task_view(&chain[1]).await.sub_tasks, b.sub_tasks);
    assert_eq!(temporal.task_view(&root).await.sub_tasks, a.sub_tasks);
    println!(
        "fault-suite: a budget of 100000 tokens down a chain of three Batons, a's and b's workers \
         killed: spent at the third hop, tree total {} tokens and cost {} nanos = a {} + b {} + c \
         {} tokens, exact after kills and replays",
        root_total.tokens(),
        root_total.cost_nanos,
        a.usage.tokens(),
        b.usage.tokens(),
        c.usage.tokens(),
    );
}
