//! Baton as an A2A 1.0 agent: the official Python a2a-sdk client drives the gateway over
//! JSON-RPC and HTTP+JSON, with a real Temporal server and `baton worker` behind it.

use std::time::Duration;

use crate::common::baton;
use baton_proto::temporal::task_workflow;
use baton_tests::engine::{GatewayProcess, TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, Scripted, reply};
use baton_tests::oidc_issuer::OidcIssuer;
use baton_tests::sdk_client::SdkClient;
use baton_tests::wait::{HANG_GUARD, poll_until};
use baton_tests::webhook::Webhook;
use serde_json::{Value, json};

fn replies(n: usize) -> Vec<Scripted> {
    (1..=n).map(|i| reply(&format!("answer {i}"))).collect()
}

struct Agent {
    temporal: TestTemporal,
    model: FakeModel,
    _worker: WorkerProcess,
    url: String,
}

async fn agent() -> Agent {
    agent_with(|config| config).await
}

/// As [`agent`], taking webhooks on 127.0.0.1, where the tests' own listen.
async fn agent_taking_local_webhooks() -> Agent {
    agent_with(|mut config| {
        config.allow_private_push_urls = true;
        config
    })
    .await
}

async fn agent_with(configure: impl FnOnce(WorkerConfig) -> WorkerConfig) -> Agent {
    agent_with_env(configure, &[]).await
}

/// As [`agent_with`], the worker started with `env` besides.
async fn agent_with_env(
    configure: impl FnOnce(WorkerConfig) -> WorkerConfig,
    env: &[(&str, &str)],
) -> Agent {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(replies(40)).await;
    let config = configure(WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver());
    let url = config.base_url.clone().unwrap();
    let worker = WorkerProcess::start_with_env(baton(), &config.render(), env).await;
    Agent {
        temporal,
        model,
        _worker: worker,
        url,
    }
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn the_card_is_served_with_caching_and_names_all_three_bindings() {
    let agent = agent().await;
    let http = reqwest::Client::new();
    let response = http
        .get(format!("{}/.well-known/agent-card.json", agent.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    let card: Value = response.json().await.unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let bindings: Vec<&str> = interfaces
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON", "GRPC"]);
    // Every interface an absolute URL, gRPC at the origin: what strict clients (ADK) accept.
    let origin = agent.url.trim_end_matches('/');
    assert_eq!(interfaces[2]["url"], origin);
    for interface in interfaces {
        let url = interface["url"].as_str().unwrap();
        assert!(url.starts_with(origin), "{interface}");
    }
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert!(
        card["capabilities"]["extensions"]
            .to_string()
            .contains("ext/task/v1")
    );
    assert!(card.get("securitySchemes").is_none());

    let again = http
        .get(format!("{}/.well-known/agent-card.json", agent.url))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
}

#[tokio::test]
async fn a_browser_may_call_with_the_a2a_headers_and_read_a2a_extensions() {
    let agent = agent().await;
    let http = reqwest::Client::new();
    let preflight = http
        .request(reqwest::Method::OPTIONS, format!("{}/", agent.url))
        .header("Origin", "https://console.example.com")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type,a2a-version,a2a-extensions,x-participant-id",
        )
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], "*");
    let allowed = headers["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for wanted in [
        "content-type",
        "a2a-version",
        "a2a-extensions",
        "x-participant-id",
    ] {
        assert!(allowed.contains(wanted), "{wanted} not in {allowed}");
    }
    let methods = headers["access-control-allow-methods"].to_str().unwrap();
    for wanted in ["GET", "POST", "DELETE"] {
        assert!(methods.contains(wanted), "{wanted} not in {methods}");
    }

    let card = http
        .get(format!("{}/.well-known/agent-card.json", agent.url))
        .header("Origin", "https://console.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(card.headers()["access-control-allow-origin"], "*");
    assert!(
        card.headers()["access-control-expose-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("a2a-extensions")
    );
    assert_eq!(
        agent.model.requests().len(),
        0,
        "a preflight reaches no task"
    );
}

#[tokio::test]
async fn a_missing_a2a_version_is_read_as_0_3_and_refused() {
    let agent = agent().await;
    let http = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}});
    for url in [format!("{}/", agent.url), agent.url.clone()] {
        let answer: Value = http
            .post(&url)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["error"]["code"], -32009, "{url}: {answer}");
    }
    let rest = http
        .get(format!("{}/tasks/x", agent.url))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
}

#[tokio::test]
async fn the_a2a_sdk_client_sends_follows_lists_and_cancels_over_all_three_bindings() {
    let agent = agent().await;
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let alice = SdkClient::new(&agent.url, binding, "alice").speaking_the_status_extension();
        let stranger = SdkClient::new(&agent.url, binding, "mallory");

        // A blocking send: the conversation answers and parks, awaiting the next message.
        let sent = alice.call("send", &["--text", "Hello there"]).await.ok();
        let task = &sent[0]["task"];
        assert_eq!(
            state(task),
            "TASK_STATE_INPUT_REQUIRED",
            "{binding}: {task}"
        );
        let task_id = task["id"].as_str().unwrap().to_string();
        let answer = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        assert!(answer.starts_with("answer"), "{task}");
        assert!(
            task["metadata"]
                .to_string()
                .contains("awaiting-next-message")
        );

        // GetTask honours historyLength.
        let got = alice
            .call("get", &["--task-id", &task_id, "--history-length", "1"])
            .await
            .ok();
        assert_eq!(got[0]["history"].as_array().unwrap().len(), 1);
        let full = alice.call("get", &["--task-id", &task_id]).await.ok();
        assert_eq!(
            full[0]["history"].as_array().unwrap().len(),
            2,
            "{}",
            full[0]
        );

        // A follow-up message on the task, streamed: the snapshot, then the events to the park.
        let streamed = alice
            .call("stream", &["--task-id", &task_id, "--text", "And again"])
            .await
            .ok();
        assert!(
            streamed[0].get("task").is_some(),
            "the snapshot first: {streamed:?}"
        );
        let last = &streamed.last().unwrap()["statusUpdate"];
        assert_eq!(
            last["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{streamed:?}"
        );
        // States only go forward: the snapshot shows the task working on the message (not
        // parked from before it), and nothing it replaced is replayed after it.
        let states: Vec<&str> = streamed
            .iter()
            .map(|event| {
                let update = event.get("task").unwrap_or(&event["statusUpdate"]);
                update["status"]["state"].as_str().unwrap_or_default()
            })
            .collect();
        assert_eq!(states[0], "TASK_STATE_WORKING", "{binding}: {states:?}");
        let parked_at = states
            .iter()
            .position(|s| *s == "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(parked_at, Some(states.len() - 1), "{binding}: {states:?}");

        // Strangers see nothing.
        assert_eq!(
            stranger
                .call("get", &["--task-id", &task_id])
                .await
                .reason(),
            "TASK_NOT_FOUND"
        );
        let listed = stranger.call("list", &[]).await.ok();
        assert!(
            listed[0]
                .get("tasks")
                .is_none_or(|t| t.as_array().unwrap().is_empty())
        );
        let mine = alice.call("list", &[]).await.ok();
        assert!(mine[0]["tasks"].to_string().contains(&task_id), "{mine:?}");
        // Listed through search attributes: by context too.
        let context = task["contextId"].as_str().unwrap();
        let in_context = alice.call("list", &["--context-id", context]).await.ok();
        let ids: Vec<&str> = in_context[0]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [task_id.as_str()]);
        let elsewhere = alice
            .call("list", &["--context-id", "no-such-context"])
            .await
            .ok();
        assert!(
            elsewhere[0]
                .get("tasks")
                .is_none_or(|t| t.as_array().unwrap().is_empty())
        );

        // Cancel, then every call a closed task refuses.
        let canceled = alice.call("cancel", &["--task-id", &task_id]).await.ok();
        assert_eq!(state(&canceled[0]), "TASK_STATE_CANCELED");
        assert_eq!(
            alice
                .call("cancel", &["--task-id", &task_id])
                .await
                .reason(),
            "TASK_NOT_CANCELABLE"
        );
        assert_eq!(
            alice
                .call("subscribe", &["--task-id", &task_id])
                .await
                .reason(),
            "UNSUPPORTED_OPERATION"
        );
        assert_eq!(
            alice
                .call("send", &["--task-id", &task_id, "--text", "hello?"])
                .await
                .reason(),
            "UNSUPPORTED_OPERATION"
        );
        assert_eq!(
            alice
                .call("get", &["--task-id", "no-such-task"])
                .await
                .reason(),
            "TASK_NOT_FOUND"
        );
    }
    assert!(agent.model.requests().len() >= 4);
}

#[tokio::test]
async fn return_immediately_answers_once_the_task_exists_and_subscribe_follows_it() {
    let agent = agent().await;
    let alice = SdkClient::new(&agent.url, "JSONRPC", "alice").speaking_the_status_extension();
    let sent = alice
        .call("send", &["--text", "Hello", "--return-immediately"])
        .await
        .ok();
    let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
    let parked = wait_state(&alice, &task_id, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(parked["id"], task_id.as_str());
    assert_eq!(
        agent.temporal.workflow_task_timeout(&task_id).await,
        task_workflow::WORKFLOW_TASK_TIMEOUT
    );

    let mut follower =
        SdkClient::new(&agent.url, "JSONRPC", "alice").open("subscribe", &["--task-id", &task_id]);
    // The subscription is open once it has sent the task as it is.
    let first = follower.next_event().await;
    assert_eq!(first["task"]["id"], task_id.as_str(), "{first}");
    alice.call("cancel", &["--task-id", &task_id]).await.ok();
    let events = follower.rest().await;
    assert_eq!(
        events.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED",
        "the subscription ends at the terminal state: {events:?}"
    );
}

async fn wait_state(client: &SdkClient, task_id: &str, wanted: &str) -> Value {
    poll_until(&format!("task {task_id} {wanted}"), HANG_GUARD, || async {
        let got = client.call("get", &["--task-id", task_id]).await.ok();
        (state(&got[0]) == wanted).then(|| got[0].clone())
    })
    .await
}

#[tokio::test]
async fn a_gateway_restart_loses_nothing() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(replies(10)).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let mut worker = WorkerProcess::start(baton(), &config.render()).await;
    let alice = SdkClient::new(&url, "JSONRPC", "alice").speaking_the_status_extension();
    let sent = alice.call("send", &["--text", "Remember me"]).await.ok();
    let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
    // The Web UI lists the task by a summary: its name and who asked.
    let described = temporal
        .client
        .get_workflow_handle::<temporalio_client::UntypedWorkflow>(task_id.as_str())
        .describe(temporalio_client::WorkflowDescribeOptions::default())
        .await
        .unwrap();
    assert_eq!(described.static_summary(), Some("Remember me (from alice)"));
    assert_eq!(
        temporal.workflow_task_timeout(&task_id).await,
        task_workflow::WORKFLOW_TASK_TIMEOUT
    );

    // The gateway (and the worker with it) goes away and comes back: all state is in Temporal.
    worker.kill().await;
    worker.restart().await;

    let got = alice.call("get", &["--task-id", &task_id]).await.ok();
    assert_eq!(state(&got[0]), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(got[0]["history"].as_array().unwrap().len(), 2);
    let mut follower =
        SdkClient::new(&url, "HTTP+JSON", "alice").open("subscribe", &["--task-id", &task_id]);
    // The subscription is open once it has sent the task as it is.
    let first = follower.next_event().await;
    assert_eq!(first["task"]["id"], task_id.as_str(), "{first}");
    let next = alice
        .call("send", &["--task-id", &task_id, "--text", "Still there?"])
        .await
        .ok();
    assert_eq!(state(&next[0]["task"]), "TASK_STATE_INPUT_REQUIRED");
    alice.call("cancel", &["--task-id", &task_id]).await.ok();
    let events = follower.rest().await;
    let states: Vec<&str> = events
        .iter()
        .filter_map(|e| e["statusUpdate"]["status"]["state"].as_str())
        .collect();
    assert_eq!(states.last(), Some(&"TASK_STATE_CANCELED"), "{events:?}");
    assert!(
        states.contains(&"TASK_STATE_WORKING"),
        "the follow-up's turn streamed: {states:?}"
    );
}

/// A worker with its gateway and a second gateway on the same tasks, as a second replica would
/// be; both stop on drop.
struct Replicas {
    url: String,
    other_url: String,
    _worker: WorkerProcess,
    _other: GatewayProcess,
}

impl Replicas {
    async fn start(temporal: &TestTemporal, model: &FakeModel) -> Replicas {
        let config = WorkerConfig::new(temporal, &model.base_url()).with_push_receiver();
        let worker = WorkerProcess::start(baton(), &config.render()).await;
        let mut other_config = WorkerConfig::new(temporal, &model.base_url()).with_push_receiver();
        other_config.task_queue = config.task_queue.clone();
        let other = GatewayProcess::start(baton(), &other_config.render()).await;
        Replicas {
            url: config.base_url.clone().unwrap(),
            other_url: other_config.base_url.clone().unwrap(),
            _worker: worker,
            _other: other,
        }
    }
}

#[tokio::test]
async fn get_task_reads_this_gateways_writes_at_once_and_anothers_as_they_land() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(replies(10)).await;
    let replicas = Replicas::start(&temporal, &model).await;
    let (url, other_url) = (replicas.url.clone(), replicas.other_url.clone());

    let alice = SdkClient::new(&url, "JSONRPC", "alice").speaking_the_status_extension();
    let sent = alice.call("send", &["--text", "Remember me"]).await.ok();
    let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
    let history_of = |got: &Value| got["history"].as_array().map_or(0, Vec::len);
    // Read more than once: the gateway now keeps the task's view while it does not move.
    for _ in 0..3 {
        let got = alice.call("get", &["--task-id", &task_id]).await.ok();
        assert_eq!(state(&got[0]), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(history_of(&got[0]), 2);
    }

    // A message through this gateway is seen by the next GetTask, whatever the cache held.
    alice
        .call(
            "send",
            &[
                "--task-id",
                &task_id,
                "--text",
                "And this?",
                "--return-immediately",
            ],
        )
        .await
        .ok();
    let got = alice.call("get", &["--task-id", &task_id]).await.ok();
    assert!(history_of(&got[0]) >= 3, "{got:?}");
    assert!(
        got[0]["history"].to_string().contains("And this?"),
        "{got:?}"
    );
    let settled = poll_until("the follow-up answered", HANG_GUARD, || async {
        let got = alice.call("get", &["--task-id", &task_id]).await.ok();
        (history_of(&got[0]) == 4 && state(&got[0]) == "TASK_STATE_INPUT_REQUIRED").then_some(got)
    })
    .await;

    // A message through the other gateway: this one's cached view goes stale when the task
    // moves, and GetTask shows the change once its history event arrives.
    let via_other = SdkClient::new(&other_url, "JSONRPC", "alice").speaking_the_status_extension();
    via_other
        .call("send", &["--task-id", &task_id, "--text", "Once more?"])
        .await
        .ok();
    let got = poll_until("the other gateway's message seen", HANG_GUARD, || async {
        let got = alice.call("get", &["--task-id", &task_id]).await.ok();
        (history_of(&got[0]) == 6).then_some(got)
    })
    .await;
    assert_ne!(got, settled);
    assert!(got[0]["history"].to_string().contains("Once more?"));
    assert_eq!(model.requests().len(), 3);
}

/// ListTasks serves a listing again for a moment, but never past a write through its own
/// gateway: a task sent through this gateway, and then one sent through another, are each
/// listed once visibility has them, as their states change.
#[tokio::test]
async fn list_tasks_shows_new_tasks_and_their_changes_through_either_gateway() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(replies(10)).await;
    let replicas = Replicas::start(&temporal, &model).await;
    let (url, other_url) = (replicas.url.clone(), replicas.other_url.clone());

    let alice = SdkClient::new(&url, "JSONRPC", "alice").speaking_the_status_extension();
    let listed_states = || async {
        let listed = alice.call("list", &[]).await.ok();
        let tasks = listed[0]["tasks"].as_array().cloned().unwrap_or_default();
        tasks
            .iter()
            .map(|t| (t["id"].as_str().unwrap().to_string(), state(t).to_string()))
            .collect::<Vec<_>>()
    };
    let parked = |ids: &[&str]| -> Vec<(String, String)> {
        ids.iter()
            .map(|id| (id.to_string(), "TASK_STATE_INPUT_REQUIRED".to_string()))
            .collect()
    };

    let sent = alice
        .call("send", &["--text", "First", "--return-immediately"])
        .await
        .ok();
    let first = sent[0]["task"]["id"].as_str().unwrap().to_string();
    poll_until("the first task listed as parked", HANG_GUARD, || async {
        (listed_states().await == parked(&[&first])).then_some(())
    })
    .await;

    let via_other = SdkClient::new(&other_url, "JSONRPC", "alice").speaking_the_status_extension();
    let sent = via_other
        .call("send", &["--text", "Second", "--return-immediately"])
        .await
        .ok();
    let second = sent[0]["task"]["id"].as_str().unwrap().to_string();
    poll_until(
        "the other gateway's task listed as parked",
        HANG_GUARD,
        || async { (listed_states().await == parked(&[&second, &first])).then_some(()) },
    )
    .await;

    let sent = alice
        .call("send", &["--text", "Third", "--return-immediately"])
        .await
        .ok();
    let third = sent[0]["task"]["id"].as_str().unwrap().to_string();
    poll_until(
        "this gateway's next task listed as parked",
        HANG_GUARD,
        || async { (listed_states().await == parked(&[&third, &second, &first])).then_some(()) },
    )
    .await;
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn push_configs_are_kept_with_the_task_and_changes_are_pushed_to_the_webhook() {
    let agent = agent_taking_local_webhooks().await;
    let url = agent.url.clone();

    let webhook = Webhook::start().await;
    let (seen, hook) = (webhook.seen.clone(), webhook.url.clone());

    for binding in ["JSONRPC", "HTTP+JSON"] {
        let alice = SdkClient::new(&url, binding, "alice").speaking_the_status_extension();
        let sent = alice.call("send", &["--text", "Hello"]).await.ok();
        let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
        let created = alice
            .call(
                "push-create",
                &[
                    "--task-id",
                    &task_id,
                    "--push-url",
                    &hook,
                    "--config-id",
                    "cfg-1",
                    "--token",
                    "tok-1",
                    "--auth-scheme",
                    "Bearer",
                    "--auth-credentials",
                    "secret-1",
                ],
            )
            .await
            .ok();
        assert_eq!(created[0]["id"], "cfg-1");
        let got = alice
            .call("push-get", &["--task-id", &task_id, "--config-id", "cfg-1"])
            .await
            .ok();
        assert_eq!(got[0]["url"], hook.as_str());
        let listed = alice.call("push-list", &["--task-id", &task_id]).await.ok();
        assert_eq!(listed[0]["configs"].as_array().unwrap().len(), 1);
        assert_eq!(
            SdkClient::new(&url, binding, "mallory")
                .call("push-list", &["--task-id", &task_id])
                .await
                .reason(),
            "TASK_NOT_FOUND"
        );

        // The next turn's changes are pushed: WORKING, then the park.
        seen.lock().unwrap().clear();
        alice
            .call("send", &["--task-id", &task_id, "--text", "Again"])
            .await
            .ok();
        let pushed = webhook
            .wait_for("the park pushed", |pushed| {
                pushed.iter().any(|(_, b)| {
                    b["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
                })
            })
            .await;
        let states: Vec<&str> = pushed
            .iter()
            .filter_map(|(_, b)| b["statusUpdate"]["status"]["state"].as_str())
            .collect();
        assert_eq!(
            states,
            ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"],
            "{pushed:?}"
        );
        // The park gives the answer, so its artifact goes out before the status, as a stream
        // sends it.
        let answer = &pushed[1].1["artifactUpdate"];
        assert_eq!(
            answer["artifact"]["artifactId"],
            format!("{task_id}:answer")
        );
        assert!(
            answer["artifact"]["parts"][0]["text"]
                .as_str()
                .is_some_and(|text| text.starts_with("answer")),
            "{answer}"
        );
        assert_eq!(pushed.len(), 3, "{pushed:?}");
        let (headers, body) = &pushed[2];
        assert_eq!(headers["a2a-notification-token"], "tok-1");
        assert_eq!(headers["x-a2a-notification-token"], "tok-1");
        assert_eq!(headers["authorization"], "Bearer secret-1");
        assert_eq!(body["statusUpdate"]["taskId"], task_id.as_str());
        assert!(
            body["statusUpdate"]["status"]["message"]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("answer")
        );

        alice
            .call(
                "push-delete",
                &["--task-id", &task_id, "--config-id", "cfg-1"],
            )
            .await
            .ok();
        alice
            .call(
                "push-delete",
                &["--task-id", &task_id, "--config-id", "cfg-1"],
            )
            .await
            .ok();
        let listed = alice.call("push-list", &["--task-id", &task_id]).await.ok();
        assert!(
            listed[0]
                .get("configs")
                .is_none_or(|c| c.as_array().unwrap().is_empty())
        );
        alice.call("cancel", &["--task-id", &task_id]).await.ok();

        // A config registered on the ended task is accepted and hears at once how it ended.
        seen.lock().unwrap().clear();
        let created = alice
            .call(
                "push-create",
                &[
                    "--task-id",
                    &task_id,
                    "--push-url",
                    &hook,
                    "--config-id",
                    "cfg-late",
                    "--token",
                    "tok-late",
                ],
            )
            .await
            .ok();
        assert_eq!(created[0]["id"], "cfg-late");
        let pushed = seen.lock().unwrap().clone();
        assert_eq!(pushed.len(), 1, "{pushed:?}");
        let (headers, body) = &pushed[0];
        assert_eq!(headers["a2a-notification-token"], "tok-late");
        assert_eq!(body["statusUpdate"]["taskId"], task_id.as_str());
        assert_eq!(
            body["statusUpdate"]["status"]["state"],
            "TASK_STATE_CANCELED"
        );
        // One whose webhook cannot be reached says so, naming the task's state.
        let unreachable = alice
            .call(
                "push-create",
                &[
                    "--task-id",
                    &task_id,
                    "--push-url",
                    "http://127.0.0.1:1/hook",
                ],
            )
            .await;
        assert_eq!(unreachable.reason(), "INVALID_PARAMS");
        assert!(
            unreachable.message().contains("has ended (CANCELED)"),
            "{}",
            unreachable.message()
        );
    }
}

#[tokio::test]
async fn a_webhook_sent_with_the_first_message_hears_its_first_change() {
    let agent = agent_taking_local_webhooks().await;
    let (url, model) = (agent.url.clone(), &agent.model);
    let webhook = Webhook::start().await;
    let (seen, hook) = (webhook.seen.clone(), webhook.url.clone());

    for binding in ["JSONRPC", "HTTP+JSON"] {
        seen.lock().unwrap().clear();
        let alice = SdkClient::new(&url, binding, "alice").speaking_the_status_extension();
        let sent = alice
            .call(
                "send",
                &[
                    "--text",
                    "Hello",
                    "--return-immediately",
                    "--push-url",
                    &hook,
                    "--token",
                    "tok-9",
                ],
            )
            .await
            .ok();
        let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
        let listed = alice.call("push-list", &["--task-id", &task_id]).await.ok();
        let configs = listed[0]["configs"].as_array().unwrap();
        assert_eq!(configs.len(), 1, "{listed:?}");
        assert_eq!(configs[0]["url"], hook.as_str());

        let states_of = |pushed: &[(axum::http::HeaderMap, Value)]| -> Vec<String> {
            pushed
                .iter()
                .filter(|(_, b)| b["statusUpdate"]["taskId"] == task_id.as_str())
                .filter_map(|(_, b)| {
                    b["statusUpdate"]["status"]["state"]
                        .as_str()
                        .map(String::from)
                })
                .collect()
        };
        let pushed = webhook
            .wait_for("the park pushed", |pushed| {
                states_of(pushed).last().map(String::as_str) == Some("TASK_STATE_INPUT_REQUIRED")
            })
            .await;
        let states = states_of(&pushed);
        assert_eq!(
            states,
            ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"],
            "the first turn was pushed whole ({binding})"
        );
        assert!(
            seen.lock()
                .unwrap()
                .iter()
                .all(|(h, _)| h["a2a-notification-token"] == "tok-9")
        );
        alice.call("cancel", &["--task-id", &task_id]).await.ok();
    }
    drop(webhook);

    // An inline webhook that is refused refuses the message whole: no task, no model call.
    let before = model.requests().len();
    let bob = SdkClient::new(&url, "JSONRPC", "bob").speaking_the_status_extension();
    let refused = bob
        .call(
            "send",
            &["--text", "Hi", "--push-url", "ftp://example.com/hook"],
        )
        .await;
    assert_eq!(refused.reason(), "INVALID_PARAMS");
    let listed = bob.call("list", &[]).await.ok();
    assert!(
        listed[0]
            .get("tasks")
            .is_none_or(|t| t.as_array().unwrap().is_empty()),
        "{listed:?}"
    );
    assert_eq!(model.requests().len(), before, "no turn ran");
}

#[tokio::test]
async fn a_webhook_on_a_private_address_is_refused_unless_allowed() {
    let agent = agent().await;
    let alice = SdkClient::new(&agent.url, "JSONRPC", "alice").speaking_the_status_extension();
    let sent = alice.call("send", &["--text", "Hello"]).await.ok();
    let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
    for hook in [
        "http://127.0.0.1:9/hook",
        "http://169.254.169.254/latest",
        "file:///etc/passwd",
    ] {
        let refused = alice
            .call("push-create", &["--task-id", &task_id, "--push-url", hook])
            .await;
        assert_eq!(refused.reason(), "INVALID_PARAMS", "{hook}");
    }
}

#[tokio::test]
async fn oversized_bodies_and_floods_are_refused_before_they_cost_anything() {
    let agent = agent_with(|mut config| {
        config.server_extra = vec![
            "max_request_bytes = 4096".into(),
            "rate_limit_per_minute = 5".into(),
        ];
        config
    })
    .await;
    let url = agent.url.clone();
    let http = reqwest::Client::new();

    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x".repeat(8192)}]}}});
    let response = http
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", "alice")
        .json(&huge)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let refused: Value = response.json().await.expect("a JSON-RPC error");
    assert_eq!(refused["id"], Value::Null, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["data"][0]["reason"], "REQUEST_TOO_LARGE");

    let mut statuses = Vec::new();
    for _ in 0..8 {
        let response = http
            .get(format!("{url}/.well-known/agent-card.json"))
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    // The oversized body was refused by its declared length before the limiter counted it:
    // the bucket of 5 serves the first five card fetches.
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    let flooded = http
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(flooded.status(), 429);
    // Five a minute: the next request in about 12 s.
    let wait: u64 = flooded.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=12).contains(&wait), "{wait}");
    let refused: Value = flooded.json().await.expect("an HTTP+JSON error");
    assert_eq!(
        refused["error"]["status"], "RESOURCE_EXHAUSTED",
        "{refused}"
    );
    assert_eq!(
        refused["error"]["details"][0]["reason"],
        "RATE_LIMIT_EXCEEDED"
    );
    let flooded_rpc: Value = http
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "t"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .expect("a JSON-RPC error");
    assert_eq!(flooded_rpc["error"]["code"], -32000, "{flooded_rpc}");
    assert_eq!(
        flooded_rpc["error"]["data"][0]["reason"],
        "RATE_LIMIT_EXCEEDED"
    );
    assert_eq!(agent.model.requests().len(), 0, "nothing reached a task");
}

/// Behind a trusted proxy each client the proxy names has its own budget; a peer that is no
/// trusted proxy cannot choose its address by sending the headers; a participant a token proved
/// has its own budget wherever it calls from.
#[tokio::test]
async fn the_rate_limit_counts_callers_behind_trusted_proxies_and_proven_participants_apart() {
    let limited = |trusted: &str| {
        let trusted = trusted.to_string();
        move |mut config: WorkerConfig| {
            config.server_extra = vec![
                "rate_limit_per_minute = 2".into(),
                format!("trusted_proxies = [{trusted}]"),
                "[server.auth]".into(),
                "tokens = [{ participant = \"alice\", secret_env = \"ALICE_TOKEN\" }, \
                 { participant = \"bob\", secret_env = \"BOB_TOKEN\" }]"
                    .into(),
            ];
            config
        }
    };
    let http = reqwest::Client::new();
    let card_statuses = |url: String, forwarded: &'static [&'static str]| {
        let http = http.clone();
        async move {
            let mut statuses = Vec::new();
            for client in forwarded {
                let status = http
                    .get(format!("{url}/.well-known/agent-card.json"))
                    .header("X-Forwarded-For", *client)
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16();
                statuses.push(status);
            }
            statuses
        }
    };
    let base = |agent: &Agent| agent.url.trim_end_matches('/').to_string();

    // The test's own address is the trusted proxy: the client it names counts.
    let proxied = agent_with_env(limited("\"127.0.0.1\""), &TOKENS).await;
    const CLIENTS: [&str; 4] = ["203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2"];
    assert_eq!(
        card_statuses(base(&proxied), &CLIENTS).await,
        [200, 200, 429, 200]
    );
    // A forged entry in front of what the proxy appended changes nothing.
    assert_eq!(
        card_statuses(base(&proxied), &["1.2.3.4, 203.0.113.1"]).await,
        [429]
    );

    // Trusted nobody: the headers are ignored and every request is the peer's.
    let direct = agent_with_env(limited(""), &TOKENS).await;
    assert_eq!(
        card_statuses(base(&direct), &CLIENTS).await,
        [200, 200, 429, 429]
    );
    // The peer's budget is spent, but each proven participant has its own.
    for token in [ALICE_TOKEN, BOB_TOKEN, ALICE_TOKEN] {
        let answer = http
            .post(format!("{}/", base(&direct)))
            .header("A2A-Version", "1.0")
            .bearer_auth(token)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
}

#[tokio::test]
async fn every_http_json_error_is_a_google_rpc_status_in_application_json() {
    let agent = agent().await;
    let http = reqwest::Client::new();
    let url = agent.url.trim_end_matches('/');
    let cases = [
        // Malformed JSON, the wrong content type, an unknown route, an unknown task (an error
        // of the official router, which labels it application/problem+json).
        (
            http.post(format!("{url}/message:send"))
                .header("A2A-Version", "1.0")
                .header("Content-Type", "application/json")
                .body("{not json"),
            400,
            "INVALID_ARGUMENT",
        ),
        (
            http.post(format!("{url}/message:send"))
                .header("A2A-Version", "1.0")
                .header("Content-Type", "text/plain")
                .body("hello"),
            415,
            "INVALID_ARGUMENT",
        ),
        (
            http.get(format!("{url}/no/such/route"))
                .header("A2A-Version", "1.0"),
            404,
            "UNIMPLEMENTED",
        ),
        (
            http.get(format!("{url}/tasks/no-such-task"))
                .header("A2A-Version", "1.0")
                .header("X-Participant-Id", "alice"),
            404,
            "NOT_FOUND",
        ),
    ];
    for (request, status, rpc_status) in cases {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status);
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            content_type.starts_with("application/json"),
            "{status}: {content_type}"
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], status, "{body}");
        assert_eq!(body["error"]["status"], rpc_status, "{body}");
        assert_eq!(
            body["error"]["details"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
            "{body}"
        );
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
}

/// A2A 1.0.1 prefers `application/a2a+json`: a request in it is served on both HTTP bindings,
/// and the HTTP+JSON answer is labelled so.
#[tokio::test]
async fn a_request_in_application_a2a_json_is_served() {
    let agent = agent().await;
    let http = reqwest::Client::new();
    let url = agent.url.trim_end_matches('/');
    let message = |id: &str| {
        json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": "hello"}]},
               "configuration": {"returnImmediately": true}})
    };
    let rest = http
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/a2a+json")
        .body(message("m-a2a-json-rest").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status().as_u16(), 200);
    assert_eq!(rest.headers()["content-type"], "application/a2a+json");
    let body: Value = rest.json().await.unwrap();
    assert!(body["task"]["id"].is_string(), "{body}");

    let rpc = http
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/a2a+json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                   "params": message("m-a2a-json-rpc")})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(rpc.status().as_u16(), 200);
    let body: Value = rpc.json().await.unwrap();
    assert!(body["result"]["task"]["id"].is_string(), "{body}");
}

#[tokio::test]
async fn a_message_to_an_unknown_task_is_not_found_before_anything_else() {
    let agent = agent().await;
    // A message to a task that does not exist, with no identity: not found, as any task call.
    let to_nowhere = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-x", "taskId": "no-such-task", "role": "ROLE_USER",
                    "parts": [{"text": "hello?"}]}}});
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/", agent.url.trim_end_matches('/')))
        .header("A2A-Version", "1.0")
        .json(&to_nowhere)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
}

#[tokio::test]
async fn a_webhook_that_redirects_is_never_followed() {
    let agent = agent_with(|mut config| {
        config.allow_private_push_urls = true;
        config
    })
    .await;
    let url = agent.url.clone();

    // The webhook answers 307 to another address, which records anything that reaches it.
    let target = Webhook::start().await;
    let location = target.url.clone();
    let redirecting = baton_tests::CardServer::start(move |_| {
        axum::response::Response::builder()
            .status(307)
            .header("location", location.clone())
            .body(axum::body::Body::empty())
            .unwrap()
    })
    .await;
    let hook = format!("{}/hook", redirecting.url());
    let sent = reqwest::Client::new()
        .post(format!("{}/", url.trim_end_matches('/')))
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", "alice")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Hello"}]},
                "configuration": {"returnImmediately": true,
                    "taskPushNotificationConfig": {"url": hook, "token": "tok-1"}}
            }}),
        )
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let task_id = sent["result"]["task"]["id"].as_str().unwrap().to_string();

    // Every attempt of a push got the redirect and gave up: had it been followed, the target
    // would have had the push before the attempt failed.
    poll_until("a push that failed", Duration::from_secs(90), || async {
        agent
            .temporal
            .history(&task_id)
            .await
            .iter()
            .any(|event| format!("{:?}", event.event_type()) == "ActivityTaskFailed")
            .then_some(())
    })
    .await;
    assert!(!redirecting.requests().is_empty());
    assert!(
        target.seen.lock().unwrap().is_empty(),
        "a redirect was followed"
    );
}

#[tokio::test]
async fn clients_that_never_finish_their_headers_are_cut_off_and_the_gateway_keeps_serving() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let agent = agent_with(|mut config| {
        config.server_extra.extend([
            "max_connections = 8".into(),
            "header_timeout = \"1s\"".into(),
        ]);
        config
    })
    .await;
    let url = agent.url.clone();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();

    // Every place under the cap is taken by a client that sends half its headers and waits.
    let mut slow = Vec::new();
    for _ in 0..8 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        stream
            .write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        slow.push(stream);
    }
    // A real client still gets its card: the slow ones are closed and their places freed.
    let card = reqwest::Client::new()
        .get(format!("{url}/.well-known/agent-card.json"))
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    for mut stream in slow {
        let mut buf = [0u8; 64];
        let read = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf))
            .await
            .expect("the server closes a connection that never finished its headers");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    }
}

#[tokio::test]
async fn an_identity_or_an_id_that_cannot_be_read_is_refused_before_temporal_is_asked() {
    let agent = agent().await;
    let endpoint = format!("{}/", agent.url.trim_end_matches('/'));
    let call = |headers: Vec<(&'static str, Vec<u8>)>, method: &'static str, params: Value| {
        let endpoint = endpoint.clone();
        async move {
            let mut request = reqwest::Client::new()
                .post(&endpoint)
                .header("A2A-Version", "1.0")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
            for (name, value) in headers {
                request = request.header(
                    name,
                    reqwest::header::HeaderValue::from_bytes(&value).unwrap(),
                );
            }
            request.send().await.unwrap().json::<Value>().await.unwrap()
        }
    };
    let hello =
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    // Two identities in two headers: refused, neither taken.
    let twice = call(
        vec![
            ("X-Participant-Id", b"alice".to_vec()),
            ("X-Participant-Id", b"bob".to_vec()),
        ],
        "SendMessage",
        hello.clone(),
    )
    .await;
    assert_eq!(twice["error"]["code"], -32600, "{twice}");
    assert!(
        twice["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than once")
    );
    // A header that is not printable ASCII: refused, not dropped for the metadata's claim.
    let mut claiming = hello.clone();
    claiming["message"]["metadata"] = json!({"participant_id": "alice"});
    let unreadable = call(
        vec![("X-Participant-Id", "Zoë".as_bytes().to_vec())],
        "SendMessage",
        claiming,
    )
    .await;
    assert_eq!(unreadable["error"]["code"], -32600, "{unreadable}");
    // An id in the metadata that no participant can have.
    let mut long = hello.clone();
    long["message"]["metadata"] = json!({"participant_id": "x".repeat(10_000)});
    let answer = call(vec![], "SendMessage", long).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // A missing task id is invalid params, not an internal error from Temporal.
    let answer = call(
        vec![("X-Participant-Id", b"alice".to_vec())],
        "GetTask",
        json!({"id": ""}),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(agent.model.requests().len(), 0, "nothing was created");
}

const ALICE_TOKEN: &str = "alice-token-7f3e9a2c41d8";
const BOB_TOKEN: &str = "bob-token-0c5d1e8f27a4";
/// The environment that gives alice's and bob's tokens.
const TOKENS: [(&str, &str); 2] = [("ALICE_TOKEN", ALICE_TOKEN), ("BOB_TOKEN", BOB_TOKEN)];

/// A JSON-RPC call with `headers` and no SDK: what a stranger can send.
async fn raw_rpc(
    url: &str,
    headers: &[(&str, &str)],
    method: &str,
    params: Value,
) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/", url.trim_end_matches('/')))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string());
    (status, challenge, response.json().await.unwrap())
}

fn hello(message_id: &str) -> Value {
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
}

fn task_ids(listed: &Value) -> Vec<String> {
    listed["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// Tokens minted by another stack (PyJWT, keys from `cryptography`), with every algorithm the
/// verifier takes, are read; what an attacker could mint with the same tools is refused.
#[tokio::test]
async fn jwts_minted_by_pyjwt_are_read_with_every_algorithm_taken_and_its_forgeries_refused() {
    let temporal = TestTemporal::start().await;
    let issuer = OidcIssuer::start().await;
    let minting = tokio::process::Command::new(baton_tests::venv_program("python"))
        .arg(baton_tests::workspace().join("tests/peers/pyjwt_tokens.py"))
        .args([
            "--issuer",
            &issuer.issuer,
            "--audience",
            "baton",
            "--sub",
            "carol",
        ])
        .kill_on_drop(true)
        .output();
    let minted = tokio::time::timeout(HANG_GUARD, minting)
        .await
        .expect("PyJWT minted no tokens within the hang guard")
        .unwrap();
    assert!(minted.status.success(), "{minted:?}");
    let minted: Value = serde_json::from_slice(&minted.stdout).unwrap();
    issuer.publish(minted["keys"].as_array().unwrap());
    let mut config = WorkerConfig::new(&temporal, "http://127.0.0.1:9/v1").with_push_receiver();
    config.server_extra = vec![
        "[server.auth]".into(),
        "mode = \"authenticated\"".into(),
        format!(
            "oidc = {{ issuer = \"{}\", audience = \"baton\" }}",
            issuer.issuer
        ),
    ];
    let url = config.base_url.clone().unwrap();
    let _gateway = GatewayProcess::start(baton(), &config.render()).await;

    let tokens = minted["tokens"].as_object().unwrap();
    assert_eq!(
        tokens.keys().collect::<Vec<_>>(),
        ["ES256", "ES384", "EdDSA", "PS256", "RS256", "RS512"]
    );
    for (alg, token) in tokens {
        let bearer = format!("Bearer {}", token.as_str().unwrap());
        let (status, _, body) =
            raw_rpc(&url, &[("Authorization", &bearer)], "ListTasks", json!({})).await;
        assert_eq!(status, 200, "{alg}: {body}");
        assert_eq!(body["result"]["pageSize"], 50, "{alg}: {body}");
    }
    for (forgery, said) in [
        ("hmac with the public key", "signed with HS256"),
        (
            "signed by a key the issuer never published",
            "signature does not verify",
        ),
        ("expired an hour ago", "has expired"),
        ("for another audience", "not for audience \"baton\""),
    ] {
        let bearer = format!("Bearer {}", minted["forgeries"][forgery].as_str().unwrap());
        let (status, _, body) =
            raw_rpc(&url, &[("Authorization", &bearer)], "ListTasks", json!({})).await;
        assert_eq!(status, 401, "{forgery}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(said),
            "{forgery}: {said:?} not in {body}"
        );
    }
}

#[tokio::test]
async fn a_standard_client_with_nothing_but_a_token_works_and_a_claimed_identity_gets_nothing() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(replies(60)).await;
    let issuer = OidcIssuer::start().await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    config.server_extra = vec![
        "[server.auth]".into(),
        "mode = \"authenticated\"".into(),
        "tokens = [{ participant = \"alice\", secret_env = \"ALICE_TOKEN\" }]".into(),
        format!(
            "oidc = {{ issuer = \"{}\", audience = \"baton\" }}",
            issuer.issuer
        ),
    ];
    let url = config.base_url.clone().unwrap();
    let _worker =
        WorkerProcess::start_with_env(baton(), &config.render(), &[("ALICE_TOKEN", ALICE_TOKEN)])
            .await;

    // The card tells a client how to authenticate.
    let card: Value = reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let schemes = card["securitySchemes"].as_object().unwrap();
    assert_eq!(
        schemes.keys().collect::<Vec<_>>(),
        ["apiKey", "bearer", "oidc"]
    );

    let bob_jwt = issuer.token("baton", json!({"sub": "bob"}));
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        // Alice has her token, as a bearer token or an API key; Bob a JWT of the issuer. The
        // SDK's AuthInterceptor presents each as the card says; neither sends X-Participant-Id.
        let alice = SdkClient::with_credential(&url, binding, "bearer", ALICE_TOKEN);
        let alice_by_key = SdkClient::with_credential(&url, binding, "apiKey", ALICE_TOKEN);
        let bob = SdkClient::with_credential(&url, binding, "oidc", &bob_jwt);

        // A client that knows nothing of Baton gets a task that completes with its answer, as
        // the status message and as the artifact.
        let sent = alice.call("send", &["--text", "Hello"]).await.ok();
        let task = &sent[0]["task"];
        let task_id = task["id"].as_str().unwrap().to_string();
        assert_eq!(state(task), "TASK_STATE_COMPLETED", "{binding}: {task}");
        let answer = task["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(answer.starts_with("answer"), "{task}");
        assert!(
            !task["metadata"]
                .to_string()
                .contains("awaiting-next-message")
        );
        // It goes on with a new task in the same context, whose model starts from the
        // conversation so far.
        let context = task["contextId"].as_str().unwrap();
        let next = alice
            .call("send", &["--text", "Again", "--context-id", context])
            .await
            .ok();
        let next_task = &next[0]["task"];
        assert_ne!(next_task["id"], task_id.as_str(), "a new task");
        assert_eq!(next_task["contextId"], context);
        assert_eq!(state(next_task), "TASK_STATE_COMPLETED", "{next_task}");
        let shown = model.requests().last().unwrap()["messages"].to_string();
        assert!(
            shown.contains("Hello") && shown.contains(&answer),
            "the earlier conversation: {shown}"
        );
        let got = alice_by_key
            .call("get", &["--task-id", &task_id])
            .await
            .ok();
        assert_eq!(got[0]["id"], task_id.as_str());
        assert!(task_ids(&alice.call("list", &[]).await.ok()[0]).contains(&task_id));

        // Bob is someone else: Alice's task does not exist for him, and he has his own.
        assert_eq!(
            bob.call("get", &["--task-id", &task_id]).await.reason(),
            "TASK_NOT_FOUND"
        );
        assert!(!task_ids(&bob.call("list", &[]).await.ok()[0]).contains(&task_id));
        let his = bob.call("send", &["--text", "Hi"]).await.ok();
        let his_id = his[0]["task"]["id"].as_str().unwrap().to_string();
        assert_eq!(
            bob.call("list", &[]).await.ok()[0]["tasks"][0]["id"],
            his_id.as_str()
        );
        // Alice's context is hers: a task Bob starts in it starts afresh.
        bob.call("send", &["--text", "Mine?", "--context-id", context])
            .await
            .ok();
        let shown = model.requests().last().unwrap()["messages"].to_string();
        assert!(!shown.contains(&answer), "{shown}");
    }
    // The issuer's keys were fetched once and kept, not once a call.
    assert_eq!(issuer.key_fetches(), 1);

    // A gRPC call without a credential is refused as gRPC refuses: UNAUTHENTICATED, in words.
    let nobody = SdkClient::new(&url, "GRPC", "").call("list", &[]).await;
    assert!(
        nobody.message().contains("UNAUTHENTICATED")
            && nobody.message().contains("securitySchemes"),
        "{}",
        nobody.message()
    );

    // Everything else is refused before anything is created, with a 401 that says how to come.
    let turns = model.requests().len();
    let mut forged = bob_jwt.split('.').map(str::to_string).collect::<Vec<_>>();
    forged[1] = {
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut claims: Value =
            serde_json::from_slice(&engine.decode(&forged[1]).unwrap()).unwrap();
        claims["sub"] = json!("alice");
        engine.encode(claims.to_string())
    };
    let forged = forged.join(".");
    let other_audience = format!(
        "Bearer {}",
        issuer.token("another-agent", json!({"sub": "bob"}))
    );
    let alice_bearer = format!("Bearer {ALICE_TOKEN}");
    let forged_bearer = format!("Bearer {forged}");
    let own_id_jwt = format!(
        "Bearer {}",
        issuer.token("baton", json!({"sub": "front-desk"}))
    );
    for (headers, status, said) in [
        (vec![], 401, "needs a credential"),
        (
            vec![("X-Participant-Id", "alice")],
            401,
            "needs a credential",
        ),
        (
            vec![("X-Participant-Id", "front-desk")],
            401,
            "needs a credential",
        ),
        (
            vec![("Authorization", "Bearer not-a-token-of-ours")],
            401,
            "not one this agent accepts",
        ),
        (
            vec![("Authorization", forged_bearer.as_str())],
            401,
            "signature does not verify",
        ),
        (
            vec![("Authorization", other_audience.as_str())],
            401,
            "not for audience",
        ),
        (
            vec![
                ("Authorization", alice_bearer.as_str()),
                ("X-Participant-Id", "bob"),
            ],
            403,
            "the credential is \"alice\"'s",
        ),
        (
            vec![("Authorization", own_id_jwt.as_str())],
            403,
            "\"front-desk\" is reserved on this agent",
        ),
    ] {
        let (got, challenge, body) =
            raw_rpc(&url, &headers, "SendMessage", hello("m-stranger")).await;
        assert_eq!(got, status, "{headers:?}: {body}");
        assert_eq!(body["error"]["code"], -32600, "{body}");
        let reason = if status == 401 {
            "UNAUTHENTICATED"
        } else {
            "PERMISSION_DENIED"
        };
        assert_eq!(body["error"]["data"][0]["reason"], reason, "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(said),
            "{said:?} not in {body}"
        );
        if status == 401 {
            assert_eq!(challenge.as_deref(), Some("Bearer realm=\"a2a\""));
        }
    }
    // A credential's participant is the sender: a message that names another is refused.
    let mut claims_bob = hello("m-claims-bob");
    claims_bob["message"]["metadata"] = json!({"participant_id": "bob"});
    let (_, _, body) = raw_rpc(
        &url,
        &[("Authorization", alice_bearer.as_str())],
        "SendMessage",
        claims_bob,
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a different participant"),
        "{body}"
    );
    assert_eq!(model.requests().len(), turns, "nothing was created");
}

#[tokio::test]
async fn at_the_defaults_a_generic_client_with_nothing_is_served_and_its_tasks_are_its_own() {
    let temporal = TestTemporal::start().await;
    // Three tasks for each binding answer at once; the tenth model call is held.
    let mut script = replies(9);
    script.push(Scripted::Held(baton_tests::fake_model::ModelResponseSpec {
        text: Some("never sent".into()),
        tool_calls: vec![],
    }));
    let model = FakeModel::start(script).await;
    // No [server.auth]: what a user gets.
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;

    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        // No X-Participant-Id, no credential, no extension: a client that knows nothing of Baton.
        let nobody = SdkClient::new(&url, binding, "");
        let sent = nobody.call("send", &["--text", "Hello"]).await.ok();
        let task = &sent[0]["task"];
        let task_id = task["id"].as_str().unwrap().to_string();
        assert_eq!(state(task), "TASK_STATE_COMPLETED", "{binding}: {task}");
        assert_eq!(task_id.len(), 64, "an id only this deployment can derive");
        let got = nobody.call("get", &["--task-id", &task_id]).await.ok();
        assert_eq!(got[0]["id"], task_id.as_str(), "{binding}");
        let streamed = nobody.call("stream", &["--text", "Again"]).await.ok();
        let last = streamed.last().unwrap();
        let last = last.get("statusUpdate").unwrap_or(&last["task"]);
        assert_eq!(
            state(last),
            "TASK_STATE_COMPLETED",
            "{binding}: {streamed:?}"
        );
        // Listed to nobody, and out of reach of a named caller.
        assert!(task_ids(&nobody.call("list", &[]).await.ok()[0]).is_empty());
        let alice = SdkClient::new(&url, binding, "alice");
        assert_eq!(
            alice.call("get", &["--task-id", &task_id]).await.reason(),
            "TASK_NOT_FOUND",
            "{binding}"
        );
        // And a named caller's task is out of the anonymous caller's reach.
        let hers = alice.call("send", &["--text", "Mine"]).await.ok();
        let hers = hers[0]["task"]["id"].as_str().unwrap().to_string();
        assert_eq!(
            nobody.call("get", &["--task-id", &hers]).await.reason(),
            "TASK_NOT_FOUND",
            "{binding}"
        );
    }

    // A task still working is cancelled by the client that made it.
    let nobody = SdkClient::new(&url, "JSONRPC", "");
    let sent = nobody
        .call(
            "send",
            &["--text", "Take your time", "--return-immediately"],
        )
        .await
        .ok();
    let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
    poll_until("the held model call", HANG_GUARD, || async {
        (model.request_count() == 10).then_some(())
    })
    .await;
    let cancelled_at = std::time::Instant::now();
    let canceled = nobody.call("cancel", &["--task-id", &task_id]).await.ok();
    assert_eq!(state(&canceled[0]), "TASK_STATE_CANCELED");
    // The model call under way is dropped, not run to its end: a real model bills it. A cancel
    // reaches an activity only in a heartbeat's answer, which the worker sends at least every
    // 2 s (the SDK's default held it 16 s, so a call of up to 16 s more ran to its end).
    poll_until(
        "the held model call to be hung up on",
        HANG_GUARD,
        || async { (model.abandoned_count() == 1).then_some(()) },
    )
    .await;
    let dropped_after = cancelled_at.elapsed();
    assert!(
        dropped_after < Duration::from_secs(6),
        "the model call was dropped {dropped_after:?} after the cancel"
    );

    // The task extension's payload goes only to a caller that activated the extension.
    let read = |extensions: &'static str| {
        let url = url.clone();
        let task_id = task_id.clone();
        async move {
            let headers: Vec<(&str, &str)> = if extensions.is_empty() {
                vec![]
            } else {
                vec![("A2A-Extensions", extensions)]
            };
            raw_rpc(&url, &headers, "GetTask", json!({"id": task_id}))
                .await
                .2
        }
    };
    let plain = read("").await;
    assert!(
        plain["result"]["metadata"]
            .get(baton_gateway::TASK_METADATA_KEY)
            .is_none(),
        "{plain}"
    );
    let activated = read(baton_core::extensions::TASK_EXTENSION).await;
    assert!(
        activated["result"]["metadata"]
            .get(baton_gateway::TASK_METADATA_KEY)
            .is_some(),
        "{activated}"
    );
}

#[tokio::test]
async fn in_anonymous_mode_a_client_with_nothing_gets_tasks_reached_by_id_alone() {
    let agent = agent_with(|mut config| {
        config.server_extra = vec!["[server.auth]".into(), "mode = \"anonymous\"".into()];
        config
    })
    .await;
    let url = agent.url.clone();

    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let nobody = SdkClient::new(&url, binding, "").speaking_the_status_extension();
        let sent = nobody.call("send", &["--text", "Hello"]).await.ok();
        let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
        assert_eq!(
            task_id.len(),
            64,
            "an id only this deployment can derive: {task_id}"
        );
        let streamed = nobody
            .call("stream", &["--task-id", &task_id, "--text", "Again"])
            .await
            .ok();
        assert!(streamed.len() >= 2, "{streamed:?}");
        assert_eq!(
            nobody.call("get", &["--task-id", &task_id]).await.ok()[0]["id"],
            task_id.as_str()
        );
        // Never listed, to this caller or any other.
        assert!(task_ids(&nobody.call("list", &[]).await.ok()[0]).is_empty());
        let canceled = nobody.call("cancel", &["--task-id", &task_id]).await.ok();
        assert_eq!(state(&canceled[0]), "TASK_STATE_CANCELED");
    }

    // The same message id from two anonymous callers with different words: two tasks; the same
    // message sent again: the same task.
    let first = raw_rpc(&url, &[], "SendMessage", hello("m-shared")).await.2;
    let mut other = hello("m-shared");
    other["message"]["parts"][0]["text"] = json!("something else");
    let second = raw_rpc(&url, &[], "SendMessage", other).await.2;
    let again = raw_rpc(&url, &[], "SendMessage", hello("m-shared")).await.2;
    let id = |answer: &Value| answer["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_ne!(id(&first), id(&second));
    assert_eq!(id(&first), id(&again));

    // Claiming an identity without proving it is refused, not taken.
    for claimed in ["alice", "front-desk"] {
        let (status, _, body) = raw_rpc(
            &url,
            &[("X-Participant-Id", claimed)],
            "SendMessage",
            hello("m-claim"),
        )
        .await;
        assert_eq!(status, 401, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no asserted")
        );
    }
}

#[tokio::test]
async fn an_asserted_caller_cannot_claim_this_agents_own_id() {
    let agent = agent().await;
    let (status, _, body) = raw_rpc(
        &agent.url,
        &[("X-Participant-Id", "front-desk")],
        "SendMessage",
        hello("m-1"),
    )
    .await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("reserved"),
        "{body}"
    );
    let mut by_metadata = hello("m-2");
    by_metadata["message"]["metadata"] = json!({"participant_id": "front-desk"});
    let (status, _, body) = raw_rpc(&agent.url, &[], "SendMessage", by_metadata).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (200, json!(-32602)),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("reserved"),
        "{body}"
    );
    assert_eq!(agent.model.requests().len(), 0, "nothing was created");
}

/// The highest resident memory the process has had, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

#[tokio::test]
async fn part_floods_and_requests_past_the_concurrency_limit_are_refused_before_they_cost_anything()
{
    use a2a_client::Transport;

    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![Scripted::Held(
        baton_tests::fake_model::ModelResponseSpec {
            text: Some("held answer".into()),
            tool_calls: vec![],
        },
    )])
    .await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    config.server_extra = vec![
        "max_message_parts = 3".into(),
        "max_concurrent_requests = 1".into(),
        "rate_limit_per_minute = 0".into(),
    ];
    let url = config.base_url.clone().unwrap();
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    let http = reqwest::Client::new();
    let rpc = |body: Value| {
        http.post(format!("{url}/"))
            .header("A2A-Version", "1.0")
            .header("X-Participant-Id", "alice")
            .json(&body)
            .send()
    };
    let send = |id: Value, parts: Vec<Value>| {
        json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage", "params": {
            "message": {"messageId": "m-flood", "role": "ROLE_USER", "parts": parts}}})
    };

    // Sixteen bodies just under 1 MiB of empty parts cost next to nothing: parsed, each would
    // have cost a hundred megabytes.
    let before = peak_rss_kib(worker.pid());
    let flood: Vec<Value> = vec![json!({"text": ""}); 80_000];
    for n in 0..16 {
        let refused: Value = rpc(send(json!(n), flood.clone()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(refused["id"], n, "{refused}");
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("at most 3 parts (server.max_message_parts)"),
            "{refused}"
        );
    }
    let grown_mib = (peak_rss_kib(worker.pid()) - before) / 1024;
    assert!(grown_mib < 32, "peak memory grew by {grown_mib} MiB");

    let four = vec![json!({"text": "a"}); 4];
    let rest = http
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", "alice")
        .json(&json!({"message": {"messageId": "m-rest", "role": "ROLE_USER", "parts": four}}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "{body}");

    let port = url.rsplit(':').next().unwrap().trim_end_matches('/');
    let grpc = a2a_grpc::GrpcTransport::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let params = [("a2a-version", "1.0"), ("x-participant-id", "alice")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
        .collect();
    let message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text("a"); 4]);
    let request = a2a::SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let refused = grpc.send_message(&params, &request).await.unwrap_err();
    assert_eq!(refused.code, -32602, "{refused:?}");
    assert_eq!(model.requests().len(), 0, "nothing reached a task");

    // One blocking send takes the only place until its held turn is let go.
    let blocking = tokio::spawn(rpc(send(json!("held"), vec![json!({"text": "hi"})])));
    poll_until("the held send to reach the model", HANG_GUARD, || async {
        (!model.requests().is_empty()).then_some(())
    })
    .await;
    let busy = rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "t"}}))
        .await
        .unwrap();
    assert_eq!(busy.status(), 503);
    assert_eq!(busy.headers()["retry-after"], "1");
    let busy: Value = busy.json().await.unwrap();
    assert_eq!(busy["error"]["data"][0]["reason"], "UNAVAILABLE", "{busy}");
    assert!(
        busy["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server.max_concurrent_requests"),
        "{busy}"
    );
    // The card is not an A2A request, and never waits for a place.
    let card = http
        .get(format!("{url}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);

    model.release();
    let answered: Value = blocking.await.unwrap().unwrap().json().await.unwrap();
    assert_eq!(
        answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    let free: Value =
        rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "t"}}))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert_eq!(
        free["error"]["code"], -32001,
        "the place is free again: {free}"
    );
}
