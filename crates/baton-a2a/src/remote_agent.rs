//! One remote A2A agent, reached through the official client over the interface its card offers:
//! the calls Baton's activities make (send, get, subscribe, cancel, push configs) and how its tasks
//! are watched.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use a2a::{
    AgentCard, AgentInterface, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetTaskRequest, ListTasksRequest, ListTasksResponse, Message, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest,
    TRANSPORT_PROTOCOL_GRPC, Task, TaskPushNotificationConfig,
};
use a2a_client::middleware::CallInterceptor;
use a2a_client::{A2AClient, A2AClientFactory, BoxStream, ServiceParams, Transport};
use async_trait::async_trait;
use baton_config::{RemoteAgentSpec, Secret, Updates};
use baton_core::roster::{RosterAgent, RosterSkill};
use baton_proto::WatchKind;
use tracing::Instrument;
use tracing::field::Empty;
use url::Url;

use crate::AgentError;
use crate::card_fetch::{CardLimits, card_url, fetch_card};
use crate::card_validation::{
    ValidatedCard, check_pinned_version, validate_built_card, validate_card,
};
use crate::extensions::{PARTICIPANT_HEADER, TASK_EXTENSION};
use crate::grpc_transport::{GrpcFactory, grpc_url};
use crate::outbound_auth::{Presenter, plan};
use crate::registry::CONNECT_TIMEOUT;

/// Where an agent's card came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardSource {
    Fetched,
    /// Built from settings in this process: `self`, or another Baton agent of the same process.
    Built,
}

/// A registered agent: its validated card and an A2A client on the chosen interface. Every call
/// carries `A2A-Version: 1.0`, `X-Participant-Id`, an `A2A-Extensions` naming only extensions
/// the card advertises, and the W3C `traceparent` of the task it is made for.
pub struct RemoteAgent {
    id: String,
    card: ValidatedCard,
    source: CardSource,
    updates: Updates,
    follow_interval: Duration,
    push_safety_fetch: Duration,
    create_timeout: Duration,
    listing_wait: Duration,
    deadline: Duration,
    client: A2AClient<Box<dyn Transport>>,
}

impl RemoteAgent {
    /// Fetches and validates the card of `spec`, then builds the client. Nothing else is sent to
    /// the agent before its card is accepted.
    pub async fn connect(
        spec: &RemoteAgentSpec,
        participant: &str,
        http: &reqwest::Client,
        limits: CardLimits,
    ) -> Result<RemoteAgent, AgentError> {
        let raw = fetch_card(http, &spec.id, &spec.url, limits).await?;
        let card = validate_card(&spec.id, &card_url(&spec.url), &raw)?;
        if !spec.allow_other_origin {
            check_same_origin(spec, &card.interface)?;
        }
        let credential = plan(&spec.id, &spec.url, &card.card, spec.auth.as_ref(), http)?;
        Self::build(
            spec,
            card,
            CardSource::Fetched,
            participant,
            credential,
            http,
        )
        .await
    }

    /// Registers an agent whose card Baton built itself, with nothing fetched: an agent of this
    /// deployment, which every call proves `participant` to with the deployment's
    /// `self_call_token` for it.
    pub async fn from_built_card(
        spec: &RemoteAgentSpec,
        card: &AgentCard,
        participant: &str,
        self_call_token: &str,
        http: &reqwest::Client,
    ) -> Result<RemoteAgent, AgentError> {
        let card = validate_built_card(&spec.id, card)?;
        let credential = Presenter::Header {
            name: "Authorization".into(),
            value: Secret::new(format!("Bearer {self_call_token}")),
        };
        Self::build(
            spec,
            card,
            CardSource::Built,
            participant,
            Some(credential),
            http,
        )
        .await
    }

    async fn build(
        spec: &RemoteAgentSpec,
        card: ValidatedCard,
        source: CardSource,
        participant: &str,
        credential: Option<Presenter>,
        http: &reqwest::Client,
    ) -> Result<RemoteAgent, AgentError> {
        check_pinned_version(&spec.id, spec.version.as_deref(), &card.card)?;
        // A credential says who Baton is, except to its own deployment, which takes the agent
        // it names; an id asserted beside another participant's credential would be refused.
        let asserts_participant = source == CardSource::Built || credential.is_none();
        let headers = CallHeaders {
            participant: asserts_participant.then(|| participant.to_string()),
            extensions: (!card.extensions.is_empty()).then(|| card.extensions.join(", ")),
            credential,
        };
        let factory = A2AClientFactory::builder()
            .register(Arc::new(a2a_client::jsonrpc::JsonRpcTransportFactory::new(
                Some(http.clone()),
            )))
            .register(Arc::new(a2a_client::rest::RestTransportFactory::new(Some(
                http.clone(),
            ))))
            .register(Arc::new(GrpcFactory::new(&spec.url, CONNECT_TIMEOUT)))
            .with_interceptor(Arc::new(headers))
            .build();
        // Offer the factory only the interface validation chose, so the card's order of
        // preference wins over the factory's own.
        let mut chosen = card.card.clone();
        chosen.supported_interfaces = vec![card.interface.clone()];
        let client = factory.create_from_card(&chosen).await.map_err(|e| {
            AgentError::NoCompatibleInterface {
                agent: spec.id.clone(),
                reason: e.message,
            }
        })?;
        Ok(RemoteAgent {
            id: spec.id.clone(),
            card,
            source,
            updates: spec.updates,
            follow_interval: spec.follow_interval,
            push_safety_fetch: spec.push_safety_fetch,
            create_timeout: spec.create_timeout,
            listing_wait: spec.listing_wait,
            deadline: spec.deadline,
            client,
        })
    }

    /// The agent's id (`agents[].id`, or `self`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The card as validated.
    pub fn card(&self) -> &AgentCard {
        &self.card.card
    }

    /// The interface every call goes to.
    pub fn interface(&self) -> &AgentInterface {
        &self.card.interface
    }

    /// The extensions Baton implements that this agent advertises.
    pub fn extensions(&self) -> &[String] {
        &self.card.extensions
    }

    /// Whether the card was fetched or built in this process.
    pub fn source(&self) -> CardSource {
        self.source
    }

    /// The pause before following a task again after its stream ended or failed
    /// (`agents[].follow_interval`).
    pub fn follow_interval(&self) -> Duration {
        self.follow_interval
    }

    /// How often a push-watched sub-task on this agent is fetched anyway.
    pub fn push_safety_fetch(&self) -> Duration {
        self.push_safety_fetch
    }

    /// How long creating a sub-task on this agent may go without an answer before it fails.
    pub fn create_timeout(&self) -> Duration {
        self.create_timeout
    }

    /// How long a retried creation waits for the agent to list a task it took the brief for
    /// (`agents[].listing_wait`).
    pub fn listing_wait(&self) -> Duration {
        self.listing_wait
    }

    /// How long a sub-task on the agent may run (`agents[].deadline`).
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The watch a parked sub-task on this agent gets. `auto` pushes only when the card
    /// advertises push and Baton has a public URL for its push receiver.
    pub fn watch(&self, push_receiver_reachable: bool) -> WatchKind {
        match self.updates {
            Updates::Off => WatchKind::Off,
            Updates::Follow => WatchKind::Follow,
            Updates::Auto => {
                let push = self.card.card.capabilities.push_notifications == Some(true);
                if push && push_receiver_reachable {
                    WatchKind::Push
                } else {
                    WatchKind::Follow
                }
            }
        }
    }

    /// What the roster shows of this agent: never the URL or any other setting.
    pub fn roster_entry(&self) -> RosterAgent {
        let card = &self.card.card;
        RosterAgent {
            id: self.id.clone(),
            name: card.name.clone(),
            description: card.description.clone(),
            skills: card
                .skills
                .iter()
                .map(|s| RosterSkill {
                    name: s.name.clone(),
                    description: s.description.clone(),
                })
                .collect(),
        }
    }

    /// Whether the card advertises the task extension, so a brief may carry a task envelope.
    pub fn speaks_task_extension(&self) -> bool {
        self.card.extensions.iter().any(|uri| uri == TASK_EXTENSION)
    }

    /// SendStreamingMessage. Dropping the stream hangs up.
    pub async fn send_streaming(
        &self,
        message: Message,
    ) -> Result<BoxStream<'static, Result<StreamResponse, a2a::A2AError>>, AgentError> {
        let request = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        self.traced(
            "SendStreamingMessage",
            self.client.send_streaming_message(&request),
        )
        .await
    }

    /// SendMessage that asks the agent to answer at once (`returnImmediately`), not when the
    /// task next stops: the stand-in watches the task afterwards.
    pub async fn send_message(&self, message: Message) -> Result<SendMessageResponse, AgentError> {
        let request = SendMessageRequest {
            message,
            configuration: Some(SendMessageConfiguration {
                accepted_output_modes: None,
                task_push_notification_config: None,
                history_length: Some(0),
                return_immediately: Some(true),
            }),
            metadata: None,
            tenant: None,
        };
        self.traced("SendMessage", self.client.send_message(&request))
            .await
    }

    /// GetTask on the agent, with the last few messages an answer may be read from
    /// ([`crate::snapshot::ANSWER_HISTORY`]).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, AgentError> {
        self.get_task_with_history(task_id, crate::snapshot::ANSWER_HISTORY)
            .await
    }

    /// GetTask with up to the last `history_length` messages of the task.
    pub async fn get_task_with_history(
        &self,
        task_id: &str,
        history_length: i32,
    ) -> Result<Task, AgentError> {
        let request = GetTaskRequest {
            id: task_id.to_string(),
            history_length: Some(history_length),
            tenant: None,
        };
        self.traced("GetTask", self.client.get_task(&request)).await
    }

    /// ListTasks on the agent: the tasks the caller may see.
    pub async fn list_tasks(
        &self,
        request: &ListTasksRequest,
    ) -> Result<ListTasksResponse, AgentError> {
        self.traced("ListTasks", self.client.list_tasks(request))
            .await
    }

    /// The tasks of `context_id` the caller may see, with no history: where a retried creation
    /// finds what an earlier attempt created. One page of up to `limit`.
    pub async fn tasks_in_context(
        &self,
        context_id: &str,
        limit: i32,
    ) -> Result<Vec<Task>, AgentError> {
        let request = ListTasksRequest {
            context_id: Some(context_id.to_string()),
            status: None,
            page_size: Some(limit),
            page_token: None,
            history_length: Some(0),
            status_timestamp_after: None,
            include_artifacts: Some(false),
            tenant: None,
        };
        Ok(self.list_tasks(&request).await?.tasks)
    }

    /// SubscribeToTask: the task snapshot first, then its events. Dropping the stream hangs up.
    pub async fn subscribe(
        &self,
        task_id: &str,
    ) -> Result<BoxStream<'static, Result<StreamResponse, a2a::A2AError>>, AgentError> {
        let request = SubscribeToTaskRequest {
            id: task_id.to_string(),
            tenant: None,
        };
        self.traced("SubscribeToTask", self.client.subscribe_to_task(&request))
            .await
    }

    /// CancelTask on the agent.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, AgentError> {
        let request = CancelTaskRequest {
            id: task_id.to_string(),
            metadata: None,
            tenant: None,
        };
        self.traced("CancelTask", self.client.cancel_task(&request))
            .await
    }

    /// Registers a webhook for the task; the agent sends `token` with each push.
    pub async fn create_push_config(
        &self,
        task_id: &str,
        url: &str,
        token: &str,
    ) -> Result<TaskPushNotificationConfig, AgentError> {
        let config = TaskPushNotificationConfig {
            url: url.to_string(),
            id: None,
            task_id: task_id.to_string(),
            token: Some(token.to_string()),
            authentication: None,
            tenant: None,
        };
        self.traced(
            "CreateTaskPushNotificationConfig",
            self.client.create_push_config(&config),
        )
        .await
    }

    /// Removes a webhook. The agent must treat a repeat as success.
    pub async fn delete_push_config(
        &self,
        task_id: &str,
        config_id: &str,
    ) -> Result<(), AgentError> {
        let request = DeleteTaskPushNotificationConfigRequest {
            task_id: task_id.to_string(),
            id: config_id.to_string(),
            tenant: None,
        };
        self.traced(
            "DeleteTaskPushNotificationConfig",
            self.client.delete_push_config(&request),
        )
        .await
    }

    /// Runs one call to the agent in a client span (`A2AService/<Method>`, kind client, with
    /// `rpc.system`, `rpc.method`, `baton.agent`), whose context the call's `traceparent`
    /// carries to the agent. A stream is traced until it opens.
    async fn traced<T>(
        &self,
        method: &'static str,
        call: impl Future<Output = Result<T, a2a::A2AError>>,
    ) -> Result<T, AgentError> {
        let span = tracing::info_span!(
            "a2a.client",
            otel.name = %format_args!("A2AService/{method}"),
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            rpc.system = "a2a",
            rpc.method = method,
            baton.agent = %self.id,
        );
        let result = call.instrument(span.clone()).await;
        if let Err(error) = &result {
            span.record("otel.status_code", "error");
            span.record("otel.status_description", error.to_string());
        }
        result.map_err(|source| self.call_error(method, source))
    }

    fn call_error(&self, method: &'static str, source: a2a::A2AError) -> AgentError {
        AgentError::Call {
            agent: self.id.clone(),
            method,
            source,
        }
    }
}

/// Refuses an interface on another origin than the agent's configured URL: the card is the
/// agent's word, the URL the operator's.
fn check_same_origin(spec: &RemoteAgentSpec, interface: &AgentInterface) -> Result<(), AgentError> {
    let at = if interface.protocol_binding == TRANSPORT_PROTOCOL_GRPC {
        grpc_url(&interface.url, spec.url.scheme())
    } else {
        Url::parse(&interface.url).ok()
    };
    if at.is_some_and(|url| url.origin() == spec.url.origin()) {
        return Ok(());
    }
    Err(AgentError::ForeignInterface {
        agent: spec.id.clone(),
        interface: interface.url.clone(),
        url: spec.url.to_string(),
    })
}

/// Adds Baton's headers to every call; the client adds `A2A-Version` itself.
struct CallHeaders {
    participant: Option<String>,
    extensions: Option<String>,
    /// The credential every call carries, if the agent asks for one.
    credential: Option<Presenter>,
}

#[async_trait]
impl CallInterceptor for CallHeaders {
    async fn before(&self, _method: &str, params: &mut ServiceParams) -> Result<(), a2a::A2AError> {
        if let Some(participant) = &self.participant {
            params.insert(PARTICIPANT_HEADER.to_string(), vec![participant.clone()]);
        }
        if let Some(extensions) = &self.extensions {
            params.insert(
                a2a::SVC_PARAM_EXTENSIONS.to_string(),
                vec![extensions.clone()],
            );
        }
        if let Some(credential) = &self.credential {
            let (name, value) = credential.header().await?;
            params.insert(name, vec![value]);
        }
        crate::trace_context::inject(params);
        Ok(())
    }
}
