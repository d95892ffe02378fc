//! Delivering a message over Temporal: the inbox update of the task it goes to, or the start of
//! the task it opens.

use a2a::{A2AError, ListTasksRequest, SendMessageRequest, Task};
use a2a_server::ServiceParams;
use baton_a2a::url_fetch::FetchError;
use baton_proto::temporal::search_attributes::{
    A2A_CONTEXT_ID, A2A_STATUS_TIMESTAMP, A2A_TASK_STATE, BATON_AGENT, BATON_PARTICIPANTS,
};
use baton_proto::temporal::{TaskWorkflow, task_workflow};
use baton_proto::{Attachment, InboxMessage, InboxReceipt, TaskInput, TaskMessage, TaskView};
use temporalio_client::errors::{WorkflowStartError, WorkflowUpdateWithStartError};
use temporalio_client::{
    WorkflowIdConflictPolicy, WorkflowIdReusePolicy, WorkflowStartOptions,
    WorkflowUpdateWithStartOptions,
};
use temporalio_common::search_attributes::SearchAttributes;

use super::TemporalHandler;
use crate::continuation::continuing;
use crate::intake_plan::{NewTask, Plan, plan};
use crate::listing::{Freshness, list_tasks};
use crate::parts::{IncomingPart, held_bytes, within_task_limit};
use crate::temporal_errors::{
    RETRY_DELAY, retry_info, temporal_unreachable, unreachable, update_error,
};

/// Where a message was delivered, and what became of it.
pub(crate) struct Delivered {
    pub(crate) task_id: String,
    pub(crate) context_id: Option<String>,
    pub(crate) arrival: Arrival,
}

/// What became of a delivered message.
pub(crate) enum Arrival {
    /// The task took it: the inbox's receipt.
    Taken(InboxReceipt),
    /// Temporal holds the new task it opens, with the message (signal-with-start): the task as
    /// it is until a worker takes the message.
    Opened(Box<TaskView>),
    /// Temporal holds the new task, but no worker took the message within the call timeout.
    Unread,
}

/// A new task Temporal holds that no worker has read yet: SUBMITTED, with the brief it was
/// created with in its input.
pub(crate) fn submitted(delivered: &Delivered) -> Task {
    Task {
        id: delivered.task_id.clone(),
        context_id: delivered.context_id.clone().unwrap_or_default(),
        status: a2a::TaskStatus {
            state: a2a::TaskState::Submitted,
            message: None,
            timestamp: Some(std::time::SystemTime::now().into()),
        },
        artifacts: None,
        history: None,
        metadata: None,
    }
}

impl TemporalHandler {
    /// The conversation a new task in `context_id` continues: that of the caller's newest task
    /// there, bounded. Empty when the context holds no task of the caller's; a lookup that
    /// fails is logged, and the task starts afresh.
    pub(crate) async fn earlier_in_context(
        &self,
        params: &ServiceParams,
        context_id: &str,
    ) -> Vec<TaskMessage> {
        let newest = ListTasksRequest {
            context_id: Some(context_id.to_string()),
            status: None,
            page_size: Some(1),
            page_token: None,
            history_length: Some(0),
            status_timestamp_after: None,
            include_artifacts: None,
            tenant: None,
        };
        let listed = match self
            .tasks
            .bounded(
                "looking up the context",
                list_tasks(&self.tasks, &self.listings, params, newest, Freshness::Now),
            )
            .await
            .and_then(|listed| listed)
        {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(context = %context_id, "the task starts without its context's earlier conversation: {}", error.message);
                return Vec::new();
            }
        };
        let Some(previous) = listed.tasks.first() else {
            return Vec::new();
        };
        match self.tasks.view(&previous.id).await {
            Ok(view) => continuing(&view),
            Err(error) => {
                tracing::warn!(context = %context_id, "the task starts without its context's earlier conversation: {}", error.message);
                Vec::new()
            }
        }
    }

    /// Delivers a message as [`plan`] reads it: the inbox update of its task, starting the task
    /// if it is new. A webhook sent with it (`configuration.taskPushNotificationConfig`)
    /// travels in the same update, so it is in place before the message causes any change. A
    /// new task whose sender will not wait (`immediately`) is opened with signal-with-start
    /// instead, which Temporal answers without a worker.
    pub(crate) async fn deliver(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
        immediately: bool,
    ) -> Result<Delivered, A2AError> {
        match plan(&self.config, params, req)? {
            Plan::FollowUp {
                task_id,
                sender,
                mut inbox,
                parts,
            } => {
                if parts.iter().any(|part| part.bytes().is_some()) {
                    let view = self.tasks.view(&task_id).await?;
                    within_task_limit(
                        held_bytes(&view.messages),
                        &parts,
                        &self.config.part_limits,
                    )?;
                }
                inbox.attachments = self.keep(parts).await?;
                self.follow_up(task_id, &sender, inbox).await
            }
            Plan::NewTask(mut task) => {
                within_task_limit(0, &task.parts, &self.config.part_limits)?;
                task.inbox.attachments = self.keep(std::mem::take(&mut task.parts)).await?;
                if task.continues_a_context {
                    task.input.earlier = self.earlier_in_context(params, &task.context_id).await;
                }
                self.start(task, immediately).await
            }
        }
    }

    /// Stores the bytes of `parts` in the content store and returns them as the task keeps
    /// them, by reference. A store that does not answer refuses the message (retryable): the
    /// sender still holds it, and what was stored before is stored again at no cost, by digest.
    /// A file given by URL is fetched first when `content.fetch_urls` is on; one that cannot
    /// be refuses the message, naming the URL and why.
    async fn keep(&self, parts: Vec<IncomingPart>) -> Result<Vec<Attachment>, A2AError> {
        let mut attachments = Vec::with_capacity(parts.len());
        for part in parts {
            let bytes = match (part.bytes(), part.url()) {
                (Some(bytes), _) => Some(bytes.clone()),
                (None, Some(url)) if self.config.part_limits.fetch_urls => {
                    Some(self.fetch(url).await?)
                }
                (None, _) => None,
            };
            let stored = match bytes {
                Some(bytes) => Some(self.content.put(bytes).await.map_err(|error| {
                    tracing::warn!("a message's file could not be stored: {error}");
                    A2AError::internal(format!(
                        "the message's files cannot be stored now ({error}); retry later (a \
                         message sent again with the same messageId is taken once)"
                    ))
                    .with_details(vec![retry_info(RETRY_DELAY)])
                })?),
                None => None,
            };
            attachments.push(part.attachment(stored));
        }
        Ok(attachments)
    }

    /// The bytes of a file given by URL, as a webhook is called (no redirect, outside
    /// addresses only unless private ones are allowed), at most `content.max_part_bytes`.
    async fn fetch(&self, url: &str) -> Result<bytes::Bytes, A2AError> {
        let parsed = url::Url::parse(url)
            .map_err(|error| A2AError::invalid_params(format!("{url} is not a URL: {error}")))?;
        let max = self.config.part_limits.max_part_bytes;
        match self.urls.fetch(&parsed, max).await {
            Ok(bytes) => Ok(bytes),
            Err(FetchError::Refused(why)) => Err(A2AError::invalid_params(format!(
                "the file at {url} was not fetched: {why}; send its bytes instead"
            ))),
            Err(FetchError::Failed(why)) => {
                tracing::warn!("a message's file could not be fetched from {url}: {why}");
                Err(A2AError::internal(format!(
                    "the file at {url} could not be fetched now ({why}); retry later"
                ))
                .with_details(vec![retry_info(RETRY_DELAY)]))
            }
        }
    }

    /// A message to task `task_id`, which must exist, have `sender` as a participant and still
    /// run: the task's inbox takes it.
    async fn follow_up(
        &self,
        task_id: String,
        sender: &str,
        inbox: InboxMessage,
    ) -> Result<Delivered, A2AError> {
        let view = self.tasks.view(&task_id).await?;
        if !view.participants.iter().any(|p| p.id == sender) {
            return Err(A2AError::task_not_found(&task_id));
        }
        if view.state.is_terminal() {
            return Err(A2AError::unsupported_operation(format!(
                "task {task_id} is in a terminal state ({}) and takes no more messages",
                view.state
            )));
        }
        let receipt = self
            .update_task(
                &task_id,
                task_workflow::INBOX,
                inbox,
                "delivering the message",
            )
            .await?;
        Ok(Delivered {
            task_id,
            context_id: view.context_id,
            arrival: Arrival::Taken(receipt),
        })
    }

    /// Starts `task` with its first message: update-with-start, which answers once a worker
    /// took the message, or, `immediately`, signal-with-start ([`Self::open`]).
    async fn start(&self, task: NewTask, immediately: bool) -> Result<Delivered, A2AError> {
        let NewTask {
            task_id,
            context_id,
            sender,
            input,
            inbox,
            ..
        } = task;
        let message_id = inbox.message_id.clone();
        let indexed = self.config.search_attributes.then(|| {
            SearchAttributes::new([
                A2A_CONTEXT_ID.value_set(context_id.clone()),
                A2A_TASK_STATE.value_set("TASK_STATE_SUBMITTED".to_string()),
                A2A_STATUS_TIMESTAMP.value_set(std::time::SystemTime::now().into()),
                BATON_AGENT.value_set(self.config.agent_id.clone()),
                BATON_PARTICIPANTS
                    .value_set(input.participants.iter().map(|p| p.id.clone()).collect()),
            ])
        });
        // What the Web UI shows for the task in its list.
        let summary = format!("{} (from {sender})", input.name);
        if immediately {
            let options =
                WorkflowStartOptions::new(self.config.task_queue.clone(), task_id.clone())
                    .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
                    // An ended task is never started again by a repeat of the message that created it.
                    .id_reuse_policy(WorkflowIdReusePolicy::RejectDuplicate)
                    .maybe_search_attributes(indexed)
                    .static_summary(summary)
                    .task_timeout(task_workflow::WORKFLOW_TASK_TIMEOUT)
                    .build();
            let arrival = self.open(&task_id, input, inbox, options).await?;
            return Ok(Delivered {
                task_id,
                context_id: Some(context_id),
                arrival,
            });
        }
        let options = WorkflowUpdateWithStartOptions::new(
            self.config.task_queue.clone(),
            task_id.clone(),
            WorkflowIdConflictPolicy::UseExisting,
        )
        .id_reuse_policy(WorkflowIdReusePolicy::RejectDuplicate)
        .maybe_search_attributes(indexed)
        .static_summary(summary)
        .task_timeout(task_workflow::WORKFLOW_TASK_TIMEOUT)
        .build();
        let started = self.tasks.client.execute_update_with_start_workflow(
            TaskWorkflow,
            input.into(),
            task_workflow::INBOX,
            inbox,
            options,
        );
        let started = tokio::time::timeout(self.config.temporal_timeout, started).await;
        self.wrote(&task_id);
        let receipt = match started {
            Ok(Ok(receipt)) => receipt,
            // The task this message created has ended: the message is a repeat, answered with
            // the task as it is, never a second run of it.
            Ok(Err(WorkflowUpdateWithStartError::Start(WorkflowStartError::AlreadyStarted {
                ..
            }))) => self.repeat_of_ended(&task_id, &message_id).await?,
            Ok(Err(WorkflowUpdateWithStartError::Update(e))) => {
                return Err(update_error(&task_id, "delivering the message", e));
            }
            Ok(Err(
                WorkflowUpdateWithStartError::Start(WorkflowStartError::Rpc(status))
                | WorkflowUpdateWithStartError::Rpc(status),
            )) if unreachable(&status) => {
                return Err(temporal_unreachable("starting the task", &status));
            }
            Ok(Err(other)) => {
                return Err(A2AError::internal(format!(
                    "the task could not be started: {other}"
                )));
            }
            // No worker took the message in time. If Temporal has the task, it holds the
            // brief in its input and runs once a worker comes: the caller gets it SUBMITTED.
            Err(_) if self.tasks.exists(&task_id).await => {
                return Ok(Delivered {
                    task_id,
                    context_id: Some(context_id),
                    arrival: Arrival::Unread,
                });
            }
            Err(_) => return Err(self.tasks.unavailable("starting the task")),
        };
        Ok(Delivered {
            task_id,
            context_id: Some(context_id),
            arrival: Arrival::Taken(receipt),
        })
    }

    /// Opens a new task with its first message in one signal-with-start: Temporal answers once
    /// it holds both, and the task is what [`TaskView::opened`] says until a worker takes the
    /// message. A repeat lands on the same task, whose inbox drops the duplicate; a repeat for
    /// a task that has ended is answered with the task as it is.
    pub(crate) async fn open(
        &self,
        task_id: &str,
        input: TaskInput,
        first: InboxMessage,
        options: WorkflowStartOptions,
    ) -> Result<Arrival, A2AError> {
        let now = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let opened = Box::new(TaskView::opened(task_id, &input, &first, now));
        let message_id = first.message_id.clone();
        let started = self.tasks.client.signal_with_start_workflow(
            TaskWorkflow,
            input.into(),
            task_workflow::FIRST_MESSAGE,
            first,
            options,
        );
        let started = tokio::time::timeout(self.config.temporal_timeout, started).await;
        self.wrote(task_id);
        match started {
            Ok(Ok(_)) => Ok(Arrival::Opened(opened)),
            Ok(Err(WorkflowStartError::AlreadyStarted { .. })) => Ok(Arrival::Taken(
                self.repeat_of_ended(task_id, &message_id).await?,
            )),
            Ok(Err(WorkflowStartError::Rpc(status))) if unreachable(&status) => {
                Err(temporal_unreachable("starting the task", &status))
            }
            // Temporal refuses to start again a task that has ended (its id is never reused):
            // the message is a repeat of the one that created it.
            Ok(Err(other)) => match self.repeat_of_ended(task_id, &message_id).await {
                Ok(receipt) if receipt.state.is_terminal() => Ok(Arrival::Taken(receipt)),
                _ => Err(A2AError::internal(format!(
                    "the task could not be started: {other}"
                ))),
            },
            // Signal-with-start is one write: a task Temporal holds holds the message too.
            Err(_) if self.tasks.exists(task_id).await => Ok(Arrival::Opened(opened)),
            Err(_) => Err(self.tasks.unavailable("starting the task")),
        }
    }

    /// The receipt for a repeat of the message that created a task that has since ended: a
    /// duplicate, with the task as it is.
    pub(crate) async fn repeat_of_ended(
        &self,
        task_id: &str,
        message_id: &str,
    ) -> Result<InboxReceipt, A2AError> {
        let view = self.tasks.view(task_id).await?;
        Ok(InboxReceipt {
            message_id: message_id.to_string(),
            duplicate: true,
            state: view.state,
            cursor: view.event_seq,
        })
    }
}
