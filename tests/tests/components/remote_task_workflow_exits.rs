//! `RemoteTaskWorkflow`, the stand-in, against its handlers and on each of its exit paths: the
//! real stand-in and its real parent on an in-process worker, every call on the remote agent
//! faked and held by the test (`baton_tests::workflow_harness`). Each test asserts what
//! docs/engine.md ("The stand-in's watch", "Answering a sub-task", "Cancel") promises.

use baton_core::deadline::deadline_exceeded;
use baton_core::push_token::token_digest;
use baton_proto::{
    InboxMessage, PushIn, RefusalCode, RemoteReplyOut, RemoteWatch, StartAgentTaskOut, TaskState,
    WatchKind,
};
use baton_tests::workflow_harness::{
    WorkflowHarness, answer, calls, changed, ledger_note, message, notes, participant_texts,
    refusal, remote, spawn, started, tool_call,
};
use temporalio_client::errors::WorkflowUpdateError;
use temporalio_common::protos::temporal::api::enums::v1::EventType;

/// The model's `reply_to_subtask` answering sub-task t.1.
fn reply_to_balance(text: &str) -> baton_proto::InvokeModelOut {
    calls(vec![tool_call(
        "c2",
        "reply_to_subtask",
        serde_json::json!({"sub_task": "t.1", "text": text}),
    )])
}

/// Asserts a push was refused, as the push receiver reads it (its 401).
fn assert_push_refused(result: Result<(), WorkflowUpdateError>) {
    match result {
        Err(WorkflowUpdateError::Failed(failure)) => {
            assert_eq!(failure.message, "push not accepted", "{failure:?}");
        }
        other => panic!("expected the push to be refused, got {other:?}"),
    }
}

/// Lets task t's model read the news of t.1 and answer `last`, with turn 2 held until the row
/// shows `state`: the note comes to turn 3.
async fn read_the_news(h: &WorkflowHarness, state: TaskState, last: &str) -> Vec<String> {
    let turn = h.activities.invoke_model.next().await;
    h.wait_for_task("t", "the sub-task's news", |v| {
        v.sub_tasks[0].state == state
    })
    .await;
    turn.reply(answer("waiting for the balance"));
    let next = h.activities.invoke_model.next().await;
    let read = notes(&next.input);
    next.reply(answer(last));
    read
}

// --- ends the agent reports ----------------------------------------------------------------

/// A follow that sees the task end tells the parent once, and the stand-in ends with the task
/// as last seen, closed, with no push config to delete.
#[tokio::test]
async fn a_follow_that_sees_the_end_tells_the_parent_and_closes() {
    let h = WorkflowHarness::with_books().await;
    let follow = h.follow_balance().await;
    follow.reply(changed("r-1", TaskState::Completed, "42"));

    let read = read_the_news(&h, TaskState::Completed, "the balance is 42").await;
    assert_eq!(
        read,
        [ledger_note("balance", "t.1", "r-1", "COMPLETED", "42")]
    );
    let view = h.stand_in_outcome("t.1").await.completed();
    assert!(view.closed);
    assert_eq!(view.last, remote("r-1", TaskState::Completed, Some("42")));
    assert_eq!(h.activities.delete_remote_push.seen().len(), 0);
    h.task_outcome("t").await.completed();
}

/// A task the agent no longer knows (`remote.task_not_found`) resolves the row FAILED at once,
/// with no pause and no second follow.
#[tokio::test]
async fn a_task_the_agent_no_longer_knows_fails_the_row() {
    gone_for_good(
        "remote.task_not_found",
        "the agent no longer knows task r-1",
    )
    .await;
}

/// An agent the worker no longer has configured (`agent.unknown`) resolves the row FAILED the
/// same way.
#[tokio::test]
async fn an_agent_no_longer_configured_fails_the_row() {
    gone_for_good(
        "agent.unknown",
        "agent ledger is no longer configured on this worker",
    )
    .await;
}

/// A follow that fails for good with `type_name` resolves the row FAILED with `summary`, which
/// the parent's model reads; the stand-in ends, closed, after one follow.
async fn gone_for_good(type_name: &str, summary: &str) {
    let h = WorkflowHarness::with_books().await;
    let follow = h.follow_balance().await;
    follow.fail_for_good(type_name, "gone");

    let read = read_the_news(&h, TaskState::Failed, "it is gone").await;
    assert_eq!(
        read,
        [ledger_note("balance", "t.1", "r-1", "FAILED", summary)]
    );
    assert!(h.stand_in_outcome("t.1").await.completed().closed);
    assert_eq!(h.activities.follow_remote_task.seen().len(), 1);
    h.task_outcome("t").await.completed();
}

/// A follow that fails any other way (a dead worker, a broken stream) makes the stand-in pause,
/// then follow again from what it knew; the parent hears nothing of it.
#[tokio::test]
async fn a_failed_follow_pauses_then_follows_again() {
    let h = WorkflowHarness::with_books().await;
    let first = h.follow_balance().await;
    let known = first.input.clone();
    first.fail_attempt("the stream broke");

    let again = h.activities.follow_remote_task.next().await;
    assert_eq!(again.input, known);
    assert_eq!(
        h.count_events("t.1", EventType::TimerFired).await,
        1,
        "the pause before following again"
    );
    assert!(!h.task("t").await.sub_tasks[0].resolved);
    again.reply(changed("r-1", TaskState::Completed, "42"));
    let read = read_the_news(&h, TaskState::Completed, "42").await;
    assert_eq!(read.len(), 1);
    h.task_outcome("t").await.completed();
}

// --- a brief sent twice ------------------------------------------------------------------------

/// A creation that sent the brief again (the agent listed no task for the first within
/// `listing_wait`) may have left a second task in the context: when the stand-in ends, it
/// cancels every task there but its own.
#[tokio::test]
async fn a_stand_in_whose_brief_was_sent_twice_cancels_the_other_task_of_its_context_when_it_ends()
{
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    a.invoke_model
        .next()
        .await
        .reply(calls(vec![spawn("c1", "balance", "ledger")]));
    let create = a.start_agent_task.next().await;
    let context_id = create.input.context_id.clone().expect("a derived context");
    create.reply(StartAgentTaskOut::Started {
        task: remote("r-2", TaskState::Working, None),
        deadline_secs: None,
        watch: Some(WatchKind::Follow),
        sent_again: true,
    });
    let follow = a.follow_remote_task.next().await;
    assert!(
        a.cancel_context_tasks.seen().is_empty(),
        "not while it runs"
    );
    follow.reply(changed("r-2", TaskState::Completed, "42"));
    h.stand_in_outcome("t.1").await.completed();
    let swept = a.cancel_context_tasks.seen();
    assert_eq!(swept.len(), 1);
    assert_eq!(
        (
            swept[0].context_id.as_str(),
            swept[0].stand_in_id.as_str(),
            swept[0].keep.as_deref()
        ),
        (context_id.as_str(), "t.1", Some("r-2"))
    );
}

/// The same when the agent settled the task within the creation, so no stand-in starts: the
/// parent cancels the other tasks of the context at once. A brief sent once has no duplicate to
/// cancel; either way the parent's end sweeps the context once more.
#[tokio::test]
async fn a_brief_sent_twice_and_settled_at_once_has_its_duplicates_cancelled_by_the_parent() {
    for sent_again in [true, false] {
        let h = WorkflowHarness::with_books().await;
        let a = &h.activities;
        a.invoke_model
            .next()
            .await
            .reply(calls(vec![spawn("c1", "balance", "ledger")]));
        a.start_agent_task
            .next()
            .await
            .reply(StartAgentTaskOut::Started {
                task: remote("r-2", TaskState::Completed, Some("42")),
                deadline_secs: None,
                watch: None,
                sent_again,
            });
        a.invoke_model.next().await.reply(answer("42"));
        h.task_outcome("t").await.completed();
        let swept = a.cancel_context_tasks.seen();
        let kept: Vec<Option<&str>> = swept.iter().map(|c| c.keep.as_deref()).collect();
        if sent_again {
            assert_eq!(kept, [Some("r-2"), None]);
        } else {
            assert_eq!(kept, [None], "{swept:?}");
        }
    }
}

// --- the deadline and cancel ---------------------------------------------------------------

/// Past the delegation's deadline the stand-in stops its follow, cancels the remote task
/// (CancelTask) and resolves the row FAILED "deadline exceeded", which the model reads.
#[tokio::test]
async fn past_its_deadline_the_stand_in_cancels_the_remote_task_and_fails_the_row() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    h.spawn_balance(StartAgentTaskOut::Started {
        task: remote("r-1", TaskState::Working, None),
        deadline_secs: Some(1),
        watch: Some(WatchKind::Follow),
        sent_again: false,
    })
    .await;
    let _follow = a.follow_remote_task.next().await;
    let turn = a.invoke_model.next().await;

    let cancel = a.cancel_remote_task.next().await;
    assert_eq!(cancel.input.remote_task_id, "r-1");
    h.wait_for_event("t.1", "the follow cancelled", |e| {
        e.event_type() == EventType::ActivityTaskCancelRequested
    })
    .await;
    cancel.reply(remote("r-1", TaskState::Canceled, None));
    h.wait_for_task("t", "the row resolved", |v| v.sub_tasks[0].resolved)
        .await;
    turn.reply(answer("waiting for the balance"));

    let last = a.invoke_model.next().await;
    assert_eq!(
        notes(&last.input),
        [ledger_note(
            "balance",
            "t.1",
            "r-1",
            "FAILED",
            &deadline_exceeded(1)
        )]
    );
    assert_eq!(
        deadline_exceeded(1),
        "deadline exceeded: it was still running after 1s, so Baton cancelled it on the agent"
    );
    last.reply(answer("the ledger was too slow"));
    let view = h.stand_in_outcome("t.1").await.completed();
    assert_eq!(view.last.state, TaskState::Failed);
    h.task_outcome("t").await.completed();
}

/// A cancelled stand-in whose agent never confirms the cancel (the activity, retried after a
/// failed attempt, still sees the task WORKING when its bound passes) resolves the row FAILED,
/// saying the task may still run: never CANCELED for a task that may still run. Its parent
/// stops waiting all the same and ends CANCELED.
#[tokio::test]
async fn a_cancel_the_agent_never_confirms_resolves_the_row_failed_not_canceled() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    let _follow = h.follow_balance().await;
    h.answer_and_wait("waiting for the balance").await;
    h.cancel("t", "stop").await;

    let first = a.cancel_remote_task.next().await;
    first.fail_attempt("the worker died mid-way");
    let second = a.cancel_remote_task.next().await;
    assert_eq!(second.attempt, 2);
    second.reply(remote("r-1", TaskState::Working, Some("still at it")));

    assert!(h.stand_in_outcome("t.1").await.is_canceled());
    assert!(h.task_outcome("t").await.is_canceled());
    let row = &h.task("t").await.sub_tasks[0];
    assert_eq!((row.state, row.resolved), (TaskState::Failed, true));
    let summary = row.summary.as_deref().unwrap_or_default();
    assert!(
        summary.contains("the cancel was not confirmed")
            && summary.contains("WORKING")
            && summary.contains("may still run"),
        "{summary}"
    );
}

/// A cancel the agent confirms resolves the row CANCELED.
#[tokio::test]
async fn a_cancel_the_agent_confirms_resolves_the_row_canceled() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    let _follow = h.follow_balance().await;
    h.answer_and_wait("waiting for the balance").await;
    h.cancel("t", "stop").await;

    a.cancel_remote_task
        .next()
        .await
        .reply(remote("r-1", TaskState::Canceled, None));

    assert!(h.task_outcome("t").await.is_canceled());
    let row = &h.task("t").await.sub_tasks[0];
    assert_eq!((row.state, row.resolved), (TaskState::Canceled, true));
}

// --- answers to a sub-task's question ------------------------------------------------------

/// The parent's answer, arriving while the stand-in follows the asking task, stops the follow,
/// is sent on the remote task, and only then does the stand-in follow again; the agent's next
/// news reaches the parent.
#[tokio::test]
async fn an_answer_stops_the_follow_and_is_sent_before_the_next_follow() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    let follow = h.follow_balance().await;
    let turn = a.invoke_model.next().await;
    follow.reply(changed("r-1", TaskState::InputRequired, "which account?"));
    let asking = a.follow_remote_task.next().await;
    assert_eq!(asking.input.known.state, TaskState::InputRequired);
    h.wait_for_task("t", "the question", |v| {
        v.sub_tasks[0].state == TaskState::InputRequired
    })
    .await;
    turn.reply(answer("let me look"));

    let reads = a.invoke_model.next().await;
    assert_eq!(
        notes(&reads.input),
        [ledger_note(
            "balance",
            "t.1",
            "r-1",
            "INPUT_REQUIRED",
            "which account?"
        )]
    );
    reads.reply(reply_to_balance("the savings account"));
    let send = a.send_remote_reply.next().await;
    assert_eq!(send.input.text, "the savings account");
    assert_eq!(send.input.task.remote_task_id, "r-1");
    h.wait_for_event("t.1", "the follow cancelled", |e| {
        e.event_type() == EventType::ActivityTaskCancelRequested
    })
    .await;
    assert_eq!(
        a.follow_remote_task.seen().len(),
        2,
        "no follow while it sends"
    );

    let after_reply = a.invoke_model.next().await;
    assert_eq!(h.task("t").await.sub_tasks[0].state, TaskState::Working);
    send.reply(RemoteReplyOut::Sent {
        task: remote("r-1", TaskState::Working, None),
    });
    let follows_again = a.follow_remote_task.next().await;
    assert_eq!(follows_again.input.known.state, TaskState::Working);
    after_reply.reply(answer("waiting for the balance"));
    follows_again.reply(changed("r-1", TaskState::Completed, "savings: 42"));

    let last = a.invoke_model.next().await;
    assert_eq!(
        notes(&last.input).last(),
        Some(&ledger_note(
            "balance",
            "t.1",
            "r-1",
            "COMPLETED",
            "savings: 42"
        ))
    );
    last.reply(answer("the savings balance is 42"));
    h.task_outcome("t").await.completed();
    assert_eq!(a.send_remote_reply.seen().len(), 1);
}

/// An answer the agent refuses reaches the parent's model as the question again, with why.
#[tokio::test]
async fn a_refused_answer_reaches_the_parent_as_the_question_again() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    let follow = h.follow_balance().await;
    follow.reply(changed("r-1", TaskState::InputRequired, "which account?"));
    let read = read_the_news_and(&h, reply_to_balance("the savings account")).await;
    assert_eq!(read.len(), 1);
    let send = a.send_remote_reply.next().await;
    // The turn after the reply starts before the agent's refusal comes back.
    let turn = a.invoke_model.next().await;
    send.reply(RemoteReplyOut::Refused {
        reason: "the task takes no messages".into(),
    });
    h.wait_for_task("t", "the question again", |v| {
        v.sub_tasks[0].state == TaskState::InputRequired
    })
    .await;
    turn.reply(answer("hm"));

    let again = a.invoke_model.next().await;
    assert_eq!(
        notes(&again.input).last(),
        Some(&ledger_note(
            "balance",
            "t.1",
            "r-1",
            "INPUT_REQUIRED",
            "your answer was not delivered (the task takes no messages); the agent still asks: \
             which account?"
        ))
    );
    again.reply(answer("I will ask alice"));
    h.wait_for_task("t", "waiting", |v| v.turns == 5).await;
    h.cancel("t", "done").await;
    a.cancel_remote_task
        .next()
        .await
        .reply(remote("r-1", TaskState::Canceled, None));
    assert!(h.task_outcome("t").await.is_canceled());
}

/// Turn 2 answered as soon as the row shows INPUT_REQUIRED; turn 3 reads the note and answers
/// `then`. Returns the notes turn 3 read.
async fn read_the_news_and(h: &WorkflowHarness, then: baton_proto::InvokeModelOut) -> Vec<String> {
    let turn = h.activities.invoke_model.next().await;
    h.wait_for_task("t", "the question", |v| {
        v.sub_tasks[0].state == TaskState::InputRequired
    })
    .await;
    turn.reply(answer("let me look"));
    let reads = h.activities.invoke_model.next().await;
    let read = notes(&reads.input);
    reads.reply(then);
    read
}

/// A participant's answer to the sub-task, sent to the parent with the sub-task's id, goes to
/// the stand-in and on to the agent, not to the model, which reads only that it went; a second
/// answer to the sub-task, now WORKING, is refused.
#[tokio::test]
async fn a_participant_s_answer_through_the_parent_reaches_the_agent() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    let follow = h.follow_balance().await;
    follow.reply(changed("r-1", TaskState::InputRequired, "which account?"));
    let asking = a.follow_remote_task.next().await;
    assert_eq!(asking.input.known.state, TaskState::InputRequired);
    read_the_news_and(&h, answer("waiting for alice's answer")).await;
    h.wait_for_task("t", "waiting for its sub-task", |v| v.turns == 3)
        .await;

    let answer_to = |id: &str| InboxMessage {
        stand_in_id: Some("t.1".into()),
        ..message(id, "alice", "the savings account")
    };
    h.send("t", answer_to("a-1"))
        .await
        .expect("alice's answer is taken");
    let send = a.send_remote_reply.next().await;
    assert_eq!(send.input.text, "the savings account");
    let reads = a.invoke_model.next().await;
    assert_eq!(
        notes(&reads.input).last().map(String::as_str),
        Some(
            "Participant alice answered sub-task t.1 (balance on ledger) directly; it is WORKING again"
        )
    );
    assert_eq!(participant_texts(&reads.input), Vec::<String>::new());
    let refused = refusal(h.send("t", answer_to("a-2")).await);
    assert_eq!(refused.code, RefusalCode::SubTaskNotAnswerable);

    send.reply(RemoteReplyOut::Sent {
        task: remote("r-1", TaskState::Working, None),
    });
    reads.reply(answer("waiting for the balance"));
    a.follow_remote_task
        .next()
        .await
        .reply(changed("r-1", TaskState::Completed, "savings: 42"));
    a.invoke_model.next().await.reply(answer("42 in savings"));
    h.task_outcome("t").await.completed();
}

// --- push ----------------------------------------------------------------------------------

/// A push-watched stand-in: registers, fetches once, then a push only wakes it (one with the
/// wrong token or for another task is refused), it reads the task with GetTask, tells the
/// parent, deletes its push config, and refuses pushes from the moment it closes.
#[tokio::test]
async fn a_push_only_wakes_the_stand_in_which_reads_the_task() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    a.delete_remote_push.hold();
    h.spawn_balance(started("r-1", None)).await;
    let turn = a.invoke_model.next().await;
    let register = a.register_remote_push.next().await;
    assert_eq!(register.input.remote_task_id, "r-1");
    register.reply(RemoteWatch {
        kind: WatchKind::Push,
        config_id: Some("cfg-1".into()),
        token_digest: Some(token_digest("s3cret")),
        safety_fetch_secs: Some(3600),
    });
    a.get_remote_task
        .next()
        .await
        .reply(remote("r-1", TaskState::Working, None));

    let push = |token: &str, task: &str| PushIn {
        token_digest: token_digest(token),
        remote_task_id: task.into(),
        claimed_state: Some(TaskState::Completed),
    };
    assert_push_refused(h.push("t.1", push("guessed", "r-1")).await);
    assert_push_refused(h.push("t.1", push("s3cret", "r-2")).await);
    assert_eq!(
        a.get_remote_task.seen().len(),
        1,
        "a refused push wakes nothing"
    );

    h.push("t.1", push("s3cret", "r-1"))
        .await
        .expect("the push is accepted");
    a.get_remote_task
        .next()
        .await
        .reply(remote("r-1", TaskState::Completed, Some("42")));
    let delete = a.delete_remote_push.next().await;
    assert_eq!(delete.input.config_id, "cfg-1");
    assert_push_refused(h.push("t.1", push("s3cret", "r-1")).await);
    delete.reply(());

    let view = h.stand_in_outcome("t.1").await.completed();
    assert!(view.closed);
    assert_eq!(view.last.state, TaskState::Completed);
    turn.reply(answer("waiting for the balance"));
    let last = a.invoke_model.next().await;
    assert_eq!(
        notes(&last.input),
        [ledger_note("balance", "t.1", "r-1", "COMPLETED", "42")]
    );
    last.reply(answer("42"));
    h.task_outcome("t").await.completed();
}

/// A push whose claim the agent's GetTask does not confirm yet is checked again, until it does.
#[tokio::test]
async fn a_push_the_agent_does_not_confirm_yet_is_checked_again() {
    let h = WorkflowHarness::with_books().await;
    let a = &h.activities;
    h.spawn_balance(started("r-1", None)).await;
    let turn = a.invoke_model.next().await;
    a.register_remote_push.next().await.reply(RemoteWatch {
        kind: WatchKind::Push,
        config_id: Some("cfg-1".into()),
        token_digest: Some(token_digest("s3cret")),
        safety_fetch_secs: Some(3600),
    });
    a.get_remote_task
        .next()
        .await
        .reply(remote("r-1", TaskState::Working, None));

    h.push(
        "t.1",
        PushIn {
            token_digest: token_digest("s3cret"),
            remote_task_id: "r-1".into(),
            claimed_state: Some(TaskState::Completed),
        },
    )
    .await
    .expect("the push is accepted");
    a.get_remote_task
        .next()
        .await
        .reply(remote("r-1", TaskState::Working, None));
    let recheck = a.get_remote_task.next().await;
    assert_eq!(
        h.count_events("t.1", EventType::TimerFired).await,
        1,
        "the recheck waited its timer"
    );
    recheck.reply(remote("r-1", TaskState::Completed, Some("42")));

    assert!(h.stand_in_outcome("t.1").await.completed().closed);
    turn.reply(answer("waiting for the balance"));
    a.invoke_model.next().await.reply(answer("42"));
    h.task_outcome("t").await.completed();
    assert_eq!(a.get_remote_task.seen().len(), 3);
}
