//! `POST /a2a/push/{stand-in id}`: where remote agents push changes of the tasks Baton's
//! stand-ins watch. Cheapest checks first; a push that passes them is offered to the stand-in as
//! a `remote_push` update, whose validator compares the token digest in constant time and
//! refuses anything else before a byte is written to history. A verified push only wakes the
//! stand-in: it fetches the task itself and never applies the push body. Each push is counted in
//! `baton_pushes_total`, with the reason when refused.

use std::time::Duration;

use a2a::StreamResponse;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use baton_core::a2a_state::from_a2a;
use baton_core::display::{one_line, one_line_capped};
use baton_core::push_token::token_digest;
use baton_metrics::PushOutcome;
use baton_proto::PushIn;
use baton_proto::temporal::{RemoteTaskWorkflow, remote_task_workflow};

use crate::identity::MAX_ID_CHARS;
use opentelemetry::trace::FutureExt as _;
use temporalio_client::errors::WorkflowUpdateError;
use temporalio_client::{Client, WorkflowExecuteUpdateOptions};
use tracing::Instrument;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The largest push body accepted.
pub const MAX_PUSH_BYTES: usize = 64 * 1024;

/// The push receiver's routes, to be mounted at the root of Baton's HTTP server. `task_queue`
/// labels its metrics; `temporal_timeout` bounds the update that wakes the stand-in.
pub fn push_routes(client: Client, task_queue: &str, temporal_timeout: Duration) -> Router {
    let receiver = Receiver {
        client,
        task_queue: task_queue.to_string(),
        temporal_timeout,
    };
    Router::new()
        .route("/a2a/push/{stand_in_id}", post(receive))
        .with_state(receiver)
}

#[derive(Clone)]
struct Receiver {
    client: Client,
    task_queue: String,
    temporal_timeout: Duration,
}

/// Why a push was refused: its answer, and the reason its metric carries.
struct Refusal {
    status: StatusCode,
    message: &'static str,
    reason: &'static str,
}

const TOO_LARGE: Refusal = Refusal {
    status: StatusCode::PAYLOAD_TOO_LARGE,
    message: "push body too large",
    reason: "too_large",
};
const NOT_ACCEPTED: Refusal = Refusal {
    status: StatusCode::UNAUTHORIZED,
    message: "push not accepted",
    reason: "not_accepted",
};
/// Temporal or the worker did not take the push: the agent may push again, and the stand-in's
/// safety fetch finds the change if it does not.
const UNAVAILABLE: Refusal = Refusal {
    status: StatusCode::SERVICE_UNAVAILABLE,
    message: "try again later",
    reason: "unavailable",
};

async fn receive(
    State(receiver): State<Receiver>,
    Path(stand_in_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // The push's own span, in the pushing agent's trace when it sends a `traceparent`.
    let parent = crate::trace_context::request_context(&headers);
    let span = tracing::info_span!(
        "a2a.push",
        otel.name = "POST /a2a/push/{stand_in_id}",
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        // A stranger chose this id: one line, control characters escaped, bounded.
        baton.stand_in = %one_line_capped(&stand_in_id, MAX_ID_CHARS),
    );
    let _ = span.set_parent(parent.clone());
    let outcome = deliver(&receiver, &stand_in_id, &headers, body)
        .instrument(span.clone())
        .with_context(parent)
        .await;
    let metrics = baton_metrics::global();
    match outcome {
        Ok(()) => {
            metrics.push(&receiver.task_queue, PushOutcome::Accepted);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(refusal) => {
            span.record("otel.status_code", "error");
            span.record("otel.status_description", refusal.reason);
            metrics.push(&receiver.task_queue, PushOutcome::Refused(refusal.reason));
            (refusal.status, refusal.message).into_response()
        }
    }
}

async fn deliver(
    receiver: &Receiver,
    stand_in_id: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<(), Refusal> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_PUSH_BYTES) {
        return Err(TOO_LARGE);
    }
    let Some(token) = presented_token(headers) else {
        return Err(Refusal {
            reason: "no_token",
            ..NOT_ACCEPTED
        });
    };
    let Ok(body) = to_bytes(body, MAX_PUSH_BYTES).await else {
        return Err(TOO_LARGE);
    };
    let (remote_task_id, claimed_state) = pushed_task(&body).map_err(|unread| match unread {
        UnreadPush::NotA2a => Refusal {
            status: StatusCode::BAD_REQUEST,
            message: "the body is not an A2A StreamResponse",
            reason: "not_a2a",
        },
        UnreadPush::NoTask => Refusal {
            status: StatusCode::BAD_REQUEST,
            message: "the push names no task",
            reason: "no_task",
        },
    })?;
    let push = PushIn {
        token_digest: token_digest(&token),
        remote_task_id,
        claimed_state,
    };
    let stand_in = receiver
        .client
        .get_workflow_handle::<RemoteTaskWorkflow>(stand_in_id);
    let update = stand_in.execute_update(
        remote_task_workflow::REMOTE_PUSH,
        push,
        WorkflowExecuteUpdateOptions::default(),
    );
    let Ok(outcome) = tokio::time::timeout(receiver.temporal_timeout, update).await else {
        tracing::warn!(stand_in = %one_line(stand_in_id), "push not taken within {:?}: no worker answered", receiver.temporal_timeout);
        return Err(UNAVAILABLE);
    };
    match outcome {
        Ok(()) => Ok(()),
        Err(WorkflowUpdateError::NotFound(_) | WorkflowUpdateError::Failed(_)) => {
            tracing::info!(stand_in = %one_line(stand_in_id), "push refused");
            Err(NOT_ACCEPTED)
        }
        Err(error) => {
            tracing::warn!(stand_in = %one_line(stand_in_id), "push could not be delivered: {error}");
            Err(UNAVAILABLE)
        }
    }
}

/// The token, from any header an A2A agent is known to send it in.
fn presented_token(headers: &HeaderMap) -> Option<String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    header("x-a2a-notification-token")
        .or_else(|| header("a2a-notification-token"))
        .or_else(|| {
            header("authorization")?
                .strip_prefix("Bearer ")
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        })
}

/// Why a push body says nothing the receiver can take.
#[derive(Debug, PartialEq, Eq)]
pub enum UnreadPush {
    /// Not an A2A `StreamResponse`.
    NotA2a,
    /// An event that names no task.
    NoTask,
}

/// The remote task a push body is about, and the state it claims.
pub fn pushed_task(body: &[u8]) -> Result<(String, Option<baton_proto::TaskState>), UnreadPush> {
    let event = serde_json::from_slice::<StreamResponse>(body).map_err(|_| UnreadPush::NotA2a)?;
    task_of(&event).ok_or(UnreadPush::NoTask)
}

/// The remote task id the push is about, and the state it claims.
fn task_of(event: &StreamResponse) -> Option<(String, Option<baton_proto::TaskState>)> {
    let (id, state) = match event {
        StreamResponse::Task(task) => (task.id.clone(), Some(from_a2a(&task.status.state))),
        StreamResponse::StatusUpdate(update) => {
            (update.task_id.clone(), Some(from_a2a(&update.status.state)))
        }
        StreamResponse::ArtifactUpdate(update) => (update.task_id.clone(), None),
        StreamResponse::Message(message) => (message.task_id.clone()?, None),
    };
    (!id.is_empty()).then_some((id, state))
}
