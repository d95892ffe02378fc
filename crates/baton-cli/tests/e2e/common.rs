//! What every end-to-end test shares.

use std::path::Path;
use std::time::Duration;

use baton_tests::PythonPeer;
use baton_tests::engine::Engine;
use baton_tests::fake_model::{FakeModel, Scripted};
use baton_tests::wait::poll_until;
use serde_json::Value;
use temporalio_common::protos::temporal::api::history::v1::HistoryEvent;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;

/// The `baton` binary Cargo built for these tests.
pub fn baton() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_baton"))
}

/// The longest a test waits for what it started to settle: a task to end, a process to serve.
pub const WITHIN: Duration = Duration::from_secs(90);

/// The agent id after `consult@` in `text`: the agent a scripted model delegates to.
pub fn consulted_agent(text: &str) -> String {
    text.split("consult@")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .next()
        })
        .unwrap_or_else(|| panic!("no consult@<agent> in {text}"))
        .to_string()
}

/// Everything a model request carried, as one string to search.
pub fn all_text(request: &Value) -> String {
    request["messages"].to_string()
}

/// A Python a2a-sdk peer started with `peer_args` as the agent `ledger`, a model that says
/// `script` in turn, and a worker delegating to the peer with the agent settings `settings`.
pub async fn with_python_ledger(
    peer_args: &[&str],
    script: Vec<Scripted>,
    settings: &str,
) -> (PythonPeer, FakeModel, Engine) {
    let peer = PythonPeer::start(peer_args).await;
    let model = FakeModel::start(script).await;
    let engine = Engine::with_ledger(baton(), &model.base_url(), &peer.url(), settings).await;
    (peer, model, engine)
}

/// Whether the run these are the events of was started by a continue-as-new.
pub fn continued(events: &[HistoryEvent]) -> bool {
    matches!(
        events.first().and_then(|e| e.attributes.as_ref()),
        Some(Attributes::WorkflowExecutionStartedEventAttributes(started))
            if !started.continued_execution_run_id.is_empty()
    )
}

/// `baton task show --tree --config CONFIG TASK_ID`: its exit code, what it printed and what it
/// logged.
pub async fn show_tree(config: &Path, task_id: &str) -> (Option<i32>, String, String) {
    let shown = tokio::process::Command::new(baton())
        .args(["task", "show", "--tree", "--config"])
        .arg(config)
        .arg(task_id)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .unwrap();
    (
        shown.status.code(),
        String::from_utf8_lossy(&shown.stdout).into_owned(),
        String::from_utf8_lossy(&shown.stderr).into_owned(),
    )
}

/// `baton replay` of every history on `config`'s task queue: waits until it has replayed each of
/// `task_ids`, and returns its report, which must say none failed.
pub async fn replay_all(config: &Path, task_queue: &str, task_ids: &[&str]) -> String {
    let query = format!("TaskQueue = \"{task_queue}\"");
    let (code, text) = poll_until("every history visible to replay", WITHIN, || async {
        let output = tokio::process::Command::new(baton())
            .args(["replay", "--config"])
            .arg(config)
            .args(["--query", &query])
            .env("RUST_LOG", "warn")
            .output()
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        task_ids
            .iter()
            .all(|id| text.contains(&format!("ok {id} (")))
            .then_some((output.status.code(), text))
    })
    .await;
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(" 0 failed"), "{text}");
    text
}
