//! `baton replay`: the histories a released Baton wrote (tests/histories/, recorded by
//! scripts/record-histories.sh) must replay on this build, a history the code no longer matches
//! must fail naming the mismatch, and `--config` must fetch, replay and save a live agent's
//! running workflows.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::baton;
use baton_proto::TaskState;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, reply};
use serde_json::json;

fn replay(args: &[&str]) -> Output {
    Command::new(baton())
        .arg("replay")
        .args(args)
        .env("RUST_LOG", "error")
        .output()
        .expect("running baton replay")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every history in tests/histories/<generation>/, oldest generation first.
fn committed_histories() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/histories");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flat_map(|generation| std::fs::read_dir(generation.unwrap().path()).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn as_args(paths: &[PathBuf]) -> Vec<&str> {
    paths.iter().map(|p| p.to_str().unwrap()).collect()
}

#[test]
fn the_committed_histories_replay_on_this_build() {
    let files = committed_histories();
    let names: Vec<&str> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap())
        .collect();
    for kind in [
        "front-desk-conversation.json",
        "front-desk-opened.json",
        "ledger-task-1.json",
        "push-parent.json",
        "push-stand-in.json",
        "cancelled-parent.json",
        "cancelled-stand-in.json",
        "continued-stand-in.json",
    ] {
        assert!(names.contains(&kind), "{kind} missing: {names:?}");
    }
    // Baton has had no release, so its workflows carry no patch; the conversation records its
    // delegation metrics (a local activity) and its listed status (the memo ListTasks reads).
    let conversation = files
        .iter()
        .find(|p| p.ends_with("front-desk-conversation.json"))
        .unwrap();
    let conversation = std::fs::read_to_string(conversation).unwrap();
    assert_eq!(
        conversation
            .matches(r#""marker_name":"core_patch""#)
            .count(),
        0
    );
    assert!(conversation.contains(r#""marker_name":"core_local_activity""#));
    assert!(conversation.contains("BatonListedTask"));
    // A task opened by its first message with signal-with-start.
    let opened = files
        .iter()
        .find(|p| p.ends_with("front-desk-opened.json"))
        .unwrap();
    let opened = std::fs::read_to_string(opened).unwrap();
    assert!(opened.contains(r#""signal_name":"first_message""#));
    assert!(
        !opened.contains(r#""update_id""#),
        "opened without an update"
    );
    let output = replay(&as_args(&files));
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!("{} replayed, 0 failed", files.len())),
        "{text}"
    );
    for file in &files {
        assert!(text.contains(&format!("ok {}", file.display())), "{text}");
    }
}

#[test]
fn a_history_the_code_no_longer_matches_fails_and_names_the_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let original = committed_histories()
        .into_iter()
        .find(|p| p.ends_with("front-desk-conversation.json"))
        .unwrap();
    let text = std::fs::read_to_string(&original).unwrap();
    let renamed = r#""activity_type":{"name":"start_agent_task_v0"}"#;
    let tampered = text.replace(r#""activity_type":{"name":"start_agent_task"}"#, renamed);
    assert_ne!(tampered, text, "the conversation delegates once");
    let path = dir.path().join("tampered.json");
    std::fs::write(&path, tampered).unwrap();

    let output = replay(&[path.to_str().unwrap(), original.to_str().unwrap()]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let failed = text
        .lines()
        .find(|line| line.starts_with(&format!("FAILED {}", path.display())))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(failed.contains("nondeterministic"), "{failed}");
    assert!(failed.contains("start_agent_task_v0"), "{failed}");
    assert!(text.contains("1 replayed, 1 failed"), "{text}");
}

#[test]
fn a_file_that_is_not_a_history_is_refused_naming_it_and_nothing_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "not-json.json",
            "not a history saved by `baton replay --save`",
        ),
        ("empty.json", "the history has no events"),
        ("missing.json", "cannot read it"),
        ("other-type.json", "a OtherWorkflow history"),
    ];
    std::fs::write(dir.path().join("not-json.json"), "{\"events\": 3").unwrap();
    std::fs::write(dir.path().join("empty.json"), r#"{"events": []}"#).unwrap();
    let conversation = committed_histories()
        .into_iter()
        .find(|p| p.ends_with("front-desk-conversation.json"))
        .unwrap();
    let other = std::fs::read_to_string(conversation).unwrap().replacen(
        r#""workflow_type":{"name":"TaskWorkflow"}"#,
        r#""workflow_type":{"name":"OtherWorkflow"}"#,
        1,
    );
    std::fs::write(dir.path().join("other-type.json"), other).unwrap();
    for (file, reason) in cases {
        let path = dir.path().join(file);
        let output = replay(&[path.to_str().unwrap()]);
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(2), "{file}: {text}");
        assert!(
            text.contains(&format!("unreadable {}: {reason}", path.display())),
            "{file}: {text}"
        );
        assert!(!text.contains("replayed"), "{file}: {text}");
    }
}

#[test]
fn replay_needs_histories_or_a_config() {
    let output = replay(&[]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("--config <FILE>|HISTORY"), "{error}");
}

#[tokio::test]
async fn running_workflows_are_fetched_from_the_agents_temporal_replayed_and_saved() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("Hello Alice.")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    let input = serde_json::from_value(json!({
        "name": "chat", "goal": "Say hello.", "lifecycle": "conversation",
        "participants": [{"id": "alice", "kind": "human", "role": "reporter"}]
    }))
    .unwrap();
    temporal
        .start_task(&config.task_queue, "t-replay/1", input)
        .await;
    temporal
        .wait_for_task("t-replay/1", Duration::from_secs(60), |v| {
            v.state == TaskState::InputRequired
        })
        .await;

    let saved = tempfile::tempdir().unwrap();
    let config_path = worker.config_path().to_str().unwrap().to_string();
    let save = saved.path().to_str().unwrap().to_string();
    // Visibility can lag a moment behind the start.
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let output = tokio::task::spawn_blocking({
            let (config_path, save) = (config_path.clone(), save.clone());
            move || replay(&["--config", &config_path, "--save", &save])
        })
        .await
        .unwrap();
        let text = stdout(&output);
        if text.contains("1 workflows match") || Instant::now() > deadline {
            assert_eq!(output.status.code(), Some(0), "{text}");
            break text;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(
        text.contains(&format!(
            "1 workflows match TaskQueue = \"{}\" AND ExecutionStatus = \"Running\"",
            config.task_queue
        )),
        "{text}"
    );
    assert!(text.contains("ok t-replay/1 ("), "{text}");
    assert!(text.contains("1 replayed, 0 failed"), "{text}");

    let file = saved.path().join("t-replay_1.json");
    let output = replay(&[file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}
