//! The bench's model: an OpenAI-compatible Chat Completions responder on 127.0.0.1 that decides
//! each answer from the request alone, so any number of tasks can share it:
//! - no `spawn_subtask` call in the conversation yet → call `spawn_subtask` on the agent the task
//!   names (`via=<agent id>` in its goal), carrying the task's phase marker into the brief;
//! - a spawn, but no "is COMPLETED" note yet → "waiting";
//! - the note is there → the answer;
//! - a task marked `bench:direct` (the gateway bench's) → the answer at once, no delegation.
//!
//! It answers at once: the bench measures Baton and Temporal, not a model.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// The final answer of a delegating task.
pub const ANSWER: &str = "The ledger says 42.";
/// What the model says while its sub-task is open.
pub const WAITING: &str = "waiting";

/// The running responder; stops on drop.
pub struct BenchModel {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl BenchModel {
    pub async fn start() -> anyhow::Result<BenchModel> {
        let requests = Arc::new(AtomicU64::new(0));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .with_state(requests.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding the bench model on 127.0.0.1")?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Ok(BenchModel {
            addr,
            requests,
            task,
        })
    }

    /// `[model] base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for BenchModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn chat_completions(State(requests): State<Arc<AtomicU64>>, body: Bytes) -> Response {
    let n = requests.fetch_add(1, Ordering::Relaxed) + 1;
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        let error =
            json!({"error": {"message": "the body is not JSON", "type": "invalid_request_error"}});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    };
    let message = decide(&request);
    let completion = json!({
        "id": format!("chatcmpl-bench-{n}"),
        "object": "chat.completion",
        "created": 0,
        "model": request["model"].as_str().unwrap_or("bench-model"),
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": if message.get("tool_calls").is_some() { "tool_calls" } else { "stop" },
        }],
        "usage": {"prompt_tokens": body.len() / 4, "completion_tokens": 8, "total_tokens": body.len() / 4 + 8},
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        completion.to_string(),
    )
        .into_response()
}

/// Marks a task the model answers at once.
pub const DIRECT_MARKER: &str = "bench:direct";

/// The assistant message for this conversation.
fn decide(request: &Value) -> Value {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let role_is = |m: &Value, role: &str| m["role"].as_str() == Some(role);
    if request["messages"].to_string().contains(DIRECT_MARKER) {
        return json!({"role": "assistant", "content": ANSWER});
    }
    let spawned = messages.iter().any(|m| {
        role_is(m, "assistant") && m["tool_calls"].as_array().is_some_and(|c| !c.is_empty())
    });
    if !spawned {
        let task = messages
            .iter()
            .find(|m| role_is(m, "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let agent = task
            .split_whitespace()
            .find_map(|word| word.strip_prefix("via="))
            .unwrap_or("peer");
        let marker = task
            .split_whitespace()
            .find(|word| word.starts_with("bench:"))
            .unwrap_or("bench:answer");
        let arguments = json!({
            "name": "lookup",
            "goal": format!("{marker} What does the ledger say?"),
            "agent": agent,
        });
        return json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": {"name": "spawn_subtask", "arguments": arguments.to_string()},
            }],
        });
    }
    let answered = messages.iter().any(|m| {
        role_is(m, "user")
            && m["content"]
                .as_str()
                .is_some_and(|c| c.contains("is COMPLETED"))
    });
    let text = if answered { ANSWER } else { WAITING };
    json!({"role": "assistant", "content": text})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    #[test]
    fn spawns_on_the_named_agent_then_waits_then_answers() {
        let task = user("# task\ngoal: bench:park via=peer-push");
        let first = decide(&json!({"messages": [task.clone()]}));
        let call = &first["tool_calls"][0]["function"];
        assert_eq!(call["name"], "spawn_subtask");
        let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["agent"], "peer-push");
        assert!(args["goal"].as_str().unwrap().starts_with("bench:park "));

        let spawned =
            json!({"role": "assistant", "content": null, "tool_calls": first["tool_calls"]});
        let tool = json!({"role": "tool", "tool_call_id": "call_1", "content": "spawned"});
        let waiting = decide(&json!({"messages": [task.clone(), spawned.clone(), tool.clone()]}));
        assert_eq!(waiting["content"], WAITING);

        let note = user(
            "<untrusted>Sub-task lookup (id t.1, task t on peer) is COMPLETED: 42</untrusted>",
        );
        let answer = decide(&json!({"messages": [task, spawned, tool, note]}));
        assert_eq!(answer["content"], ANSWER);
    }

    #[test]
    fn a_direct_task_is_answered_at_once() {
        let task = user(
            "# task
goal: bench:direct 7",
        );
        let answer = decide(&json!({"messages": [task]}));
        assert_eq!(answer["content"], ANSWER);
        assert!(answer.get("tool_calls").is_none());
    }
}
