//! Running Baton's engine in tests: a real Temporal dev server on free ports, and `baton worker`
//! as a real child process (so a test can kill it mid-delegation and start it again).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use baton_cli::temporal::EmbeddedServer;
use baton_config::Settings;
use baton_proto::{TaskInput, TaskView};
use baton_workflows::TaskWorkflow;
use temporalio_client::{Client, ClientOptions, WorkflowQueryOptions, WorkflowStartOptions};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::{free_port, venv_program};

/// A Temporal dev server for one test, in a temporary state directory; stopped on drop.
pub struct TestTemporal {
    server: Option<EmbeddedServer>,
    pub client: Client,
    _state: tempfile::TempDir,
}

impl TestTemporal {
    pub async fn start() -> TestTemporal {
        let state = tempfile::tempdir().unwrap();
        let config = format!(
            "[temporal.embedded]\nbinary = \"{}\"\ndatabase = \"{}\"\nport = {}\nui_port = {}\n",
            venv_program("temporal").display(),
            state.path().join("temporal.sqlite").display(),
            free_port(),
            free_port(),
        );
        let settings = Settings::parse(&config, state.path(), &|_| None).unwrap();
        let (server, connection) = EmbeddedServer::start(&settings.temporal).await.unwrap();
        let client = Client::new(connection, ClientOptions::new("default").build()).unwrap();
        TestTemporal {
            server: Some(server),
            client,
            _state: state,
        }
    }

    pub fn address(&self) -> &str {
        self.server.as_ref().unwrap().address()
    }

    /// Starts a `TaskWorkflow` with id `task_id` on `task_queue`.
    pub async fn start_task(&self, task_queue: &str, task_id: &str, input: TaskInput) {
        self.client
            .start_workflow(
                TaskWorkflow::run,
                baton_proto::TaskStart::from(input),
                WorkflowStartOptions::new(task_queue, task_id).build(),
            )
            .await
            .expect("starting the TaskWorkflow");
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
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let view = self.task_view(task_id).await;
            if done(&view) {
                return view;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "task {task_id} did not get there in {within:?}; last: {view:#?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for TestTemporal {
    fn drop(&mut self) {
        // Dropping the server kills it at once.
        self.server.take();
    }
}

/// `baton worker` as a child process; killed on drop.
pub struct WorkerProcess {
    child: Child,
    binary: PathBuf,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

impl WorkerProcess {
    /// Writes `config` to a file and starts `binary worker --config FILE`, waiting for its
    /// "worker ready" line.
    pub async fn start(binary: &Path, config: &str) -> WorkerProcess {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baton.toml");
        std::fs::write(&path, config).unwrap();
        let child = spawn_ready(binary, &path).await;
        WorkerProcess {
            child,
            binary: binary.to_path_buf(),
            config: path,
            _dir: dir,
        }
    }

    /// SIGKILL: the worker dies mid-whatever, as in a crash.
    pub async fn kill(&mut self) {
        self.child.kill().await.ok();
    }

    /// Starts the worker again with the same config.
    pub async fn restart(&mut self) {
        self.child = spawn_ready(&self.binary, &self.config).await;
    }

    /// SIGTERM, then waits for the process to exit; returns whether it exited cleanly.
    pub async fn terminate(&mut self, within: Duration) -> bool {
        if let Some(pid) = self.child.id() {
            std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .ok();
        }
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(Ok(status)) => status.success(),
            _ => false,
        }
    }
}

async fn spawn_ready(binary: &Path, config: &Path) -> Child {
    let mut child = Command::new(binary)
        .args(["worker", "--config"])
        .arg(config)
        .env("RUST_LOG", "info,temporalio_sdk_core=warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("starting baton worker");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with("worker ready") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "baton worker did not become ready");
    // Keep reading so the worker never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

/// A worker config on a remote (test) Temporal server with a model at `model_url`.
pub struct WorkerConfig {
    pub agent_id: String,
    pub task_queue: String,
    pub temporal_address: String,
    pub model_url: String,
    pub agents: Vec<String>,
    pub base_url: Option<String>,
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
        }
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
            Some(url) => format!(
                "[server]\nbind = \"{}\"\nbase_url = \"{url}\"\n",
                url.trim_start_matches("http://")
            ),
            None => String::new(),
        };
        format!(
            "agents = [{}]\n[agent]\nid = \"{}\"\n{server}[temporal]\nmode = \"remote\"\naddress = \"{}\"\ntls = false\ntask_queue = \"{}\"\n[model]\nbase_url = \"{}\"\nmodel = \"fake-model\"\ntimeout = \"10s\"\n",
            self.agents.join(", "),
            self.agent_id,
            self.temporal_address,
            self.task_queue,
            self.model_url,
        )
    }
}

/// A delegated task's input with default limits.
pub fn task_input(name: &str, goal: &str) -> TaskInput {
    serde_json::from_value(serde_json::json!({"name": name, "goal": goal})).unwrap()
}
