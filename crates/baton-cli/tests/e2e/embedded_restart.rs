//! The embedded Temporal dev server dying under Baton after it was ready (a crash, an OOM kill,
//! the port race of temporalio/cli#550): Baton starts it again on the same database and port,
//! a task that was running goes on to its answer, and a server that keeps dying is given up
//! with an error naming its log, instead of Baton running on against a dead Temporal.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use crate::common::baton;
use baton_tests::engine::{WorkerProcess, a2a_rpc};
use baton_tests::fake_model::{FakeModel, ModelResponseSpec, Scripted};
use baton_tests::wait::{HANG_GUARD, poll_until, within};
use baton_tests::{children_of, free_ports, process_alive, venv_program};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

/// An embedded server in `state` on a free port, and whatever else the agent needs.
fn embedded_config(state: &Path, port: u16, rest: &str) -> String {
    format!(
        "[agent]\nid = \"outage\"\n[temporal.embedded]\nbinary = \"{}\"\ndatabase = \"{}\"\nport = {port}\nui_port = 0\n{rest}",
        venv_program("temporal").display(),
        state.join("temporal.sqlite").display(),
    )
}

/// The one Temporal server `baton` runs.
fn server_of(baton: u32) -> u32 {
    let children = children_of(baton);
    assert_eq!(children.len(), 1, "one Temporal server: {children:?}");
    children[0]
}

fn kill_9(pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

/// The `temporal` CLI against the server on `port`; whether it succeeded.
fn temporal_cli(port: u16, args: &[&str]) -> bool {
    std::process::Command::new(venv_program("temporal"))
        .args(args)
        .args(["--address", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// `baton temporal serve`: a server killed three times is started again each time, with what
/// it held; killed a fourth time within the window, it is given up and baton exits with an
/// error that names the log, the log of the run before kept beside it.
#[tokio::test]
async fn a_killed_server_is_started_again_and_one_that_keeps_dying_is_given_up() {
    let state = tempfile::tempdir().unwrap();
    let [port] = free_ports();
    let (mut serve, mut logged) = temporal_serve(state.path(), port).await;
    let baton_pid = serve.id().unwrap();
    assert!(temporal_cli(
        port,
        &[
            "workflow",
            "start",
            "--task-queue",
            "nobody",
            "--type",
            "Idle",
            "--workflow-id",
            "kept-across-restarts",
        ],
    ));

    for restart in 1..=3 {
        let server = server_of(baton_pid);
        kill_9(server);
        poll_until(
            &format!("restart {restart} of the server"),
            HANG_GUARD,
            || async {
                (count(&logged, "the embedded Temporal server is back") == restart).then_some(())
            },
        )
        .await;
        assert_ne!(server_of(baton_pid), server, "a new server process");
        assert!(
            temporal_cli(
                port,
                &[
                    "workflow",
                    "describe",
                    "--workflow-id",
                    "kept-across-restarts"
                ]
            ),
            "the restarted server kept the workflow"
        );
    }
    assert!(
        state.path().join("temporal.log.1").exists(),
        "the log of the server that died is kept"
    );

    let last = server_of(baton_pid);
    kill_9(last);
    let status = within("baton to give up", HANG_GUARD, serve.wait())
        .await
        .unwrap();
    assert!(!status.success(), "{status}");
    let text = logged.all_once_closed().await;
    assert!(
        text.contains("died 4 times") && text.contains("is not started again"),
        "{text}"
    );
    assert!(text.contains("temporal.log"), "names the log: {text}");
    assert!(children_of(baton_pid).is_empty());
}

/// A server stopped from outside Baton (SIGTERM, as an operator or a service manager stopping
/// the whole group sends it) is not started again: `baton temporal serve` exits with an error
/// that says so, instead of undoing the stop.
#[tokio::test]
async fn a_server_stopped_from_outside_is_not_started_again() {
    let state = tempfile::tempdir().unwrap();
    let [port] = free_ports();
    let (mut serve, mut logged) = temporal_serve(state.path(), port).await;
    let baton_pid = serve.id().unwrap();
    let server = server_of(baton_pid);
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &server.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let status = within("baton to stop", HANG_GUARD, serve.wait())
        .await
        .unwrap();
    assert!(!status.success(), "{status}");
    let text = logged.all_once_closed().await;
    assert!(text.contains("stopped from outside Baton"), "{text}");
    assert_eq!(count(&logged, "starting it again"), 0, "{text}");
}

/// `baton worker` on the embedded server: the server is killed while a task's model call is in
/// flight; the worker starts it again and keeps running, and the task ends with the model's
/// answer, which it gives only after the restart. Killed three more times, the server is given
/// up and the worker exits with an error.
#[tokio::test]
async fn a_task_running_when_the_server_dies_ends_with_its_answer() {
    let state = tempfile::tempdir().unwrap();
    let model = FakeModel::start(vec![Scripted::Held(ModelResponseSpec {
        text: Some("Answered after the outage.".into()),
        tool_calls: vec![],
    })])
    .await;
    let [port, gateway_port] = free_ports();
    let gateway = format!("http://127.0.0.1:{gateway_port}/");
    let rest = format!(
        "[server]\nbind = \"127.0.0.1:{gateway_port}\"\nbase_url = \"{gateway}\"\n\
         [model]\nbase_url = \"{}\"\nmodel = \"fake-model\"\ntimeout = \"60s\"\n",
        model.base_url()
    );
    let mut worker =
        WorkerProcess::start(baton(), &embedded_config(state.path(), port, &rest)).await;
    let sent = a2a_rpc(
        &gateway,
        "SendMessage",
        json!({
            "message": {"messageId": "m-outage", "role": "ROLE_USER", "parts": [{"text": "Hi"}]},
            "configuration": {"returnImmediately": true},
        }),
        Some("alice"),
    )
    .await;
    let task_id = sent["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {sent}"))
        .to_string();
    poll_until("the model call", HANG_GUARD, || async {
        (model.request_count() == 1).then_some(())
    })
    .await;

    kill_9(server_of(worker.pid()));
    poll_until("the server back", HANG_GUARD, || async {
        (!worker
            .logged(&["the embedded Temporal server is back"])
            .is_empty())
        .then_some(())
    })
    .await;
    model.release();
    let task = poll_until("the task's answer", HANG_GUARD, || {
        let gateway = gateway.clone();
        let task_id = task_id.clone();
        async move {
            let read = a2a_rpc(&gateway, "GetTask", json!({"id": task_id}), Some("alice")).await;
            (read["result"]["status"]["state"] == "TASK_STATE_COMPLETED").then_some(read)
        }
    })
    .await;
    assert!(
        task.to_string().contains("Answered after the outage."),
        "{task}"
    );
    assert!(process_alive(worker.pid()), "the worker runs on");

    // Three more deaths within the window: the fourth is one too many, and the worker stops
    // with an error instead of running on against a dead Temporal.
    for restart in 2..=3 {
        kill_9(server_of(worker.pid()));
        poll_until(&format!("restart {restart}"), HANG_GUARD, || async {
            (worker
                .logged(&["the embedded Temporal server is back"])
                .len()
                == restart)
                .then_some(())
        })
        .await;
    }
    let baton_pid = worker.pid();
    kill_9(server_of(baton_pid));
    let status = worker.exit_status().await;
    assert!(!status.success(), "{status}");
    assert!(
        !worker
            .logged(&["died 4 times", "is not started again"])
            .is_empty(),
        "the error says why"
    );
    assert!(children_of(baton_pid).is_empty(), "no server left behind");
}

/// `baton temporal serve` on an embedded server in `state` on `port`, once it has printed its
/// Web UI line; and the lines it logs.
async fn temporal_serve(state: &Path, port: u16) -> (tokio::process::Child, Logged) {
    let config = state.join("baton.toml");
    std::fs::write(&config, embedded_config(state, port, "")).unwrap();
    let mut serve = tokio::process::Command::new(baton())
        .args(["temporal", "serve", "--config"])
        .arg(&config)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let logged = read_lines(serve.stderr.take().unwrap());
    let mut stdout = BufReader::new(serve.stdout.take().unwrap()).lines();
    within("the Web UI line", HANG_GUARD, async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            if line.starts_with("Web UI:") {
                break;
            }
        }
    })
    .await;
    (serve, logged)
}

/// The lines a process writes, collected as they come.
struct Logged {
    lines: Arc<Mutex<Vec<String>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Logged {
    /// Everything written, once the process has closed the stream: a process that has exited
    /// may still have lines in the pipe that the reader has not taken yet.
    async fn all_once_closed(&mut self) -> String {
        within("the log to close", HANG_GUARD, &mut self.reader)
            .await
            .unwrap();
        self.lines.lock().unwrap().join("\n")
    }
}

/// Collects the lines of `stream` as they come, echoing them for a failed test's output.
fn read_lines(stream: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Logged {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let collected = lines.clone();
    let reader = tokio::spawn(async move {
        let mut reader = BufReader::new(stream).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            eprintln!("{line}");
            collected.lock().unwrap().push(line);
        }
    });
    Logged { lines, reader }
}

fn count(logged: &Logged, needle: &str) -> usize {
    logged
        .lines
        .lock()
        .unwrap()
        .iter()
        .filter(|line| line.contains(needle))
        .count()
}
