//! Workflow-level tests: the real `TaskWorkflow` and `RemoteTaskWorkflow` on an in-process
//! Temporal worker, against a real dev server, with fake activities the test answers one call
//! at a time. A handler interleaving (a message during a model turn, a cancel during a create)
//! is then set up exactly: the test holds the call, sends the message, and only then answers.
//!
//! Each activity has a [`Desk`], registered under the name `baton-activities` gives it (checked
//! against `BatonActivities` when the harness starts, names and types). A call either waits on
//! the desk until the test takes it with [`Desk::next`] and answers it, or, where the test set
//! an automatic answer, is answered at once. Every call's input is kept, answered or not.
//! Clients reach the workflows through the contract (`baton_proto::temporal`), as the gateway
//! does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use baton_activities::BatonActivities;
use baton_proto::temporal::{self, remote_task_workflow, task_workflow};
use baton_proto::{
    CancelContextIn, ChildDone, DelegationEnd, DeletePushIn, FollowIn, FollowOut, HistoryItem,
    InboxMessage, InboxReceipt, InvokeModelIn, InvokeModelOut, InvokeToolIn, InvokeToolOut,
    Participant, ParticipantKind, ParticipantRole, PushConfig, PushDelivery, PushIn, Refusal,
    RemoteReplyIn, RemoteReplyOut, RemoteSnapshot, RemoteTaskIn, RemoteView, RemoteWatch, Source,
    StartAgentTaskIn, StartAgentTaskOut, TaskFailure, TaskInput, TaskStart, TaskState, TaskView,
    ToolCallRecord, WatchKind,
};
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow, follow_task_queue};
use temporalio_client::errors::{WorkflowGetResultError, WorkflowUpdateError};
use temporalio_client::{
    Client, ClientOptions, Connection, ConnectionOptions, Url, WorkflowCancelOptions,
    WorkflowExecuteUpdateOptions, WorkflowGetResultOptions, WorkflowIdConflictPolicy,
    WorkflowQueryOptions, WorkflowSignalOptions, WorkflowStartOptions,
    WorkflowUpdateWithStartOptions,
};
use temporalio_common::protos::temporal::api::enums::v1::EventType;
use temporalio_common::protos::temporal::api::failure::v1::failure::FailureInfo;
use temporalio_common::protos::temporal::api::history::v1::HistoryEvent;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::{
    ActivityDefinition, HasWorkflowDefinition, SignalDefinition, UpdateDefinition,
    WorkflowDefinition,
};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::runtime::RuntimeOptions;
use temporalio_sdk::{ApplicationFailure, Runtime, Worker, WorkerOptions};
use tokio::sync::{mpsc, oneshot, watch};

use crate::engine::TestTemporal;
use crate::free_port;
use crate::wait::{HANG_GUARD, poll_until, within};

/// What a fake activity answers: its output, or a failure.
pub type Answer<O> = Result<O, ActivityError>;

/// An automatic answer: `None` leaves the call waiting on the desk for the test.
type Auto<I, O> = Arc<dyn Fn(&I) -> Option<Answer<O>> + Send + Sync>;

/// One activity's calls.
pub struct Desk<I, O> {
    name: &'static str,
    sender: mpsc::UnboundedSender<Call<I, O>>,
    waiting: tokio::sync::Mutex<mpsc::UnboundedReceiver<Call<I, O>>>,
    auto: Mutex<Option<Auto<I, O>>>,
    seen: watch::Sender<Vec<I>>,
}

/// A call the test holds: the activity runs until it is answered (or the workflow cancels it).
/// A call dropped unanswered stays running until the workflow cancels it or the harness stops.
pub struct Call<I, O> {
    pub input: I,
    /// The attempt, from 1: a retried activity comes back as a new call.
    pub attempt: u32,
    answer: oneshot::Sender<Answer<O>>,
}

impl<I, O> Call<I, O> {
    pub fn reply(self, output: O) {
        // The workflow may have cancelled the activity meanwhile: then nobody listens.
        self.answer.send(Ok(output)).ok();
    }

    pub fn fail(self, error: ActivityError) {
        self.answer.send(Err(error)).ok();
    }

    /// Fails the call for good: a non-retryable application failure of type `type_name`.
    pub fn fail_for_good(self, type_name: &str, message: &str) {
        self.fail(non_retryable(type_name, message));
    }

    /// Fails this attempt; the activity's retry policy decides what follows.
    pub fn fail_attempt(self, message: &str) {
        self.fail(ActivityError::from(anyhow::anyhow!(message.to_string())));
    }
}

/// A non-retryable application failure of type `type_name`, as `baton-activities` fails a call
/// that asking again cannot help.
pub fn non_retryable(type_name: &str, message: &str) -> ActivityError {
    ActivityError::application(
        ApplicationFailure::builder(anyhow::anyhow!(message.to_string()))
            .type_name(type_name.to_string())
            .non_retryable(true)
            .build(),
    )
}

impl<I, O> Desk<I, O>
where
    I: Clone + Send + Sync + 'static,
    O: Send + 'static,
{
    fn new(name: &'static str) -> Self {
        let (sender, waiting) = mpsc::unbounded_channel();
        Desk {
            name,
            sender,
            waiting: tokio::sync::Mutex::new(waiting),
            auto: Mutex::new(None),
            seen: watch::channel(Vec::new()).0,
        }
    }

    /// Answers every later call with what `answer` returns, or leaves it waiting for the test
    /// when that is `None`.
    pub fn answer_with(&self, answer: impl Fn(&I) -> Option<Answer<O>> + Send + Sync + 'static) {
        *self.auto.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(answer));
    }

    /// Answers every later call with `output(input)`.
    pub fn always(&self, output: impl Fn(&I) -> O + Send + Sync + 'static) {
        self.answer_with(move |input| Some(Ok(output(input))));
    }

    /// Every later call waits for the test.
    pub fn hold(&self) {
        *self.auto.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The next call waiting for the test, in the order they came; fails the test when none
    /// comes. A call the workflow has since cancelled (a follow an answer stopped) stays in
    /// line until it is taken, so a test takes each call it caused.
    pub async fn next(&self) -> Call<I, O> {
        let what = format!("a call of {}", self.name);
        within(&what, HANG_GUARD, async {
            self.waiting
                .lock()
                .await
                .recv()
                .await
                .expect("the desk is open")
        })
        .await
    }

    /// The inputs of every call so far, answered or not, in order.
    pub fn seen(&self) -> Vec<I> {
        self.seen.borrow().clone()
    }

    /// Waits until `n` calls have come; returns all inputs so far.
    pub async fn seen_at_least(&self, n: usize) -> Vec<I> {
        let what = format!("{n} calls of {}", self.name);
        let mut seen = self.seen.subscribe();
        within(&what, HANG_GUARD, async {
            seen.wait_for(|seen| seen.len() >= n)
                .await
                .expect("the desk is open")
                .clone()
        })
        .await
    }

    /// Serves one call of the activity.
    async fn serve(&self, ctx: ActivityContext, input: I, stop: &watch::Sender<bool>) -> Answer<O> {
        let mut stop = stop.subscribe();
        self.seen.send_modify(|seen| seen.push(input.clone()));
        let auto = self.auto.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(answer) = auto.and_then(|auto| auto(&input)) {
            return answer;
        }
        let (answer, answered) = oneshot::channel();
        let call = Call {
            input,
            attempt: ctx.info().attempt,
            answer,
        };
        if self.sender.send(call).is_err() {
            return Err(ActivityError::cancelled());
        }
        let answered = async {
            match answered.await {
                Ok(answer) => answer,
                // Dropped unanswered: it runs on until cancelled.
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = answered => answer,
            _ = ctx.cancelled() => Err(ActivityError::cancelled()),
            _ = stop.wait_for(|stopped| *stopped) => Err(ActivityError::cancelled()),
            never = heartbeat(&ctx) => never,
        }
    }
}

/// Heartbeats a held call, as the real activities do, so a cancel from the workflow reaches it
/// and a long hold does not time it out.
async fn heartbeat<T>(ctx: &ActivityContext) -> T {
    if ctx.info().heartbeat_timeout.is_some() && !ctx.info().is_local {
        loop {
            ctx.record_heartbeat(()).await.ok();
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    std::future::pending().await
}

/// The desks of every activity `baton-activities` registers.
pub struct Desks {
    pub invoke_model: Desk<InvokeModelIn, InvokeModelOut>,
    pub invoke_tool: Desk<InvokeToolIn, InvokeToolOut>,
    pub start_agent_task: Desk<StartAgentTaskIn, StartAgentTaskOut>,
    pub cancel_context_tasks: Desk<CancelContextIn, u32>,
    pub get_remote_task: Desk<RemoteTaskIn, RemoteSnapshot>,
    pub follow_remote_task: Desk<FollowIn, FollowOut>,
    pub register_remote_push: Desk<RemoteTaskIn, RemoteWatch>,
    pub delete_remote_push: Desk<DeletePushIn, ()>,
    pub cancel_remote_task: Desk<RemoteTaskIn, RemoteSnapshot>,
    pub send_remote_reply: Desk<RemoteReplyIn, RemoteReplyOut>,
    pub deliver_push: Desk<PushDelivery, ()>,
    pub record_delegation_ends: Desk<Vec<DelegationEnd>, ()>,
    pub report_task_failed: Desk<TaskFailure, ()>,
    stop: watch::Sender<bool>,
}

impl Desks {
    /// Every desk holds its calls for the test, except the bookkeeping no test needs to hold
    /// (counting delegation ends, logging a failure, pushing to a webhook, deleting a push
    /// config, cleaning up a failed creation's context), which is answered at once and kept.
    fn new() -> Desks {
        let desks = Desks {
            invoke_model: Desk::new("invoke_model"),
            invoke_tool: Desk::new("invoke_tool"),
            start_agent_task: Desk::new("start_agent_task"),
            cancel_context_tasks: Desk::new("cancel_context_tasks"),
            get_remote_task: Desk::new("get_remote_task"),
            follow_remote_task: Desk::new("follow_remote_task"),
            register_remote_push: Desk::new("register_remote_push"),
            delete_remote_push: Desk::new("delete_remote_push"),
            cancel_remote_task: Desk::new("cancel_remote_task"),
            send_remote_reply: Desk::new("send_remote_reply"),
            deliver_push: Desk::new("deliver_push"),
            record_delegation_ends: Desk::new("record_delegation_ends"),
            report_task_failed: Desk::new("report_task_failed"),
            stop: watch::channel(false).0,
        };
        desks.record_delegation_ends.always(|_| ());
        desks.report_task_failed.always(|_| ());
        desks.deliver_push.always(|_| ());
        desks.delete_remote_push.always(|_| ());
        desks.cancel_context_tasks.always(|_| 0);
        desks
    }
}

/// The fake activities, each serving its desk.
#[derive(Clone)]
pub struct FakeActivities {
    desks: Arc<Desks>,
}

#[activities]
impl FakeActivities {
    #[activity(name = "start_agent_task")]
    pub async fn start_agent_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: StartAgentTaskIn,
    ) -> Result<StartAgentTaskOut, ActivityError> {
        self.desks
            .start_agent_task
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "cancel_context_tasks")]
    pub async fn cancel_context_tasks(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: CancelContextIn,
    ) -> Result<u32, ActivityError> {
        self.desks
            .cancel_context_tasks
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "get_remote_task")]
    pub async fn get_remote_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteSnapshot, ActivityError> {
        self.desks
            .get_remote_task
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "follow_remote_task")]
    pub async fn follow_remote_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FollowIn,
    ) -> Result<FollowOut, ActivityError> {
        self.desks
            .follow_remote_task
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "register_remote_push")]
    pub async fn register_remote_push(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteWatch, ActivityError> {
        self.desks
            .register_remote_push
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "delete_remote_push")]
    pub async fn delete_remote_push(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: DeletePushIn,
    ) -> Result<(), ActivityError> {
        self.desks
            .delete_remote_push
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "cancel_remote_task")]
    pub async fn cancel_remote_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: RemoteTaskIn,
    ) -> Result<RemoteSnapshot, ActivityError> {
        self.desks
            .cancel_remote_task
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "send_remote_reply")]
    pub async fn send_remote_reply(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: RemoteReplyIn,
    ) -> Result<RemoteReplyOut, ActivityError> {
        self.desks
            .send_remote_reply
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "deliver_push")]
    pub async fn deliver_push(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: PushDelivery,
    ) -> Result<(), ActivityError> {
        self.desks
            .deliver_push
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "record_delegation_ends")]
    pub async fn record_delegation_ends(
        self: Arc<Self>,
        ctx: ActivityContext,
        ends: Vec<DelegationEnd>,
    ) -> Result<(), ActivityError> {
        self.desks
            .record_delegation_ends
            .serve(ctx, ends, &self.desks.stop)
            .await
    }

    #[activity(name = "report_task_failed")]
    pub async fn report_task_failed(
        self: Arc<Self>,
        ctx: ActivityContext,
        failure: TaskFailure,
    ) -> Result<(), ActivityError> {
        self.desks
            .report_task_failed
            .serve(ctx, failure, &self.desks.stop)
            .await
    }

    #[activity(name = "invoke_tool")]
    pub async fn invoke_tool(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: InvokeToolIn,
    ) -> Result<InvokeToolOut, ActivityError> {
        self.desks
            .invoke_tool
            .serve(ctx, input, &self.desks.stop)
            .await
    }

    #[activity(name = "invoke_model")]
    pub async fn invoke_model(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: InvokeModelIn,
    ) -> Result<InvokeModelOut, ActivityError> {
        self.desks
            .invoke_model
            .serve(ctx, input, &self.desks.stop)
            .await
    }
}

/// Holds each fake to the real activity of its name: the bounds hold the input and output
/// types equal, the assert the names, so the workflows call the fakes as they call the real
/// ones.
fn fakes_match_baton_activities() {
    fn same<A, B>(real: A, fake: B)
    where
        A: ActivityDefinition,
        B: ActivityDefinition<Input = A::Input, Output = A::Output>,
    {
        assert_eq!(real.name(), fake.name());
    }
    same(
        BatonActivities::start_agent_task,
        FakeActivities::start_agent_task,
    );
    same(
        BatonActivities::cancel_context_tasks,
        FakeActivities::cancel_context_tasks,
    );
    same(
        BatonActivities::get_remote_task,
        FakeActivities::get_remote_task,
    );
    same(
        BatonActivities::follow_remote_task,
        FakeActivities::follow_remote_task,
    );
    same(
        BatonActivities::register_remote_push,
        FakeActivities::register_remote_push,
    );
    same(
        BatonActivities::delete_remote_push,
        FakeActivities::delete_remote_push,
    );
    same(
        BatonActivities::cancel_remote_task,
        FakeActivities::cancel_remote_task,
    );
    same(
        BatonActivities::send_remote_reply,
        FakeActivities::send_remote_reply,
    );
    same(BatonActivities::deliver_push, FakeActivities::deliver_push);
    same(
        BatonActivities::record_delegation_ends,
        FakeActivities::record_delegation_ends,
    );
    same(
        BatonActivities::report_task_failed,
        FakeActivities::report_task_failed,
    );
    same(BatonActivities::invoke_tool, FakeActivities::invoke_tool);
    same(BatonActivities::invoke_model, FakeActivities::invoke_model);
}

/// How a workflow ended.
#[derive(Debug)]
pub enum Outcome<T> {
    Completed(T),
    /// Failed, with the failure's type and message.
    Failed {
        type_name: String,
        message: String,
    },
    Canceled,
    /// Anything else (terminated, timed out, continued as new): a test that gets it fails.
    Other(String),
}

impl<T: std::fmt::Debug> Outcome<T> {
    pub fn completed(self) -> T {
        match self {
            Outcome::Completed(value) => value,
            other => panic!("expected the workflow to complete, it ended {other:?}"),
        }
    }

    /// The failure's type and message.
    pub fn failed(self) -> (String, String) {
        match self {
            Outcome::Failed { type_name, message } => (type_name, message),
            other => panic!("expected the workflow to fail, it ended {other:?}"),
        }
    }

    pub fn is_canceled(&self) -> bool {
        matches!(self, Outcome::Canceled)
    }
}

/// A dev server, a worker of the real workflows with the fake activities on a task queue of its
/// own, and a client. Dropping it stops the worker, then the server, even when the test failed.
pub struct WorkflowHarness {
    pub task_queue: String,
    pub activities: Arc<Desks>,
    _worker: WorkerThread,
    /// Declared last so it is dropped after the worker.
    pub temporal: TestTemporal,
}

impl WorkflowHarness {
    pub async fn start() -> WorkflowHarness {
        fakes_match_baton_activities();
        let temporal = TestTemporal::start().await;
        let task_queue = format!("workflows-{}", free_port());
        let desks = Arc::new(Desks::new());
        let worker = WorkerThread::start(
            temporal.address().to_string(),
            task_queue.clone(),
            FakeActivities {
                desks: desks.clone(),
            },
        )
        .await;
        WorkflowHarness {
            task_queue,
            activities: desks,
            _worker: worker,
            temporal,
        }
    }

    fn client(&self) -> &Client {
        &self.temporal.client
    }

    /// Starts a `TaskWorkflow` with id `task_id`.
    pub async fn start_task(&self, task_id: &str, input: TaskInput) {
        self.client()
            .start_workflow(
                temporal::TaskWorkflow,
                TaskStart::from(input),
                WorkflowStartOptions::new(self.task_queue.clone(), task_id).build(),
            )
            .await
            .expect("starting the TaskWorkflow");
    }

    /// Starts a `TaskWorkflow` with id `task_id` by its first message, as the A2A gateway does:
    /// update-with-start, the message being the brief.
    pub async fn start_task_by_message(
        &self,
        task_id: &str,
        input: TaskInput,
        brief: InboxMessage,
    ) -> InboxReceipt {
        let options = WorkflowUpdateWithStartOptions::new(
            self.task_queue.clone(),
            task_id,
            WorkflowIdConflictPolicy::UseExisting,
        )
        .build();
        self.client()
            .execute_update_with_start_workflow(
                temporal::TaskWorkflow,
                TaskStart::from(input),
                task_workflow::INBOX,
                brief,
                options,
            )
            .await
            .expect("starting the TaskWorkflow with its first message")
    }

    /// Opens a `TaskWorkflow` with id `task_id` by its first message, as the A2A gateway does
    /// for a `returnImmediately` send: signal-with-start, the message being the brief.
    pub async fn open_task_by_message(&self, task_id: &str, input: TaskInput, brief: InboxMessage) {
        let options = WorkflowStartOptions::new(self.task_queue.clone(), task_id)
            .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
            .build();
        self.client()
            .signal_with_start_workflow(
                temporal::TaskWorkflow,
                TaskStart::from(input),
                task_workflow::FIRST_MESSAGE,
                brief,
                options,
            )
            .await
            .expect("opening the TaskWorkflow with its first message");
    }

    /// A harness with task `t`, "books", started by alice's brief: the task most tests need.
    pub async fn with_books() -> WorkflowHarness {
        let h = WorkflowHarness::start().await;
        h.start_by_alice(task_with("books", "close the books", &["alice"]))
            .await;
        h
    }

    /// Answers the model's next call of task `t` with `text` and no tools, and waits until the
    /// task has taken that turn (and decided what follows it).
    pub async fn answer_and_wait(&self, text: &str) -> TaskView {
        let turn = self.activities.invoke_model.next().await;
        let turns = self.task("t").await.turns;
        turn.reply(answer(text));
        self.wait_for_task("t", "the turn taken", |v| v.turns > turns)
            .await
    }

    /// Starts task `t` by alice's brief (the goal), as the gateway does.
    pub async fn start_by_alice(&self, input: TaskInput) -> InboxReceipt {
        let brief = message("brief", "alice", &input.goal.clone());
        self.start_task_by_message("t", input, brief).await
    }

    /// Runs turn 1 of task `t` as a `spawn_subtask` of "balance" on ledger, and answers the
    /// create with `created`. The stand-in, if one starts, is `t.1`.
    pub async fn spawn_balance(&self, created: StartAgentTaskOut) {
        let a = &self.activities;
        a.invoke_model
            .next()
            .await
            .reply(calls(vec![spawn("c1", "balance", "ledger")]));
        a.start_agent_task.next().await.reply(created);
    }

    /// [`spawn_balance`](Self::spawn_balance), the agent creating the task `r-1` WORKING to be
    /// followed; returns the stand-in's first follow, held.
    pub async fn follow_balance(&self) -> Call<FollowIn, FollowOut> {
        self.spawn_balance(started("r-1", Some(WatchKind::Follow)))
            .await;
        let follow = self.activities.follow_remote_task.next().await;
        assert_eq!(follow.input.task.stand_in_id, "t.1");
        assert_eq!(follow.input.task.remote_task_id, "r-1");
        follow
    }

    /// The `task` query.
    pub async fn task(&self, task_id: &str) -> TaskView {
        self.client()
            .get_workflow_handle::<temporal::TaskWorkflow>(task_id)
            .query(task_workflow::TASK, (), WorkflowQueryOptions::default())
            .await
            .expect("querying the task")
    }

    /// Polls the `task` query until `done` holds; fails naming `what` otherwise.
    pub async fn wait_for_task(
        &self,
        task_id: &str,
        what: &str,
        done: impl Fn(&TaskView) -> bool,
    ) -> TaskView {
        let what = format!("task {task_id}: {what}");
        poll_until(&what, HANG_GUARD, || async {
            let view = self.task(task_id).await;
            done(&view).then_some(view)
        })
        .await
    }

    /// The update `update` of workflow `workflow_id` (of type `W`), through the contract.
    pub async fn update<W, U>(
        &self,
        workflow_id: &str,
        update: U,
        input: U::Input,
    ) -> Result<U::Output, WorkflowUpdateError>
    where
        W: HasWorkflowDefinition<Run = W> + WorkflowDefinition,
        U: UpdateDefinition<Workflow = W>,
        U::Input: Send,
        U::Output: 'static,
    {
        self.client()
            .get_workflow_handle::<W>(workflow_id)
            .execute_update(update, input, WorkflowExecuteUpdateOptions::default())
            .await
    }

    /// The signal `signal` to task `task_id`, through the contract.
    pub async fn signal<S>(&self, task_id: &str, signal: S, input: S::Input)
    where
        S: SignalDefinition<Workflow = temporal::TaskWorkflow>,
        S::Input: Send,
    {
        let name = signal.name().to_string();
        self.client()
            .get_workflow_handle::<temporal::TaskWorkflow>(task_id)
            .signal(signal, input, WorkflowSignalOptions::default())
            .await
            .unwrap_or_else(|error| panic!("signalling {name}: {error}"));
    }

    /// A participant's message: the `inbox` update, whose validator may refuse it.
    pub async fn send(
        &self,
        task_id: &str,
        message: InboxMessage,
    ) -> Result<InboxReceipt, WorkflowUpdateError> {
        self.update(task_id, task_workflow::INBOX, message).await
    }

    /// Registers a webhook with the `set_push_config` update.
    pub async fn set_push_config(
        &self,
        task_id: &str,
        config: PushConfig,
    ) -> Result<PushConfig, WorkflowUpdateError> {
        self.update(task_id, task_workflow::SET_PUSH_CONFIG, config)
            .await
    }

    /// The `cancel` signal.
    pub async fn cancel(&self, task_id: &str, reason: &str) {
        self.signal(task_id, task_workflow::CANCEL, reason.to_string())
            .await;
    }

    /// A Temporal cancel request, as `temporal workflow cancel` sends it.
    pub async fn request_cancel(&self, workflow_id: &str) {
        self.client()
            .get_workflow_handle::<temporal::TaskWorkflow>(workflow_id)
            .cancel(WorkflowCancelOptions::default())
            .await
            .expect("requesting cancellation");
    }

    /// The `child_done` signal, as a stand-in sends it.
    pub async fn child_done(&self, task_id: &str, done: ChildDone) {
        self.signal(task_id, task_workflow::CHILD_DONE, done).await;
    }

    /// How the task ended.
    pub async fn task_outcome(&self, task_id: &str) -> Outcome<TaskView> {
        self.ended::<temporal::TaskWorkflow>(task_id, &format!("task {task_id} to end"))
            .await
    }

    /// The stand-in's `task` query.
    pub async fn stand_in(&self, stand_in_id: &str) -> RemoteView {
        self.client()
            .get_workflow_handle::<temporal::RemoteTaskWorkflow>(stand_in_id)
            .query(
                remote_task_workflow::TASK,
                (),
                WorkflowQueryOptions::default(),
            )
            .await
            .expect("querying the stand-in")
    }

    /// How the stand-in ended.
    pub async fn stand_in_outcome(&self, stand_in_id: &str) -> Outcome<RemoteView> {
        let what = format!("stand-in {stand_in_id} to end");
        self.ended::<temporal::RemoteTaskWorkflow>(stand_in_id, &what)
            .await
    }

    /// How workflow `id` of type `W` ended, waited for under the hang guard (`what` names it).
    async fn ended<W>(&self, id: &str, what: &str) -> Outcome<W::Output>
    where
        W: HasWorkflowDefinition,
    {
        let handle = self.client().get_workflow_handle::<W>(id);
        outcome(
            within(
                what,
                HANG_GUARD,
                handle.get_result(WorkflowGetResultOptions::default()),
            )
            .await,
        )
    }

    /// A push to the stand-in: the `remote_push` update, as the push receiver sends it.
    pub async fn push(&self, stand_in_id: &str, push: PushIn) -> Result<(), WorkflowUpdateError> {
        self.update(stand_in_id, remote_task_workflow::REMOTE_PUSH, push)
            .await
    }

    /// Polls the workflow's history until `found` holds for one of its events; fails naming
    /// `what` otherwise.
    pub async fn wait_for_event(
        &self,
        workflow_id: &str,
        what: &str,
        found: impl Fn(&HistoryEvent) -> bool,
    ) -> HistoryEvent {
        let what = format!("{workflow_id}: {what}");
        poll_until(&what, HANG_GUARD, || async {
            self.temporal
                .history(workflow_id)
                .await
                .into_iter()
                .find(|event| found(event))
        })
        .await
    }

    /// How many times the workflow scheduled the activity `activity_type`, as its history says.
    pub async fn scheduled(&self, workflow_id: &str, activity_type: &str) -> usize {
        self.temporal
            .history(workflow_id)
            .await
            .iter()
            .filter(|event| match &event.attributes {
                Some(Attributes::ActivityTaskScheduledEventAttributes(scheduled)) => scheduled
                    .activity_type
                    .as_ref()
                    .is_some_and(|t| t.name == activity_type),
                _ => false,
            })
            .count()
    }

    /// How many events of `event_type` the workflow's history holds.
    pub async fn count_events(&self, workflow_id: &str, event_type: EventType) -> usize {
        self.temporal
            .history(workflow_id)
            .await
            .iter()
            .filter(|event| event.event_type() == event_type)
            .count()
    }
}

/// The refusal an update was refused with; fails the test when it was not refused with one.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, WorkflowUpdateError>) -> Refusal {
    match result {
        Err(WorkflowUpdateError::Failed(failure)) => Refusal::parse(&failure.message)
            .unwrap_or_else(|| panic!("refused without a refusal code: {failure:?}")),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The outcome a workflow result says.
fn outcome<T>(result: Result<T, WorkflowGetResultError>) -> Outcome<T> {
    match result {
        Ok(value) => Outcome::Completed(value),
        Err(WorkflowGetResultError::Failed(error)) => {
            let failure = error.failure();
            let type_name = match &failure.failure_info {
                Some(FailureInfo::ApplicationFailureInfo(info)) => info.r#type.clone(),
                _ => String::new(),
            };
            Outcome::Failed {
                type_name,
                message: failure.message.clone(),
            }
        }
        Err(WorkflowGetResultError::Cancelled { .. }) => Outcome::Canceled,
        Err(other) => Outcome::Other(other.to_string()),
    }
}

/// The worker, on a thread of its own: `Worker::run` is not `Send`, and a runtime of its own
/// keeps it independent of the test's, whatever the test's flavour.
struct WorkerThread {
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WorkerThread {
    async fn start(address: String, task_queue: String, fakes: FakeActivities) -> WorkerThread {
        let stop = fakes.desks.stop.clone();
        let (ready, is_ready) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("workflow-harness-worker".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("the worker's tokio runtime");
                runtime.block_on(run_worker(address, task_queue, fakes, ready));
            })
            .expect("starting the worker thread");
        let worker = WorkerThread {
            stop,
            thread: Some(thread),
        };
        match within("the harness worker to start", HANG_GUARD, is_ready).await {
            Ok(Ok(())) => worker,
            Ok(Err(error)) => panic!("the harness worker did not start: {error}"),
            Err(_) => panic!("the harness worker thread ended before it started"),
        }
    }
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        self.stop.send_replace(true);
        let Some(thread) = self.thread.take() else {
            return;
        };
        // The worker stops within its shutdown grace; a test never hangs on it.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !thread.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if thread.is_finished() {
            thread.join().ok();
        } else {
            eprintln!("the harness worker did not stop within 30 s; leaving it");
        }
    }
}

/// Connects, builds the workers of the task queue and its follow queue, says it is ready, and
/// runs them until the harness stops.
async fn run_worker(
    address: String,
    task_queue: String,
    fakes: FakeActivities,
    ready: oneshot::Sender<Result<(), String>>,
) {
    let built = build_workers(&address, &task_queue, &fakes).await;
    let (_runtime, mut worker, mut follow_worker) = match built {
        Ok(built) => {
            ready.send(Ok(())).ok();
            built
        }
        Err(error) => {
            ready.send(Err(format!("{error:#}"))).ok();
            return;
        }
    };
    let shutdown = worker.shutdown_handle();
    let shutdown_follows = follow_worker.shutdown_handle();
    let mut stop = fakes.desks.stop.subscribe();
    let stopper = async move {
        stop.wait_for(|stopped| *stopped).await.ok();
        shutdown();
        shutdown_follows();
    };
    let (ran, followed, ()) = tokio::join!(worker.run(), follow_worker.run(), stopper);
    if let Err(error) = ran.and(followed) {
        eprintln!("the harness worker stopped with an error: {error}");
    }
}

async fn build_workers(
    address: &str,
    task_queue: &str,
    fakes: &FakeActivities,
) -> anyhow::Result<(Runtime, Worker, Worker)> {
    let runtime = Runtime::from_current_tokio(
        RuntimeOptions::builder()
            .build()
            .map_err(|error| anyhow::anyhow!(error))?,
    )?;
    let target = Url::parse(&format!("http://{address}"))?;
    let connection = Connection::connect(
        ConnectionOptions::new(target)
            .identity("baton-workflow-harness".to_string())
            .build(),
    )
    .await?;
    let client = Client::new(connection, ClientOptions::new("default").build())?;
    let options = WorkerOptions::new(task_queue.to_string())
        .register_workflow::<TaskWorkflow>()?
        .register_workflow::<RemoteTaskWorkflow>()?
        .register_activities(fakes.clone())
        .graceful_shutdown_period(Duration::from_secs(1))
        .build();
    let follow_options = WorkerOptions::new(follow_task_queue(task_queue))
        .register_activities(fakes.clone())
        .max_cached_workflows(0)
        .graceful_shutdown_period(Duration::from_secs(1))
        .build();
    let worker = Worker::new(&runtime, client.clone(), options)?;
    let follow_worker = Worker::new(&runtime, client, follow_options)?;
    Ok((runtime, worker, follow_worker))
}

// What tests send and answer, built in one place.

/// A participant of the task.
pub fn participant(id: &str) -> Participant {
    Participant {
        id: id.to_string(),
        kind: ParticipantKind::Human,
        role: ParticipantRole::Reporter,
        display_name: None,
    }
}

/// A delegated task's input with `participants` and default limits.
pub fn task_with(name: &str, goal: &str, participants: &[&str]) -> TaskInput {
    let mut input = crate::engine::task_input(name, goal);
    input.participants = participants.iter().map(|id| participant(id)).collect();
    input
}

/// A participant's message.
pub fn message(message_id: &str, from: &str, text: &str) -> InboxMessage {
    InboxMessage {
        message_id: message_id.to_string(),
        participant_id: from.to_string(),
        text: text.to_string(),
        push_config: None,
        stand_in_id: None,
        attachments: Vec::new(),
    }
}

/// The agents every fake model turn reports in its roster.
pub const ROSTER: [&str; 2] = ["self", "ledger"];

/// A model turn that answers `text` without tools.
pub fn answer(text: &str) -> InvokeModelOut {
    turn(Some(text), Vec::new())
}

/// A model turn that calls `calls`.
pub fn calls(calls: Vec<ToolCallRecord>) -> InvokeModelOut {
    turn(None, calls)
}

fn turn(text: Option<&str>, tool_calls: Vec<ToolCallRecord>) -> InvokeModelOut {
    InvokeModelOut {
        text: text.map(str::to_string),
        tool_calls,
        input_tokens: 1,
        output_tokens: 1,
        prefix_sha256: "fake".into(),
        agents: ROSTER.map(str::to_string).to_vec(),
        cut: 0,
        mcp_tools: Vec::new(),
        closed_agents: Vec::new(),
        cost_nanos: 0,
    }
}

/// A tool call with id `id`.
pub fn tool_call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCallRecord {
    ToolCallRecord {
        id: id.to_string(),
        name: name.to_string(),
        arguments: arguments.to_string(),
        refused: None,
    }
}

/// A `spawn_subtask` call of the sub-task `name` on `agent`.
pub fn spawn(id: &str, name: &str, agent: &str) -> ToolCallRecord {
    tool_call(
        id,
        "spawn_subtask",
        serde_json::json!({"name": name, "goal": format!("do {name}"), "agent": agent}),
    )
}

/// The remote task as an agent reports it.
pub fn remote(remote_task_id: &str, state: TaskState, text: Option<&str>) -> RemoteSnapshot {
    RemoteSnapshot {
        remote_task_id: remote_task_id.to_string(),
        state,
        sub_state: None,
        text: text.map(str::to_string),
        carries_files: false,
        usage: None,
    }
}

/// `start_agent_task`'s answer: the agent has the task `remote_task_id`, WORKING, watched by
/// `watch` (None: the stand-in registers a push).
pub fn started(remote_task_id: &str, watch: Option<WatchKind>) -> StartAgentTaskOut {
    StartAgentTaskOut::Started {
        task: remote(remote_task_id, TaskState::Working, None),
        deadline_secs: None,
        watch,
        sent_again: false,
    }
}

/// A follow's answer: the task changed to `state` with `text`.
pub fn changed(remote_task_id: &str, state: TaskState, text: &str) -> FollowOut {
    FollowOut {
        changed: Some(remote(remote_task_id, state, Some(text))),
    }
}

/// The note the parent's model reads when sub-task `name` (row `row`, remote task `remote_id`
/// on ledger) reports `state` with `summary` (docs/engine.md, "What the parent's model is
/// told").
pub fn ledger_note(name: &str, row: &str, remote_id: &str, state: &str, summary: &str) -> String {
    format!("Sub-task {name} (id {row}, task {remote_id} on ledger) is {state}: {summary}")
}

/// What a model turn's history holds, item by item: `call` (the model's turn), `result` (a
/// tool's), `message` (a participant's) or `note` (about a sub-task).
pub fn history_kinds(turn: &InvokeModelIn) -> Vec<&'static str> {
    turn.history
        .iter()
        .map(|item| match item {
            HistoryItem::Assistant { .. } => "call",
            HistoryItem::ToolResult { .. } => "result",
            HistoryItem::User {
                source: Source::Participant,
                ..
            } => "message",
            HistoryItem::User { .. } => "note",
        })
        .collect()
}

/// The participants' messages a model turn reads, in order.
pub fn participant_texts(turn: &InvokeModelIn) -> Vec<String> {
    user_texts(turn, Source::Participant)
}

/// The notes about sub-tasks a model turn reads, in order.
pub fn notes(turn: &InvokeModelIn) -> Vec<String> {
    user_texts(turn, Source::Agent)
}

fn user_texts(turn: &InvokeModelIn, wanted: Source) -> Vec<String> {
    turn.history
        .iter()
        .filter_map(|item| match item {
            HistoryItem::User { text, source, .. } if *source == wanted => Some(text.clone()),
            _ => None,
        })
        .collect()
}
