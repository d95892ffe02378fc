//! The engine's lifecycle under stress: cancel, a worker killed mid-delegation, history
//! roll-over, a peer that dies mid-stream, a peer that replays history, follows beyond the
//! follow queue's slots, and a graceful stop.

use std::time::Duration;

use crate::common::{WITHIN, baton};
use baton_proto::{TaskEvent, TaskState};
use baton_tests::PythonPeer;
use baton_tests::engine::{Engine, TestTemporal, WorkerConfig, WorkerProcess, a2a_rpc, task_input};
use baton_tests::fake_model::{FakeModel, delegate, reply};
use baton_tests::metrics::{sample, scrape};
use baton_tests::wait::poll_until;
use baton_workflows::TaskWorkflow;
use futures::StreamExt;
use serde_json::json;
use temporalio_client::{
    UntypedWorkflow, WorkflowCancelOptions, WorkflowDescribeOptions, WorkflowExecutionStatus,
    WorkflowListOptions, WorkflowQueryOptions, WorkflowSignalOptions,
};
use temporalio_common::protos::temporal::api::enums::v1::PendingActivityState;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::workflow::v1::PendingActivityInfo;

fn delegate_then(answers: &[&str]) -> Vec<baton_tests::fake_model::Scripted> {
    let mut script = vec![delegate("balance", "Is the ledger balanced?", "ledger")];
    script.extend(answers.iter().map(|a| reply(a)));
    script
}

/// Waits until visibility, which lags behind a workflow's close, lists `expected` for
/// `workflow_id`; panics with what it lists after `WITHIN`.
async fn wait_for_statuses(
    temporal: &TestTemporal,
    workflow_id: &str,
    expected: &[WorkflowExecutionStatus],
) {
    let what = format!("{workflow_id} listed as {expected:?}");
    poll_until(&what, WITHIN, || async {
        (statuses(temporal, workflow_id).await == expected).then_some(())
    })
    .await;
}

async fn statuses(temporal: &TestTemporal, workflow_id: &str) -> Vec<WorkflowExecutionStatus> {
    temporal
        .client
        .list_workflows(
            format!("WorkflowId = '{workflow_id}'"),
            WorkflowListOptions::default(),
        )
        .map(|run| run.unwrap().status())
        .collect()
        .await
}

#[tokio::test]
async fn cancelling_the_parent_cancels_each_open_child_over_a2a() {
    for by_signal in [false, true] {
        let temporal = TestTemporal::start().await;
        let peer = PythonPeer::start(&["--behaviour", "hang"]).await;
        let model = FakeModel::start(delegate_then(&["Waiting on the ledger."])).await;
        let config = WorkerConfig::new(&temporal, &model.base_url())
            .agent("ledger", &peer.url(), "follow_interval = \"1s\"")
            .with_metrics();
        let metrics_url = config.metrics_url().unwrap();
        let _worker = WorkerProcess::start(baton(), &config.render()).await;
        temporal
            .start_task(&config.task_queue, "t-cancel", task_input("n", "g"))
            .await;
        let waiting = temporal
            .wait_for_task("t-cancel", WITHIN, |v| {
                v.turns == 2
                    && v.sub_tasks
                        .first()
                        .is_some_and(|r| r.state == TaskState::Working)
            })
            .await;
        let remote_id = waiting.sub_tasks[0].remote_task_id.clone().unwrap();
        let open = [("agent", "ledger")];
        let streams = "baton_follow_streams_open";
        poll_until("the follow stream to show open", WITHIN, || async {
            (sample(&scrape(&metrics_url).await, streams, &open) == Some(1.0)).then_some(())
        })
        .await;

        let parent = temporal
            .client
            .get_workflow_handle::<TaskWorkflow>("t-cancel");
        if by_signal {
            parent
                .signal(
                    TaskWorkflow::cancel,
                    "no longer needed".to_string(),
                    WorkflowSignalOptions::default(),
                )
                .await
                .unwrap();
        } else {
            parent
                .cancel(
                    WorkflowCancelOptions::builder()
                        .reason("no longer needed".to_string())
                        .build(),
                )
                .await
                .unwrap();
        }
        let view = temporal
            .wait_for_task("t-cancel", WITHIN, |v| v.state.is_terminal())
            .await;
        assert_eq!(view.state, TaskState::Canceled, "{view:#?}");
        assert_eq!(view.sub_tasks[0].state, TaskState::Canceled);
        let stats = peer.stats().await;
        assert_eq!(
            stats["cancels"],
            json!([remote_id]),
            "CancelTask once, on the child"
        );
        assert!(
            stats["tasks"].to_string().contains("TASK_STATE_CANCELED"),
            "{stats}"
        );
        wait_for_statuses(&temporal, "t-cancel", &[WorkflowExecutionStatus::Canceled]).await;
        wait_for_statuses(
            &temporal,
            "t-cancel.1",
            &[WorkflowExecutionStatus::Canceled],
        )
        .await;
        let text = scrape(&metrics_url).await;
        assert_eq!(sample(&text, streams, &open), Some(0.0), "{text}");
        let canceled = [
            ("agent", "ledger"),
            ("outcome", "canceled"),
            ("task_queue", config.task_queue.as_str()),
        ];
        let finished = "baton_delegations_finished_total";
        assert_eq!(sample(&text, finished, &canceled), Some(1.0), "{text}");
    }
}

#[tokio::test]
async fn a_worker_killed_mid_delegation_finishes_the_parent_with_one_remote_task() {
    let peer = PythonPeer::start(&["--behaviour", "work", "--work-seconds", "6"]).await;
    // A model call cut short by the crash runs again: answer by what the model is shown, not
    // by the order of the calls.
    let model = FakeModel::responding(|request| {
        let shown = request["messages"].to_string();
        if shown.contains("is COMPLETED") {
            reply("Balanced.")
        } else if shown.contains("started on") {
            reply("Waiting.")
        } else {
            delegate("balance", "Is the ledger balanced?", "ledger")
        }
    })
    .await;
    // Bound by name, dropped in reverse: the worker before the server.
    let Engine {
        temporal,
        config,
        mut worker,
    } = Engine::with_ledger(
        baton(),
        &model.base_url(),
        &peer.url(),
        "follow_interval = \"1s\"",
    )
    .await;
    temporal
        .start_task(&config.task_queue, "t-crash", task_input("n", "g"))
        .await;
    temporal
        .wait_for_task("t-crash", WITHIN, |v| {
            v.sub_tasks
                .first()
                .is_some_and(|r| r.remote_task_id.is_some())
        })
        .await;

    // `kill` returns once the process is gone.
    worker.kill().await;
    worker.restart().await;

    let view = temporal
        .wait_for_task("t-crash", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.sub_tasks[0].state, TaskState::Completed);
    // Whichever turn it fell in, the model read the result.
    let read = model.requests().iter().any(|r| {
        r["messages"]
            .to_string()
            .contains("is COMPLETED: done: Is the ledger balanced?")
    });
    assert!(read, "the result reached the model");
    assert_eq!(
        peer.stats().await["tasks_created"],
        1,
        "exactly one remote task"
    );
}

#[tokio::test]
async fn the_parent_and_the_stand_in_continue_as_new_and_carry_everything() {
    let peer = PythonPeer::start(&["--behaviour", "work", "--work-seconds", "3"]).await;
    let model = FakeModel::start(delegate_then(&["Waiting.", "Balanced."])).await;
    let engine = Engine::with_ledger(
        baton(),
        &model.base_url(),
        &peer.url(),
        "follow_interval = \"1s\"",
    )
    .await;
    let temporal = &engine.temporal;
    let input = serde_json::from_value(json!({
        "name": "n", "goal": "g", "limits": {"history_event_bound": 12}
    }))
    .unwrap();
    engine.start_task("t-roll", input).await;
    let view = temporal
        .wait_for_task("t-roll", WITHIN, |v| v.state.is_terminal())
        .await;

    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("Balanced."));
    assert_eq!(view.turns, 3);
    assert_eq!(view.sub_tasks[0].state, TaskState::Completed);
    let runs = statuses(temporal, "t-roll").await;
    assert!(runs.len() >= 2, "the parent rolled over: {runs:?}");
    assert!(runs.contains(&WorkflowExecutionStatus::ContinuedAsNew));
    // The run it continued as keeps the first run's workflow task timeout.
    assert_eq!(
        temporal.workflow_task_timeout("t-roll").await,
        baton_proto::temporal::task_workflow::WORKFLOW_TASK_TIMEOUT
    );
    // The event log is carried: sequence numbers keep counting from the first run.
    let page = temporal
        .client
        .get_workflow_handle::<TaskWorkflow>("t-roll")
        .query(
            TaskWorkflow::events_since,
            0,
            WorkflowQueryOptions::default(),
        )
        .await
        .unwrap();
    let seqs: Vec<u64> = page.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..page.next_seq).collect::<Vec<_>>());
    assert!(page.closed);
    let note_turn = model.requests().last().unwrap()["messages"].to_string();
    assert!(
        note_turn.contains("is COMPLETED: done: Is the ledger balanced?"),
        "{note_turn}"
    );
}

#[tokio::test]
async fn a_peer_that_dies_mid_stream_and_forgets_the_task_resolves_the_row() {
    let mut peer = PythonPeer::start(&["--behaviour", "die"]).await;
    let model = FakeModel::start(delegate_then(&["Waiting.", "The ledger lost it."])).await;
    let engine = Engine::with_ledger(
        baton(),
        &model.base_url(),
        &peer.url(),
        "follow_interval = \"1s\"",
    )
    .await;
    let temporal = &engine.temporal;
    engine.start_task("t-die", task_input("n", "g")).await;
    peer.exited().await;
    // Back up with an empty task store: the task it was working on is gone.
    peer.restart().await;
    let view = temporal
        .wait_for_task("t-die", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let row = &view.sub_tasks[0];
    assert_eq!(row.state, TaskState::Failed);
    assert!(
        row.summary
            .as_deref()
            .unwrap()
            .contains("no longer knows task"),
        "{row:?}"
    );
}

#[tokio::test]
async fn a_replayed_working_is_not_read_as_a_change() {
    let peer = PythonPeer::start(&["--behaviour", "park", "--replay-history"]).await;
    let model = FakeModel::start(delegate_then(&[
        "Waiting.",
        "It asks which account.",
        "Done.",
    ]))
    .await;
    let engine = Engine::with_ledger(
        baton(),
        &model.base_url(),
        &peer.url(),
        "updates = \"follow\", follow_interval = \"1s\"",
    )
    .await;
    let temporal = &engine.temporal;
    engine.start_task("t-replay", task_input("n", "g")).await;
    let parked = temporal
        .wait_for_task("t-replay", WITHIN, |v| {
            v.sub_tasks
                .first()
                .is_some_and(|r| r.state == TaskState::InputRequired)
        })
        .await;
    // A subscription after the park replays the history it sent before, WORKING included.
    peer.wait_for("a subscription after the park", |s| {
        s["streams_opened"].as_u64() >= Some(2)
    })
    .await;
    // Then a real change comes live on the same stream, after the replay: the follow reports it
    // as the first change since the park, having read the replayed WORKING as no change.
    let remote_id = parked.sub_tasks[0].remote_task_id.clone().unwrap();
    let canceled = a2a_rpc(
        &format!("{}/rpc", peer.url()),
        "CancelTask",
        json!({"id": remote_id}),
        Some("front-desk"),
    )
    .await;
    assert!(canceled.get("error").is_none(), "{canceled}");
    let done = temporal
        .wait_for_task("t-replay", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(done.state, TaskState::Completed, "{done:#?}");

    let page = temporal
        .client
        .get_workflow_handle::<TaskWorkflow>("t-replay")
        .query(
            TaskWorkflow::events_since,
            0,
            WorkflowQueryOptions::default(),
        )
        .await
        .unwrap();
    let row_states: Vec<TaskState> = page
        .events
        .iter()
        .filter_map(|e| match &e.event {
            TaskEvent::SubTask { row } => Some(row.state),
            _ => None,
        })
        .collect();
    let parked_at = row_states
        .iter()
        .position(|s| *s == TaskState::InputRequired)
        .unwrap();
    assert_eq!(
        row_states[parked_at..]
            .iter()
            .copied()
            .filter(|s| *s != TaskState::InputRequired)
            .collect::<Vec<_>>(),
        [TaskState::Canceled],
        "the row flipped back after the park: {row_states:?}"
    );
}

/// The task queues that `follow_remote_task` was scheduled on in the history of `workflow_id`.
async fn follow_queues(temporal: &TestTemporal, workflow_id: &str) -> Vec<String> {
    temporal
        .history(workflow_id)
        .await
        .into_iter()
        .filter_map(|event| match event.attributes {
            Some(Attributes::ActivityTaskScheduledEventAttributes(scheduled))
                if scheduled
                    .activity_type
                    .as_ref()
                    .is_some_and(|t| t.name == "follow_remote_task") =>
            {
                scheduled.task_queue.map(|queue| queue.name)
            }
            _ => None,
        })
        .collect()
}

/// The states of the follows of `workflow_id` that have not ended (scheduled, or started by a
/// worker).
async fn follow_states(temporal: &TestTemporal, workflow_id: &str) -> Vec<PendingActivityState> {
    temporal
        .client
        .get_workflow_handle::<UntypedWorkflow>(workflow_id)
        .describe(WorkflowDescribeOptions::default())
        .await
        .expect("describing the workflow")
        .raw_description
        .pending_activities
        .iter()
        .filter(|a| {
            a.activity_type
                .as_ref()
                .is_some_and(|t| t.name == "follow_remote_task")
        })
        .map(PendingActivityInfo::state)
        .collect()
}

/// Streams the peer holds open right now.
fn open_streams(stats: &serde_json::Value) -> u64 {
    stats["streams_opened"].as_u64().unwrap() - stats["streams_closed"].as_u64().unwrap()
}

#[tokio::test]
async fn follows_beyond_the_follow_slots_wait_their_turn_and_never_starve_model_turns() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "hang"]).await;
    let model = FakeModel::responding(|request| {
        let shown = request["messages"].to_string();
        if shown.contains("Say hello.") {
            reply("Hello.")
        } else if shown.contains("started on") {
            reply("Waiting on the ledger.")
        } else {
            delegate("balance", "Is the ledger balanced?", "ledger")
        }
    })
    .await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &peer.url(),
        "follow_interval = \"1s\"",
    );
    config.temporal_extra.push("follow_slots = 1".into());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let follow_queue = format!("{}-follow", config.task_queue);

    // The first parent's follow takes the one slot before the second parent starts.
    for parent in ["t-first", "t-second"] {
        temporal
            .start_task(&config.task_queue, parent, task_input("n", "g"))
            .await;
        temporal
            .wait_for_task(parent, WITHIN, |v| {
                v.sub_tasks
                    .first()
                    .is_some_and(|r| r.state == TaskState::Working)
            })
            .await;
        if parent == "t-first" {
            peer.wait_for("the first follow's stream", |s| open_streams(s) == 1)
                .await;
        }
    }
    // Both stand-ins asked for a follow on the follow queue; its one slot holds one stream.
    for stand_in in ["t-first.1", "t-second.1"] {
        let queues = poll_until(&format!("{stand_in} to follow"), WITHIN, || async {
            Some(follow_queues(&temporal, stand_in).await).filter(|q| !q.is_empty())
        })
        .await;
        assert!(queues.iter().all(|q| *q == follow_queue), "{queues:?}");
    }
    let held = peer
        .wait_for("one follow stream held", |s| open_streams(s) == 1)
        .await;

    // Model turns run while every follow slot is taken.
    let plain = temporal
        .run_to_end(
            &config.task_queue,
            "t-plain",
            task_input("n", "Say hello."),
            WITHIN,
        )
        .await;
    assert_eq!(plain.state, TaskState::Completed, "{plain:#?}");
    assert_eq!(plain.last_answer.as_deref(), Some("Hello."));
    // The worker has run a whole task meanwhile, and the second follow still waits for the
    // slot: no worker has taken it, and the peer holds one stream.
    assert_eq!(
        follow_states(&temporal, "t-second.1").await,
        [PendingActivityState::Scheduled]
    );
    let still = peer.stats().await;
    assert_eq!(open_streams(&still), 1, "one slot, one stream: {still}");
    assert_eq!(still["streams_opened"], held["streams_opened"], "{still}");

    // Cancelling the first parent frees the slot, and the waiting follow takes it. The follow
    // learns of its cancel with its next heartbeat to the server, which the SDK sends at most
    // every 12 s (0.8 × the 15 s heartbeat timeout).
    temporal
        .client
        .get_workflow_handle::<TaskWorkflow>("t-first")
        .cancel(WorkflowCancelOptions::default())
        .await
        .unwrap();
    let view = temporal
        .wait_for_task("t-first", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Canceled, "{view:#?}");
    let opened_before = held["streams_opened"].as_u64().unwrap();
    peer.wait_for_within("the second follow's stream", Duration::from_secs(45), |s| {
        s["streams_opened"].as_u64().unwrap() > opened_before && open_streams(s) == 1
    })
    .await;
    let second = temporal.task_view("t-second").await;
    assert_eq!(second.sub_tasks[0].state, TaskState::Working, "{second:#?}");
}

#[tokio::test]
async fn sigterm_stops_the_worker_gracefully() {
    let model = FakeModel::start(vec![]).await;
    let mut engine = Engine::start(baton(), &model.base_url(), |c| c).await;
    assert!(
        engine.worker.terminate(Duration::from_secs(20)).await,
        "exit 0 after SIGTERM"
    );
}

/// A conversation alice opens on the gateway at `gateway` (its JSON-RPC URL), which answers and
/// parks, and `count` streams on it, each past its first event: streams that then hear nothing.
async fn quiet_streams(gateway: &str, count: usize) -> Vec<reqwest::Response> {
    let http = reqwest::Client::new();
    let rpc = |method: &str, params: serde_json::Value| {
        http.post(gateway)
            .header("A2A-Version", "1.0")
            .header("X-Participant-Id", "alice")
            .header("A2A-Extensions", baton_core::extensions::STATUS_EXTENSION)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    };
    let parked: serde_json::Value = rpc(
        "SendMessage",
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Hi"}]}}),
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        parked["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{parked}"
    );
    let task_id = parked["result"]["task"]["id"].as_str().unwrap().to_string();
    let mut streams = Vec::new();
    for _ in 0..count {
        let mut stream = rpc("SubscribeToTask", json!({"id": task_id}))
            .header("Accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        let first = stream.chunk().await.unwrap().unwrap();
        let first = String::from_utf8_lossy(&first).into_owned();
        assert!(first.contains("\"task\""), "{first}");
        streams.push(stream);
    }
    streams
}

#[tokio::test]
async fn sigterm_cuts_a_quiet_stream_and_the_worker_still_stops() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("Hello.")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let gateway = format!("{}/", config.base_url.clone().unwrap());
    let mut worker = WorkerProcess::start(baton(), &config.render()).await;
    let mut stream = quiet_streams(&gateway, 1).await.remove(0);

    assert!(
        worker.terminate(Duration::from_secs(30)).await,
        "exit 0 after SIGTERM, though a stream was open"
    );
    let after = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await;
    assert!(
        matches!(after, Ok(Ok(None)) | Ok(Err(_))),
        "the stream ends with the worker: {after:?}"
    );
}

/// `baton gateway` stopped by SIGTERM with streams open: it ends them at once (their clients
/// subscribe again elsewhere) and is gone long before its `server.drain_timeout` of 30 s, which
/// only requests that do not end on their own would wait out.
#[tokio::test]
async fn sigterm_drains_a_gateway_with_open_streams_well_within_its_bound() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("Hello.")]).await;
    let config = WorkerConfig {
        server_extra: vec!["drain_timeout = \"30s\"".into()],
        ..WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver()
    };
    let gateway_url = format!("{}/", config.base_url.clone().unwrap());
    let mut gateway = baton_tests::engine::GatewayProcess::start(baton(), &config.render()).await;
    let mut worker_config = config;
    worker_config.base_url = None;
    let _worker = WorkerProcess::start(baton(), &worker_config.render()).await;
    let streams = quiet_streams(&gateway_url, 3).await;

    assert!(
        gateway.terminate(Duration::from_secs(15)).await,
        "exit 0 after SIGTERM, within half its drain timeout, though three streams were open"
    );
    for mut stream in streams {
        let after = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await;
        assert!(
            matches!(after, Ok(Ok(None)) | Ok(Err(_))),
            "the stream ended: {after:?}"
        );
    }
}

/// Makes `build` of deployment `desk` the current version, as an operator does with the CLI
/// once the build's workers poll (until then Temporal does not know the version).
async fn make_current(temporal: &TestTemporal, build: &str) {
    let address = temporal.address().to_string();
    poll_until("the version to become current", WITHIN, || {
        let address = address.clone();
        async move {
            let made = tokio::process::Command::new(baton_tests::venv_program("temporal"))
                .args(["worker", "deployment", "set-current-version"])
                .args(["--deployment-name", "desk", "--build-id", build, "--yes"])
                .args(["--address", &address, "--namespace", "default"])
                .output()
                .await
                .unwrap();
            made.status.success().then_some(())
        }
    })
    .await;
}

/// Worker Deployment Versioning (`temporal.deployment`): with an old and a new build polling
/// one task queue, a task the old build started stays on it (its next turn is the old build's
/// model's) while tasks started after the new build became current run on the new one.
#[tokio::test]
async fn two_builds_on_one_task_queue_keep_every_task_on_its_version() {
    let temporal = TestTemporal::start().await;
    let old_model = FakeModel::responding(|_| reply("from the old build")).await;
    let new_model = FakeModel::responding(|_| reply("from the new build")).await;
    let task_queue = WorkerConfig::new(&temporal, "http://unused").task_queue;
    let versioned = |model: &FakeModel, build: &str| {
        let mut config = WorkerConfig::new(&temporal, &model.base_url());
        config.task_queue = task_queue.clone();
        config.temporal_extra = vec![
            "deployment = \"desk\"".into(),
            format!("build_id = \"{build}\""),
        ];
        config
    };
    let conversation = |name: &str| -> baton_proto::TaskInput {
        serde_json::from_value(json!({
            "name": name, "goal": "Chat.", "lifecycle": "conversation",
            "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
        }))
        .unwrap()
    };
    let parked = |turns: u32| {
        move |v: &baton_proto::TaskView| v.turns == turns && v.state == TaskState::InputRequired
    };

    let _old = WorkerProcess::start(baton(), &versioned(&old_model, "v1").render()).await;
    make_current(&temporal, "v1").await;
    temporal
        .start_task(&task_queue, "t-old", conversation("old"))
        .await;
    let view = temporal.wait_for_task("t-old", WITHIN, parked(1)).await;
    assert_eq!(view.last_answer.as_deref(), Some("from the old build"));

    let _new = WorkerProcess::start(baton(), &versioned(&new_model, "v2").render()).await;
    make_current(&temporal, "v2").await;
    temporal
        .start_task(&task_queue, "t-new", conversation("new"))
        .await;
    let view = temporal.wait_for_task("t-new", WITHIN, parked(1)).await;
    assert_eq!(view.last_answer.as_deref(), Some("from the new build"));

    // The old task's next turn, after the new build became current, is still the old build's.
    let message = baton_proto::InboxMessage {
        message_id: "m-2".into(),
        participant_id: "alice".into(),
        text: "Anything else?".into(),
        push_config: None,
        stand_in_id: None,
        attachments: Vec::new(),
    };
    temporal.send_inbox("t-old", message).await.unwrap();
    let view = temporal.wait_for_task("t-old", WITHIN, parked(2)).await;
    assert_eq!(view.last_answer.as_deref(), Some("from the old build"));
    assert_eq!(
        old_model.requests().len(),
        2,
        "both of the old task's turns"
    );
    assert_eq!(new_model.requests().len(), 1, "only the new task's turn");
}
