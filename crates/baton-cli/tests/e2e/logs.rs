//! `[log] format = "json"`: every line a worker writes is one JSON object a log pipeline can
//! read, a failed task included, as one WARN line with its id, its reason and its agent.

use std::time::{Duration, Instant};

use crate::common::baton;
use baton_proto::TaskState;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, task_input};
use baton_tests::fake_model::FakeModel;
use serde_json::Value;

#[tokio::test]
async fn json_log_lines_parse_and_a_failed_task_is_one_warn_line_with_its_id_and_reason() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![baton_tests::fake_model::Scripted::Status(
        400,
        r#"{"error":{"message":"the model refuses"}}"#.into(),
    )])
    .await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url());
    config.json_logs = true;
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    temporal
        .start_task(&config.task_queue, "t-logged", task_input("n", "g"))
        .await;
    let view = temporal
        .wait_for_task("t-logged", Duration::from_secs(60), |v| {
            v.state.is_terminal()
        })
        .await;
    assert_eq!(view.state, TaskState::Failed);

    let ready: Value =
        serde_json::from_str(&worker.logged(&["worker ready"])[0]).expect("the ready line is JSON");
    assert_eq!(ready["level"], "INFO");
    assert_eq!(ready["fields"]["message"], "worker ready");
    assert_eq!(ready["fields"]["task_queue"], config.task_queue.as_str());

    let deadline = Instant::now() + Duration::from_secs(15);
    let failed = loop {
        if let Some(line) = worker.logged(&["task failed"]).first() {
            break line.clone();
        }
        assert!(Instant::now() < deadline, "no task failed line");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let failed: Value = serde_json::from_str(&failed).expect("the failed line is JSON");
    assert_eq!(failed["level"], "WARN");
    assert_eq!(failed["fields"]["task"], "t-logged");
    assert!(
        failed["fields"]["message"]
            .as_str()
            .unwrap()
            .contains("the model refuses"),
        "{failed}"
    );
    assert_eq!(
        worker.logged(&["task failed"]).len(),
        1,
        "one line per failed task"
    );
    // Whose task it was: `baton up` runs several agents' workers in one process.
    let spans = failed["spans"]
        .as_array()
        .expect("the line lists its spans");
    assert!(
        spans
            .iter()
            .any(|span| span["name"] == "agent" && span["agent"] == "front-desk"),
        "{failed}"
    );
}

/// A stranger's push to a stand-in id made of a newline, a forged ERROR line and a terminal
/// escape is refused, and every line the worker writes about it stays one line, escaped.
#[tokio::test]
async fn a_push_url_cannot_forge_a_log_line_or_send_terminal_escapes() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(Vec::new()).await;
    let config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    let base = config.base_url.clone().unwrap();
    let worker = WorkerProcess::start(baton(), &config.render()).await;

    let forged_id = "x%0A2026-12-04T00:00:00.000000Z%20ERROR%20forged%20line%1B[31m";
    let response = reqwest::Client::new()
        .post(format!("{base}/a2a/push/{forged_id}"))
        .header("X-A2A-Notification-Token", "f".repeat(64))
        .json(
            &serde_json::json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}}),
        )
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error(), "{}", response.status());
    let deadline = Instant::now() + Duration::from_secs(15);
    let lines = loop {
        let lines = worker.logged(&["forged"]);
        if !lines.is_empty() {
            break lines;
        }
        assert!(Instant::now() < deadline, "no line names the push");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for line in worker.logged(&[""]) {
        assert!(!line.contains('\u{1b}'), "a raw escape: {line:?}");
        assert!(
            !line.starts_with("2026-12-04T00:00:00.000000Z"),
            "a forged line: {line:?}"
        );
    }
    assert!(lines.iter().all(|line| line.contains("\\n")), "{lines:?}");
}
