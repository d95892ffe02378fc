//! `baton task` against a running gateway (`baton worker` with `server.base_url`): send follows
//! a task to its answer and prints its sub-task, show, list and cancel read and stop it, `--json`
//! prints A2A JSON, and the exit codes say how the task ended.

use std::path::Path;
use std::process::Output;

use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, Scripted, call, reply};
use serde_json::{Value, json};

fn answer_for(request: &Value) -> Scripted {
    let shown = request["messages"].to_string();
    if shown.contains("Break the model") {
        Scripted::Status(400, r#"{"error":{"message":"the model refuses"}}"#.into())
    } else if shown.contains("is COMPLETED") {
        reply("The sub-task says 42.")
    } else if shown.contains("started on") {
        reply("Waiting for the sub-task.")
    } else if shown.contains("Compute six times seven") {
        reply("42")
    } else {
        call(
            "spawn_subtask",
            json!({"name": "multiply", "goal": "Compute six times seven.", "agent": null}),
        )
    }
}

async fn baton(args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("running baton task")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn send_show_list_and_cancel_drive_a_task_through_the_gateway() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(answer_for).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let url = config.base_url.clone().unwrap();
    let _worker =
        WorkerProcess::start(Path::new(env!("CARGO_BIN_EXE_baton")), &config.render()).await;

    let sent = baton(&[
        "task",
        "send",
        "--url",
        &url,
        "--as",
        "alice",
        "Work out 6 times 7.",
    ])
    .await;
    let text = stdout(&sent);
    assert_eq!(
        sent.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let task_id = text
        .lines()
        .find_map(|l| l.strip_prefix("task "))
        .expect("send names the task")
        .to_string();
    assert!(text.contains("WORKING"), "{text}");
    assert!(
        text.contains("  sub-task multiply on self: COMPLETED"),
        "the sub-task row is shown as it changes: {text}"
    );
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with("INPUT_REQUIRED (awaiting-next-message): The sub-task says 42."),
        "{text}"
    );

    let shown = baton(&["task", "show", "--url", &url, "--as", "alice", &task_id]).await;
    assert_eq!(shown.status.code(), Some(0));
    assert!(
        stdout(&shown).contains("state: INPUT_REQUIRED: The sub-task says 42."),
        "{}",
        stdout(&shown)
    );
    let as_json = baton(&[
        "task", "show", "--url", &url, "--as", "alice", "--json", &task_id,
    ])
    .await;
    let task: Value =
        serde_json::from_str(&stdout(&as_json)).expect("show --json is one JSON task");
    assert_eq!(task["id"], task_id.as_str());
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    let listed = baton(&["task", "list", "--url", &url, "--as", "alice"]).await;
    assert!(stdout(&listed).contains(&task_id), "{}", stdout(&listed));
    let listed_json = baton(&["task", "list", "--url", &url, "--as", "alice", "--json"]).await;
    let page: Value = serde_json::from_str(&stdout(&listed_json)).unwrap();
    assert!(
        page["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == task_id.as_str())
    );
    // A reader that goes away (`baton task list --json | head -c0`) ends the command quietly,
    // as a Unix tool ends, never with a panic on the closed pipe.
    let mut piped = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["task", "list", "--url", &url, "--as", "alice", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running baton task list");
    drop(piped.stdout.take());
    let ended = piped.wait_with_output().expect("baton task list ends");
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(ended.status.code(), Some(101), "{stderr}");

    let strangers = baton(&["task", "list", "--url", &url, "--as", "mallory"]).await;
    assert_eq!(stdout(&strangers).trim(), "no tasks");
    let hidden = baton(&["task", "show", "--url", &url, "--as", "mallory", &task_id]).await;
    assert_eq!(
        hidden.status.code(),
        Some(2),
        "a stranger's show is an error"
    );

    let cancelled = baton(&["task", "cancel", "--url", &url, "--as", "alice", &task_id]).await;
    assert_eq!(cancelled.status.code(), Some(0), "{}", stdout(&cancelled));
    assert!(
        stdout(&cancelled).contains("state: CANCELED"),
        "{}",
        stdout(&cancelled)
    );
    let after = baton(&["task", "show", "--url", &url, "--as", "alice", &task_id]).await;
    assert_eq!(after.status.code(), Some(1), "a cancelled task exits 1");

    let failed = baton(&[
        "task",
        "send",
        "--url",
        &url,
        "--as",
        "alice",
        "--json",
        "Break the model.",
    ])
    .await;
    assert_eq!(failed.status.code(), Some(1), "{}", stdout(&failed));
    let last: Value = serde_json::from_str(stdout(&failed).lines().last().unwrap()).unwrap();
    assert_eq!(last["task"]["status"]["state"], "TASK_STATE_FAILED");

    let nowhere = baton(&[
        "task",
        "list",
        "--url",
        "http://127.0.0.1:9",
        "--as",
        "alice",
    ])
    .await;
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&nowhere.stderr).starts_with("error: "));
}
