//! `baton-bench gateway`: GetTask, ListTasks (a page of 20) and SendMessage (with
//! `returnImmediately`) over JSON-RPC,
//! through Baton's gateway and through the official Python a2a-sdk's in-memory server, in one run
//! on 127.0.0.1, from the same HTTP client. Figures are ratios of Baton against the a2a-sdk, and
//! of Baton's gRPC binding (the official a2a-grpc client) against its JSON-RPC one.
//!
//! Baton's side is `baton worker`'s: an embedded dev server the bench starts, the worker with its
//! gateway, and the bench model, which answers a gateway task at once. Each SendMessage starts a
//! `TaskWorkflow` (signal-with-start of its `first_message`), which then runs a model turn and
//! completes with the model's answer, as a task from a caller without the status extension does.
//! The a2a-sdk's executor does the same work for each message: one call to the same model, then
//! COMPLETED with its answer. The bench checks that both servers answered so before it measures.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a::{
    GetTaskRequest, ListTasksRequest, Message, Part, Role, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, TaskState,
};
use a2a_client::{ServiceParams, Transport};
use a2a_grpc::GrpcTransport;
use anyhow::{Context, bail};
use baton_config::Settings;
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::process::Command;
use tonic::transport::Endpoint;

use super::child::ChildProcess;
use super::delegation::{bench_dir, progress, start_dev_server};
use super::ended_tasks::{self, EndedTasks};
use super::measure::{Latency, load_average, per_second, round, split, wall_seconds};
use super::plot::{Chart, Group, Panel};
use super::quiet_streams::{self, QuietStreams};
use super::report::{Machine, Output, print_report};
use super::worker::with_worker;
use baton_tests::delegating_model::{ANSWER, DIRECT_MARKER, delegating};
use baton_tests::fake_model::FakeModel;
use baton_tests::free_port;

/// The baseline server, written to the bench's temporary directory and run with `--python`.
const PYTHON_AGENT: &str = include_str!("../../../tests/peers/a2a_sdk_baseline.py");
const TASK_QUEUE: &str = "bench-gateway";
/// The longest one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Who the bench says it is: any id but the agent's own, which only the agent may be.
const PARTICIPANT: &str = "bench-client";
/// The names of the servers in the figures.
const A2A_SDK: &str = "a2a-sdk";
const BATON: &str = "baton";
const BATON_GRPC: &str = "baton-grpc";

#[derive(clap::Args, Debug, Clone)]
pub struct GatewayArgs {
    /// Requests in each concurrent batch (per call and server).
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub requests: usize,
    /// Requests in flight at once in the concurrent batches.
    #[arg(long, default_value_t = 10, value_name = "C")]
    pub concurrency: usize,
    /// Requests sent one at a time (per call and server), for the unloaded latency.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub sequential: usize,
    /// The `temporal` CLI that runs the dev server (default: `temporal` on PATH).
    #[arg(long, value_name = "PATH")]
    pub temporal_binary: Option<PathBuf>,
    /// A Python with `a2a-sdk[http-server]` and uvicorn (default: `.venv/bin/python` when it
    /// exists, else `python3`).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Whether Baton's tasks carry its search attributes, as they do by default on its embedded
    /// dev server (the bench's server has them registered); `false` measures what they cost.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub search_attributes: bool,
    /// SubscribeToTask streams held open on parked tasks while the CPU is read, against none
    /// open; 0 skips.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub streams: usize,
    /// The parked tasks those streams are spread over (within the worker's workflow cache of
    /// 50, so that the streams measure waiting, not replays).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub stream_tasks: usize,
    /// Completed tasks each read twice with GetTask (so the gateway keeps them in its view
    /// cache) while the CPU is read, against the same tasks unread; 0 skips.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub ended_tasks: usize,
    #[command(flatten)]
    pub output: Output,
}

/// One server under test: where its JSON-RPC endpoint is, or its gRPC channel.
#[derive(Clone)]
struct Target {
    name: &'static str,
    url: String,
    grpc: Option<Arc<GrpcTransport>>,
}

/// The same JSON-RPC calls to any target, counting request ids across the run.
#[derive(Clone)]
struct Caller {
    http: reqwest::Client,
    next_id: Arc<AtomicU64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Call {
    GetTask,
    ListTasks,
    /// One at a time, each sent once the task the last one created has ended, so that it
    /// meets a server with no work left over; then `--concurrency` at once.
    SendMessage,
    /// One at a time, each sent as soon as the last is answered. A server that ends its tasks
    /// more slowly than they come gathers a backlog of them over the batch, which each send
    /// then meets.
    SendMessageBackToBack,
    /// One at a time, each sent once every task but the last one sent has ended: the send meets
    /// the server at work on exactly one task, the last.
    SendMessageOneAhead,
}

/// Every call the bench measures, in the order it measures them: ListTasks before the
/// SendMessages, so each server lists the same number of tasks.
const CALLS: [Call; 5] = [
    Call::GetTask,
    Call::ListTasks,
    Call::SendMessage,
    Call::SendMessageBackToBack,
    Call::SendMessageOneAhead,
];
/// How long a task may take to end once the bench waits for it (a thousand tasks of backlog
/// drain in well under this).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a settling send asks whether its task has ended.
const SETTLE_POLL: Duration = Duration::from_millis(2);
/// How many tasks a ListTasks asks for.
const LIST_PAGE: i32 = 20;

impl Call {
    fn label(self) -> &'static str {
        match self {
            Call::GetTask => "GetTask",
            Call::ListTasks => "ListTasks",
            Call::SendMessage => "SendMessage (returnImmediately)",
            Call::SendMessageBackToBack => "SendMessage (rI), back to back",
            Call::SendMessageOneAhead => "SendMessage (rI), one task ahead",
        }
    }

    /// The call in a chart's few characters.
    fn short_name(self) -> &'static str {
        match self {
            Call::GetTask => "GetTask",
            Call::ListTasks => "ListTasks",
            Call::SendMessage => "Send",
            Call::SendMessageBackToBack => "Send b2b",
            Call::SendMessageOneAhead => "Send +1",
        }
    }

    /// Whether the call is also measured `--concurrency` at once.
    fn runs_concurrently(self) -> bool {
        !matches!(
            self,
            Call::SendMessageBackToBack | Call::SendMessageOneAhead
        )
    }
}

impl Caller {
    fn new() -> anyhow::Result<Caller> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .context("building the bench's HTTP client")?;
        Ok(Caller {
            http,
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    /// One JSON-RPC call; its `result`, or an error naming what came back.
    async fn rpc(&self, target: &Target, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self
            .http
            .post(&target.url)
            .header("A2A-Version", "1.0")
            .header("X-Participant-Id", PARTICIPANT)
            .json(&body)
            .send()
            .await
            .with_context(|| format!("{method} to {}", target.name))?;
        let status = response.status();
        let answer: Value = response
            .json()
            .await
            .with_context(|| format!("{method} to {}: HTTP {status}, not JSON", target.name))?;
        match answer.get("result") {
            Some(result) => Ok(result.clone()),
            None => bail!("{method} to {}: HTTP {status}: {answer}", target.name),
        }
    }

    /// SendMessage creating a new task; returns its id.
    async fn send(&self, target: &Target, return_immediately: bool) -> anyhow::Result<String> {
        // Unique within the run, which is all a fresh server needs.
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Some(grpc) = &target.grpc {
            let mut message = Message::new(
                Role::User,
                vec![Part::text(format!("{DIRECT_MARKER} question {n}"))],
            );
            message.message_id = format!("bench-message-{n}");
            let request = SendMessageRequest {
                message,
                configuration: Some(SendMessageConfiguration {
                    accepted_output_modes: None,
                    task_push_notification_config: None,
                    history_length: None,
                    return_immediately: Some(return_immediately),
                }),
                metadata: None,
                tenant: None,
            };
            return match grpc.send_message(&grpc_params(), &request).await {
                Ok(SendMessageResponse::Task(task)) => Ok(task.id),
                Ok(other) => bail!("SendMessage to {} answered no task: {other:?}", target.name),
                Err(error) => bail!("SendMessage to {}: {error}", target.name),
            };
        }
        let params = json!({
            "message": {
                "messageId": format!("bench-message-{n}"),
                "role": "ROLE_USER",
                "parts": [{"text": format!("{DIRECT_MARKER} question {n}")}],
            },
            "configuration": {"returnImmediately": return_immediately},
        });
        let result = self.rpc(target, "SendMessage", params).await?;
        result["task"]["id"]
            .as_str()
            .map(str::to_string)
            .with_context(|| format!("SendMessage to {} answered no task: {result}", target.name))
    }

    /// GetTask; the task's state.
    async fn get(&self, target: &Target, task_id: &str) -> anyhow::Result<TaskState> {
        if let Some(grpc) = &target.grpc {
            let request = GetTaskRequest {
                id: task_id.to_string(),
                history_length: None,
                tenant: None,
            };
            let task = grpc
                .get_task(&grpc_params(), &request)
                .await
                .map_err(|error| anyhow::anyhow!("GetTask on {}: {error}", target.name))?;
            if task.id != task_id {
                bail!("GetTask on {} answered another task", target.name);
            }
            return Ok(task.status.state);
        }
        let result = self.rpc(target, "GetTask", json!({"id": task_id})).await?;
        if result["id"].as_str() != Some(task_id) {
            bail!("GetTask on {} answered another task: {result}", target.name);
        }
        serde_json::from_value(result["status"]["state"].clone())
            .with_context(|| format!("GetTask on {} answered no state: {result}", target.name))
    }

    /// Waits, outside the measured time and for at most `SETTLE_TIMEOUT`, until `task_id` on
    /// `target` has ended. A read the server refuses in the meantime is asked again: Baton
    /// answers a retryable error when its worker, busy with a backlog, does not answer the read
    /// within the gateway's Temporal timeout.
    async fn settled(&self, target: &Target, task_id: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            match self.get(target, task_id).await {
                Ok(state) if state.is_terminal() => return Ok(()),
                Err(error) if Instant::now() > deadline => return Err(error),
                Ok(_) | Err(_) => {}
            }
            if Instant::now() > deadline {
                bail!(
                    "the task {task_id} on {} did not end within {SETTLE_TIMEOUT:?}",
                    target.name
                );
            }
            tokio::time::sleep(SETTLE_POLL).await;
        }
    }

    /// Fails unless `task_id` on `target` has COMPLETED with the model's answer: both servers
    /// must do the same work for each message, or the bench compares unlike things.
    async fn expect_answered(&self, target: &Target, task_id: &str) -> anyhow::Result<()> {
        let task = self.rpc(target, "GetTask", json!({"id": task_id})).await?;
        let state = task["status"]["state"].as_str().unwrap_or_default();
        if state != "TASK_STATE_COMPLETED" || !task.to_string().contains(ANSWER) {
            bail!(
                "the task {task_id} on {} did not complete with the model's answer: {task}",
                target.name
            );
        }
        Ok(())
    }

    /// ListTasks for one page; it must list at least one task.
    async fn list(&self, target: &Target) -> anyhow::Result<()> {
        let listed = if let Some(grpc) = &target.grpc {
            let request = ListTasksRequest {
                context_id: None,
                status: None,
                page_size: Some(LIST_PAGE),
                page_token: None,
                history_length: None,
                status_timestamp_after: None,
                include_artifacts: None,
                tenant: None,
            };
            grpc.list_tasks(&grpc_params(), &request)
                .await
                .map_err(|error| anyhow::anyhow!("ListTasks on {}: {error}", target.name))?
                .tasks
                .len()
        } else {
            let result = self
                .rpc(target, "ListTasks", json!({"pageSize": LIST_PAGE}))
                .await?;
            result["tasks"].as_array().map_or(0, Vec::len)
        };
        if listed == 0 {
            bail!("ListTasks on {} listed no task", target.name);
        }
        Ok(())
    }

    /// One call, timed, and the task it created, if it sent one; a send that settles then
    /// waits for its task to end, untimed.
    async fn call(
        &self,
        call: Call,
        target: &Target,
        task_id: &str,
        settles: bool,
    ) -> anyhow::Result<(Duration, Option<String>)> {
        let sent = Instant::now();
        match call {
            Call::GetTask => self
                .get(target, task_id)
                .await
                .map(|_| (sent.elapsed(), None)),
            Call::ListTasks => self.list(target).await.map(|()| (sent.elapsed(), None)),
            Call::SendMessage | Call::SendMessageBackToBack | Call::SendMessageOneAhead => {
                let created = self.send(target, true).await?;
                let took = sent.elapsed();
                if settles {
                    self.settled(target, &created).await?;
                }
                Ok((took, Some(created)))
            }
        }
    }

    /// Waits, untimed, until every task of `created` on `target` has ended, so that the next
    /// batch meets a server with no work left over from this one.
    async fn drain(&self, target: &Target, created: &[String]) -> anyhow::Result<()> {
        for task_id in created {
            self.settled(target, task_id).await?;
        }
        Ok(())
    }
}

/// What every gRPC call carries, as the JSON-RPC ones carry it in headers.
fn grpc_params() -> ServiceParams {
    [("a2a-version", "1.0"), ("x-participant-id", PARTICIPANT)]
        .into_iter()
        .map(|(key, value)| (key.to_string(), vec![value.to_string()]))
        .collect()
}

/// One batch of one call against one server.
#[derive(Debug, Clone, Serialize)]
pub struct Batch {
    call: Call,
    server: &'static str,
    concurrency: usize,
    ok: usize,
    failed: usize,
    errors: Vec<String>,
    wall_s: f64,
    throughput_per_s: f64,
    latency: Option<Latency>,
}

/// One server against another for one call: Baton against the a2a-sdk, or Baton's gRPC
/// against its JSON-RPC.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    call: Call,
    /// The server measured, and the one it is measured against.
    ours: &'static str,
    theirs: &'static str,
    /// p50 latency one at a time, ours / theirs (lower is better for ours).
    latency_p50_ratio: Option<f64>,
    /// p50 latency at the batch concurrency, ours / theirs.
    loaded_latency_p50_ratio: Option<f64>,
    /// Requests per second at the batch concurrency, ours / theirs (higher is better).
    throughput_ratio: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GatewayReport {
    requests: usize,
    concurrency: usize,
    sequential: usize,
    batches: Vec<Batch>,
    comparisons: Vec<Comparison>,
    quiet_streams: Option<QuietStreams>,
    ended_tasks: Option<EndedTasks>,
    machine: Machine,
    total_s: f64,
}

impl GatewayReport {
    fn failures(&self) -> usize {
        let streams = self.quiet_streams.as_ref().map_or(0, QuietStreams::failed);
        self.batches.iter().map(|b| b.failed).sum::<usize>() + streams
    }
}

pub async fn run(args: GatewayArgs) -> anyhow::Result<ExitCode> {
    if args.requests == 0 || args.concurrency == 0 {
        bail!("--requests and --concurrency must be at least 1");
    }
    if args.streams > 0 && args.stream_tasks == 0 {
        bail!("--stream-tasks must be at least 1 when --streams is not 0");
    }
    let started = Instant::now();
    let load_at_start = load_average();
    let dir = bench_dir("baton-bench-gateway-")?;

    let model = FakeModel::under_load(delegating).await;
    let python = python_program(args.python.as_deref());
    let (python_agent, python_port) =
        start_baseline(dir.path(), &python, &model.base_url()).await?;

    let (server, client) = start_dev_server(dir.path(), args.temporal_binary.as_deref()).await?;
    let gateway_port = free_port();
    let dev_server = server.pid();
    let settings = Settings::parse(
        &worker_toml(
            server.address(),
            &model.base_url(),
            gateway_port,
            args.search_attributes,
        ),
        dir.path(),
        &|_| None,
    )?;
    let measured = {
        let args = args.clone();
        async move {
            // The channel connects on its first call, once the worker serves the gateway.
            let channel =
                Endpoint::from_shared(format!("http://127.0.0.1:{gateway_port}"))?.connect_lazy();
            let targets = [
                Target {
                    name: A2A_SDK,
                    url: format!("http://127.0.0.1:{python_port}/"),
                    grpc: None,
                },
                Target {
                    name: BATON,
                    url: format!("http://127.0.0.1:{gateway_port}/"),
                    grpc: None,
                },
                Target {
                    name: BATON_GRPC,
                    url: format!("127.0.0.1:{gateway_port}"),
                    grpc: Some(Arc::new(GrpcTransport::from_channel(channel))),
                },
            ];
            let batches = measure(&args, &targets).await?;
            let url = format!("http://127.0.0.1:{gateway_port}/");
            let quiet = if args.streams > 0 {
                let quiet = quiet_streams::measure(
                    &url,
                    PARTICIPANT,
                    dev_server,
                    args.streams,
                    args.stream_tasks,
                );
                Some(quiet.await?)
            } else {
                None
            };
            let ended = if args.ended_tasks > 0 {
                let ended = ended_tasks::measure(&url, PARTICIPANT, dev_server, args.ended_tasks);
                Some(ended.await?)
            } else {
                None
            };
            anyhow::Ok((batches, quiet, ended))
        }
    };
    let outcome = with_worker(&settings, client, None, measured).await;
    python_agent.stop().await;
    server.stop().await;
    let (batches, quiet_streams, ended_tasks) = outcome?;
    let report = GatewayReport {
        requests: args.requests,
        concurrency: args.concurrency,
        sequential: args.sequential,
        comparisons: [(BATON, A2A_SDK), (BATON_GRPC, BATON)]
            .into_iter()
            .flat_map(|pair| CALLS.map(|call| (pair, call)))
            .map(|((ours, theirs), call)| compare(call, &batches, args.concurrency, ours, theirs))
            .collect(),
        batches,
        quiet_streams,
        ended_tasks,
        machine: Machine::read(load_at_start, load_average()),
        total_s: round(started.elapsed().as_secs_f64()),
    };
    print_report(&report, &args.output, print_text, chart, report.failures())
}

/// Every batch, alternating the servers so that drift hits both alike.
async fn measure(args: &GatewayArgs, targets: &[Target]) -> anyhow::Result<Vec<Batch>> {
    let caller = Caller::new()?;
    // One task on each server for the GetTasks, created by a blocking send, which answers once
    // the model has.
    let mut answered = Vec::new();
    for target in targets {
        let task_id = caller.send(target, false).await?;
        if target.grpc.is_none() {
            caller.expect_answered(target, &task_id).await?;
        }
        answered.push(task_id);
    }
    progress("warming up");
    for (target, task_id) in targets.iter().zip(&answered) {
        for call in CALLS {
            batch(&caller, call, target, task_id, 20, 5).await;
        }
    }
    let mut batches = Vec::new();
    for call in CALLS {
        for (concurrency, n) in [(1, args.sequential), (args.concurrency, args.requests)] {
            if n == 0 || (concurrency > 1 && !call.runs_concurrently()) {
                continue;
            }
            for (target, task_id) in targets.iter().zip(&answered) {
                progress(&format!(
                    "{}: {n} to {}, {concurrency} at once",
                    call.label(),
                    target.name
                ));
                batches.push(batch(&caller, call, target, task_id, n, concurrency).await);
            }
        }
    }
    Ok(batches)
}

async fn batch(
    caller: &Caller,
    call: Call,
    target: &Target,
    task_id: &str,
    n: usize,
    concurrency: usize,
) -> Batch {
    let settles = call == Call::SendMessage && concurrency == 1;
    let started = Instant::now();
    let results: Vec<anyhow::Result<(Duration, Option<String>)>> =
        if call == Call::SendMessageOneAhead {
            one_task_ahead(
                n,
                || caller.call(call, target, task_id, false),
                |ended| async move { caller.settled(target, &ended).await },
            )
            .await
        } else {
            futures::stream::iter(0..n)
                .map(|_| caller.call(call, target, task_id, settles))
                .buffer_unordered(concurrency)
                .collect()
                .await
        };
    let wall = started.elapsed();
    let mut created = Vec::new();
    let results: Vec<anyhow::Result<Duration>> = results
        .into_iter()
        .map(|result| {
            result.map(|(took, task)| {
                created.extend(task);
                took
            })
        })
        .collect();
    let (samples, mut errors) = split(results);
    // A server still working through this batch's tasks would slow the next batch down (before,
    // the back-to-back sends met the thousand tasks of the two concurrent batches still running
    // on Baton's worker, and nothing on the a2a-sdk, which ends each task within its batch).
    if let Err(error) = caller.drain(target, &created).await {
        errors.push(format!("{error:#}"));
    }
    Batch {
        call,
        server: target.name,
        concurrency,
        ok: samples.len(),
        failed: errors.len(),
        errors: errors.into_iter().take(5).collect(),
        wall_s: wall_seconds(wall),
        throughput_per_s: per_second(samples.len(), wall.as_secs_f64()),
        latency: Latency::of(&samples),
    }
}

/// `n` sends, each sent once the task of the send before the last has ended (`settle` waits
/// for it, untimed), so that each meets only the task the last one created.
async fn one_task_ahead<SendFn, Sent, SettleFn, Settled>(
    n: usize,
    mut send: SendFn,
    mut settle: SettleFn,
) -> Vec<anyhow::Result<(Duration, Option<String>)>>
where
    SendFn: FnMut() -> Sent,
    Sent: Future<Output = anyhow::Result<(Duration, Option<String>)>>,
    SettleFn: FnMut(String) -> Settled,
    Settled: Future<Output = anyhow::Result<()>>,
{
    let mut results = Vec::with_capacity(n);
    let (mut before_last, mut last) = (None, None);
    for _ in 0..n {
        if let Some(ended) = before_last.take()
            && let Err(error) = settle(ended).await
        {
            results.push(Err(error));
            continue;
        }
        let result = send().await;
        if let Ok((_, Some(created))) = &result {
            before_last = last.replace(created.clone());
        }
        results.push(result);
    }
    results
}

fn compare(
    call: Call,
    batches: &[Batch],
    concurrency: usize,
    ours: &'static str,
    theirs: &'static str,
) -> Comparison {
    let find = |server: &str, c: usize| {
        batches
            .iter()
            .find(|b| b.call == call && b.server == server && b.concurrency == c)
    };
    let ratio = |ours: Option<f64>, theirs: Option<f64>| match (ours, theirs) {
        (Some(ours), Some(theirs)) if theirs > 0.0 => Some((ours / theirs * 100.0).round() / 100.0),
        _ => None,
    };
    let p50 = |b: Option<&Batch>| b.and_then(|b| b.latency.as_ref()).map(|l| l.p50_ms);
    let throughput = |b: Option<&Batch>| b.map(|b| b.throughput_per_s);
    Comparison {
        call,
        ours,
        theirs,
        latency_p50_ratio: ratio(p50(find(ours, 1)), p50(find(theirs, 1))),
        loaded_latency_p50_ratio: ratio(
            p50(find(ours, concurrency)),
            p50(find(theirs, concurrency)),
        ),
        throughput_ratio: ratio(
            throughput(find(ours, concurrency)),
            throughput(find(theirs, concurrency)),
        ),
    }
}

/// The gateway bench drawn: each call's latency and throughput on Baton's gateway beside the
/// a2a-sdk's in-memory server's.
fn chart(report: &GatewayReport) -> Chart {
    let find = |call: Call, server: &str, concurrency: usize| {
        report
            .batches
            .iter()
            .find(|b| b.call == call && b.server == server && b.concurrency == concurrency)
    };
    let p50 = |b: Option<&Batch>| b.and_then(|b| b.latency.as_ref()).map(|l| l.p50_ms);
    let throughput = |b: Option<&Batch>| b.map(|b| b.throughput_per_s);
    // Only the calls measured at that concurrency: some run one at a time alone.
    let panel = |title: String,
                 unit: &str,
                 concurrency: usize,
                 value: &dyn Fn(Call, &str) -> Option<f64>| Panel {
        title,
        unit: unit.into(),
        groups: CALLS
            .iter()
            .filter(|call| concurrency == 1 || call.runs_concurrently())
            .map(|&call| {
                Group::new(
                    call.short_name(),
                    vec![value(call, BATON), value(call, A2A_SDK)],
                )
            })
            .collect(),
    };
    let c = report.concurrency;
    Chart {
        title: format!(
            "baton-bench gateway: {} requests per batch, Baton's gateway against the a2a-sdk",
            report.requests
        ),
        series: vec!["Baton (JSON-RPC)".into(), "a2a-sdk in-memory server".into()],
        panels: vec![
            panel(
                "latency p50, one at a time".into(),
                "ms",
                1,
                &|call, server| p50(find(call, server, 1)),
            ),
            panel(
                format!("latency p50, {c} at once"),
                "ms",
                c,
                &|call, server| p50(find(call, server, c)),
            ),
            panel(
                format!("throughput, {c} at once"),
                "requests/s",
                c,
                &|call, server| throughput(find(call, server, c)),
            ),
        ],
    }
}

fn print_text(report: &GatewayReport) {
    println!(
        "Gateway bench: JSON-RPC to Baton's gateway and to the a2a-sdk's in-memory server \
         (Python), and gRPC to Baton's gateway; {} requests per batch, {} at once; {} one at a time",
        report.requests, report.concurrency, report.sequential
    );
    println!();
    println!(
        "{:<34} {:<10} {:>3} {:>7} {:>9} {:>9} {:>9}",
        "call", "server", "C", "ok", "p50 ms", "p95 ms", "req/s"
    );
    for b in &report.batches {
        let (p50, p95) = b
            .latency
            .as_ref()
            .map_or((f64::NAN, f64::NAN), |l| (l.p50_ms, l.p95_ms));
        println!(
            "{:<34} {:<10} {:>3} {:>7} {:>9.2} {:>9.2} {:>9.1}",
            b.call.label(),
            b.server,
            b.concurrency,
            format!("{}/{}", b.ok, b.ok + b.failed),
            p50,
            p95,
            b.throughput_per_s
        );
        for error in &b.errors {
            println!("    error: {error}");
        }
    }
    println!();
    let show = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r}"));
    for c in &report.comparisons {
        println!(
            "  {} / {}: {:<34} latency p50 {}× (loaded {}×), throughput {}×",
            c.ours,
            c.theirs,
            c.call.label(),
            show(c.latency_p50_ratio),
            show(c.loaded_latency_p50_ratio),
            show(c.throughput_ratio)
        );
    }
    if let Some(quiet) = &report.quiet_streams {
        println!();
        quiet.print();
    }
    if let Some(ended) = &report.ended_tasks {
        println!();
        ended.print();
    }
    println!();
    report.machine.print_line(report.total_s);
}

/// The a2a-sdk baseline, run by `python` from `dir`, asking the model at `model_url`; its port.
async fn start_baseline(
    dir: &Path,
    python: &Path,
    model_url: &str,
) -> anyhow::Result<(ChildProcess, u16)> {
    let script = dir.join("a2a_sdk_baseline.py");
    std::fs::write(&script, PYTHON_AGENT).context("writing the a2a-sdk baseline server")?;
    let port = free_port();
    let mut command = Command::new(python);
    command
        .arg(&script)
        .args(["--port", &port.to_string()])
        .args(["--model-url", model_url]);
    let what = format!("the a2a-sdk baseline ({})", python.display());
    let (baseline, _) = ChildProcess::start(command, &what, "ready ")
        .await
        .context("is a2a-sdk installed? run `bash scripts/setup.sh` or pass --python")?;
    Ok((baseline, port))
}

fn python_program(chosen: Option<&Path>) -> PathBuf {
    if let Some(chosen) = chosen {
        return chosen.to_path_buf();
    }
    let venv = Path::new(".venv/bin/python");
    if venv.exists() {
        venv.to_path_buf()
    } else {
        PathBuf::from("python3")
    }
}

/// `baton worker`'s config on the bench's server, with no agents, the gateway on `port`, and no
/// rate limit (the bench is one peer sending thousands of requests).
fn worker_toml(
    temporal_address: &str,
    model_url: &str,
    port: u16,
    search_attributes: bool,
) -> String {
    format!(
        "[agent]\nid = \"bench\"\n\
         [server]\nbind = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
         rate_limit_per_minute = 0\nmax_concurrent_requests = 4096\nmax_connections = 4096\n\
         [temporal]\nmode = \"remote\"\naddress = \"{temporal_address}\"\ntls = false\n\
         task_queue = \"{TASK_QUEUE}\"\nsearch_attributes = {search_attributes}\n\
         [model]\nbase_url = \"{model_url}\"\nmodel = \"bench-model\"\ntimeout = \"30s\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_config_serves_the_gateway_without_a_rate_limit() {
        let toml = worker_toml("127.0.0.1:7233", "http://127.0.0.1:9001/v1", 9002, true);
        let settings = Settings::parse(&toml, Path::new("/tmp"), &|_| None).unwrap();
        assert!(settings.agents.is_empty());
        assert!(settings.temporal.search_attributes);
        assert_eq!(settings.server.rate_limit_per_minute, 0);
        assert_eq!(settings.temporal.task_queue, TASK_QUEUE);
        assert_eq!(
            settings.server.base_url.unwrap().as_str(),
            "http://127.0.0.1:9002/"
        );
    }

    fn batch(server: &'static str, concurrency: usize, p50: f64, throughput: f64) -> Batch {
        Batch {
            call: Call::GetTask,
            server,
            concurrency,
            ok: 1,
            failed: 0,
            errors: vec![],
            wall_s: 1.0,
            throughput_per_s: throughput,
            latency: Latency::of(&[Duration::from_secs_f64(p50 / 1e3)]),
        }
    }

    #[tokio::test]
    async fn the_a2a_sdk_baseline_does_a_baton_tasks_work_for_each_message() {
        let model = FakeModel::under_load(delegating).await;
        let dir = bench_dir("baton-bench-baseline-test-").unwrap();
        let python = baton_tests::venv_program("python");
        let (baseline, port) = start_baseline(dir.path(), &python, &model.base_url())
            .await
            .unwrap();
        let target = Target {
            name: A2A_SDK,
            url: format!("http://127.0.0.1:{port}/"),
            grpc: None,
        };
        let caller = Caller::new().unwrap();

        let blocking = caller.send(&target, false).await.unwrap();
        caller.expect_answered(&target, &blocking).await.unwrap();
        let immediate = caller.send(&target, true).await.unwrap();
        caller.settled(&target, &immediate).await.unwrap();
        caller.expect_answered(&target, &immediate).await.unwrap();
        assert_eq!(model.request_count(), 2, "one model call per message");

        baseline.stop().await;
    }

    /// What a run of `one_task_ahead` did, in order: "send N" and "wait N".
    async fn one_task_ahead_log(n: usize, failing_wait: Option<usize>) -> (Vec<String>, usize) {
        let log = std::sync::Mutex::new(Vec::new());
        let sent = AtomicU64::new(0);
        let results = one_task_ahead(
            n,
            || {
                let id = sent.fetch_add(1, Ordering::SeqCst);
                log.lock().unwrap().push(format!("send {id}"));
                async move { Ok((Duration::from_millis(1), Some(id.to_string()))) }
            },
            |ended| {
                log.lock().unwrap().push(format!("wait {ended}"));
                let fails = failing_wait.is_some_and(|f| f.to_string() == ended);
                async move {
                    if fails {
                        bail!("task {ended} did not end")
                    }
                    Ok(())
                }
            },
        )
        .await;
        let failed = results.iter().filter(|r| r.is_err()).count();
        (log.into_inner().unwrap(), failed)
    }

    #[tokio::test]
    async fn each_send_one_task_ahead_waits_for_the_task_before_the_last() {
        let (log, failed) = one_task_ahead_log(4, None).await;
        assert_eq!(
            log,
            ["send 0", "send 1", "wait 0", "send 2", "wait 1", "send 3"]
        );
        assert_eq!(failed, 0);
    }

    #[tokio::test]
    async fn a_task_that_does_not_end_is_an_error_in_place_of_a_send() {
        let (log, failed) = one_task_ahead_log(4, Some(0)).await;
        assert_eq!(log, ["send 0", "send 1", "wait 0", "send 2"]);
        assert_eq!(failed, 1);
    }

    #[test]
    fn ratios_are_ours_over_theirs() {
        let batches = [
            batch(A2A_SDK, 1, 2.0, 400.0),
            batch(BATON, 1, 3.0, 300.0),
            batch(A2A_SDK, 10, 10.0, 1000.0),
            batch(BATON, 10, 25.0, 400.0),
            batch(BATON_GRPC, 1, 1.5, 600.0),
            batch(BATON_GRPC, 10, 20.0, 500.0),
        ];
        let c = compare(Call::GetTask, &batches, 10, BATON, A2A_SDK);
        assert_eq!(c.latency_p50_ratio, Some(1.5));
        assert_eq!(c.loaded_latency_p50_ratio, Some(2.5));
        assert_eq!(c.throughput_ratio, Some(0.4));
        let grpc = compare(Call::GetTask, &batches, 10, BATON_GRPC, BATON);
        assert_eq!(grpc.latency_p50_ratio, Some(0.5));
        assert_eq!(grpc.throughput_ratio, Some(1.25));
        let none = compare(Call::SendMessage, &batches, 10, BATON, A2A_SDK);
        assert_eq!(none.throughput_ratio, None);
    }
}
