//! A fake OpenAI-compatible model server of our own. It speaks the real Chat Completions
//! protocol over HTTP on 127.0.0.1, answers each request from a script, and records every
//! request it was sent, so tests drive Baton's real provider through real HTTP.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One scripted answer to one `POST /v1/chat/completions`.
pub enum Scripted {
    /// A Chat Completions body built from the spec; `finish_reason` is `tool_calls` when it
    /// has calls, else `stop`.
    Reply(ModelResponseSpec),
    /// This status with this raw body (sent as `application/json`, whatever it holds).
    Status(u16, String),
    /// 429 with `Retry-After: <seconds>` and an OpenAI error body, as a rate-limited API sends.
    RateLimited { retry_after_secs: u64 },
    /// No answer at all until the server is dropped.
    Hang,
    /// This reply, once the test calls [`FakeModel::release`]: a slow turn the test ends.
    Held(ModelResponseSpec),
}

/// What the model says: text, tool calls as `(name, arguments)`, or both.
pub struct ModelResponseSpec {
    pub text: Option<String>,
    pub tool_calls: Vec<(String, Value)>,
}

/// A scripted text reply.
pub fn reply(text: &str) -> Scripted {
    Scripted::Reply(ModelResponseSpec {
        text: Some(text.to_string()),
        tool_calls: vec![],
    })
}

/// A scripted reply with one tool call and no text.
pub fn call(name: &str, args: Value) -> Scripted {
    Scripted::Reply(ModelResponseSpec {
        text: None,
        tool_calls: vec![(name.to_string(), args)],
    })
}

/// A scripted `spawn_subtask` call delegating `name` (its goal `goal`) to `agent`.
pub fn delegate(name: &str, goal: &str, agent: &str) -> Scripted {
    call(
        "spawn_subtask",
        serde_json::json!({"name": name, "goal": goal, "agent": agent}),
    )
}

/// A scripted reply with one `spawn_subtask` call per brief in `briefs`, in one answer.
pub fn delegate_each(briefs: &[Value]) -> Scripted {
    Scripted::Reply(ModelResponseSpec {
        text: None,
        tool_calls: briefs
            .iter()
            .map(|brief| ("spawn_subtask".to_string(), brief.clone()))
            .collect(),
    })
}

/// The fake server; it stops on drop. Its state sits behind a mutex, so tests on any runtime
/// may script it and read it.
pub struct FakeModel {
    addr: SocketAddr,
    state: Arc<Mutex<FakeState>>,
    task: JoinHandle<()>,
    // Dropped with the server: releases every `Hang`ing handler.
    _stopping: watch::Sender<()>,
    gate: Arc<tokio::sync::Semaphore>,
}

/// Decides the answer from the request, for tests where several tasks call the model at once.
pub type Responder = Arc<dyn Fn(&Value) -> Scripted + Send + Sync>;

#[derive(Default)]
struct FakeState {
    script: VecDeque<Scripted>,
    responder: Option<Responder>,
    received: Vec<(HeaderMap, Value)>,
    /// Whether `received` keeps each request; under load only their number is kept.
    forgets_requests: bool,
    request_count: u64,
    replies_sent: u64,
    tool_calls_sent: u64,
    /// Requests whose caller hung up before they were answered.
    abandoned: u64,
}

/// Counts a request as abandoned unless it is answered: dropped with the handler when the
/// caller hangs up.
struct Unanswered(Arc<Mutex<FakeState>>);

impl Unanswered {
    fn answered(self) {
        std::mem::forget(self);
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        lock(&self.0).abandoned += 1;
    }
}

#[derive(Clone)]
struct Shared {
    state: Arc<Mutex<FakeState>>,
    stopping: watch::Receiver<()>,
    /// One permit per `Held` reply the test has released.
    gate: Arc<tokio::sync::Semaphore>,
}

impl FakeModel {
    pub async fn start(script: Vec<Scripted>) -> FakeModel {
        let state = Arc::new(Mutex::new(FakeState {
            script: script.into(),
            ..FakeState::default()
        }));
        let (stopping_tx, stopping) = watch::channel(());
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .with_state(Shared {
                state: state.clone(),
                stopping,
                gate: gate.clone(),
            });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding an ephemeral port on 127.0.0.1");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        FakeModel {
            addr,
            state,
            task,
            _stopping: stopping_tx,
            gate,
        }
    }

    /// Lets one `Held` reply go, the oldest waiting first.
    pub fn release(&self) {
        self.gate.add_permits(1);
    }

    /// A server that answers every request with `responder(request)`: the answer depends on
    /// what the model is shown, not on the order of the calls.
    pub async fn responding(
        responder: impl Fn(&Value) -> Scripted + Send + Sync + 'static,
    ) -> FakeModel {
        let model = FakeModel::start(Vec::new()).await;
        model.lock().responder = Some(Arc::new(responder));
        model
    }

    /// Like [`FakeModel::responding`], but it keeps no request, only their number, so the
    /// thousands of calls of a benchmark cost no memory.
    pub async fn under_load(
        responder: impl Fn(&Value) -> Scripted + Send + Sync + 'static,
    ) -> FakeModel {
        let model = FakeModel::responding(responder).await;
        model.lock().forgets_requests = true;
        model
    }

    /// How many requests the server has answered or is answering.
    pub fn request_count(&self) -> u64 {
        self.lock().request_count
    }

    /// How many requests the caller hung up on before they were answered (a `Hang` or a `Held`
    /// reply whose HTTP request was dropped).
    pub fn abandoned_count(&self) -> u64 {
        self.lock().abandoned
    }

    /// The API's base URL, as `[model] base_url` would name it: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request body received, in order (a body that was not JSON as a JSON string).
    pub fn requests(&self) -> Vec<Value> {
        self.lock()
            .received
            .iter()
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// The headers of every request received, in the order of [`FakeModel::requests`].
    pub fn headers(&self) -> Vec<HeaderMap> {
        self.lock()
            .received
            .iter()
            .map(|(headers, _)| headers.clone())
            .collect()
    }

    /// Appends to the script while the server runs.
    pub fn push(&self, more: Scripted) {
        self.lock().script.push_back(more);
    }

    fn lock(&self) -> MutexGuard<'_, FakeState> {
        lock(&self.state)
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeState {
    fn record(&mut self, headers: HeaderMap, request: Value) {
        self.request_count += 1;
        if !self.forgets_requests {
            self.received.push((headers, request));
        }
    }

    /// The id of the next reply and of each of its tool calls.
    fn number(&mut self, spec: &ModelResponseSpec) -> (u64, Vec<u64>) {
        self.replies_sent += 1;
        let first_call = self.tool_calls_sent + 1;
        self.tool_calls_sent += spec.tool_calls.len() as u64;
        (
            self.replies_sent,
            (first_call..=self.tool_calls_sent).collect(),
        )
    }
}

// A test that panicked while holding the lock must not hide the state from the next assertion.
fn lock(state: &Mutex<FakeState>) -> MutexGuard<'_, FakeState> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the handler does for one request, decided under the lock.
enum Answer {
    Completion {
        id: u64,
        call_ids: Vec<u64>,
        spec: ModelResponseSpec,
    },
    Status(u16, String),
    RateLimited(u64),
    Hang,
    Held {
        id: u64,
        call_ids: Vec<u64>,
        spec: ModelResponseSpec,
    },
    ScriptEmpty,
}

async fn chat_completions(
    State(shared): State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        let raw = String::from_utf8_lossy(&body).into_owned();
        lock(&shared.state).record(headers, Value::String(raw));
        return openai_error(
            StatusCode::BAD_REQUEST,
            "We could not parse the JSON body of your request.",
        );
    };
    let model = request["model"].as_str().unwrap_or_default().to_string();
    let prompt_tokens = body.len() as u64 / 4;
    let answer = {
        let mut state = lock(&shared.state);
        let next = state
            .script
            .pop_front()
            .or_else(|| state.responder.as_ref().map(|respond| respond(&request)));
        state.record(headers, request);
        match next {
            None => Answer::ScriptEmpty,
            Some(Scripted::Status(code, body)) => Answer::Status(code, body),
            Some(Scripted::RateLimited { retry_after_secs }) => {
                Answer::RateLimited(retry_after_secs)
            }
            Some(Scripted::Hang) => Answer::Hang,
            Some(Scripted::Reply(spec)) => {
                let (id, call_ids) = state.number(&spec);
                Answer::Completion { id, call_ids, spec }
            }
            Some(Scripted::Held(spec)) => {
                let (id, call_ids) = state.number(&spec);
                Answer::Held { id, call_ids, spec }
            }
        }
    };
    match answer {
        Answer::Completion { id, call_ids, spec } => json_body(
            StatusCode::OK,
            completion(id, &call_ids, spec, &model, prompt_tokens).to_string(),
        ),
        Answer::Held { id, call_ids, spec } => {
            let pending = Unanswered(shared.state.clone());
            let permit = shared.gate.acquire().await;
            permit.expect("the gate is never closed").forget();
            pending.answered();
            json_body(
                StatusCode::OK,
                completion(id, &call_ids, spec, &model, prompt_tokens).to_string(),
            )
        }
        Answer::Status(code, body) => {
            let status =
                StatusCode::from_u16(code).expect("Scripted::Status needs a valid HTTP status");
            json_body(status, body)
        }
        Answer::RateLimited(seconds) => {
            let mut response = openai_error(StatusCode::TOO_MANY_REQUESTS, "Rate limit reached");
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
            response
        }
        Answer::Hang => {
            let pending = Unanswered(shared.state.clone());
            let mut stopping = shared.stopping.clone();
            // Resolves only once the FakeModel is dropped.
            stopping.changed().await.ok();
            pending.answered();
            openai_error(StatusCode::SERVICE_UNAVAILABLE, "FakeModel stopped")
        }
        Answer::ScriptEmpty => openai_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "FakeModel has no scripted response left",
        ),
    }
}

/// A Chat Completions body as OpenAI sends it.
fn completion(
    id: u64,
    call_ids: &[u64],
    spec: ModelResponseSpec,
    model: &str,
    prompt_tokens: u64,
) -> Value {
    let finish_reason = if spec.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut completion_tokens = spec.text.as_deref().map_or(0, str::len) as u64 / 4;
    let mut message = json!({"role": "assistant", "content": spec.text, "refusal": null});
    if !spec.tool_calls.is_empty() {
        let tool_calls: Vec<Value> = call_ids
            .iter()
            .zip(spec.tool_calls)
            .map(|(call_id, (name, args))| {
                let arguments = args.to_string();
                completion_tokens += arguments.len() as u64 / 4;
                json!({
                    "id": format!("call_{call_id}"),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments}
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(tool_calls);
    }
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    json!({
        "id": format!("chatcmpl-fake-{id}"),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0}
        }
    })
}

fn openai_error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "fake_model_error", "param": null, "code": null}});
    json_body(status, body.to_string())
}

fn json_body(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
