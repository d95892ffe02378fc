//! `POST /a2a/push/{stand-in id}`: where remote agents push changes of the tasks Baton's
//! stand-ins watch. Cheapest checks first; a push that passes them is offered to the stand-in as
//! a `remote_push` update, whose validator compares the token digest in constant time and
//! refuses anything else before a byte is written to history. A verified push only wakes the
//! stand-in: it fetches the task itself and never applies the push body.

use a2a::StreamResponse;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use baton_core::a2a_state::from_a2a;
use baton_core::push_token::token_digest;
use baton_proto::PushIn;
use baton_workflows::RemoteTaskWorkflow;
use temporalio_client::errors::WorkflowUpdateError;
use temporalio_client::{Client, WorkflowExecuteUpdateOptions};

/// The largest push body accepted.
pub const MAX_PUSH_BYTES: usize = 64 * 1024;

/// The push receiver's routes, to be mounted at the root of Baton's HTTP server.
pub fn push_routes(client: Client) -> Router {
    Router::new()
        .route("/a2a/push/{stand_in_id}", post(receive))
        .with_state(client)
}

async fn receive(
    State(client): State<Client>,
    Path(stand_in_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_PUSH_BYTES) {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "push body too large");
    }
    let Some(token) = presented_token(&headers) else {
        return refuse(StatusCode::UNAUTHORIZED, "push not accepted");
    };
    let Ok(body) = to_bytes(body, MAX_PUSH_BYTES).await else {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "push body too large");
    };
    let Ok(event) = serde_json::from_slice::<StreamResponse>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the body is not an A2A StreamResponse",
        );
    };
    let Some((remote_task_id, claimed_state)) = task_of(&event) else {
        return refuse(StatusCode::BAD_REQUEST, "the push names no task");
    };
    let push = PushIn {
        token_digest: token_digest(&token),
        remote_task_id,
        claimed_state,
    };
    let stand_in = client.get_workflow_handle::<RemoteTaskWorkflow>(stand_in_id.as_str());
    match stand_in
        .execute_update(
            RemoteTaskWorkflow::remote_push,
            push,
            WorkflowExecuteUpdateOptions::default(),
        )
        .await
    {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(WorkflowUpdateError::NotFound(_) | WorkflowUpdateError::Failed(_)) => {
            tracing::info!(stand_in = %stand_in_id, "push refused");
            refuse(StatusCode::UNAUTHORIZED, "push not accepted")
        }
        Err(error) => {
            tracing::warn!(stand_in = %stand_in_id, "push could not be delivered: {error}");
            refuse(StatusCode::SERVICE_UNAVAILABLE, "try again later")
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

fn refuse(status: StatusCode, message: &'static str) -> Response {
    (status, message).into_response()
}
