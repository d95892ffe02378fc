//! What the Temporal Web UI shows of a task: the SDK answers the UI's `__temporal_workflow_metadata`
//! query itself, with the workflow's current details and no query definitions, so Baton keeps
//! the details current with the task's state and the queries it answers. Read here the way the
//! UI reads them, through the Temporal CLI against a real dev server.

use std::time::Duration;

use crate::common::baton;
use baton_proto::TaskState;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, task_input};
use baton_tests::fake_model::{FakeModel, reply};
use baton_tests::venv_program;
use serde_json::Value;

/// The `currentDetails` of the metadata query's answer.
async fn current_details(temporal: &TestTemporal, workflow_id: &str) -> String {
    let output = tokio::process::Command::new(venv_program("temporal"))
        .args(["workflow", "query", "--address", temporal.address()])
        .args(["--workflow-id", workflow_id])
        .args(["--type", "__temporal_workflow_metadata", "--output", "json"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    let result = &answer["queryResult"][0];
    result["currentDetails"]
        .as_str()
        .unwrap_or_else(|| panic!("no currentDetails in {answer}"))
        .to_string()
}

#[tokio::test]
async fn the_metadata_query_tells_the_task_state_and_its_queries() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("the books balance")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-ui",
            task_input("n", "g"),
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(view.state, TaskState::Completed);

    let details = current_details(&temporal, "t-ui").await;
    assert!(
        details.starts_with("**COMPLETED**: the books balance\n\n"),
        "{details}"
    );
    for query in ["`task`", "`events_since`", "`push_configs`"] {
        assert!(details.contains(query), "{query} not in {details}");
    }
}
