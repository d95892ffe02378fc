//! The durable delegation engine end to end: a real Temporal dev server, `baton worker` as a
//! real process, a real Python a2a-sdk agent, and our fake OpenAI-compatible model server.

use std::time::Duration;

use crate::common::{WITHIN, all_text, baton, consulted_agent};
use baton_proto::{InboxMessage, TaskState};
use baton_tests::PythonPeer;
use baton_tests::engine::{
    A2aProxy, TestTemporal, WorkerConfig, WorkerProcess, a2a_rpc, task_input,
};
use baton_tests::fake_model::{FakeModel, call, delegate, delegate_each, reply};
use baton_tests::metrics::{sample, scrape};
use baton_tests::wait::poll_until;
use serde_json::{Value, json};
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;

fn system_message(request: &Value) -> &str {
    request["messages"][0]["content"].as_str().unwrap()
}

/// The Web UI summaries of the activities `workflow_id` scheduled, in order.
async fn activity_summaries(temporal: &TestTemporal, workflow_id: &str) -> Vec<String> {
    temporal
        .history(workflow_id)
        .await
        .into_iter()
        .filter(|event| {
            matches!(
                event.attributes,
                Some(Attributes::ActivityTaskScheduledEventAttributes(_))
            )
        })
        .filter_map(|event| event.user_metadata?.summary)
        .map(|payload| serde_json::from_slice::<String>(&payload.data).unwrap())
        .collect()
}

#[tokio::test]
async fn an_agent_that_finishes_at_once_resolves_its_row_from_the_create_with_no_stand_in() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--name", "Ledger", "--behaviour", "complete"]).await;
    let model = FakeModel::start(vec![
        delegate("balance", "Is the ledger balanced?", "ledger"),
        reply("The ledger says it is balanced."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent("ledger", &peer.url(), "");
    let _worker = WorkerProcess::start(baton(), &config.render()).await;

    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-fast",
            task_input("books", "Check."),
            WITHIN,
        )
        .await;

    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let row = &view.sub_tasks[0];
    assert_eq!((row.state, row.resolved), (TaskState::Completed, true));
    let remote_id = row.remote_task_id.clone().unwrap();
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        2,
        "the result is there for the turn after the spawn"
    );
    let note = format!(
        "Sub-task balance (id t-fast.1, task {remote_id} on ledger) is COMPLETED: echo: Is the ledger balanced?"
    );
    assert!(
        all_text(&requests[1]).contains(&note),
        "{}",
        all_text(&requests[1])
    );
    let started_children = temporal
        .history("t-fast")
        .await
        .into_iter()
        .filter(|event| {
            matches!(
                event.attributes,
                Some(Attributes::StartChildWorkflowExecutionInitiatedEventAttributes(_))
            )
        })
        .count();
    assert_eq!(
        started_children, 0,
        "a task that ended in its create needs no stand-in"
    );
    let stats = peer
        .wait_for("every stream closed", |s| {
            s["streams_opened"] == s["streams_closed"]
        })
        .await;
    assert_eq!(stats["tasks_created"], 1);
}

#[tokio::test]
async fn a_delegation_runs_to_completion_and_the_parent_reads_the_result() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&[
        "--name",
        "Ledger",
        "--behaviour",
        "work",
        "--work-seconds",
        "1",
    ])
    .await;
    let model = FakeModel::start(vec![
        call(
            "spawn_subtask",
            json!({"name": "balance", "goal": "Is the ledger balanced?", "acceptance_criteria": ["say yes or no"], "agent": "ledger"}),
        ),
        reply("Waiting on the ledger."),
        reply("All done: the ledger is balanced."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent("ledger", &peer.url(), "");
    let _worker = WorkerProcess::start(baton(), &config.render()).await;

    temporal
        .start_task(
            &config.task_queue,
            "t-happy",
            task_input("books", "Check the books."),
        )
        .await;
    let view = temporal
        .wait_for_task("t-happy", Duration::from_secs(60), |v| {
            v.state.is_terminal()
        })
        .await;

    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(
        view.last_answer.as_deref(),
        Some("All done: the ledger is balanced.")
    );
    assert_eq!(view.sub_tasks.len(), 1);
    let row = &view.sub_tasks[0];
    assert_eq!(row.stand_in_id, "t-happy.1");
    assert_eq!(row.agent, "ledger");
    assert_eq!(row.state, TaskState::Completed);
    assert!(row.resolved);
    let remote_id = row.remote_task_id.clone().unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 3, "three model turns");
    // The static prefix is byte-identical on every turn and carries the roster, never a URL.
    let prefix = system_message(&requests[0]);
    assert!(requests.iter().all(|r| system_message(r) == prefix));
    assert!(
        prefix.contains("<agents>") && prefix.contains("- id: ledger"),
        "{prefix}"
    );
    assert!(
        !prefix.contains(&peer.url()),
        "the roster never shows a URL"
    );
    // The result reached the model as an untrusted agent note on the last turn only.
    let note = format!(
        "Sub-task balance (id t-happy.1, task {remote_id} on ledger) is COMPLETED: done: Is the ledger balanced?"
    );
    assert!(
        all_text(&requests[2]).contains(&note),
        "{}",
        all_text(&requests[2])
    );
    assert!(all_text(&requests[2]).contains("untrusted source=\\\"agent\\\""));
    assert!(!all_text(&requests[1]).contains("is COMPLETED"));
    // WORKING (with its "working on it") is never news for the model.
    assert!(requests.iter().all(|r| !all_text(r).contains("is WORKING")));

    let stats = peer
        .wait_for("every stream closed", |s| {
            s["streams_opened"] == s["streams_closed"]
        })
        .await;
    assert_eq!(stats["tasks_created"], 1);
    // A reader of the Web UI follows the delegation by the activities' summaries.
    temporal.wait_closed("t-happy", WITHIN).await;
    assert_eq!(
        activity_summaries(&temporal, "t-happy").await,
        [
            "model turn 1",
            "create sub-task balance on ledger",
            "model turn 2",
            "model turn 3",
            "sweep the context of t-happy.1 on ledger"
        ]
    );
    // The create said the agent is followed: the stand-in registers nothing and follows.
    let stand_in = activity_summaries(&temporal, "t-happy.1").await;
    assert!(
        !stand_in.is_empty()
            && stand_in
                .iter()
                .all(|s| *s == format!("follow task {remote_id} on ledger")),
        "{stand_in:?}"
    );
    let participants = stats["participants"].as_array().unwrap();
    assert!(
        !participants.is_empty() && participants.iter().all(|p| p == "front-desk"),
        "{stats}"
    );
}

#[tokio::test]
async fn each_delegation_is_counted_once_though_its_workflows_keep_replaying() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "work", "--work-seconds", "1"]).await;
    let model = FakeModel::start(vec![
        delegate("balance", "g", "ledger"),
        reply("Waiting on the ledger."),
        reply("Done."),
    ])
    .await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url())
        .agent("ledger", &peer.url(), "")
        .with_metrics();
    // A cache of one for two workflows (the parent and its stand-in): each evicts the other, so
    // most workflow tasks replay the workflow's whole history first.
    config.temporal_extra.push("workflow_cache = 1".into());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    temporal
        .start_task(&config.task_queue, "t-replay", task_input("n", "g"))
        .await;
    let view = temporal
        .wait_for_task("t-replay", Duration::from_secs(60), |v| {
            v.state.is_terminal()
        })
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");

    let text = scrape(&config.metrics_url().unwrap()).await;
    let queue = config.task_queue.as_str();
    let replays = text
        .lines()
        .filter(|line| {
            line.starts_with("temporal_workflow_task_replay_latency_seconds_count{")
                && line.contains(&format!("task_queue=\"{queue}\""))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>();
    assert!(replays >= 3.0, "the workflows replayed: {text}");
    let labels = [("agent", "ledger"), ("task_queue", queue)];
    let started = "baton_delegations_started_total";
    assert_eq!(sample(&text, started, &labels), Some(1.0), "{text}");
    let completed = [labels[0], labels[1], ("outcome", "completed")];
    let finished = "baton_delegations_finished_total";
    assert_eq!(sample(&text, finished, &completed), Some(1.0), "{text}");
}

#[tokio::test]
async fn a_delegation_to_an_agent_that_speaks_only_grpc_runs_over_grpc() {
    let temporal = TestTemporal::start().await;
    let grpc_port = baton_tests::free_port().to_string();
    let peer = PythonPeer::start(&[
        "--behaviour",
        "work",
        "--work-seconds",
        "1",
        "--grpc-port",
        &grpc_port,
    ])
    .await;
    let model = FakeModel::start(vec![
        delegate("balance", "Is the ledger balanced?", "ledger"),
        reply("Waiting on the ledger."),
        reply("All done."),
    ])
    .await;
    // The peer's gRPC port is another origin than its card's.
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &peer.url(),
        "allow_other_origin = true",
    );
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-grpc",
            task_input("books", "Check."),
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.sub_tasks[0].state, TaskState::Completed);
    let note = "is COMPLETED: done: Is the ledger balanced?";
    assert!(all_text(&model.requests()[2]).contains(note));

    // Its card offers gRPC alone, so every call after the card went over gRPC.
    let stats = peer.stats().await;
    assert_eq!(stats["tasks_created"], 1, "{stats}");
    let calls = stats["grpc_calls"].as_object().unwrap();
    assert!(
        calls.contains_key("SendStreamingMessage") || calls.contains_key("SendMessage"),
        "{stats}"
    );
    assert!(
        calls.contains_key("SubscribeToTask") || calls.contains_key("GetTask"),
        "{stats}"
    );
}

#[tokio::test]
async fn a_delegation_past_its_deadline_is_cancelled_on_the_agent_and_fails_with_the_reason() {
    let temporal = TestTemporal::start().await;
    // Both peers work until they are cancelled: one watched by push, one followed.
    let pushing = PythonPeer::start(&["--behaviour", "hang", "--push"]).await;
    let streaming = PythonPeer::start(&["--behaviour", "hang"]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.matches("deadline exceeded").count() >= 2 {
            reply("Both ran out of time.")
        } else if text.contains("started on") {
            reply("Waiting.")
        } else {
            delegate_each(&[
                json!({"name": "by-push", "goal": "g", "agent": "pushing"}),
                json!({"name": "followed", "goal": "g", "agent": "streaming", "deadline_secs": 2}),
            ])
        }
    })
    .await;
    // The agent's deadline bounds the first; the call asks the second for less than its 24 h.
    let config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .agent("pushing", &pushing.url(), "deadline = \"3s\"")
        .agent("streaming", &streaming.url(), "");
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-late",
            task_input("late", "Do both."),
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("Both ran out of time."));
    for (row, after) in view.sub_tasks.iter().zip(["3s", "2s"]) {
        assert_eq!(row.state, TaskState::Failed, "{row:?}");
        assert_eq!(
            row.summary.as_deref(),
            Some(
                format!(
                    "deadline exceeded: it was still running after {after}, so Baton cancelled it on the agent"
                )
                .as_str()
            ),
            "{row:?}"
        );
    }
    for peer in [&pushing, &streaming] {
        let stats = peer
            .wait_for("the task cancelled", |s| {
                s["cancels"].as_array().is_some_and(|c| c.len() == 1)
            })
            .await;
        assert_eq!(stats["tasks"][0]["state"], "TASK_STATE_CANCELED", "{stats}");
    }
    // The Web UI says why each remote task was cancelled.
    for stand_in in ["t-late.1", "t-late.2"] {
        let summaries = activity_summaries(&temporal, stand_in).await;
        assert!(
            summaries.iter().any(|s| s.ends_with("past its deadline")),
            "{stand_in}: {summaries:?}"
        );
    }
}

#[tokio::test]
async fn the_parents_model_answers_a_sub_tasks_question_on_the_same_remote_task() {
    let temporal = TestTemporal::start().await;
    // One agent watched by push, one followed: the answer stops either watch.
    let pushing = PythonPeer::start(&["--behaviour", "park", "--push"]).await;
    let streaming = PythonPeer::start(&["--behaviour", "park"]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        let asked: Vec<&str> = ["t-ask.1", "t-ask.2"]
            .into_iter()
            .filter(|id| {
                text.contains(&format!("(id {id}, task "))
                    && text.contains("is INPUT_REQUIRED: which account?")
            })
            .collect();
        let answered = |id: &str| text.contains(&format!("answer sent to sub-task {id}"));
        if text
            .matches("is COMPLETED: answered: the savings account")
            .count()
            >= 2
        {
            reply("Both answered and done.")
        } else if !text.contains("started on") {
            delegate_each(&[
                json!({"name": "by-push", "goal": "g", "agent": "pushing"}),
                json!({"name": "followed", "goal": "g", "agent": "streaming"}),
            ])
        } else if let Some(id) = asked.into_iter().find(|id| !answered(id)) {
            call(
                "reply_to_subtask",
                json!({"sub_task": id, "text": "the savings account"}),
            )
        } else {
            reply("Waiting.")
        }
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .agent("pushing", &pushing.url(), "")
        .agent("streaming", &streaming.url(), "updates = \"follow\"");
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-ask",
            task_input("ask", "Do both."),
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("Both answered and done."));
    for row in &view.sub_tasks {
        assert_eq!(row.state, TaskState::Completed, "{row:?}");
        assert_eq!(
            row.summary.as_deref(),
            Some("answered: the savings account")
        );
    }

    // Each agent got the answer once, on the task that asked, after the brief.
    for (peer, row) in [&pushing, &streaming].into_iter().zip(&view.sub_tasks) {
        let stats = peer.stats().await;
        let remote_id = row.remote_task_id.clone().unwrap();
        let messages: Vec<&Value> = stats["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["task_id"] == remote_id.as_str())
            .collect();
        assert_eq!(messages.len(), 2, "the brief, then the answer: {stats}");
        assert_eq!(messages[1]["text"], "the savings account", "{stats}");
        assert_eq!(stats["tasks_created"], 1, "{stats}");
    }
    // The model was told the answer went, and the Web UI shows the stand-in sending it.
    let all: String = model.requests().iter().map(all_text).collect();
    assert!(
        all.contains("answer sent to sub-task t-ask.1 (by-push on pushing); it is WORKING again"),
        "{all}"
    );
    for (stand_in, row) in ["t-ask.1", "t-ask.2"].into_iter().zip(&view.sub_tasks) {
        let summaries = activity_summaries(&temporal, stand_in).await;
        let sending = format!(
            "answer the question of task {} on {}",
            row.remote_task_id.as_deref().unwrap(),
            row.agent
        );
        assert!(summaries.contains(&sending), "{stand_in}: {summaries:?}");
    }
}

/// A participant's message to the parent task, as the gateway sends it.
fn answer_for(stand_in_id: &str, message_id: &str, text: &str) -> InboxMessage {
    InboxMessage {
        message_id: message_id.into(),
        participant_id: "alice".into(),
        text: text.into(),
        push_config: None,
        stand_in_id: Some(stand_in_id.into()),
        attachments: Vec::new(),
    }
}

#[tokio::test]
async fn an_authorisation_request_is_relayed_to_the_participants_who_answer_through_the_parent() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "auth"]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("is COMPLETED: authorised:") {
            reply("Signed in and done.")
        } else if !text.contains("started on") {
            delegate("balance", "g", "ledger")
        } else if text.contains("is AUTH_REQUIRED: please sign in")
            && !text.contains("subtask.needs_authorisation")
        {
            // The model tries to answer; only a participant may.
            call(
                "reply_to_subtask",
                json!({"sub_task": "t-auth.1", "text": "password123"}),
            )
        } else {
            reply("The ledger wants a sign-in; waiting for it.")
        }
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent(
        "ledger",
        &peer.url(),
        "updates = \"follow\"",
    );
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let input = serde_json::from_value(json!({
        "name": "books", "goal": "Check the books.",
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
    }))
    .unwrap();
    temporal
        .start_task(&config.task_queue, "t-auth", input)
        .await;

    // The participants see the task wait for them, with what the agent asked.
    let waiting = temporal
        .wait_for_task("t-auth", WITHIN, |v| v.state == TaskState::AuthRequired)
        .await;
    assert_eq!(
        waiting.sub_state.as_deref(),
        Some("awaiting-sub-task-authorisation")
    );
    let said = waiting.status_message.clone().unwrap_or_default();
    assert!(
        said.starts_with(
            "sub-task t-auth.1 (balance on ledger) needs authorisation: please sign in."
        ),
        "{said}"
    );
    assert_eq!(waiting.sub_tasks[0].state, TaskState::AuthRequired);
    let all: String = model.requests().iter().map(all_text).collect();
    assert!(all.contains("subtask.needs_authorisation"), "{all}");
    assert_eq!(
        peer.stats().await["messages"].as_array().unwrap().len(),
        1,
        "the model's attempt never reached the agent"
    );

    // An answer for a sub-task that does not exist, or is not waiting, is refused whole.
    let refused = temporal
        .send_inbox("t-auth", answer_for("t-auth.9", "m-wrong", "x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("no sub-task has the id"), "{refused}");

    // Alice answers through the parent; the answer goes to the agent, never to the model.
    temporal
        .send_inbox(
            "t-auth",
            answer_for("t-auth.1", "m-sign-in", "signed in: token-123"),
        )
        .await
        .unwrap();
    let view = temporal
        .wait_for_task("t-auth", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("Signed in and done."));
    assert_eq!(
        view.sub_tasks[0].summary.as_deref(),
        Some("authorised: signed in: token-123")
    );
    let all: String = model.requests().iter().map(all_text).collect();
    assert!(
        all.contains("Participant alice answered sub-task t-auth.1 (balance on ledger) directly"),
        "{all}"
    );
    // Only the agent's own answer, which echoes it, brings the answer to the model.
    for request in model.requests() {
        let text = all_text(&request);
        assert!(
            text.contains("is COMPLETED") || !text.contains("token-123"),
            "the answer stays out of the model's context: {text}"
        );
    }
}

#[tokio::test]
async fn the_deadline_goes_to_an_agent_that_advertises_the_deadline_extension_and_to_no_other() {
    let temporal = TestTemporal::start().await;
    let knowing = PythonPeer::start(&[
        "--behaviour",
        "complete",
        "--extension",
        baton_core::extensions::DEADLINE_EXTENSION,
    ])
    .await;
    let plain = PythonPeer::start(&["--behaviour", "complete"]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.matches("is COMPLETED").count() >= 2 {
            reply("Both done.")
        } else if text.contains("started on") {
            reply("Waiting.")
        } else {
            delegate_each(&[
                json!({"name": "a", "goal": "g", "agent": "knowing", "deadline_secs": 600}),
                json!({"name": "b", "goal": "g", "agent": "plain", "deadline_secs": 600}),
            ])
        }
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url())
        .agent("knowing", &knowing.url(), "")
        .agent("plain", &plain.url(), "");
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-time",
            task_input("time", "Do both."),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");

    // The a2a-sdk keeps metadata as a protobuf Struct, whose numbers are all doubles.
    let brief = |stats: &Value| stats["messages"][0]["metadata"].clone();
    assert_eq!(
        brief(&knowing.stats().await),
        json!({baton_core::extensions::DEADLINE_EXTENSION: {"seconds": 600.0}})
    );
    assert_eq!(brief(&plain.stats().await), json!({}));
}

#[tokio::test]
async fn a_participant_answers_a_sub_task_over_a2a_through_the_parent_task() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "park"]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("is COMPLETED: answered: the savings account") {
            reply("Done with the savings account.")
        } else if text.contains("started on") {
            reply("The ledger asks which account; waiting.")
        } else {
            delegate("balance", "g", "ledger")
        }
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .agent("ledger", &peer.url(), "updates = \"follow\"");
    let rpc = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let message = |id: &str, text: &str, extra: Value| {
        let mut message = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]});
        message
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"message": message, "configuration": {"returnImmediately": true}})
    };
    let sent = a2a_rpc(
        &rpc,
        "SendMessage",
        message("m-1", "Check the books.", json!({})),
        Some("alice"),
    )
    .await;
    let task_id = sent["result"]["task"]["id"].as_str().unwrap().to_string();
    let asking = temporal
        .wait_for_task(&task_id, WITHIN, |v| {
            v.sub_tasks
                .first()
                .is_some_and(|r| r.state == TaskState::InputRequired)
                && v.turns >= 2
        })
        .await;
    let sub_task = asking.sub_tasks[0].stand_in_id.clone();

    // A sub-task that does not exist is refused as bad params, and nothing changes.
    let refused = a2a_rpc(
        &rpc,
        "SendMessage",
        message(
            "m-2",
            "the savings account",
            json!({"taskId": task_id, "metadata": {"baton.subTaskId": "no-such"}}),
        ),
        Some("alice"),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no sub-task has the id"),
        "{refused}"
    );

    let answered = a2a_rpc(
        &rpc,
        "SendMessage",
        message(
            "m-3",
            "the savings account",
            json!({"taskId": task_id, "metadata": {"baton.subTaskId": sub_task}}),
        ),
        Some("alice"),
    )
    .await;
    assert!(answered.get("error").is_none(), "{answered}");
    let view = temporal
        .wait_for_task(&task_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(
        view.last_answer.as_deref(),
        Some("Done with the savings account.")
    );
    let stats = peer.stats().await;
    let texts: Vec<&str> = stats["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(texts.last(), Some(&"the savings account"), "{stats}");
}

/// Every place an agent puts its answer reaches the parent's model, however the delegation
/// hears of the end: in the create, from a followed stream, or from a push and a read.
#[tokio::test]
async fn an_answer_in_an_artifact_or_only_in_the_history_reaches_the_parents_model() {
    let temporal = TestTemporal::start().await;
    // (agent id, peer flags, the words the model must read)
    let shapes: [(&str, &[&str], &str); 6] = [
        (
            "artifact-at-once",
            &["--behaviour", "artifact"],
            "artifact: ask artifact-at-once",
        ),
        (
            "artifact-followed",
            &["--behaviour", "artifact", "--settle-seconds", "1"],
            "artifact: ask artifact-followed",
        ),
        (
            "artifact-pushed",
            &["--behaviour", "artifact", "--settle-seconds", "1", "--push"],
            "artifact: ask artifact-pushed",
        ),
        (
            "history-at-once",
            &["--behaviour", "history"],
            "history: ask history-at-once",
        ),
        (
            "history-followed",
            &["--behaviour", "history", "--settle-seconds", "1"],
            "history: ask history-followed",
        ),
        (
            "history-pushed",
            &["--behaviour", "history", "--settle-seconds", "1", "--push"],
            "history: ask history-pushed",
        ),
    ];
    let mut peers = Vec::new();
    for (_, flags, _) in &shapes {
        peers.push(PythonPeer::start(flags).await);
    }
    // The first turn delegates to the agent its goal names; the next answers.
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("Sub-task ") {
            return reply("Read it.");
        }
        let agent = consulted_agent(&text);
        call(
            "spawn_subtask",
            json!({"name": "q", "goal": format!("ask {agent}"), "agent": agent}),
        )
    })
    .await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    for ((id, _, _), peer) in shapes.iter().zip(&peers) {
        config = config.agent(id, &peer.url(), "");
    }
    let _worker = WorkerProcess::start(baton(), &config.render()).await;

    for (id, _, _) in &shapes {
        temporal
            .start_task(
                &config.task_queue,
                &format!("t-{id}"),
                task_input("q", &format!("consult@{id}")),
            )
            .await;
    }
    for (id, _, words) in &shapes {
        let view = temporal
            .wait_for_task(&format!("t-{id}"), WITHIN, |v| v.state.is_terminal())
            .await;
        assert_eq!(view.state, TaskState::Completed, "{id}: {view:#?}");
        let read = model
            .requests()
            .iter()
            .map(all_text)
            .find(|text| text.contains(&format!("consult@{id}")) && text.contains("Sub-task "))
            .unwrap_or_else(|| panic!("{id}: no turn read the sub-task"));
        assert!(read.contains(words), "{id}: {words:?} not in {read}");
        if id.starts_with("artifact") {
            assert!(
                read.contains(r#"{\"rows\":3"#),
                "{id}: the data part, as JSON: {read}"
            );
        }
    }
}

fn answer(text: &str) -> InboxMessage {
    InboxMessage {
        message_id: format!("m-{text}"),
        participant_id: "alice".into(),
        text: text.into(),
        push_config: None,
        stand_in_id: None,
        attachments: Vec::new(),
    }
}

fn asking_alice(goal: &str) -> baton_proto::TaskInput {
    serde_json::from_value(json!({
        "name": "order", "goal": goal,
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
    }))
    .unwrap()
}

#[tokio::test]
async fn a_task_keeps_the_roster_it_started_with_and_an_agent_that_joins_is_offered_to_new_tasks() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--name", "Ledger", "--behaviour", "complete"]).await;
    let proxy = A2aProxy::start(&peer.url()).await;
    proxy.set_down(true);
    let model = FakeModel::start(vec![
        call("ask_participant", json!({"question": "Which order?"})),
        reply("The second task is done."),
        reply("The first task is done."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).agent("ledger", &proxy.url(), "");
    let worker = WorkerProcess::start(baton(), &config.render()).await;

    temporal
        .start_task(&config.task_queue, "t-first", asking_alice("When?"))
        .await;
    temporal
        .wait_for_task("t-first", WITHIN, |v| v.state == TaskState::InputRequired)
        .await;
    proxy.set_down(false);
    poll_until("the ledger to join the roster", WITHIN, || {
        let joined = !worker.logged(&["ledger", "joins the roster"]).is_empty();
        async move { joined.then_some(()) }
    })
    .await;

    temporal
        .start_task(
            &config.task_queue,
            "t-second",
            task_input("books", "Check."),
        )
        .await;
    temporal
        .wait_for_task("t-second", WITHIN, |v| v.state.is_terminal())
        .await;
    temporal
        .send_inbox("t-first", answer("1042"))
        .await
        .unwrap();
    let first = temporal
        .wait_for_task("t-first", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(first.state, TaskState::Completed, "{first:#?}");

    let requests = model.requests();
    let [first_turn, second_task, first_again] = &requests[..] else {
        panic!("three turns expected: {requests:#?}")
    };
    assert!(!system_message(first_turn).contains("- id: ledger"));
    assert!(system_message(second_task).contains("- id: ledger"));
    assert_eq!(
        system_message(first_again),
        system_message(first_turn),
        "the first task's prefix is byte-identical after the ledger joined"
    );
    assert_eq!(first_again["tools"], first_turn["tools"]);
}

#[tokio::test]
async fn without_a_gateway_self_is_not_offered_and_a_null_spawn_is_refused_at_once() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![
        call(
            "spawn_subtask",
            json!({"name": "sum", "goal": "Add 2 and 2.", "agent": null}),
        ),
        reply("4"),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    assert!(config.base_url.is_none());
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    assert_eq!(
        worker
            .logged(&[
                "WARN",
                "`self` is not offered to the model",
                "server.base_url"
            ])
            .len(),
        1,
        "the reason is given at start"
    );
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-alone",
            task_input("sum", "Add 2 and 2."),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert!(view.sub_tasks.is_empty(), "no sub-task was created");
    let requests = model.requests();
    assert!(system_message(&requests[0]).contains("(no agents)"));
    let refusal = all_text(&requests[1]);
    assert!(
        refusal.contains("agent.unknown") && refusal.contains("do the step yourself"),
        "{refusal}"
    );
}
