//! `ask_participant` end to end on a real dev server: the task waits INPUT_REQUIRED
//! (`awaiting-answer`) with the question as its status until a participant answers, and the
//! model reads the answer; a question nobody answers ends the task FAILED at the idle timeout;
//! and a Baton peer that asks is answered by its delegating Baton's model on the same task.

use crate::common::{WITHIN, baton, continued};
use baton_proto::{InboxMessage, MessageRole, TaskState};
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, task_input};
use baton_tests::fake_model::{FakeModel, call, delegate, reply};
use baton_tests::wait::poll_until;
use serde_json::{Value, json};

fn shown(request: &Value) -> String {
    request["messages"].to_string()
}

fn with_alice(goal: &str, limits: Value) -> baton_proto::TaskInput {
    serde_json::from_value(json!({
        "name": "order", "goal": goal,
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}],
        "limits": limits
    }))
    .unwrap()
}

#[tokio::test]
async fn a_question_waits_for_the_participant_s_answer_which_the_model_reads() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![
        call(
            "ask_participant",
            json!({"question": "Which order do you mean?"}),
        ),
        reply("Order 1042 shipped on Monday."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    temporal
        .start_task(
            &config.task_queue,
            "t-question",
            with_alice("When did my order ship?", json!({})),
        )
        .await;
    let asking = temporal
        .wait_for_task("t-question", WITHIN, |v| {
            v.state == TaskState::InputRequired
        })
        .await;
    assert_eq!(asking.sub_state.as_deref(), Some("awaiting-answer"));
    assert_eq!(
        asking.status_message.as_deref(),
        Some("Which order do you mean?")
    );
    let question = asking.messages.last().expect("the question is a message");
    assert_eq!(question.role, MessageRole::Agent);
    assert_eq!(question.text, "Which order do you mean?");
    assert_eq!(model.requests().len(), 1, "nothing runs while it waits");

    temporal
        .send_inbox(
            "t-question",
            InboxMessage {
                message_id: "m-answer".into(),
                participant_id: "alice".into(),
                text: "Order 1042".into(),
                push_config: None,
                stand_in_id: None,
                attachments: Vec::new(),
            },
        )
        .await
        .expect("the answer is taken");
    let view = temporal
        .wait_for_task("t-question", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    let second = shown(&model.requests()[1]);
    assert!(
        second.contains("Order 1042"),
        "the model read the answer: {second}"
    );
    assert!(
        second.contains("your question went to the participants"),
        "{second}"
    );
}

/// A task that continues as new while it waits for its answer still shows its question: the
/// status message crosses into the next run with everything else the task holds.
#[tokio::test]
async fn a_task_that_continues_as_new_while_it_asks_still_shows_its_question() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![
        call(
            "ask_participant",
            json!({"question": "Which order do you mean?"}),
        ),
        reply("Order 1042 shipped on Monday."),
    ])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    temporal
        .start_task(
            &config.task_queue,
            "t-rolled-question",
            with_alice("When did my order ship?", json!({"history_event_bound": 5})),
        )
        .await;
    poll_until("the asking task to continue as new", WITHIN, || async {
        continued(&temporal.history("t-rolled-question").await).then_some(())
    })
    .await;
    let asking = temporal
        .wait_for_task("t-rolled-question", WITHIN, |v| {
            v.state == TaskState::InputRequired
        })
        .await;
    assert_eq!(asking.sub_state.as_deref(), Some("awaiting-answer"));
    assert_eq!(
        asking.status_message.as_deref(),
        Some("Which order do you mean?"),
        "{asking:#?}"
    );

    temporal
        .send_inbox(
            "t-rolled-question",
            InboxMessage {
                message_id: "m-answer".into(),
                participant_id: "alice".into(),
                text: "Order 1042".into(),
                push_config: None,
                stand_in_id: None,
                attachments: Vec::new(),
            },
        )
        .await
        .expect("the answer is taken");
    let view = temporal
        .wait_for_task("t-rolled-question", WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert!(shown(&model.requests()[1]).contains("Order 1042"));
}

#[tokio::test]
async fn a_question_nobody_answers_fails_the_task_at_the_idle_timeout() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![call(
        "ask_participant",
        json!({"question": "Which order do you mean?"}),
    )])
    .await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-unanswered",
            with_alice("When did my order ship?", json!({"idle_timeout_secs": 2})),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Failed, "{view:#?}");
    assert_eq!(
        view.status_message.as_deref(),
        Some("no participant answered the question within 2s (limits.idle_timeout_secs)")
    );
}

#[tokio::test]
async fn a_baton_peer_that_asks_is_answered_by_the_delegating_baton_s_model() {
    let temporal = TestTemporal::start().await;
    let ledger_model = FakeModel::responding(|request| {
        let text = shown(request);
        if text.contains("the savings account") {
            reply("The savings account balances.")
        } else {
            call("ask_participant", json!({"question": "Which account?"}))
        }
    })
    .await;
    let mut ledger = WorkerConfig::new(&temporal, &ledger_model.base_url()).with_push_receiver();
    ledger.agent_id = "ledger".into();
    let ledger_url = ledger.base_url.clone().unwrap();
    let _ledger = WorkerProcess::start(baton(), &ledger.render()).await;

    let desk_model = FakeModel::responding(|request| {
        let text = shown(request);
        if text.contains("is COMPLETED: The savings account balances.") {
            reply("The savings account balances, says the ledger.")
        } else if text.contains("is INPUT_REQUIRED: Which account?")
            && !text.contains("answer sent to sub-task t-desk.1")
        {
            call(
                "reply_to_subtask",
                json!({"sub_task": "t-desk.1", "text": "the savings account"}),
            )
        } else if text.contains("started on") {
            reply("Waiting for the ledger.")
        } else {
            delegate("balance", "Does the account balance?", "ledger")
        }
    })
    .await;
    let desk = WorkerConfig::new(&temporal, &desk_model.base_url())
        .with_push_receiver()
        .agent("ledger", &ledger_url, "");
    let _desk = WorkerProcess::start(baton(), &desk.render()).await;
    let view = temporal
        .run_to_end(
            &desk.task_queue,
            "t-desk",
            task_input("books", "Check the books."),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(
        view.last_answer.as_deref(),
        Some("The savings account balances, says the ledger.")
    );
    // The ledger asked on its own task, and took the answer there.
    let ledger_task = temporal
        .task_view(view.sub_tasks[0].remote_task_id.as_ref().unwrap())
        .await;
    let texts: Vec<(&MessageRole, &str)> = ledger_task
        .messages
        .iter()
        .map(|m| (&m.role, m.text.as_str()))
        .collect();
    assert!(
        texts.contains(&(&MessageRole::Agent, "Which account?")),
        "{texts:?}"
    );
    assert!(
        texts.contains(&(&MessageRole::User, "the savings account")),
        "{texts:?}"
    );
    assert_eq!(
        ledger_model.requests().len(),
        2,
        "the ledger's model asked, then answered"
    );
}
