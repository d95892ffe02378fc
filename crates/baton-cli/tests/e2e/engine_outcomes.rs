//! How each outcome of a delegation reaches the parent: refused calls, failed creations, failed
//! and parked children, long answers, model errors and the turn limit. Real Temporal, a real
//! `baton worker`, real a2a-sdk agents, and the fake model.

use crate::common::{WITHIN, baton, with_python_ledger};
use baton_proto::TaskState;
use baton_tests::PythonPeer;
use baton_tests::engine::{
    A2aProxy, Engine, TestTemporal, WorkerConfig, WorkerProcess, quiet, task_input,
};
use baton_tests::fake_model::{FakeModel, Scripted, call, delegate, reply};
use baton_tests::metrics::{sample, scrape};
use baton_tests::wait::poll_until;
use serde_json::{Value, json};
use temporalio_common::protos::temporal::api::enums::v1::EventType;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;

fn text(request: &Value) -> String {
    request["messages"].to_string()
}

#[tokio::test]
async fn an_unknown_agent_is_refused_at_the_call_and_nothing_is_created() {
    let (peer, model, engine) = with_python_ledger(
        &["--name", "Ledger"],
        vec![
            delegate("x", "g", "https://evil.example"),
            delegate("y", "g", ""),
            reply("I will do it myself."),
        ],
        "",
    )
    .await;
    let view = engine
        .run_to_end("t-unknown", task_input("n", "g"), WITHIN)
        .await;

    assert_eq!(view.state, TaskState::Completed);
    assert!(
        view.sub_tasks.is_empty(),
        "no row for a refused call: {view:#?}"
    );
    let requests = model.requests();
    let second = text(&requests[1]);
    assert!(second.contains("agent.unknown"), "{second}");
    assert!(
        second.contains("no agent 'https://evil.example'; available: ledger"),
        "{second}"
    );
    let third = text(&requests[2]);
    assert!(third.contains("no agent ''; available: ledger"), "{third}");
    assert_eq!(
        peer.stats().await["tasks_created"],
        0,
        "no URL was contacted"
    );
}

#[tokio::test]
async fn a_creation_that_fails_is_resolved_at_once_and_never_left_stuck() {
    let mut peer = PythonPeer::start(&["--name", "Ledger"]).await;
    let model = FakeModel::start(vec![
        delegate("balance", "g", "ledger"),
        reply("The ledger is down."),
    ])
    .await;
    let engine = Engine::start(baton(), &model.base_url(), |c| {
        c.agent("ledger", &peer.url(), "create_timeout = \"2s\"")
            .with_metrics()
    })
    .await;
    let config = &engine.config;
    peer.kill(); // registered at startup, gone when the delegation comes: retried for 2 s
    let view = engine
        .run_to_end("t-nocreate", task_input("n", "g"), WITHIN)
        .await;

    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let row = &view.sub_tasks[0];
    assert_eq!((row.state, row.resolved), (TaskState::Failed, true));
    assert!(row.remote_task_id.is_none());
    let second = text(&model.requests()[1]);
    assert!(
        second.contains("Sub-task balance on ledger could not be created"),
        "{second}"
    );
    assert!(second.contains("agents[].create_timeout is 2s"), "{second}");
    assert!(
        !second.contains(&peer.url()) && !second.contains("127.0.0.1"),
        "the agent's URL never reaches the model: {second}"
    );
    assert!(second.contains("(address withheld)"), "{second}");
    let text = scrape(&config.metrics_url().unwrap()).await;
    let labels = [
        ("agent", "ledger"),
        ("task_queue", config.task_queue.as_str()),
    ];
    let started = "baton_delegations_started_total";
    assert_eq!(sample(&text, started, &labels), Some(1.0), "{text}");
    let failed = [labels[0], labels[1], ("outcome", "failed")];
    let finished = "baton_delegations_finished_total";
    assert_eq!(sample(&text, finished, &failed), Some(1.0), "{text}");
}

#[tokio::test]
async fn a_failed_child_is_noted_with_its_reason() {
    let (_peer, model, engine) = with_python_ledger(
        &["--behaviour", "fail"],
        vec![
            delegate("balance", "g", "ledger"),
            reply("Noted."),
            reply("It failed."),
        ],
        "",
    )
    .await;
    let view = engine
        .run_to_end("t-fail", task_input("n", "g"), WITHIN)
        .await;

    assert_eq!(view.state, TaskState::Completed);
    assert_eq!(view.sub_tasks[0].state, TaskState::Failed);
    let all: String = model.requests().iter().map(text).collect();
    assert!(all.contains("is FAILED: could not do it"), "{all}");
}

#[tokio::test]
async fn a_stream_that_starts_with_a_status_update_still_creates_the_row() {
    let peer = PythonPeer::start(&["--behaviour", "work"]).await;
    let proxy = A2aProxy::start(&peer.url()).await;
    proxy.cut_task_events();
    let model = FakeModel::start(vec![
        delegate("balance", "g", "ledger"),
        reply("Waiting."),
        reply("Done."),
    ])
    .await;
    let engine = Engine::with_ledger(
        baton(),
        &model.base_url(),
        &proxy.url(),
        "follow_interval = \"1s\"",
    )
    .await;
    let view = engine
        .run_to_end("t-notask", task_input("n", "g"), WITHIN)
        .await;

    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let row = &view.sub_tasks[0];
    assert_eq!(row.state, TaskState::Completed, "{row:?}");
    let stats = peer.stats().await;
    assert_eq!(stats["tasks_created"], 1);
    assert_eq!(
        row.remote_task_id.as_deref(),
        stats["tasks"][0]["id"].as_str(),
        "the row names the task the status update named"
    );
    let all: String = model.requests().iter().map(text).collect();
    assert!(all.contains("is COMPLETED: done: g"), "{all}");
}

#[tokio::test]
async fn an_auth_request_is_noted_and_the_parent_waits_until_the_child_ends() {
    let (peer, model, engine) = with_python_ledger(
        &["--behaviour", "auth", "--settle-seconds", "1"],
        vec![
            delegate("balance", "g", "ledger"),
            reply("Waiting."),
            reply("The ledger wants a sign-in; waiting for it."),
            reply("Signed in and done."),
        ],
        "updates = \"follow\", follow_interval = \"1s\"",
    )
    .await;
    let temporal = &engine.temporal;
    engine.start_task("t-auth", task_input("n", "g")).await;

    // The parent reads the note, answers, and waits: AUTH_REQUIRED itself while its sub-task
    // waits for the sign-in, which is where it would have completed had it not waited.
    let parked = temporal
        .wait_for_task("t-auth", WITHIN, |v| {
            v.sub_tasks
                .first()
                .is_some_and(|r| r.state == TaskState::AuthRequired)
                && v.turns >= 3
                && v.sub_state.as_deref() == Some("awaiting-sub-task-authorisation")
        })
        .await;
    assert_eq!(
        parked.state,
        TaskState::AuthRequired,
        "never completes with an unresolved sub-task"
    );
    let all: String = model.requests().iter().map(text).collect();
    assert!(all.contains("is AUTH_REQUIRED: please sign in"), "{all}");

    // The user signs in with the agent directly; the follow hears the task complete.
    let remote_id = parked.sub_tasks[0].remote_task_id.clone().unwrap();
    reply_to_peer(&peer, &remote_id, "signed in").await;
    let view = temporal
        .wait_for_task("t-auth", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed);
    assert_eq!(view.last_answer.as_deref(), Some("Signed in and done."));
    let last = text(model.requests().last().unwrap());
    assert!(
        last.contains("is COMPLETED: authorised: signed in"),
        "{last}"
    );
}

#[tokio::test]
async fn a_long_answer_reaches_the_model_cut_at_4000_characters() {
    let (_peer, model, engine) = with_python_ledger(
        &["--behaviour", "long", "--answer-chars", "5000"],
        vec![
            delegate("essay", "g", "ledger"),
            reply("Reading."),
            reply("Read."),
        ],
        "",
    )
    .await;
    let view = engine
        .run_to_end("t-long", task_input("n", "g"), WITHIN)
        .await;

    let summary = view.sub_tasks[0].summary.clone().unwrap();
    assert_eq!(summary.chars().count(), 4000);
    assert!(summary.ends_with('…'));
    let note_turn = model
        .requests()
        .into_iter()
        .find(|r| text(r).contains("is COMPLETED"))
        .unwrap();
    assert!(text(&note_turn).contains(&summary[..summary.len() - '…'.len_utf8()]));
}

#[tokio::test]
async fn the_model_is_retried_on_429_and_a_400_fails_the_task_with_its_message() {
    let model = FakeModel::start(vec![
        Scripted::Status(429, r#"{"error":{"message":"slow down"}}"#.into()),
        reply("Done after a retry."),
    ])
    .await;
    let engine = Engine::start(baton(), &model.base_url(), WorkerConfig::with_metrics).await;
    let config = &engine.config;
    let view = engine
        .run_to_end("t-429", task_input("n", "g"), WITHIN)
        .await;
    assert_eq!(view.state, TaskState::Completed);
    assert_eq!(view.last_answer.as_deref(), Some("Done after a retry."));

    model.push(Scripted::Status(
        400,
        r#"{"error":{"message":"Invalid 'model'"}}"#.into(),
    ));
    let view = engine
        .run_to_end("t-400", task_input("n", "g"), WITHIN)
        .await;
    assert_eq!(view.state, TaskState::Failed);
    let message = view.status_message.unwrap();
    assert!(message.contains("Invalid 'model'"), "{message}");
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "a 400 is not retried");
    // One worker, two tasks: the static prefix is byte-identical on every turn of both.
    let prefix = &requests[0]["messages"][0];
    assert!(requests.iter().all(|r| &r["messages"][0] == prefix));

    // Each call is a model turn in the metrics: the 429 and the 400 failed, one answered with
    // the tokens the model reported ("Done after a retry." is 19 bytes, 4 tokens to the fake).
    let text = scrape(&config.metrics_url().unwrap()).await;
    let queue = ("task_queue", config.task_queue.as_str());
    let turns = "baton_model_turns_total";
    assert_eq!(
        sample(&text, turns, &[queue, ("outcome", "failed")]),
        Some(2.0)
    );
    assert_eq!(
        sample(&text, turns, &[queue, ("outcome", "answered")]),
        Some(1.0)
    );
    let tokens = "baton_model_tokens_total";
    assert_eq!(
        sample(&text, tokens, &[queue, ("direction", "output")]),
        Some(4.0)
    );
    let input = sample(&text, tokens, &[queue, ("direction", "input")]);
    assert!(input.is_some_and(|n| n > 0.0), "{text}");
}

#[tokio::test]
async fn reaching_the_turn_limit_fails_the_task() {
    let model = FakeModel::start(vec![
        call("no_such_tool", json!({})),
        call("no_such_tool", json!({})),
        call("no_such_tool", json!({})),
    ])
    .await;
    let engine = Engine::start(baton(), &model.base_url(), |c| c).await;
    let temporal = &engine.temporal;
    let input =
        serde_json::from_value(json!({"name": "n", "goal": "g", "limits": {"max_turns": 2}}))
            .unwrap();
    engine.start_task("t-turns", input).await;
    let view = temporal
        .wait_for_task("t-turns", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Failed);
    assert_eq!(view.status_message.as_deref(), Some("turn limit reached"));
    assert_eq!(view.turns, 2);
    assert!(text(&model.requests()[1]).contains("tool.not_found"));
}

#[tokio::test]
async fn the_turn_limit_counts_the_turns_after_each_message_not_the_conversations_life() {
    use baton_proto::InboxMessage;
    use baton_workflows::TaskWorkflow;
    use temporalio_client::WorkflowExecuteUpdateOptions;

    // Two turns for each of the first two messages, then three for the third.
    let model = FakeModel::start(vec![
        call("no_such_tool", json!({})),
        reply("First."),
        call("no_such_tool", json!({})),
        reply("Second."),
        call("no_such_tool", json!({})),
        call("no_such_tool", json!({})),
        call("no_such_tool", json!({})),
    ])
    .await;
    let engine = Engine::start(baton(), &model.base_url(), |c| c).await;
    let temporal = &engine.temporal;
    let input = serde_json::from_value(json!({
        "name": "chat", "goal": "Chat.", "lifecycle": "conversation", "limits": {"max_turns": 2},
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
    }))
    .unwrap();
    engine.start_task("t-budget", input).await;
    let parked = |turns: u32| {
        move |v: &baton_proto::TaskView| v.turns == turns && v.state == TaskState::InputRequired
    };
    temporal.wait_for_task("t-budget", WITHIN, parked(2)).await;
    let task = temporal
        .client
        .get_workflow_handle::<TaskWorkflow>("t-budget");
    for (id, text) in [("m-2", "Again."), ("m-3", "Once more.")] {
        let message = InboxMessage {
            message_id: id.into(),
            participant_id: "alice".into(),
            text: text.into(),
            push_config: None,
            stand_in_id: None,
            attachments: Vec::new(),
        };
        task.execute_update(
            TaskWorkflow::inbox,
            message,
            WorkflowExecuteUpdateOptions::default(),
        )
        .await
        .unwrap();
        if id == "m-2" {
            // Four turns in all, past the limit of two, and still answering.
            let view = temporal.wait_for_task("t-budget", WITHIN, parked(4)).await;
            assert_eq!(view.last_answer.as_deref(), Some("Second."));
        }
    }
    let view = temporal
        .wait_for_task("t-budget", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Failed);
    assert_eq!(view.status_message.as_deref(), Some("turn limit reached"));
    assert_eq!(
        view.turns, 6,
        "two turns after the third message, then the limit"
    );
}

#[tokio::test]
async fn a_delegated_peer_parked_awaiting_its_next_message_counts_as_completed() {
    let (_peer, model, engine) = with_python_ledger(
        &["--behaviour", "converse"],
        vec![
            delegate("ask", "What is 2+2?", "ledger"),
            reply("Waiting."),
            reply("It says 4."),
        ],
        "",
    )
    .await;
    let view = engine
        .run_to_end("t-converse", task_input("n", "g"), WITHIN)
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let row = &view.sub_tasks[0];
    assert_eq!((row.state, row.resolved), (TaskState::Completed, true));
    let all: String = model.requests().iter().map(text).collect();
    assert!(
        all.contains("is COMPLETED: here you are: What is 2+2?"),
        "{all}"
    );
}

#[tokio::test]
async fn with_updates_off_a_parked_task_is_left_alone_between_turns() {
    let (peer, _model, engine) = with_python_ledger(
        &["--behaviour", "park", "--settle-seconds", "1"],
        vec![
            delegate("ask", "g", "ledger"),
            reply("Waiting."),
            reply("It asks which account."),
        ],
        "updates = \"off\", follow_interval = \"1s\"",
    )
    .await;
    let temporal = &engine.temporal;
    engine.start_task("t-off", task_input("n", "g")).await;
    // While WORKING the task is still followed, so the park is heard and noted.
    temporal
        .wait_for_task("t-off", WITHIN, |v| {
            v.turns == 3 && v.sub_tasks[0].state == TaskState::InputRequired
        })
        .await;
    // The stand-in told its parent of the park, and then settled with nothing under way: no
    // follow was scheduled after the news, and the peer holds no stream.
    let settled = poll_until("the stand-in to settle after the park", WITHIN, || async {
        let events = temporal.history("t-off.1").await;
        let told = events
            .iter()
            .rposition(|e| e.event_type() == EventType::ExternalWorkflowExecutionSignaled)?;
        let settled = quiet(&events)
            && events[told..]
                .iter()
                .any(|e| e.event_type() == EventType::WorkflowTaskCompleted);
        settled.then(|| events[told..].to_vec())
    })
    .await;
    assert!(
        settled
            .iter()
            .all(|e| e.event_type() != EventType::ActivityTaskScheduled),
        "nothing watches a parked task: {settled:?}"
    );
    let stats = peer.stats().await;
    assert_eq!(stats["streams_opened"], stats["streams_closed"], "{stats}");
    assert!(!temporal.task_view("t-off").await.state.is_terminal());
}

/// Sends a reply into a remote task directly, as a participant would.
async fn reply_to_peer(peer: &PythonPeer, task_id: &str, reply: &str) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": format!("reply-{task_id}"), "taskId": task_id, "role": "ROLE_USER", "parts": [{"text": reply}]},
        "configuration": {"returnImmediately": true}}});
    let response = reqwest::Client::new()
        .post(format!("{}/rpc", peer.url()))
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", "front-desk")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
}

#[tokio::test]
async fn a_conversation_parks_after_each_answer_and_takes_messages_from_participants_only() {
    use baton_proto::{InboxMessage, MessageRole};
    use baton_workflows::TaskWorkflow;
    use temporalio_client::{WorkflowCancelOptions, WorkflowExecuteUpdateOptions};

    let model = FakeModel::start(vec![reply("Hello Alice."), reply("You are welcome.")]).await;
    let engine = Engine::start(baton(), &model.base_url(), |c| c).await;
    let temporal = &engine.temporal;
    let input = serde_json::from_value(json!({
        "name": "chat", "goal": "Say hello.", "lifecycle": "conversation",
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
    }))
    .unwrap();
    engine.start_task("t-chat", input).await;
    let parked = |turns: u32| {
        move |v: &baton_proto::TaskView| {
            v.turns == turns
                && v.state == TaskState::InputRequired
                && v.sub_state.as_deref() == Some("awaiting-next-message")
        }
    };
    temporal.wait_for_task("t-chat", WITHIN, parked(1)).await;

    let task = temporal
        .client
        .get_workflow_handle::<TaskWorkflow>("t-chat");
    let send = |id: &str, from: &str, text: &str| {
        let message = InboxMessage {
            message_id: id.into(),
            participant_id: from.into(),
            text: text.into(),
            push_config: None,
            stand_in_id: None,
            attachments: Vec::new(),
        };
        let task = &task;
        async move {
            task.execute_update(
                TaskWorkflow::inbox,
                message,
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
        }
    };
    let stranger = send("m-x", "mallory", "let me in").await;
    assert!(stranger.is_err(), "a stranger's message is refused");
    let receipt = send("m-2", "alice", "Thanks!").await.unwrap();
    assert!(!receipt.duplicate);
    assert!(send("m-2", "alice", "Thanks!").await.unwrap().duplicate);

    let view = temporal.wait_for_task("t-chat", WITHIN, parked(2)).await;
    let history: Vec<(MessageRole, &str)> = view
        .messages
        .iter()
        .map(|m| (m.role, m.text.as_str()))
        .collect();
    assert_eq!(
        history,
        [
            (MessageRole::Agent, "Hello Alice."),
            (MessageRole::User, "Thanks!"),
            (MessageRole::Agent, "You are welcome."),
        ]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(text(&requests[1]).contains("Thanks!"));
    assert!(!text(&requests[1]).contains("let me in"));

    task.cancel(
        WorkflowCancelOptions::builder()
            .reason("done".to_string())
            .build(),
    )
    .await
    .unwrap();
    temporal
        .wait_for_task("t-chat", WITHIN, |v| v.state == TaskState::Canceled)
        .await;
    let closed = send("m-3", "alice", "hello?").await;
    assert!(closed.is_err(), "a closed task takes no message");
}

#[tokio::test]
async fn an_unreadable_input_fails_the_task_at_once_with_the_reason() {
    use baton_proto::TaskStart;
    use baton_workflows::TaskWorkflow;
    use temporalio_client::WorkflowStartOptions;

    let model = FakeModel::start(vec![]).await;
    let engine = Engine::start(baton(), &model.base_url(), |c| c).await;
    let (temporal, config) = (&engine.temporal, &engine.config);
    // What a typo on the Temporal CLI sends: any JSON is accepted at start.
    let typo = TaskStart::Invalid {
        error: String::new(),
        raw: json!({"name": "books", "gaol": "Check the books."}),
    };
    temporal
        .client
        .start_workflow(
            TaskWorkflow::run,
            typo,
            WorkflowStartOptions::new(config.task_queue.as_str(), "t-typo").build(),
        )
        .await
        .unwrap();
    let view = temporal
        .wait_for_task("t-typo", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Failed);
    let reason = view.status_message.unwrap();
    assert!(
        reason.contains("not a valid TaskInput") && reason.contains("gaol"),
        "{reason}"
    );
    assert!(
        model.requests().is_empty(),
        "no model call for an unreadable task"
    );
}

#[tokio::test]
async fn a_long_conversation_leaves_out_its_oldest_turns_and_keeps_answering() {
    use baton_proto::InboxMessage;

    const BUDGET_TOKENS: usize = 3000;
    let temporal = TestTemporal::start().await;
    // It answers with the first word of the newest message it was shown.
    let model = FakeModel::responding(|request| {
        let newest = request["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        reply(&format!(
            "read {}",
            newest.split(' ').next().unwrap_or_default()
        ))
    })
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let toml = config.render() + &format!("context_budget = {BUDGET_TOKENS}\n");
    let _worker = WorkerProcess::start(baton(), &toml).await;
    let input = serde_json::from_value(json!({
        "name": "chat", "goal": "Chat.", "lifecycle": "conversation",
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
    }))
    .unwrap();
    temporal
        .start_task(&config.task_queue, "t-long", input)
        .await;
    let answered = |turns: u32| {
        move |v: &baton_proto::TaskView| v.turns == turns && v.state == TaskState::InputRequired
    };
    temporal.wait_for_task("t-long", WITHIN, answered(1)).await;
    let filler = "x".repeat(2400);
    for n in 1..=6u32 {
        let message = InboxMessage {
            message_id: format!("m-{n}"),
            participant_id: "alice".into(),
            text: format!("message-{n} {filler}"),
            push_config: None,
            stand_in_id: None,
            attachments: Vec::new(),
        };
        temporal.send_inbox("t-long", message).await.unwrap();
        let view = temporal
            .wait_for_task("t-long", WITHIN, answered(n + 1))
            .await;
        assert_eq!(view.last_answer, Some(format!("read message-{n}")));
    }

    let requests = model.requests();
    let last = requests.last().unwrap();
    let shown = text(last);
    assert!(shown.contains("message-6 "), "the newest message is read");
    assert!(!shown.contains("message-1 "), "the oldest was left out");
    assert!(
        shown.contains("oldest messages of this conversation to fit the model's context budget"),
        "the model is told: {shown}"
    );
    // Within the budget, estimated as the worker estimates it (4 characters a token).
    let sent: usize = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().map_or(0, |c| c.chars().count()))
        .sum();
    assert!(sent <= BUDGET_TOKENS * 4, "{sent} characters sent");
    // The system prompt and the task section are never cut.
    for request in &requests {
        assert_eq!(request["messages"][0], requests[0]["messages"][0]);
        assert!(text(request).contains("goal: Chat."));
    }
    // The task itself dropped what was left out: its last turn's input (in workflow history,
    // and what continue-as-new would carry) no longer holds the oldest messages.
    let inputs: Vec<Value> = temporal
        .history("t-long")
        .await
        .into_iter()
        .filter_map(|event| match event.attributes {
            Some(Attributes::ActivityTaskScheduledEventAttributes(scheduled))
                if scheduled.activity_type.as_ref()?.name == "invoke_model" =>
            {
                let payload = scheduled.input?.payloads.into_iter().next()?;
                serde_json::from_slice(&payload.data).ok()
            }
            _ => None,
        })
        .collect();
    let kept = inputs.last().unwrap();
    assert!(kept["compacted"].as_u64().unwrap_or_default() > 0, "{kept}");
    assert!(
        !kept["history"].to_string().contains("message-1 "),
        "{kept}"
    );
}
