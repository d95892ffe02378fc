//! The scripted Python a2a-sdk peer (`tests/peers/a2a_peer.py`) does what Baton's end-to-end
//! tests rely on: each `--behaviour` reaches its states, cancel, push, history replay and a crash
//! mid-stream work, and `/_stats` reports what the peer saw. Driven with plain JSON-RPC and
//! HTTP+JSON over reqwest, so these tests depend on nothing in Baton.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::post;
use baton_tests::PythonPeer;
use baton_tests::wait::{HANG_GUARD, poll_until};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

// --- A2A over plain HTTP -------------------------------------------------------------------

fn a2a_post(url: String) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", "baton")
}

/// One JSON-RPC call; the whole reply (`result` or `error`).
async fn rpc(peer: &PythonPeer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    a2a_post(format!("{}/rpc", peer.url()))
        .json(&body)
        .send()
        .await
        .expect("calling the peer")
        .json()
        .await
        .expect("a JSON-RPC reply")
}

/// One JSON-RPC call that must succeed; its `result`.
async fn call(peer: &PythonPeer, method: &str, params: Value) -> Value {
    let reply = rpc(peer, method, params).await;
    assert!(reply.get("error").is_none(), "{method} failed: {reply}");
    reply["result"].clone()
}

fn user_message(text: &str, task_id: Option<&str>) -> Value {
    let mut message = json!({
        "messageId": format!("m-{text}"),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    });
    if let Some(id) = task_id {
        message["taskId"] = json!(id);
    }
    message
}

/// SendMessage, blocking until the task is terminal or interrupted; the Task.
async fn send(peer: &PythonPeer, text: &str, task_id: Option<&str>) -> Value {
    let result = call(
        peer,
        "SendMessage",
        json!({"message": user_message(text, task_id)}),
    )
    .await;
    result["task"].clone()
}

/// SendMessage with `returnImmediately`; the new task's id.
async fn send_and_return(peer: &PythonPeer, text: &str, mut configuration: Value) -> String {
    configuration["returnImmediately"] = json!(true);
    let result = call(
        peer,
        "SendMessage",
        json!({"message": user_message(text, None), "configuration": configuration}),
    )
    .await;
    result["task"]["id"].as_str().unwrap().to_string()
}

/// The status of a Task, of a `{"task": …}` or of a `{"statusUpdate": …}`.
fn status(task_or_event: &Value) -> &Value {
    match task_or_event.get("statusUpdate") {
        Some(update) => &update["status"],
        None => &task_or_event.get("task").unwrap_or(task_or_event)["status"],
    }
}

fn state(task_or_event: &Value) -> &str {
    status(task_or_event)["state"]
        .as_str()
        .unwrap_or_else(|| panic!("no state in {task_or_event}"))
}

fn status_text(task_or_event: &Value) -> &str {
    status(task_or_event)["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no status message in {task_or_event}"))
}

/// `"2026-11-29T21:26:51.341491Z"` as (date, seconds into the day), comparable whatever the
/// number of fractional digits.
fn timestamp(task_or_event: &Value) -> (String, f64) {
    let text = status(task_or_event)["timestamp"]
        .as_str()
        .expect("a status timestamp");
    let (date, time) = text.trim_end_matches('Z').split_once('T').unwrap();
    let seconds = time
        .split(':')
        .map(|part| part.parse::<f64>().unwrap())
        .fold(0.0, |total, part| total * 60.0 + part);
    (date.to_string(), seconds)
}

async fn task_state(peer: &PythonPeer, id: &str) -> String {
    let task = call(peer, "GetTask", json!({"id": id})).await;
    state(&task).to_string()
}

fn stats_state<'a>(stats: &'a Value, id: &str) -> Option<&'a str> {
    stats["tasks"]
        .as_array()?
        .iter()
        .find(|t| t["id"] == id)
        .and_then(|t| t["state"].as_str())
}

// --- Server-sent events ---------------------------------------------------------------------

/// An open SSE response, read one `data:` frame at a time.
struct Sse {
    response: reqwest::Response,
    buffer: Vec<u8>,
    json_rpc: bool,
}

impl Sse {
    async fn send_streaming(peer: &PythonPeer, text: &str) -> Sse {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": user_message(text, None)}});
        Sse::open(a2a_post(format!("{}/rpc", peer.url())).json(&body), true).await
    }

    async fn subscribe_rpc(peer: &PythonPeer, id: &str) -> Sse {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
            "params": {"id": id}});
        Sse::open(a2a_post(format!("{}/rpc", peer.url())).json(&body), true).await
    }

    async fn subscribe_rest(peer: &PythonPeer, id: &str) -> Sse {
        let url = format!("{}/rest/tasks/{id}:subscribe", peer.url());
        Sse::open(a2a_post(url).json(&json!({})), false).await
    }

    async fn open(request: reqwest::RequestBuilder, json_rpc: bool) -> Sse {
        let response = request.send().await.expect("opening a stream");
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/event-stream"),
            "not a stream: {content_type}"
        );
        Sse {
            response,
            buffer: Vec::new(),
            json_rpc,
        }
    }

    /// The next event (a `StreamResponse`), `Ok(None)` at the end of the stream.
    async fn next(&mut self) -> Result<Option<Value>, reqwest::Error> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let data: String = String::from_utf8(frame)
                    .unwrap()
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .collect();
                if data.is_empty() {
                    continue; // a comment such as `: ping`
                }
                let frame: Value = serde_json::from_str(&data).unwrap();
                if !self.json_rpc {
                    return Ok(Some(frame));
                }
                assert!(frame.get("error").is_none(), "stream error: {frame}");
                return Ok(Some(frame["result"].clone()));
            }
            match self.response.chunk().await? {
                // Frames end in CRLF CRLF or LF LF; JSON carries no raw CR.
                Some(chunk) => self.buffer.extend(chunk.iter().filter(|&&b| b != b'\r')),
                None => return Ok(None),
            }
        }
    }

    /// The next event, which must come within 15 s.
    async fn expect(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(15), self.next())
            .await
            .expect("no event within 15 s")
            .expect("the stream broke")
            .expect("the stream ended")
    }

    /// Asserts the stream ends cleanly within 15 s.
    async fn expect_end(&mut self) {
        let end = tokio::time::timeout(Duration::from_secs(15), self.next())
            .await
            .expect("the stream did not end within 15 s")
            .expect("the stream broke");
        assert_eq!(end, None, "an event after the expected end");
    }
}

// --- A webhook receiver ---------------------------------------------------------------------

type Deliveries = Arc<Mutex<Vec<(String, Value)>>>;

/// Records every POST to `/hook/{name}` as (name, JSON body); stops on drop.
struct Webhook {
    addr: SocketAddr,
    seen: Deliveries,
    task: JoinHandle<()>,
}

impl Webhook {
    async fn start() -> Webhook {
        async fn record(
            State(seen): State<Deliveries>,
            Path(name): Path<String>,
            Json(body): Json<Value>,
        ) {
            seen.lock().unwrap().push((name, body));
        }
        let seen = Deliveries::default();
        let app = Router::new()
            .route("/hook/{name}", post(record))
            .with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Webhook { addr, seen, task }
    }

    fn url(&self, name: &str) -> String {
        format!("http://{}/hook/{name}", self.addr)
    }

    /// The states delivered to hook `name`, in order.
    fn states(&self, name: &str) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(hook, _)| hook == name)
            .map(|(_, body)| state(body).to_string())
            .collect()
    }

    async fn wait_for_state(&self, name: &str, wanted: &str) -> Vec<String> {
        let what = format!("hook {name} to get {wanted}");
        poll_until(&what, HANG_GUARD, || async {
            let states = self.states(name);
            states.iter().any(|s| s == wanted).then_some(states)
        })
        .await
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// --- Behaviours -----------------------------------------------------------------------------

#[tokio::test]
async fn complete_answers_at_once_and_stats_record_the_call() {
    let peer = PythonPeer::start(&[]).await;
    let task = send(&peer, "hello", None).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    assert_eq!(status_text(&task), "echo: hello");

    let id = task["id"].as_str().unwrap();
    let stats = peer.stats().await;
    assert_eq!(stats["tasks_created"], 1, "{stats}");
    let context = task["contextId"].as_str().unwrap();
    assert_eq!(
        stats["tasks"],
        json!([{"id": id, "state": "TASK_STATE_COMPLETED", "context_id": context}])
    );
    assert_eq!(
        stats["messages"],
        json!([{"task_id": id, "text": "hello", "role": "ROLE_USER", "metadata": {}}])
    );
    assert_eq!(stats["participants"], json!(["baton"]));
    assert_eq!(stats["cancels"], json!([]));
    assert_eq!(stats["push_configs"], json!([]));
    assert_eq!(stats["streams_opened"], 0);
}

#[tokio::test]
async fn work_streams_working_well_before_it_completes() {
    let peer = PythonPeer::start(&["--behaviour", "work", "--work-seconds", "1"]).await;
    let mut stream = Sse::send_streaming(&peer, "the report").await;
    assert_eq!(state(&stream.expect().await), "TASK_STATE_SUBMITTED");
    let working = stream.expect().await;
    assert_eq!(state(&working), "TASK_STATE_WORKING");
    assert_eq!(status_text(&working), "working on it");
    // WORKING reached the client while the task still worked: streamed, not sent with the end.
    let stats = peer.stats().await;
    assert_eq!(stats["tasks"][0]["state"], "TASK_STATE_WORKING", "{stats}");
    let completed = stream.expect().await;
    assert_eq!(state(&completed), "TASK_STATE_COMPLETED");
    assert_eq!(status_text(&completed), "done: the report");
    stream.expect_end().await;
    peer.wait_for("the finished stream counted as closed", |s| {
        s["streams_opened"] == 1 && s["streams_closed"] == 1
    })
    .await;
}

/// `behaviour` parks the task in `parked_state` with `question`; a reply completes it.
async fn parks_until_a_reply(behaviour: &str, parked_state: &str, question: &str, answer: &str) {
    let peer = PythonPeer::start(&["--behaviour", behaviour]).await;
    let task = send(&peer, "pay the bill", None).await;
    assert_eq!(state(&task), parked_state);
    assert_eq!(status_text(&task), question);
    let id = task["id"].as_str().unwrap();
    assert_eq!(task_state(&peer, id).await, parked_state);

    let done = send(&peer, "savings", Some(id)).await;
    assert_eq!(done["id"], id);
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    assert_eq!(status_text(&done), answer);
    assert_eq!(done["contextId"], task["contextId"]);

    let stats = peer.stats().await;
    assert_eq!(stats["tasks_created"], 1, "{stats}");
    let texts: Vec<&Value> = stats["messages"].as_array().unwrap().iter().collect();
    assert_eq!(texts.len(), 2, "{stats}");
    assert_eq!(
        texts[1],
        &json!({"task_id": id, "text": "savings", "role": "ROLE_USER", "metadata": {}})
    );
}

#[tokio::test]
async fn park_asks_for_input_and_completes_after_the_reply() {
    parks_until_a_reply(
        "park",
        "TASK_STATE_INPUT_REQUIRED",
        "which account?",
        "answered: savings",
    )
    .await;
}

#[tokio::test]
async fn auth_asks_to_sign_in_and_completes_after_the_reply() {
    parks_until_a_reply(
        "auth",
        "TASK_STATE_AUTH_REQUIRED",
        "please sign in",
        "authorised: savings",
    )
    .await;
}

#[tokio::test]
async fn fail_fails() {
    let peer = PythonPeer::start(&["--behaviour", "fail"]).await;
    let id = send_and_return(&peer, "try", json!({})).await;
    peer.wait_for("the task to fail", |s| {
        stats_state(s, &id) == Some("TASK_STATE_FAILED")
    })
    .await;
    let task = call(&peer, "GetTask", json!({"id": id})).await;
    assert_eq!(state(&task), "TASK_STATE_FAILED");
    assert_eq!(status_text(&task), "could not do it");
}

#[tokio::test]
async fn long_answers_with_exactly_the_requested_characters() {
    let alphabet =
        |n: usize| -> String { (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect() };
    let peer = PythonPeer::start(&["--behaviour", "long"]).await;
    let task = send(&peer, "essay", None).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    assert_eq!(status_text(&task), alphabet(5000));

    let peer = PythonPeer::start(&["--behaviour", "long", "--answer-chars", "30"]).await;
    let task = send(&peer, "essay", None).await;
    assert_eq!(status_text(&task), "abcdefghijklmnopqrstuvwxyzabcd");
}

#[tokio::test]
async fn unfinished_tasks_of_every_waiting_behaviour_can_be_cancelled() {
    for (behaviour, waiting) in [
        ("hang", "TASK_STATE_WORKING"),
        ("work", "TASK_STATE_WORKING"),
        ("park", "TASK_STATE_INPUT_REQUIRED"),
        ("auth", "TASK_STATE_AUTH_REQUIRED"),
    ] {
        let peer = PythonPeer::start(&["--behaviour", behaviour, "--work-seconds", "60"]).await;
        let id = send_and_return(&peer, "go", json!({})).await;
        peer.wait_for(&format!("the {behaviour} task to reach {waiting}"), |s| {
            stats_state(s, &id) == Some(waiting)
        })
        .await;

        let cancelled = call(&peer, "CancelTask", json!({"id": id})).await;
        assert_eq!(state(&cancelled), "TASK_STATE_CANCELED", "{behaviour}");
        assert_eq!(task_state(&peer, &id).await, "TASK_STATE_CANCELED");
        let again = rpc(&peer, "CancelTask", json!({"id": id})).await;
        assert_eq!(again["error"]["code"], -32002, "{again}");

        let stats = peer.stats().await;
        assert_eq!(stats["cancels"], json!([id, id]), "{behaviour}: {stats}");
        assert_eq!(stats_state(&stats, &id), Some("TASK_STATE_CANCELED"));
    }
}

// --- Streams, push, replay, crash and restart -----------------------------------------------

#[tokio::test]
async fn streams_the_client_drops_are_counted_as_closed_on_both_bindings() {
    let peer = PythonPeer::start(&["--behaviour", "hang"]).await;
    let mut stream = Sse::send_streaming(&peer, "forever").await;
    let task = stream.expect().await;
    let id = task["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(state(&stream.expect().await), "TASK_STATE_WORKING");
    peer.wait_for("the stream counted as open", |s| {
        s["streams_opened"] == 1 && s["streams_closed"] == 0
    })
    .await;
    drop(stream);
    peer.wait_for("the dropped stream counted as closed", |s| {
        s["streams_closed"] == 1
    })
    .await;

    let mut stream = Sse::subscribe_rest(&peer, &id).await;
    assert_eq!(state(&stream.expect().await), "TASK_STATE_WORKING");
    peer.wait_for("the subscription counted as open", |s| {
        s["streams_opened"] == 2
    })
    .await;
    drop(stream);
    let stats = peer
        .wait_for("the dropped subscription counted as closed", |s| {
            s["streams_closed"] == 2
        })
        .await;
    assert_eq!(stats["streams_opened"], 2, "{stats}");
    assert_eq!(stats["participants"], json!(["baton", "baton"]));
}

#[tokio::test]
async fn push_delivers_every_state_change_to_each_webhook() {
    let hooks = Webhook::start().await;
    let peer = PythonPeer::start(&["--behaviour", "park", "--push"]).await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", peer.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], true);

    let inline = json!({"taskPushNotificationConfig": {"url": hooks.url("inline"), "token": "t1"}});
    let id = send_and_return(&peer, "pay", inline).await;
    let states = hooks
        .wait_for_state("inline", "TASK_STATE_INPUT_REQUIRED")
        .await;
    assert_eq!(
        states,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_INPUT_REQUIRED"
        ]
    );

    let second = json!({"taskId": id, "id": "second", "url": hooks.url("second")});
    call(&peer, "CreateTaskPushNotificationConfig", second).await;
    let stats = peer.stats().await;
    assert_eq!(
        stats["push_configs"],
        json!([
            {"task_id": id, "id": id, "url": hooks.url("inline")},
            {"task_id": id, "id": "second", "url": hooks.url("second")},
        ])
    );

    send(&peer, "savings", Some(&id)).await;
    hooks.wait_for_state("inline", "TASK_STATE_COMPLETED").await;
    assert_eq!(
        hooks.wait_for_state("second", "TASK_STATE_COMPLETED").await,
        ["TASK_STATE_COMPLETED"]
    );

    let delete = json!({"taskId": id, "id": "second"});
    call(&peer, "DeleteTaskPushNotificationConfig", delete).await;
    let stats = peer.stats().await;
    assert_eq!(
        stats["push_config_deletes"],
        json!([{"task_id": id, "id": "second"}])
    );
    assert_eq!(
        stats["push_configs"],
        json!([{"task_id": id, "id": id, "url": hooks.url("inline")}])
    );
}

#[tokio::test]
async fn replay_history_resends_stale_statuses_after_the_snapshot() {
    let peer = PythonPeer::start(&["--behaviour", "park", "--replay-history"]).await;
    let task = send(&peer, "pay", None).await;
    let id = task["id"].as_str().unwrap();
    let mut streams = [
        Sse::subscribe_rpc(&peer, id).await,
        Sse::subscribe_rest(&peer, id).await,
    ];
    for stream in &mut streams {
        let snapshot = stream.expect().await;
        assert_eq!(state(&snapshot), "TASK_STATE_INPUT_REQUIRED", "{snapshot}");
        let stale = stream.expect().await;
        assert_eq!(state(&stale), "TASK_STATE_WORKING", "{stale}");
        assert!(
            timestamp(&stale) < timestamp(&snapshot),
            "the replayed status is not older: {stale} vs {snapshot}"
        );
        let repeated = stream.expect().await;
        assert_eq!(state(&repeated), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(timestamp(&repeated), timestamp(&snapshot));
    }

    send(&peer, "savings", Some(id)).await;
    for stream in &mut streams {
        let live = stream.expect().await;
        assert_eq!(state(&live), "TASK_STATE_COMPLETED");
        assert_eq!(status_text(&live), "answered: savings");
        stream.expect_end().await;
    }
}

#[tokio::test]
async fn without_replay_history_subscribe_sends_the_snapshot_then_live_events() {
    let peer = PythonPeer::start(&["--behaviour", "park"]).await;
    let task = send(&peer, "pay", None).await;
    let id = task["id"].as_str().unwrap();
    let mut stream = Sse::subscribe_rpc(&peer, id).await;
    assert_eq!(state(&stream.expect().await), "TASK_STATE_INPUT_REQUIRED");
    send(&peer, "savings", Some(id)).await;
    assert_eq!(state(&stream.expect().await), "TASK_STATE_COMPLETED");
    stream.expect_end().await;
}

#[tokio::test]
async fn die_kills_the_process_mid_stream() {
    let mut peer = PythonPeer::start(&["--behaviour", "die"]).await;
    let mut stream = Sse::send_streaming(&peer, "doomed").await;
    assert_eq!(state(&stream.expect().await), "TASK_STATE_SUBMITTED");
    assert_eq!(state(&stream.expect().await), "TASK_STATE_WORKING");
    let end = tokio::time::timeout(Duration::from_secs(15), stream.next())
        .await
        .expect("the stream stayed open after the peer died");
    assert!(
        matches!(end, Err(_) | Ok(None)),
        "an event after death: {end:?}"
    );
    assert_eq!(peer.exited().await.code(), Some(1));
}

#[tokio::test]
async fn a_killed_peer_restarts_empty_on_the_same_port() {
    let mut peer = PythonPeer::start(&["--behaviour", "hang"]).await;
    let url = peer.url();
    let old_pid = peer.pid();
    let id = send_and_return(&peer, "go", json!({})).await;

    peer.kill();
    assert!(reqwest::get(format!("{url}/_stats")).await.is_err());

    peer.restart().await;
    assert_eq!(peer.url(), url);
    assert_ne!(peer.pid(), old_pid);
    assert_eq!(peer.stats().await["tasks_created"], 0);
    let gone = rpc(&peer, "GetTask", json!({"id": id})).await;
    assert_eq!(gone["error"]["code"], -32001, "{gone}");
    let id = send_and_return(&peer, "again", json!({})).await;
    peer.wait_for("the restarted peer to work on a task", |s| {
        stats_state(s, &id) == Some("TASK_STATE_WORKING")
    })
    .await;
}
