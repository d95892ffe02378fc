//! Running Baton's engine in tests: a real Temporal dev server on free ports, and `baton worker`
//! as a real child process (so a test can kill it mid-delegation and start it again).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use baton_cli::child_process::{self, Target};
use baton_cli::temporal::EmbeddedServer;
use baton_config::Settings;
use baton_proto::{InboxMessage, InboxReceipt, TaskInput, TaskView};
use baton_workflows::TaskWorkflow;
use temporalio_client::errors::WorkflowUpdateError;
use temporalio_client::{
    Client, ClientOptions, UntypedWorkflow, WorkflowExecuteUpdateOptions,
    WorkflowFetchHistoryOptions, WorkflowGetResultOptions, WorkflowQueryOptions,
    WorkflowStartOptions,
};
use temporalio_common::payload_visitor::{
    AsyncPayloadVisitor, PayloadField, PayloadFieldData, PayloadVisitable,
};
use temporalio_common::protos::temporal::api::common::v1::Payload;
use temporalio_common::protos::temporal::api::history::v1::HistoryEvent;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::wait::poll_seeing;
use crate::{free_port, free_ports, venv_program};

/// A Temporal dev server for one test, in a temporary state directory; stopped on drop.
pub struct TestTemporal {
    server: Option<EmbeddedServer>,
    pub client: Client,
    settings: Settings,
    _state: tempfile::TempDir,
}

impl TestTemporal {
    pub async fn start() -> TestTemporal {
        let state = tempfile::tempdir().unwrap();
        let [port, ui_port] = free_ports();
        let config = format!(
            "[temporal.embedded]\nbinary = \"{}\"\ndatabase = \"{}\"\nport = {port}\nui_port = {ui_port}\n",
            venv_program("temporal").display(),
            state.path().join("temporal.sqlite").display(),
        );
        let settings = Settings::parse(&config, state.path(), &|_| None).unwrap();
        let (server, connection) = EmbeddedServer::start(&settings.temporal).await.unwrap();
        let client = Client::new(connection, ClientOptions::new("default").build()).unwrap();
        TestTemporal {
            server: Some(server),
            client,
            settings,
            _state: state,
        }
    }

    /// Kills the dev server at once (SIGKILL), as a crash would; its database file stays.
    pub fn kill(&mut self) {
        self.server.take();
    }

    /// Starts the dev server again on its database file and its port, after [`kill`](Self::kill).
    /// Clients of the old one (workers included) reconnect by themselves.
    pub async fn start_again(&mut self) {
        assert!(self.server.is_none(), "the dev server still runs");
        let (server, connection) = EmbeddedServer::start(&self.settings.temporal)
            .await
            .expect("starting the dev server again on its database");
        self.client = Client::new(connection, ClientOptions::new("default").build()).unwrap();
        self.server = Some(server);
    }

    pub fn address(&self) -> &str {
        self.server.as_ref().unwrap().address()
    }

    /// How long Temporal gives a worker for each workflow task of the workflow `id`'s current
    /// run.
    pub async fn workflow_task_timeout(&self, id: &str) -> Duration {
        let described = self
            .client
            .get_workflow_handle::<UntypedWorkflow>(id)
            .describe(temporalio_client::WorkflowDescribeOptions::default())
            .await
            .expect("describing the workflow");
        let config = described.raw().execution_config.clone();
        config
            .and_then(|config| config.default_workflow_task_timeout)
            .and_then(|timeout| Duration::try_from(timeout).ok())
            .expect("a workflow task timeout")
    }

    /// The JSON of the last heartbeat details the server holds for the pending activity
    /// `activity_type` of the workflow `id`, if it has any.
    pub async fn pending_heartbeat(&self, id: &str, activity_type: &str) -> Option<String> {
        let described = self
            .client
            .get_workflow_handle::<UntypedWorkflow>(id)
            .describe(temporalio_client::WorkflowDescribeOptions::default())
            .await
            .ok()?;
        described
            .raw()
            .pending_activities
            .iter()
            .filter(|pending| {
                pending
                    .activity_type
                    .as_ref()
                    .is_some_and(|t| t.name == activity_type)
            })
            .find_map(|pending| {
                pending
                    .heartbeat_details
                    .as_ref()?
                    .payloads
                    .first()
                    .cloned()
            })
            .map(|payload| String::from_utf8_lossy(&payload.data).into_owned())
    }

    /// Starts task `task_id` on `task_queue` and waits, up to `within`, for it to end and its
    /// workflow to close: the task as it ended.
    pub async fn run_to_end(
        &self,
        task_queue: &str,
        task_id: &str,
        input: TaskInput,
        within: Duration,
    ) -> TaskView {
        self.start_task(task_queue, task_id, input).await;
        let view = self
            .wait_for_task(task_id, within, |v| v.state.is_terminal())
            .await;
        self.wait_closed(task_id, within).await;
        view
    }

    /// Waits, up to `within`, for task `task_id`'s workflow to close, however it ended: a task
    /// records its end before the sweep it closes with, so its history is whole only then.
    pub async fn wait_closed(&self, task_id: &str, within: Duration) {
        let handle = self.client.get_workflow_handle::<TaskWorkflow>(task_id);
        tokio::time::timeout(
            within,
            handle.get_result(WorkflowGetResultOptions::default()),
        )
        .await
        .unwrap_or_else(|_| panic!("task {task_id}'s workflow did not close within {within:?}"))
        .ok();
    }

    /// Starts a `TaskWorkflow` with id `task_id` on `task_queue`.
    pub async fn start_task(&self, task_queue: &str, task_id: &str, input: TaskInput) {
        self.client
            .start_workflow(
                TaskWorkflow::run,
                baton_proto::TaskStart::from(input),
                // As the gateway starts a task.
                WorkflowStartOptions::new(task_queue, task_id)
                    .task_timeout(baton_proto::temporal::task_workflow::WORKFLOW_TASK_TIMEOUT)
                    .build(),
            )
            .await
            .expect("starting the TaskWorkflow");
    }

    /// With `BATON_RECORD_HISTORIES=DIR` set (scripts/record-histories.sh), writes the current
    /// run of workflow `id` to `DIR/<name>.json` as `baton replay --save` does; otherwise nothing.
    pub async fn record_history(&self, id: &str, name: &str) {
        let Some(dir) = std::env::var_os("BATON_RECORD_HISTORIES") else {
            return;
        };
        let history = temporalio_common::protos::temporal::api::history::v1::History {
            events: self.history(id).await,
        };
        let path = Path::new(&dir).join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec(&history).unwrap())
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// Every event of the current run of workflow `id`.
    pub async fn history(&self, id: &str) -> Vec<HistoryEvent> {
        self.client
            .get_workflow_handle::<UntypedWorkflow>(id)
            .fetch_history(WorkflowFetchHistoryOptions::default())
            .into_events()
            .await
            .expect("fetching the workflow history")
    }

    /// A participant's message to task `task_id`, as the gateway delivers it: the `inbox`
    /// update, whose validator may refuse it.
    pub async fn send_inbox(
        &self,
        task_id: &str,
        message: InboxMessage,
    ) -> Result<InboxReceipt, WorkflowUpdateError> {
        self.client
            .get_workflow_handle::<TaskWorkflow>(task_id)
            .execute_update(
                TaskWorkflow::inbox,
                message,
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
    }

    /// The `task` query of a TaskWorkflow.
    pub async fn task_view(&self, task_id: &str) -> TaskView {
        self.client
            .get_workflow_handle::<TaskWorkflow>(task_id)
            .query(TaskWorkflow::task, (), WorkflowQueryOptions::default())
            .await
            .expect("querying the task")
    }

    /// Polls the `task` query until `done` holds, for at most `within`.
    pub async fn wait_for_task(
        &self,
        task_id: &str,
        within: Duration,
        done: impl Fn(&TaskView) -> bool,
    ) -> TaskView {
        let what = format!("task {task_id} to get there");
        poll_seeing(&what, within, || async {
            let view = self.task_view(task_id).await;
            if done(&view) { Ok(view) } else { Err(view) }
        })
        .await
    }
}

impl Drop for TestTemporal {
    fn drop(&mut self) {
        // Dropping the server kills it at once.
        self.server.take();
    }
}

/// `baton worker` as a child process; killed on drop. Its log (stderr) is passed on to the
/// test's and kept, across restarts, for [`WorkerProcess::logged`].
pub struct WorkerProcess {
    child: Child,
    binary: PathBuf,
    config: PathBuf,
    env: Vec<(String, String)>,
    log: LogLines,
    _dir: tempfile::TempDir,
}

/// Lines a child process logged, shared with the task that reads them.
type LogLines = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

impl WorkerProcess {
    /// The config file the worker runs with.
    /// The worker's process id, to read its memory from `/proc`.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the worker is running")
    }

    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// Writes `config` to a file and starts `binary worker --config FILE`, waiting for its
    /// "worker ready" line.
    pub async fn start(binary: &Path, config: &str) -> WorkerProcess {
        Self::start_with_env(binary, config, &[]).await
    }

    /// As [`WorkerProcess::start`], with more environment variables (the secrets a config
    /// names).
    pub async fn start_with_env(
        binary: &Path,
        config: &str,
        env: &[(&str, &str)],
    ) -> WorkerProcess {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baton.toml");
        std::fs::write(&path, config).unwrap();
        let log = LogLines::default();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let child = spawn_ready(binary, &["worker"], &path, &env, &log).await;
        WorkerProcess {
            child,
            binary: binary.to_path_buf(),
            config: path,
            env,
            log,
            _dir: dir,
        }
    }

    /// The log lines so far that contain every one of `needles`.
    pub fn logged(&self, needles: &[&str]) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|line| needles.iter().all(|n| line.contains(n)))
            .cloned()
            .collect()
    }

    /// SIGKILL: the worker dies mid-whatever, as in a crash.
    pub async fn kill(&mut self) {
        self.child.kill().await.ok();
    }

    /// Starts the worker again with the same config.
    pub async fn restart(&mut self) {
        self.child = spawn_ready(
            &self.binary,
            &["worker"],
            &self.config,
            &self.env,
            &self.log,
        )
        .await;
    }

    /// Waits until the worker exits on its own; fails the test when it runs on past the hang
    /// guard.
    pub async fn exit_status(&mut self) -> std::process::ExitStatus {
        crate::wait::within(
            "the worker to exit",
            crate::wait::HANG_GUARD,
            self.child.wait(),
        )
        .await
        .expect("waiting for the worker")
    }

    /// SIGTERM, then SIGKILL once `within` has passed; returns whether it exited cleanly
    /// within it.
    pub async fn terminate(&mut self, within: Duration) -> bool {
        child_process::terminate(&mut self.child, Target::Process, within)
            .await
            .is_some_and(|status| status.success())
    }
}

/// Starts `binary <command> --config <config>` and waits for its `<command> ready` line; its
/// log lines go to `log`.
async fn spawn_ready(
    binary: &Path,
    command: &[&str],
    config: &Path,
    env: &[(String, String)],
    log: &LogLines,
) -> Child {
    let mut started = Command::new(binary);
    child_process::dies_with_parent(&mut started);
    let mut child = started
        .args(command)
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "info,temporalio_sdk_core=warn")
        // Every worker and gateway of a test are one deployment.
        .env(
            baton_config::DEPLOYMENT_SECRET_VARIABLE,
            crate::TEST_DEPLOYMENT_SECRET,
        )
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starting baton");
    let mut logged = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = logged.next_line().await {
            eprintln!("{line}");
            log.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(line);
        }
    });
    let ready_line = format!("{} ready", command[0]);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with(&ready_line) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "baton {} did not become ready", command[0]);
    // Keep reading so the worker never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

/// `baton gateway` as a child process, with no worker of its own; killed on drop.
pub struct GatewayProcess {
    child: Child,
    _dir: tempfile::TempDir,
}

impl GatewayProcess {
    /// Writes `config` to a file and starts `binary gateway --config FILE`, waiting for its
    /// "gateway ready" line.
    pub async fn start(binary: &Path, config: &str) -> GatewayProcess {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baton.toml");
        std::fs::write(&path, config).unwrap();
        let child = spawn_ready(binary, &["gateway"], &path, &[], &LogLines::default()).await;
        GatewayProcess { child, _dir: dir }
    }

    /// SIGTERM, then SIGKILL once `within` has passed; returns whether it exited cleanly
    /// within it.
    pub async fn terminate(&mut self, within: Duration) -> bool {
        child_process::terminate(&mut self.child, Target::Process, within)
            .await
            .is_some_and(|status| status.success())
    }
}

/// What most end-to-end tests start with: a dev server, and one `baton worker` on it whose
/// config `configure` shapes from [`WorkerConfig::new`]. Stopped on drop, the worker first.
pub struct Engine {
    pub worker: WorkerProcess,
    pub config: WorkerConfig,
    pub temporal: TestTemporal,
}

impl Engine {
    /// Starts the dev server, then `binary worker` with the model at `model_url` and the
    /// config `configure` returns (`|c| c.agent("ledger", &peer.url(), "")`, or `|c| c`).
    pub async fn start(
        binary: &Path,
        model_url: &str,
        configure: impl FnOnce(WorkerConfig) -> WorkerConfig,
    ) -> Engine {
        let temporal = TestTemporal::start().await;
        let config = configure(WorkerConfig::new(&temporal, model_url));
        let worker = WorkerProcess::start(binary, &config.render()).await;
        Engine {
            worker,
            config,
            temporal,
        }
    }

    /// As [`Engine::start`], the worker delegating to one agent, `ledger`, at `ledger_url`
    /// with the agent settings `settings` (like `updates = "follow"`; empty for none).
    pub async fn with_ledger(
        binary: &Path,
        model_url: &str,
        ledger_url: &str,
        settings: &str,
    ) -> Engine {
        Engine::start(binary, model_url, |c| {
            c.agent("ledger", ledger_url, settings)
        })
        .await
    }

    /// Starts task `task_id` and waits, up to `within`, for it to end: the task as it ended.
    pub async fn run_to_end(&self, task_id: &str, input: TaskInput, within: Duration) -> TaskView {
        self.temporal
            .run_to_end(&self.config.task_queue, task_id, input, within)
            .await
    }

    /// Starts a `TaskWorkflow` with id `task_id` on the worker's task queue.
    pub async fn start_task(&self, task_id: &str, input: TaskInput) {
        self.temporal
            .start_task(&self.config.task_queue, task_id, input)
            .await;
    }
}

/// A worker config on a remote (test) Temporal server with a model at `model_url`.
pub struct WorkerConfig {
    pub agent_id: String,
    pub task_queue: String,
    pub temporal_address: String,
    pub model_url: String,
    pub agents: Vec<String>,
    pub base_url: Option<String>,
    /// `server.allow_private_push_urls`: tests' webhooks live on 127.0.0.1.
    pub allow_private_push_urls: bool,
    /// More `[server]` lines, like `rate_limit_per_minute = 5`.
    pub server_extra: Vec<String>,
    /// `temporal.tls`; a TLS test adds its `tls_*` lines to `temporal_extra`.
    pub tls: bool,
    /// More `[temporal]` lines, like `follow_slots = 1`.
    pub temporal_extra: Vec<String>,
    /// `metrics.bind`, like `127.0.0.1:9464`.
    pub metrics_bind: Option<String>,
    /// `health.bind`, like `127.0.0.1:8081`.
    pub health_bind: Option<String>,
    /// `log.format = "json"`.
    pub json_logs: bool,
    /// The bodies of `[[mcp]]` tables, like `id = "orders"\ncommand = "orders-mcp"`.
    pub mcp: Vec<String>,
    /// `[content]` lines, like `max_part_bytes = 2048`.
    pub content: Vec<String>,
}

impl WorkerConfig {
    pub fn new(temporal: &TestTemporal, model_url: &str) -> WorkerConfig {
        WorkerConfig {
            agent_id: "front-desk".into(),
            task_queue: format!("tq-{}", free_port()),
            temporal_address: temporal.address().to_string(),
            model_url: model_url.to_string(),
            agents: Vec::new(),
            base_url: None,
            allow_private_push_urls: false,
            server_extra: Vec::new(),
            tls: false,
            temporal_extra: Vec::new(),
            metrics_bind: None,
            health_bind: None,
            json_logs: false,
            mcp: Vec::new(),
            content: Vec::new(),
        }
    }

    /// Adds an `[[mcp]]` table with this body.
    pub fn mcp_server(mut self, body: &str) -> Self {
        self.mcp.push(body.to_string());
        self
    }

    /// Serves metrics on a free port; [`WorkerConfig::metrics_url`] says where.
    pub fn with_metrics(mut self) -> Self {
        self.metrics_bind = Some(format!("127.0.0.1:{}", free_port()));
        self
    }

    /// Serves the probes on a free port; [`WorkerConfig::readyz_url`] says where.
    pub fn with_health(mut self) -> Self {
        self.health_bind = Some(format!("127.0.0.1:{}", free_port()));
        self
    }

    /// `http://<health.bind>/readyz`, when the probes have their own listener.
    pub fn readyz_url(&self) -> Option<String> {
        self.health_bind
            .as_ref()
            .map(|bind| format!("http://{bind}/readyz"))
    }

    /// `http://<metrics.bind>/metrics`, when metrics are served.
    pub fn metrics_url(&self) -> Option<String> {
        self.metrics_bind
            .as_ref()
            .map(|bind| format!("http://{bind}/metrics"))
    }

    /// Adds `agents = [{ id, url, <extra> }]`, e.g. extra `updates = "follow"`.
    pub fn agent(mut self, id: &str, url: &str, extra: &str) -> Self {
        let extra = if extra.is_empty() {
            String::new()
        } else {
            format!(", {extra}")
        };
        self.agents
            .push(format!("{{ id = \"{id}\", url = \"{url}\"{extra} }}"));
        self
    }

    /// Serves the push receiver on a free port, as `server.base_url`.
    pub fn with_push_receiver(mut self) -> Self {
        self.base_url = Some(format!("http://127.0.0.1:{}", free_port()));
        self
    }

    pub fn render(&self) -> String {
        let server = match &self.base_url {
            Some(url) => {
                format!(
                    "[server]\nbind = \"{}\"\nbase_url = \"{url}\"\nallow_private_push_urls = {}\n",
                    url.trim_start_matches("http://"),
                    self.allow_private_push_urls,
                ) + &self
                    .server_extra
                    .iter()
                    .map(|line| format!("{line}\n"))
                    .collect::<String>()
            }
            None => String::new(),
        };
        let metrics = self.metrics_bind.as_ref().map_or_else(String::new, |bind| {
            format!("[metrics]\nbind = \"{bind}\"\n")
        }) + &self
            .health_bind
            .as_ref()
            .map_or_else(String::new, |bind| format!("[health]\nbind = \"{bind}\"\n"))
            + if self.json_logs {
                "[log]\nformat = \"json\"\n"
            } else {
                ""
            };
        let mcp: String = self
            .mcp
            .iter()
            .map(|body| format!("[[mcp]]\n{body}\n"))
            .collect();
        let content = if self.content.is_empty() {
            String::new()
        } else {
            format!("[content]\n{}\n", self.content.join("\n"))
        };
        format!(
            "agents = [{}]\n[agent]\nid = \"{}\"\n{server}{metrics}[temporal]\nmode = \"remote\"\naddress = \"{}\"\ntls = {}\nsearch_attributes = true\ntask_queue = \"{}\"\n{}[model]\nbase_url = \"{}\"\nmodel = \"fake-model\"\ntimeout = \"10s\"\n{content}{mcp}",
            self.agents.join(", "),
            self.agent_id,
            self.temporal_address,
            self.tls,
            self.task_queue,
            self.temporal_extra
                .iter()
                .map(|line| format!("{line}\n"))
                .collect::<String>(),
            self.model_url,
        )
    }
}

/// A delegated task's input with default limits.
pub fn task_input(name: &str, goal: &str) -> TaskInput {
    serde_json::from_value(serde_json::json!({"name": name, "goal": goal})).unwrap()
}

/// POSTs `body` to `url` with `headers` (and a Content-Length); returns the status and the
/// response body.
pub async fn http_post(url: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, String) {
    let mut request = reqwest::Client::new().post(url).body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("POSTing to the HTTP server");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// POSTs `body` to `url` with `headers` in 4 KiB chunks and no Content-Length (chunked
/// transfer encoding); returns the status and the response body.
pub async fn http_post_chunked(
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String) {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        body.chunks(4096).map(|c| Ok(c.to_vec())).collect();
    let mut request = reqwest::Client::new()
        .post(url)
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("POSTing a chunked body");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// One A2A 1.0 JSON-RPC call (`A2A-Version: 1.0`) on `rpc_url`, as `participant` when given
/// (`X-Participant-Id`); returns the whole JSON-RPC response.
pub async fn a2a_rpc(
    rpc_url: &str,
    method: &str,
    params: serde_json::Value,
    participant: Option<&str>,
) -> serde_json::Value {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(rpc_url)
        .header("A2A-Version", "1.0")
        .json(&body);
    if let Some(participant) = participant {
        request = request.header("X-Participant-Id", participant);
    }
    let response = request.send().await.expect("calling the A2A agent");
    response.json().await.expect("a JSON-RPC response is JSON")
}

/// A forwarding proxy in front of an A2A agent, for faults the agent itself cannot script: it
/// serves the agent's card with the proxy's URL in place of the agent's (so every call comes
/// through it), forwards every other request as is (streams included), answers the JSON-RPC
/// methods it is told to refuse with a JSON-RPC error, and can cut the Task event from the
/// streams of SendStreamingMessage. Stopped on drop.
pub struct A2aProxy {
    addr: std::net::SocketAddr,
    state: std::sync::Arc<std::sync::Mutex<ProxyState>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct ProxyState {
    /// While set, every request gets 503 and nothing reaches the agent: an outage with the
    /// agent's state kept.
    down: bool,
    /// Tells the streams under way that the agent went down, so they break as a real outage
    /// breaks them.
    went_down: Option<tokio::sync::watch::Sender<bool>>,
    /// Requests answered 503 while down.
    refused_while_down: usize,
    /// JSON-RPC method → how many more calls to refuse.
    refuse: std::collections::HashMap<String, usize>,
    /// How many more CancelTask calls to answer with TaskNotCancelable (-32002).
    not_cancelable: usize,
    /// JSON-RPC method → how many more calls whose answer is lost: the agent gets the call and
    /// acts on it, the caller gets an internal error.
    lose_answers: std::collections::HashMap<String, usize>,
    /// Every JSON-RPC method called, in order, and whether it was refused.
    calls: Vec<(String, bool)>,
    /// Whether SendStreamingMessage streams lose their `task` events, so that they start with
    /// a status update (which the spec forbids and the Python SDK never sends).
    cut_task_events: bool,
}

type ProxyShared = (String, String, std::sync::Arc<std::sync::Mutex<ProxyState>>);

impl A2aProxy {
    /// Starts a proxy for the agent at `target` (e.g. `http://127.0.0.1:PORT`).
    pub async fn start(target: &str) -> A2aProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = std::sync::Arc::new(std::sync::Mutex::new(ProxyState {
            went_down: Some(tokio::sync::watch::channel(false).0),
            ..ProxyState::default()
        }));
        let shared: ProxyShared = (
            target.trim_end_matches('/').to_string(),
            format!("http://{addr}"),
            state.clone(),
        );
        let app = axum::Router::new()
            .fallback(proxy_request)
            .with_state(shared);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        A2aProxy { addr, state, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Refuses the next `times` calls of JSON-RPC `method`.
    pub fn refuse(&self, method: &str, times: usize) {
        self.lock().refuse.insert(method.to_string(), times);
    }

    /// Answers the next `times` CancelTask calls with A2A's TaskNotCancelable (-32002), as an
    /// agent that cannot stop the task in its current state does, without reaching the agent.
    pub fn not_cancelable(&self, times: usize) {
        self.lock().not_cancelable = times;
    }

    /// Forwards the next `times` calls of JSON-RPC `method` to the agent and answers the caller
    /// with an internal error instead of the agent's answer, as a connection lost after the
    /// agent acted would.
    pub fn lose_answers(&self, method: &str, times: usize) {
        self.lock().lose_answers.insert(method.to_string(), times);
    }

    /// From now on, SendStreamingMessage streams reach the caller without their `task` events.
    pub fn cut_task_events(&self) {
        self.lock().cut_task_events = true;
    }

    /// Takes the agent down (every request answered 503) or brings it back.
    pub fn set_down(&self, down: bool) {
        let mut state = self.lock();
        state.down = down;
        if let Some(went_down) = &state.went_down {
            went_down.send_replace(down);
        }
    }

    /// How many requests the proxy answered 503 while the agent was down.
    pub fn refused_while_down(&self) -> usize {
        self.lock().refused_while_down
    }

    /// Every JSON-RPC method called so far, in order, with whether the proxy refused it.
    pub fn calls(&self) -> Vec<(String, bool)> {
        self.lock().calls.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ProxyState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for A2aProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn proxy_request(
    axum::extract::State((target, own, state)): axum::extract::State<ProxyShared>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::http::header;
    use axum::response::IntoResponse;

    {
        let mut state = state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.down {
            state.refused_while_down += 1;
            return (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "the agent is down",
            )
                .into_response();
        }
    }
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let rpc = serde_json::from_slice::<serde_json::Value>(&body).ok();
    let method = rpc.as_ref().and_then(|r| r["method"].as_str());
    let cut_tasks = method == Some("SendStreamingMessage")
        && state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .cut_task_events;
    let mut went_down = state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .went_down
        .as_ref()
        .map(tokio::sync::watch::Sender::subscribe);
    let outage = async move {
        match went_down.as_mut() {
            Some(down) => {
                down.wait_for(|down| *down).await.ok();
            }
            None => std::future::pending().await,
        }
    };
    let internal_error = |message: &str| {
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "id": rpc.as_ref().map(|r| r["id"].clone()),
            "error": {"code": -32603, "message": message},
        });
        (
            [(header::CONTENT_TYPE, "application/json")],
            error.to_string(),
        )
            .into_response()
    };
    let mut lose_answer = false;
    if let Some(method) = method {
        let mut state = state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let take =
            |counts: &mut std::collections::HashMap<String, usize>| match counts.get_mut(method) {
                Some(left) if *left > 0 => {
                    *left -= 1;
                    true
                }
                _ => false,
            };
        let refuse = take(&mut state.refuse);
        let not_cancelable = !refuse && method == "CancelTask" && state.not_cancelable > 0;
        if not_cancelable {
            state.not_cancelable -= 1;
        }
        lose_answer = !refuse && !not_cancelable && take(&mut state.lose_answers);
        state
            .calls
            .push((method.to_string(), refuse || not_cancelable));
        if refuse {
            return internal_error("refused by the test proxy");
        }
        if not_cancelable {
            let error = serde_json::json!({
                "jsonrpc": "2.0",
                "id": rpc.as_ref().map(|r| r["id"].clone()),
                "error": {"code": -32002, "message": "Task is not cancelable in its current state"},
            });
            return (
                [(header::CONTENT_TYPE, "application/json")],
                error.to_string(),
            )
                .into_response();
        }
    }
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let mut forward = reqwest::Client::new()
        .request(parts.method.clone(), format!("{target}{path}"))
        .body(body);
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            forward = forward.header(name, value);
        }
    }
    let response = match forward.send().await {
        Ok(response) => response,
        Err(error) => {
            return (axum::http::StatusCode::BAD_GATEWAY, error.to_string()).into_response();
        }
    };
    if lose_answer {
        // The agent has acted on the call by now: read its whole answer, then lose it.
        response.bytes().await.ok();
        return internal_error("the answer was lost by the test proxy");
    }
    let mut builder = axum::http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        if name != header::CONTENT_LENGTH && name != header::TRANSFER_ENCODING {
            builder = builder.header(name, value);
        }
    }
    let body = if parts.method == axum::http::Method::GET {
        // The card: every URL in it names the proxy.
        let text = response.text().await.unwrap_or_default();
        axum::body::Body::from(text.replace(&target, &own))
    } else if cut_tasks {
        axum::body::Body::from_stream(futures::StreamExt::take_until(
            without_task_events(response.bytes_stream()),
            outage,
        ))
    } else {
        axum::body::Body::from_stream(futures::StreamExt::take_until(
            response.bytes_stream(),
            outage,
        ))
    };
    builder.body(body).unwrap()
}

/// An SSE stream of JSON-RPC results without the events whose result is a `task`.
fn without_task_events<B: AsRef<[u8]>>(
    upstream: impl futures::Stream<Item = reqwest::Result<B>> + Send + 'static,
) -> impl futures::Stream<Item = reqwest::Result<Vec<u8>>> + Send + 'static {
    use futures::StreamExt;
    let mut pending = Vec::<u8>::new();
    upstream.map(move |chunk| {
        let chunk = chunk?;
        pending.extend_from_slice(chunk.as_ref());
        let mut kept = Vec::new();
        while let Some(end) = event_end(&pending) {
            let event: Vec<u8> = pending.drain(..end).collect();
            let data = String::from_utf8_lossy(&event);
            let is_task = data
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|json| serde_json::from_str::<serde_json::Value>(json.trim()).ok())
                .any(|value| value["result"].get("task").is_some());
            if !is_task {
                kept.extend_from_slice(&event);
            }
        }
        Ok(kept)
    })
}

/// Where the first complete SSE event in `buffer` ends (after its blank line), if there is one.
fn event_end(buffer: &[u8]) -> Option<usize> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether nothing is under way in a workflow, by its history: no workflow task is pending
/// (the last one completed; the events after it are its commands) and every activity it
/// scheduled has closed. A workflow waiting on a condition, a timer or a child is quiet.
pub fn quiet(events: &[HistoryEvent]) -> bool {
    use temporalio_common::protos::temporal::api::enums::v1::EventType;
    use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
    let last_task = events.iter().rev().find(|e| {
        matches!(
            e.event_type(),
            EventType::WorkflowTaskScheduled
                | EventType::WorkflowTaskStarted
                | EventType::WorkflowTaskCompleted
                | EventType::WorkflowTaskFailed
                | EventType::WorkflowTaskTimedOut
        )
    });
    let closed: Vec<i64> = events
        .iter()
        .filter_map(|event| match &event.attributes {
            Some(Attributes::ActivityTaskCompletedEventAttributes(a)) => Some(a.scheduled_event_id),
            Some(Attributes::ActivityTaskFailedEventAttributes(a)) => Some(a.scheduled_event_id),
            Some(Attributes::ActivityTaskTimedOutEventAttributes(a)) => Some(a.scheduled_event_id),
            Some(Attributes::ActivityTaskCanceledEventAttributes(a)) => Some(a.scheduled_event_id),
            _ => None,
        })
        .collect();
    last_task.is_some_and(|e| e.event_type() == EventType::WorkflowTaskCompleted)
        && events
            .iter()
            .filter(|e| e.event_type() == EventType::ActivityTaskScheduled)
            .all(|e| closed.contains(&e.event_id))
}

/// What `AsyncPayloadVisitor::visit` returns (the SDK's `BoxFuture`).
type Visited<'a> = std::pin::Pin<
    Box<
        dyn Future<Output = Result<(), temporalio_common::data_converters::PayloadConversionError>>
            + Send
            + 'a,
    >,
>;

/// Collects every payload's bytes (data and metadata values) as text.
#[derive(Default)]
struct PayloadText(String);

impl PayloadText {
    fn add(&mut self, payload: &Payload) {
        self.0.push_str(&String::from_utf8_lossy(&payload.data));
        self.0.push('\n');
        for value in payload.metadata.values() {
            self.0.push_str(&String::from_utf8_lossy(value));
            self.0.push('\n');
        }
    }
}

impl AsyncPayloadVisitor for PayloadText {
    fn visit<'a>(&'a mut self, field: PayloadField<'a>) -> Visited<'a> {
        match field.data {
            PayloadFieldData::Single(payload) => self.add(payload),
            PayloadFieldData::Repeated(payloads) => payloads.iter().for_each(|p| self.add(p)),
            PayloadFieldData::Payloads(payloads) => {
                payloads.payloads.iter().for_each(|p| self.add(p));
            }
        }
        Box::pin(async { Ok(()) })
    }
}

/// A history as text: the Debug form of every event (every string field) followed by the
/// decoded bytes of every payload (what the Web UI shows as inputs, results and updates).
pub async fn history_text(events: Vec<HistoryEvent>) -> String {
    let mut text = format!("{events:?}");
    let mut payloads = PayloadText::default();
    for mut event in events {
        event
            .visit_payloads_mut(&mut payloads)
            .await
            .expect("visiting the payloads");
    }
    text.push_str(&payloads.0);
    text
}
