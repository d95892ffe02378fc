//! OpenTelemetry: the W3C trace context a caller sends Baton's gateway reaches the agent Baton
//! delegates to, through Temporal, and the spans on the way are exported over OTLP/HTTP as one
//! trace; a collector that is down slows no task, and without one the context still travels.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::{WITHIN, baton};
use baton_proto::TaskState;
use baton_tests::PythonPeer;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, Scripted, delegate, reply};
use baton_tests::otlp_receiver::{OtlpReceiver, ReceivedSpan, SPAN_KIND_CLIENT, SPAN_KIND_SERVER};
use serde_json::{Value, json};

/// The caller's context: its trace and the span it calls Baton from.
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn caller_traceparent() -> String {
    format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01")
}

/// The parent delegates to the ledger, then answers with what it says.
fn desk(request: &Value) -> Scripted {
    let shown = request["messages"].to_string();
    if shown.contains("is COMPLETED") {
        reply("The ledger balances.")
    } else if shown.contains("started on") {
        reply("Waiting for the ledger.")
    } else {
        delegate("balance", "Is the ledger balanced?", "ledger")
    }
}

/// A ledger that records the headers of every call, and a worker delegating to it whose
/// gateway takes the caller's message; `trace` is the worker's `[trace]` table, if any.
struct Delegation {
    temporal: TestTemporal,
    _model: FakeModel,
    _peer: PythonPeer,
    headers: tempfile::NamedTempFile,
    worker: WorkerProcess,
    gateway: String,
}

impl Delegation {
    async fn start(trace: Option<&str>) -> Delegation {
        let temporal = TestTemporal::start().await;
        let headers = tempfile::NamedTempFile::new().unwrap();
        let peer = PythonPeer::start(&[
            "--name",
            "Ledger",
            "--behaviour",
            "complete",
            // Past the create's settle grace, so the trace crosses a stand-in too.
            "--settle-seconds",
            "1",
            "--headers-log",
            headers.path().to_str().unwrap(),
        ])
        .await;
        let model = FakeModel::responding(desk).await;
        let config = WorkerConfig::new(&temporal, &model.base_url())
            .agent("ledger", &peer.url(), "")
            .with_push_receiver();
        let gateway = config.base_url.clone().unwrap();
        let mut text = config.render();
        if let Some(trace) = trace {
            text.push_str(&format!("\n[trace]\n{trace}\n"));
        }
        let worker = WorkerProcess::start(baton(), &text).await;
        Delegation {
            temporal,
            _model: model,
            _peer: peer,
            headers,
            worker,
            gateway,
        }
    }

    /// Sends the caller's message with its `traceparent`; returns the task's id.
    async fn send(&self) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m-trace", "role": "ROLE_USER",
                        "parts": [{"text": "Check the books with the ledger."}]},
            "configuration": {"returnImmediately": true}
        }});
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/", self.gateway))
            .header("A2A-Version", "1.0")
            .header("X-Participant-Id", "alice")
            .header("traceparent", caller_traceparent())
            .header("tracestate", "caller=1")
            .json(&body)
            .send()
            .await
            .expect("calling the gateway")
            .json()
            .await
            .expect("a JSON-RPC answer");
        answer["result"]["task"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no task in {answer}"))
            .to_string()
    }

    /// Runs the delegation to its end: the parent completes with the ledger's word, and its
    /// workflow closes (after the sweep it ends with), so every span of the task has ended.
    async fn run(&self) {
        let task_id = self.send().await;
        let view = self
            .temporal
            .wait_for_task(&task_id, WITHIN, |v| v.state.is_terminal())
            .await;
        self.temporal.wait_closed(&task_id, WITHIN).await;
        assert_eq!(view.state, TaskState::Completed, "{view:#?}");
        assert_eq!(view.last_answer.as_deref(), Some("The ledger balances."));
        assert_eq!(view.sub_tasks[0].state, TaskState::Completed, "{view:#?}");
    }

    /// The `traceparent` of every A2A call the ledger got (its card fetch is no call of a task).
    fn peer_traceparents(&self) -> Vec<Option<String>> {
        std::fs::read_to_string(self.headers.path())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|record| {
                record["path"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("/rpc"))
            })
            .map(|record| record["traceparent"].as_str().map(str::to_string))
            .collect()
    }
}

/// `(trace id, parent span id)` of a `traceparent`.
fn parts(traceparent: &str) -> (String, String) {
    let fields: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(fields.len(), 4, "{traceparent}");
    (fields[1].to_string(), fields[2].to_string())
}

/// The names from `span` up its parents, as far as the spans received go.
fn ancestry<'a>(
    span: &'a ReceivedSpan,
    by_id: &HashMap<&str, &'a ReceivedSpan>,
) -> Vec<&'a ReceivedSpan> {
    let mut chain = vec![span];
    while let Some(parent) = by_id.get(chain.last().unwrap().parent_span_id.as_str()) {
        chain.push(parent);
    }
    chain
}

#[tokio::test]
async fn one_trace_runs_from_the_caller_through_baton_and_temporal_to_the_peer() {
    let collector = OtlpReceiver::start().await;
    let mut delegation =
        Delegation::start(Some(&format!("endpoint = \"{}\"", collector.endpoint()))).await;
    delegation.run().await;

    // Every call the ledger got for the task is in the caller's trace, made from a span of
    // Baton's (not the caller's own).
    let received = delegation.peer_traceparents();
    assert!(!received.is_empty(), "the ledger got no call");
    let mut parents = Vec::new();
    for traceparent in &received {
        let traceparent = traceparent
            .as_deref()
            .expect("every call carries a traceparent");
        let (trace, parent) = parts(traceparent);
        assert_eq!(trace, CALLER_TRACE, "{traceparent}");
        assert_ne!(parent, CALLER_SPAN, "{traceparent}");
        parents.push(parent);
    }

    // Stopping the worker sends what is left of the trace.
    assert!(
        delegation.worker.terminate(Duration::from_secs(30)).await,
        "the worker stopped"
    );
    let spans = collector
        .wait_for(
            "the spans that called the ledger",
            Duration::from_secs(10),
            |spans| {
                parents
                    .iter()
                    .all(|p| spans.iter().any(|s| &s.span_id == p))
            },
        )
        .await;
    let trace: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|s| s.trace_id == CALLER_TRACE)
        .collect();
    let by_id: HashMap<&str, &ReceivedSpan> =
        trace.iter().map(|s| (s.span_id.as_str(), *s)).collect();

    // Each call to the ledger is a client span of Baton's A2A client, the creation first ...
    for parent in &parents {
        let call = by_id[parent.as_str()];
        assert!(call.name.starts_with("A2AService/"), "{}", call.name);
        assert_eq!(call.kind, SPAN_KIND_CLIENT, "{}", call.name);
        assert_eq!(call.attributes["baton.agent"], "ledger", "{}", call.name);
        assert_eq!(call.attributes["rpc.system"], "a2a", "{}", call.name);
    }
    let to_ledger = by_id[parents[0].as_str()];
    assert_eq!(to_ledger.name, "A2AService/SendStreamingMessage");
    assert_eq!(to_ledger.kind, SPAN_KIND_CLIENT);
    assert_eq!(to_ledger.attributes["baton.agent"], "ledger");
    assert_eq!(to_ledger.service, "baton-front-desk");
    // ... whose ancestors run through the activity, the workflows and the Temporal client up
    // to the gateway's span of the caller's call, the child of the caller's own span.
    let chain = ancestry(to_ledger, &by_id);
    let names: Vec<&str> = chain.iter().map(|s| s.name.as_str()).collect();
    let top = chain.last().unwrap();
    assert_eq!(
        (top.name.as_str(), top.kind, top.parent_span_id.as_str()),
        ("A2AService/SendMessage", SPAN_KIND_SERVER, CALLER_SPAN),
        "{names:?}"
    );
    assert_eq!(top.attributes["rpc.system"], "a2a");
    assert_eq!(top.attributes["baton.agent"], "front-desk");
    for hop in [
        "RunActivity:",
        "StartActivity:",
        // The test's send returns immediately: signal-with-start opens its task.
        "SignalWithStartWorkflow:TaskWorkflow",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(hop)),
            "no {hop} in {names:?}"
        );
    }
    // The task's workflow and the stand-in that watches the sub-task are in the trace, and the
    // task's polls are not.
    let all: Vec<&str> = trace.iter().map(|s| s.name.as_str()).collect();
    for workflow in [
        "RunWorkflow:TaskWorkflow",
        "StartChildWorkflow:RemoteTaskWorkflow",
        "RunWorkflow:RemoteTaskWorkflow",
    ] {
        assert!(all.contains(&workflow), "no {workflow} in {all:?}");
    }
    assert!(
        spans
            .iter()
            .all(|s| !s.name.starts_with("QueryWorkflow:") && !s.name.starts_with("HandleQuery:")),
        "polls are not traced"
    );
    // Everything the worker exported is of the caller's trace, and hangs off the caller's span:
    // one tree, nothing detached.
    let elsewhere: Vec<&str> = spans
        .iter()
        .filter(|s| s.trace_id != CALLER_TRACE)
        .map(|s| s.name.as_str())
        .collect();
    assert!(elsewhere.is_empty(), "spans of other traces: {elsewhere:?}");
    for span in &trace {
        let root = *ancestry(span, &by_id).last().unwrap();
        assert_eq!(
            root.parent_span_id, CALLER_SPAN,
            "{} is detached",
            span.name
        );
    }
}

#[tokio::test]
async fn a_collector_that_is_down_slows_no_task_and_the_context_still_travels() {
    // A port nothing listens on.
    let closed = baton_tests::free_port();
    let delegation =
        Delegation::start(Some(&format!("endpoint = \"http://127.0.0.1:{closed}\""))).await;
    delegation.run().await;
    for traceparent in delegation.peer_traceparents() {
        let (trace, _) = parts(&traceparent.expect("every call carries a traceparent"));
        assert_eq!(trace, CALLER_TRACE);
    }
    // Said once, not at every batch.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while delegation
        .worker
        .logged(&["traces cannot be exported"])
        .is_empty()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no warning that export fails"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        delegation
            .worker
            .logged(&["traces cannot be exported"])
            .len(),
        1
    );
}

#[tokio::test]
async fn without_a_collector_the_callers_context_reaches_the_peer_as_it_came() {
    let delegation = Delegation::start(None).await;
    delegation.run().await;
    let received = delegation.peer_traceparents();
    assert!(!received.is_empty(), "the ledger got no call");
    for traceparent in received {
        assert_eq!(traceparent.as_deref(), Some(caller_traceparent().as_str()));
    }
}

#[tokio::test]
async fn opentelemetry_s_variables_export_model_calls_as_gen_ai_spans_that_json_log_lines_name() {
    let temporal = TestTemporal::start().await;
    let collector = OtlpReceiver::start().await;
    let model = FakeModel::start(vec![reply("The books balance.")]).await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url());
    config.json_logs = true;
    let endpoint = collector.endpoint();
    // No [trace] in the file: OpenTelemetry's own variables turn export on.
    let worker = WorkerProcess::start_with_env(
        baton(),
        &config.render(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "desk-by-env"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-token=abc123"),
            ("OTEL_TRACES_SAMPLER", "always_on"),
            ("RUST_LOG", "info,baton_model=debug"),
        ],
    )
    .await;
    temporal
        .start_task(
            &config.task_queue,
            "t-genai",
            baton_tests::engine::task_input("books", "Check."),
        )
        .await;
    temporal
        .wait_for_task("t-genai", WITHIN, |v| v.state.is_terminal())
        .await;

    let spans = collector
        .wait_for("a chat span", WITHIN, |spans| {
            spans.iter().any(|s| s.name == "chat fake-model")
        })
        .await;
    let chat = spans.iter().find(|s| s.name == "chat fake-model").unwrap();
    assert_eq!(
        chat.service, "desk-by-env",
        "OTEL_SERVICE_NAME names the service"
    );
    assert_eq!(chat.kind, SPAN_KIND_CLIENT);
    assert_eq!(
        chat.headers.get("x-collector-token").map(String::as_str),
        Some("abc123")
    );
    for (key, value) in [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "fake-model"),
        ("gen_ai.response.finish_reasons", "stop"),
        ("server.address", "127.0.0.1"),
    ] {
        assert_eq!(
            chat.attributes.get(key).map(String::as_str),
            Some(value),
            "{key}: {chat:#?}"
        );
    }
    for counted in ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"] {
        assert!(
            chat.attributes
                .get(counted)
                .is_some_and(|n| n.parse::<u64>().is_ok()),
            "{counted}: {chat:#?}"
        );
    }

    // The JSON line the call logged names the span it was in.
    let lines = worker.logged(&["model call answered"]);
    let line: Value = serde_json::from_str(lines.first().expect("the call was logged")).unwrap();
    assert_eq!(line["trace_id"], chat.trace_id.as_str(), "{line}");
    assert_eq!(line["span_id"], chat.span_id.as_str(), "{line}");
}

#[tokio::test]
async fn otel_traces_sampler_decides_what_is_exported() {
    let temporal = TestTemporal::start().await;
    let collector = OtlpReceiver::start().await;
    let model = FakeModel::start(vec![reply("The books balance.")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let endpoint = collector.endpoint();
    // A ratio of 0, not parent-based: no trace is sampled, Baton's own or Temporal's.
    let mut worker = WorkerProcess::start_with_env(
        baton(),
        &config.render(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0"),
        ],
    )
    .await;
    assert_eq!(
        worker.logged(&["exporting traces to"]).len(),
        1,
        "export is on"
    );
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-unsampled",
            baton_tests::engine::task_input("books", "Check."),
            WITHIN,
        )
        .await;
    assert_eq!(view.state, TaskState::Completed);
    // A worker that stops sends every span still queued first: after it, nothing more comes.
    assert!(
        worker.terminate(Duration::from_secs(30)).await,
        "a clean stop"
    );
    let exported: Vec<String> = collector.spans().iter().map(|s| s.name.clone()).collect();
    assert!(
        exported.is_empty(),
        "nothing sampled, nothing exported: {exported:?}"
    );
}

/// One trace spans every hop of a chain: the caller's context reaches the ledger through two
/// Batons (the front desk delegates to the middle agent, which delegates to the ledger), each
/// hop's gateway taking it from the call and sending it on. Neither agent exports spans, so the
/// context travels as the caller sent it.
#[tokio::test]
async fn one_trace_spans_two_batons_and_the_agent_below_them() {
    let delegation = Delegation::start(None).await;
    let front_model = FakeModel::responding(|request: &Value| {
        let shown = request["messages"].to_string();
        if shown.contains("is COMPLETED") {
            reply("The middle agent says the ledger balances.")
        } else if shown.contains("started on") {
            reply("Waiting for the middle agent.")
        } else {
            delegate("books", "Check the books with the ledger.", "middle")
        }
    })
    .await;
    let mut front_desk = WorkerConfig::new(&delegation.temporal, &front_model.base_url())
        .agent("middle", &delegation.gateway, "")
        .with_push_receiver();
    front_desk.agent_id = "desk".into();
    let _front = WorkerProcess::start(baton(), &front_desk.render()).await;
    let front = Delegation {
        gateway: front_desk.base_url.clone().unwrap(),
        ..delegation
    };
    let task_id = front.send().await;
    let view = front
        .temporal
        .wait_for_task(&task_id, WITHIN, |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");

    let received = front.peer_traceparents();
    assert!(!received.is_empty(), "the ledger got no call");
    for traceparent in &received {
        let traceparent = traceparent
            .as_deref()
            .expect("every call carries a traceparent");
        assert_eq!(parts(traceparent).0, CALLER_TRACE, "{traceparent}");
    }
}
