//! The worked example of docs/contract.md, run for real: the Temporal CLI starts a task on a
//! running `baton worker`, queries it, cancels one, and reads the history, with the exact input
//! the page shows. A real Temporal dev server, `baton worker` as a real process, our fake
//! OpenAI-compatible model.

use std::time::Duration;

use crate::common::baton;
use baton_proto::{EventPage, InvokeModelIn, TaskEvent, TaskInput, TaskState, TaskView};
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::{FakeModel, Scripted, reply};
use baton_tests::venv_program;
use serde_json::Value;

const CONTRACT: &str = include_str!("../../../../docs/contract.md");

/// The `--input '…'` of the page's `temporal workflow start` example.
fn documented_start_input() -> String {
    let start = CONTRACT
        .find("```sh\ntemporal workflow start")
        .expect("docs/contract.md shows `temporal workflow start`");
    let rest = &CONTRACT[start..];
    let input = rest
        .split_once("--input '")
        .expect("the start example has --input '…'")
        .1;
    input
        .split_once('\'')
        .expect("a closing quote")
        .0
        .to_string()
}

/// The `--output json` answer of the `task` query, as the page shows it.
fn documented_query_output() -> Value {
    let start = CONTRACT
        .find("```console\n{\n  \"queryResult\"")
        .expect("docs/contract.md shows the task query's --output json answer")
        + "```console\n".len();
    let end = start + CONTRACT[start..].find("```").expect("the block ends");
    serde_json::from_str(&CONTRACT[start..end]).expect("the documented answer is JSON")
}

/// Whether `actual` is `documented`: the same keys and values, except that a timestamp (a key
/// ending in `_at`) only has to be a string, and a token count (`_tokens`) a whole number.
fn same_shape(documented: &Value, actual: &Value) -> bool {
    match (documented, actual) {
        (Value::Object(doc), Value::Object(got)) => {
            doc.len() == got.len()
                && doc.iter().all(|(key, value)| {
                    got.get(key).is_some_and(|other| {
                        if key.ends_with("_at") {
                            value.is_string() && other.is_string()
                        } else if key.ends_with("_tokens") {
                            // What a turn reads depends on the prompt's exact length.
                            value.is_u64() && other.is_u64()
                        } else {
                            same_shape(value, other)
                        }
                    })
                })
        }
        (Value::Array(doc), Value::Array(got)) => {
            doc.len() == got.len() && doc.iter().zip(got).all(|(a, b)| same_shape(a, b))
        }
        _ => documented == actual,
    }
}

/// The Temporal CLI against one test server. Async, so the fake model on this runtime keeps
/// answering while the CLI runs.
struct Cli<'a> {
    temporal: &'a TestTemporal,
}

impl Cli<'_> {
    async fn run(&self, args: &[&str]) -> String {
        let output = tokio::process::Command::new(venv_program("temporal"))
            .args(args)
            .args([
                "--address",
                self.temporal.address(),
                "--namespace",
                "default",
            ])
            .output()
            .await
            .expect("running the temporal CLI");
        assert!(
            output.status.success(),
            "temporal {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8(output.stdout).expect("the CLI prints UTF-8")
    }

    async fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.extend(["--output", "json"]);
        let text = self.run(&args).await;
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON: {e}\n{text}"))
    }

    fn query_args<'a>(
        workflow_id: &'a str,
        query: &'a str,
        input: Option<&'a str>,
    ) -> Vec<&'a str> {
        let mut args = vec![
            "workflow",
            "query",
            "--workflow-id",
            workflow_id,
            "--type",
            query,
        ];
        if let Some(input) = input {
            args.extend(["--input", input]);
        }
        args
    }

    /// The query's result exactly as the workflow wrote it: with
    /// `--no-json-shorthand-payloads` the CLI prints the raw `json/plain` payload.
    async fn query(&self, workflow_id: &str, query: &str, input: Option<&str>) -> Value {
        let mut args = Self::query_args(workflow_id, query, input);
        args.push("--no-json-shorthand-payloads");
        let answer = self.json(&args).await;
        let payloads = answer["queryResult"]["payloads"]
            .as_array()
            .unwrap_or_else(|| panic!("no payloads: {answer:#}"));
        assert_eq!(payloads.len(), 1, "{answer:#}");
        payload_json(&payloads[0])
    }

    async fn task_view(&self, workflow_id: &str) -> TaskView {
        let answer = self.query(workflow_id, "task", None).await;
        serde_json::from_value(answer.clone())
            .unwrap_or_else(|e| panic!("the task query answered {answer:#}: {e}"))
    }

    async fn events_since(&self, workflow_id: &str, cursor: &str) -> EventPage {
        let answer = self.query(workflow_id, "events_since", Some(cursor)).await;
        serde_json::from_value(answer.clone())
            .unwrap_or_else(|e| panic!("the events_since query answered {answer:#}: {e}"))
    }

    /// Polls the `task` query until the task is terminal.
    async fn wait_terminal(&self, workflow_id: &str) -> TaskView {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let view = self.task_view(workflow_id).await;
            if view.state.is_terminal() {
                return view;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{workflow_id} is not done after 60 s: {view:#?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn start_task(&self, task_queue: &str, workflow_id: &str, input: &str) {
        let printed = self
            .run(&[
                "workflow",
                "start",
                "--type",
                "TaskWorkflow",
                "--task-queue",
                task_queue,
                "--workflow-id",
                workflow_id,
                "--input",
                input,
            ])
            .await;
        assert!(printed.contains(workflow_id), "{printed}");
    }
}

/// Standard base64 (with padding), as the CLI prints payload bytes.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {text:?}"),
        }
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut word = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            word |= value(c) << (18 - 6 * i);
        }
        let [_, a, b, c] = word.to_be_bytes();
        bytes.extend_from_slice(&[a, b, c][..chunk.len() - 1]);
    }
    bytes
}

/// A payload of `temporal workflow show --output json`, which must be `json/plain`: the JSON.
fn payload_json(payload: &Value) -> Value {
    let encoding = payload["metadata"]["encoding"]
        .as_str()
        .unwrap_or_else(|| panic!("a payload without an encoding: {payload:#}"));
    assert_eq!(base64_decode(encoding), b"json/plain", "{payload:#}");
    let data = base64_decode(payload["data"].as_str().expect("payload data"));
    serde_json::from_slice(&data).unwrap_or_else(|e| {
        panic!(
            "the payload is not readable JSON ({e}): {}",
            String::from_utf8_lossy(&data)
        )
    })
}

/// The history events of `temporal workflow show --output json`.
async fn history(cli: &Cli<'_>, workflow_id: &str) -> Vec<Value> {
    let shown = cli
        .json(&["workflow", "show", "--workflow-id", workflow_id])
        .await;
    shown["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events: {shown:#}"))
        .clone()
}

fn events_of<'a>(events: &'a [Value], attributes: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter_map(|event| event.get(attributes))
        .collect()
}

#[tokio::test]
async fn the_documented_cli_example_starts_queries_and_shows_a_task() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![reply("done")]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let cli = Cli {
        temporal: &temporal,
    };

    let input = documented_start_input();
    let given: Value = serde_json::from_str(&input).expect("the documented input is JSON");
    let typed: TaskInput =
        serde_json::from_str(&input).expect("the documented input is a TaskInput");
    cli.start_task(&config.task_queue, "books-1", &input).await;

    // `temporal workflow query --type task --output json`
    let view = cli.wait_terminal("books-1").await;
    assert_eq!(view.state, TaskState::Completed, "{view:#?}");
    assert_eq!(view.last_answer.as_deref(), Some("done"));
    assert_eq!(view.task_id, "books-1");
    assert_eq!(view.name, typed.name);
    assert_eq!(view.turns, 1);
    assert!(view.sub_tasks.is_empty());

    // `temporal workflow query --type task --output json` prints what the page shows.
    let printed = cli.json(&Cli::query_args("books-1", "task", None)).await;
    let documented = documented_query_output();
    assert!(
        same_shape(&documented, &printed),
        "docs/contract.md shows\n{documented:#}\nbut the CLI printed\n{printed:#}"
    );
    // The CLI prints an empty list as null, as the page warns.
    assert!(
        printed["queryResult"][0]["sub_tasks"].is_null(),
        "{printed:#}"
    );

    // `temporal workflow query --type events_since --input 0`
    let page = cli.events_since("books-1", "0").await;
    assert!(page.closed, "{page:#?}");
    let states: Vec<TaskState> = page
        .events
        .iter()
        .filter_map(|entry| match &entry.event {
            TaskEvent::Status { state, .. } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    let seqs: Vec<u64> = page.events.iter().map(|entry| entry.seq).collect();
    assert_eq!(seqs, (0..page.next_seq).collect::<Vec<_>>(), "{page:#?}");
    let last = (page.next_seq - 1).to_string();
    let later = cli.events_since("books-1", &last).await;
    assert_eq!(
        later.events,
        page.events[page.events.len() - 1..],
        "{later:#?}"
    );

    // `temporal workflow show --output json`: readable JSON payloads, activity types by name.
    let events = history(&cli, "books-1").await;
    let started = events_of(&events, "workflowExecutionStartedEventAttributes");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["workflowType"]["name"], "TaskWorkflow");
    assert_eq!(payload_json(&started[0]["input"]["payloads"][0]), given);

    // Baton has had no release, so its workflows carry no patch: a new task records no marker,
    // and no `TemporalChangeVersion` upsert for visibility to index.
    let patches = events_of(&events, "markerRecordedEventAttributes")
        .into_iter()
        .filter(|marker| marker["markerName"] == "core_patch")
        .count();
    assert_eq!(patches, 0, "{events:#?}");
    let versions: Vec<Value> = events_of(&events, "upsertWorkflowSearchAttributesEventAttributes")
        .iter()
        .filter_map(|upsert| {
            upsert["searchAttributes"]["indexedFields"].get("TemporalChangeVersion")
        })
        .map(payload_json)
        .collect();
    assert!(versions.is_empty(), "{events:#?}");

    let scheduled = events_of(&events, "activityTaskScheduledEventAttributes");
    let types: Vec<&str> = scheduled
        .iter()
        .map(|a| a["activityType"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["invoke_model"], "{events:#?}");
    let turn: InvokeModelIn =
        serde_json::from_value(payload_json(&scheduled[0]["input"]["payloads"][0]))
            .expect("the invoke_model input is an InvokeModelIn");
    assert_eq!(turn.task_id, "books-1");
    assert!(
        turn.task_section.contains(&format!("goal: {}", typed.goal)),
        "{}",
        turn.task_section
    );
    let out = events_of(&events, "activityTaskCompletedEventAttributes");
    assert_eq!(out.len(), 1);
    let answer = payload_json(&out[0]["result"]["payloads"][0]);
    assert_eq!(answer["text"], "done", "{answer:#}");
    assert_eq!(answer["tool_calls"], Value::Array(vec![]), "{answer:#}");

    let completed = events_of(&events, "workflowExecutionCompletedEventAttributes");
    assert_eq!(completed.len(), 1, "{events:#?}");
    let result: TaskView =
        serde_json::from_value(payload_json(&completed[0]["result"]["payloads"][0]))
            .expect("the workflow result is a TaskView");
    assert_eq!(result, view);

    // `temporal workflow show --detailed` decodes the payloads for a human.
    let detailed = cli
        .run(&["workflow", "show", "--workflow-id", "books-1", "--detailed"])
        .await;
    assert!(
        detailed.contains(&format!("input[0].goal: {}", typed.goal)),
        "{detailed}"
    );
    assert!(detailed.contains("invoke_model"), "{detailed}");

    // `temporal workflow describe`
    let described = cli
        .json(&["workflow", "describe", "--workflow-id", "books-1"])
        .await;
    assert_eq!(
        described["workflowExecutionInfo"]["status"], "WORKFLOW_EXECUTION_STATUS_COMPLETED",
        "{described:#}"
    );

    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn the_cancel_signal_from_the_cli_cancels_a_task() {
    let temporal = TestTemporal::start().await;
    // The model never answers: the task is mid-turn when the signal arrives.
    let model = FakeModel::start(vec![Scripted::Hang]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url());
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let cli = Cli {
        temporal: &temporal,
    };

    cli.start_task(
        &config.task_queue,
        "books-2",
        r#"{"name": "books", "goal": "Check the books."}"#,
    )
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no model turn started"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    cli.run(&[
        "workflow",
        "signal",
        "--workflow-id",
        "books-2",
        "--name",
        "cancel",
        "--input",
        r#""the customer withdrew the request""#,
    ])
    .await;

    let view = cli.wait_terminal("books-2").await;
    assert_eq!(view.state, TaskState::Canceled, "{view:#?}");
    assert_eq!(
        view.status_message.as_deref(),
        Some("the customer withdrew the request")
    );
    let described = cli
        .json(&["workflow", "describe", "--workflow-id", "books-2"])
        .await;
    assert_eq!(
        described["workflowExecutionInfo"]["status"], "WORKFLOW_EXECUTION_STATUS_CANCELED",
        "{described:#}"
    );
    let events = history(&cli, "books-2").await;
    let signals = events_of(&events, "workflowExecutionSignaledEventAttributes");
    assert_eq!(signals.len(), 1);
    assert_eq!(signals[0]["signalName"], "cancel");
    assert_eq!(
        payload_json(&signals[0]["input"]["payloads"][0]),
        "the customer withdrew the request"
    );
}

/// `baton --version` names the release and the commit the binary was built from.
#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let version = std::process::Command::new(baton())
        .arg("--version")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
    assert_eq!(
        said,
        format!("baton {} ({commit})", env!("CARGO_PKG_VERSION"))
    );
}
