//! Files and data end to end: what the official a2a-sdk client sends is kept in the content
//! store, the model sees it (an image as an image, a CSV and data inline), GetTask gives it back
//! byte for byte, and workflow history holds references only; files a tool or a sub-task makes
//! reach the caller, files go with briefs and answers, across two Batons, and a store that is
//! down loses nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, history_text};
use baton_tests::fake_model::{FakeModel, Scripted, call, reply};
use baton_tests::s3_server::{S3Server, TEST_KEY_ID, TEST_SECRET};
use baton_tests::sdk_client::SdkClient;
use baton_tests::tcp_gate::TcpGate;
use baton_tests::wait::poll_until;
use baton_tests::webhook::Webhook;
use baton_tests::{CardServer, PythonPeer, card_server_response, venv_program, workspace};
use serde_json::json;

use crate::common::{all_text, baton, consulted_agent};

struct Agent {
    temporal: TestTemporal,
    model: FakeModel,
    _worker: WorkerProcess,
    url: String,
    /// `content.directory`.
    content: tempfile::TempDir,
}

/// An agent whose content store is a directory the test reads, with `[content]` lines `more`.
async fn agent(more: &[&str]) -> Agent {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start((1..=6).map(|n| reply(&format!("answer {n}"))).collect()).await;
    let content = tempfile::tempdir().unwrap();
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    config.content = std::iter::once(format!("directory = {:?}", content.path()))
        .chain(more.iter().map(ToString::to_string))
        .collect();
    let url = config.base_url.clone().unwrap();
    let worker = WorkerProcess::start(baton(), &config.render()).await;
    Agent {
        temporal,
        model,
        _worker: worker,
        url,
        content,
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                files_under(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// A PNG's signature, then bytes of every value: what a client sends is what it gets back.
fn png() -> Vec<u8> {
    b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain((0..=255u8).cycle().take(6_000))
        .collect()
}

const CSV: &str = "order,total\n1234,99.50\n1235,12.00\n";

/// Files a client sends, written to a directory of their own: `--file PATH=TYPE` for each.
struct SentFiles {
    _dir: tempfile::TempDir,
    args: Vec<String>,
}

/// `files` as (name, bytes, media type), written for a client to send.
fn sent_files(files: &[(&str, &[u8], &str)]) -> SentFiles {
    let dir = tempfile::tempdir().unwrap();
    let args = files
        .iter()
        .flat_map(|(name, bytes, media_type)| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            [
                "--file".to_string(),
                format!("{}={media_type}", path.display()),
            ]
        })
        .collect();
    SentFiles { _dir: dir, args }
}

/// A client's `send` of `text` with `files`, then `more` arguments.
fn send_args<'a>(text: &'a str, files: &'a SentFiles, more: &[&'a str]) -> Vec<&'a str> {
    ["--text", text]
        .into_iter()
        .chain(files.args.iter().map(String::as_str))
        .chain(more.iter().copied())
        .collect()
}

/// A model that delegates to `agent` with the PNG and the CSV a client sent, waits, and answers
/// `answer` once the note says the sub-task completed.
fn hands_files_on(
    agent: &'static str,
    answer: &'static str,
) -> impl Fn(&serde_json::Value) -> Scripted + Send + Sync + 'static {
    move |request| {
        let text = all_text(request);
        if text.contains("Sub-task ") && text.contains("is COMPLETED") {
            reply(answer)
        } else if text.contains(r#""role":"tool""#) {
            reply("Waiting.")
        } else {
            call(
                "spawn_subtask",
                json!({"name": "report", "goal": "Report on these.", "agent": agent,
                       "attachments": ["q1.png", "orders.csv"]}),
            )
        }
    }
}

#[tokio::test]
async fn files_and_data_go_in_over_every_binding_reach_the_model_and_come_back_whole() {
    let agent = agent(&[]).await;
    let sent_dir = tempfile::tempdir().unwrap();
    let png_path = sent_dir.path().join("q1.png");
    let csv_path = sent_dir.path().join("orders.csv");
    std::fs::write(&png_path, png()).unwrap();
    std::fs::write(&csv_path, CSV).unwrap();
    let png_arg = format!("{}=image/png", png_path.display());
    let csv_arg = format!("{}=text/csv", csv_path.display());

    for (n, binding) in ["JSONRPC", "HTTP+JSON", "GRPC"].into_iter().enumerate() {
        let alice = SdkClient::new(&agent.url, binding, "alice");
        let sent = alice
            .call(
                "send",
                &[
                    "--text",
                    "What do these show?",
                    "--file",
                    &png_arg,
                    "--file",
                    &csv_arg,
                    "--data",
                    r#"{"order": 1234, "rush": true}"#,
                ],
            )
            .await
            .ok();
        let task = &sent[0]["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {task}"
        );
        let task_id = task["id"].as_str().unwrap().to_string();

        // The model saw the picture as an image and the CSV and the data as text.
        let requests = agent.model.requests();
        assert_eq!(requests.len(), n + 1, "{binding}: one turn");
        let user = requests[n]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["content"].is_array())
            .unwrap_or_else(|| panic!("{binding}: no message with parts: {}", requests[n]))
            .clone();
        let parts = user["content"].as_array().unwrap();
        let text = parts[0]["text"].as_str().unwrap();
        for expected in [
            "[file 1: q1.png, image/png, 6.0 kB]",
            "[file 2: orders.csv, text/csv, 34 B]",
            CSV,
            "[data 3, application/json, 26 B]",
            r#"{"order":1234,"rush":true}"#,
        ] {
            assert!(text.contains(expected), "{binding}: {expected:?} in {text}");
        }
        assert_eq!(
            parts[1]["image_url"]["url"],
            format!("data:image/png;base64,{}", BASE64.encode(png())),
            "{binding}"
        );

        // GetTask gives every part back whole, in order.
        let got = alice.call("get", &["--task-id", &task_id]).await.ok();
        let history = got[0]["history"].as_array().unwrap();
        let asked = &history[0]["parts"];
        assert_eq!(
            asked[0]["text"], "What do these show?",
            "{binding}: {asked}"
        );
        assert_eq!(asked[1]["raw"], BASE64.encode(png()), "{binding}");
        assert_eq!(asked[1]["mediaType"], "image/png");
        assert_eq!(asked[1]["filename"], "q1.png");
        assert_eq!(asked[2]["raw"], BASE64.encode(CSV), "{binding}");
        assert_eq!(asked[3]["data"]["order"], 1234.0, "{binding}: {asked}");
        assert_eq!(asked[3]["data"]["rush"], true, "{binding}: {asked}");

        // History holds references, never the bytes.
        let history = history_text(agent.temporal.history(&task_id).await).await;
        assert!(history.contains("sha256:"), "{binding}: no reference");
        for secret in [BASE64.encode(png()), "1234,99.50".to_string()] {
            assert!(
                !history.contains(&secret),
                "{binding}: the history holds a part's bytes"
            );
        }
    }
    // The same three parts, sent three times, are kept once each.
    assert_eq!(files_under(agent.content.path()).len(), 3);
}

#[tokio::test]
async fn a_part_over_a_limit_is_refused_whole_and_nothing_is_kept() {
    let agent = agent(&[
        "max_part_bytes = 2048",
        r#"media_types = ["image/*", "text/csv"]"#,
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.png");
    let pdf = dir.path().join("q1.pdf");
    let csv = dir.path().join("ok.csv");
    std::fs::write(&big, png()).unwrap();
    std::fs::write(&pdf, b"%PDF-1.7").unwrap();
    std::fs::write(&csv, CSV).unwrap();
    let alice = SdkClient::new(&agent.url, "JSONRPC", "alice");
    let csv_arg = format!("{}=text/csv", csv.display());
    let send = |file: String| {
        let (alice, csv_arg) = (&alice, &csv_arg);
        async move {
            let args = ["--text", "Look.", "--file", csv_arg, "--file", &file];
            alice.call("send", &args).await
        }
    };

    let too_big = send(format!("{}=image/png", big.display())).await;
    assert!(
        too_big.message().contains("content.max_part_bytes"),
        "{}",
        too_big.message()
    );
    let not_taken = send(format!("{}=application/pdf", pdf.display())).await;
    assert_eq!(not_taken.reason(), "CONTENT_TYPE_NOT_SUPPORTED");
    assert!(
        not_taken.message().contains("image/*, text/csv"),
        "{}",
        not_taken.message()
    );
    assert!(
        files_under(agent.content.path()).is_empty(),
        "the CSV beside them was not kept either"
    );
    assert!(agent.model.requests().is_empty(), "nothing ran");
}

/// A conversation's messages may carry `content.max_task_bytes` of files in all: past it a
/// message with a file is refused whole, naming the setting, and one without still goes in.
#[tokio::test]
async fn a_task_takes_files_up_to_its_limit_in_all() {
    let agent = agent(&["max_part_bytes = 1024", "max_task_bytes = 1024"]).await;
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("rows.csv");
    std::fs::write(&csv, "n\n".repeat(300)).unwrap();
    let csv_arg = format!("{}=text/csv", csv.display());
    let alice = SdkClient::new(&agent.url, "JSONRPC", "alice");
    let status = baton_core::extensions::STATUS_EXTENSION;
    let first = alice
        .call(
            "send",
            &["--text", "Rows.", "--file", &csv_arg, "--extension", status],
        )
        .await
        .ok();
    let task = &first[0]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    let task_id = task["id"].as_str().unwrap();
    let more = ["--task-id", task_id, "--extension", status];
    let refused = alice
        .call(
            "send",
            &[&["--text", "More rows.", "--file", &csv_arg][..], &more].concat(),
        )
        .await;
    assert!(
        refused.message().contains("content.max_task_bytes"),
        "{}",
        refused.message()
    );
    let text_only = alice
        .call("send", &[&["--text", "Thanks."][..], &more].concat())
        .await
        .ok();
    assert_eq!(
        text_only[0]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{text_only:?}"
    );
    assert_eq!(
        agent.model.requests().len(),
        2,
        "the refused message reached no model"
    );
}

/// What `--behaviour files` of the Python peer answers with (tests/peers/a2a_peer.py).
const PEER_CSV: &[u8] = b"order,total\n1234,99.50\n1235,12.00\n";

fn peer_png() -> Vec<u8> {
    b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain((0..=255u8).cycle().take(256 * 8))
        .collect()
}

/// A sub-task's files reach the parent's model and Baton's caller byte for byte, however the
/// delegation hears of the end: in the create (the parent collects them), from a followed
/// stream or from a push (the stand-in does); history holds references only.
#[tokio::test]
async fn a_sub_tasks_files_reach_the_model_and_the_caller_byte_for_byte() {
    let temporal = TestTemporal::start().await;
    let shapes: [(&str, &[&str]); 3] = [
        ("files-at-once", &["--behaviour", "files"]),
        (
            "files-followed",
            &["--behaviour", "files", "--settle-seconds", "1"],
        ),
        (
            "files-pushed",
            &["--behaviour", "files", "--settle-seconds", "1", "--push"],
        ),
    ];
    let mut peers = Vec::new();
    for (_, flags) in &shapes {
        peers.push(PythonPeer::start(flags).await);
    }
    // The first turn delegates to the agent the message names, the next waits for the note,
    // and the note's turn answers.
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("Sub-task ") {
            return reply("The report is attached.");
        }
        if text.contains(r#""role":"tool""#) {
            return reply("Waiting for the report.");
        }
        let agent = consulted_agent(&text);
        call(
            "spawn_subtask",
            json!({"name": "report", "goal": "the March report", "agent": agent}),
        )
    })
    .await;
    let content = tempfile::tempdir().unwrap();
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    config.content = vec![format!("directory = {:?}", content.path())];
    for ((id, _), peer) in shapes.iter().zip(&peers) {
        config = config.agent(id, &peer.url(), "");
    }
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let alice = SdkClient::new(&url, "JSONRPC", "alice");

    for (id, _) in &shapes {
        let sent = alice
            .call("send", &["--text", &format!("consult@{id}")])
            .await
            .ok();
        let task = &sent[0]["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{id}: {task}"
        );

        // The model read the note with the sub-task's files: the chart as an image, the CSV
        // and the data inline.
        let requests = model.requests();
        let note = requests
            .iter()
            .flat_map(|r| r["messages"].as_array().unwrap().clone())
            .find(|m| m["content"].is_array() && m["content"].to_string().contains(id))
            .unwrap_or_else(|| panic!("{id}: no note with the files"));
        let parts = note["content"].as_array().unwrap();
        let text = parts[0]["text"].as_str().unwrap();
        for expected in [
            "[file 1: march.csv, text/csv, 34 B]",
            "1234,99.50",
            "[file 2: chart.png, image/png, 2.1 kB]",
            "[data 3: report, application/json, 12 B]",
            r#"{"orders":2}"#,
        ] {
            assert!(text.contains(expected), "{id}: {expected:?} in {text}");
        }
        assert_eq!(
            parts[1]["image_url"]["url"],
            format!("data:image/png;base64,{}", BASE64.encode(peer_png())),
            "{id}"
        );

        // Baton's caller gets the answer, then each file the sub-task made, byte for byte.
        let artifacts = task["artifacts"].as_array().unwrap();
        assert_eq!(artifacts.len(), 4, "{id}: {artifacts:?}");
        assert_eq!(artifacts[0]["parts"][0]["text"], "The report is attached.");
        let part = |n: usize| &artifacts[n]["parts"][0];
        assert_eq!(part(1)["raw"], BASE64.encode(PEER_CSV), "{id}");
        assert_eq!(part(1)["filename"], "march.csv");
        assert_eq!(part(2)["raw"], BASE64.encode(peer_png()), "{id}");
        assert_eq!(part(2)["mediaType"], "image/png");
        assert_eq!(part(3)["data"]["orders"], 2.0, "{id}");

        // No history of the delegation holds the bytes: the parent's, and the stand-in's when
        // the task outlived its create.
        let task_id = task["id"].as_str().unwrap();
        let stand_in = (*id != "files-at-once").then(|| format!("{task_id}.1"));
        for workflow in std::iter::once(task_id.to_string()).chain(stand_in) {
            let history = history_text(temporal.history(&workflow).await).await;
            assert!(
                history.contains("collect_remote_files") == (workflow != task_id)
                    || *id == "files-at-once",
                "{id}: {workflow} collects the files"
            );
            assert!(
                !history.contains(&BASE64.encode(peer_png())) && !history.contains("1234,99.50"),
                "{id}: {workflow}'s history holds a file's bytes"
            );
        }
    }
}

/// A file the task holds goes with a brief when the model names it, to an agent whose card
/// takes its type, byte for byte; an agent whose card does not is refused with the reason, and
/// a name the task does not hold is a tool error.
#[tokio::test]
async fn a_file_the_task_holds_goes_with_a_brief_to_an_agent_that_takes_it() {
    let temporal = TestTemporal::start().await;
    let taker = PythonPeer::start(&["--input-mode", "text/csv"]).await;
    let text_only = PythonPeer::start(&[]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        let delegations = text.matches(r#""role":"tool""#).count();
        let spawn = |agent: &str, file: &str| {
            call(
                "spawn_subtask",
                json!({"name": "sum", "goal": "Sum the totals.", "agent": agent,
                       "attachments": [file]}),
            )
        };
        match delegations {
            0 => spawn("no-such-file", "may.csv"),
            1 => spawn("text-only", "orders.csv"),
            2 => spawn("taker", "orders.csv"),
            _ if text.contains("is COMPLETED") => reply("Summed."),
            _ => reply("Waiting."),
        }
    })
    .await;
    let content = tempfile::tempdir().unwrap();
    let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
    config.content = vec![format!("directory = {:?}", content.path())];
    config = config
        .agent("no-such-file", &taker.url(), "")
        .agent("taker", &taker.url(), "")
        .agent("text-only", &text_only.url(), "");
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let files = sent_files(&[("orders.csv", CSV.as_bytes(), "text/csv")]);
    let alice = SdkClient::new(&url, "JSONRPC", "alice");
    let sent = alice
        .call("send", &send_args("Sum these.", &files, &[]))
        .await
        .ok();
    assert_eq!(
        sent[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{sent:?}"
    );

    // The last turn's history holds every call's outcome, in order.
    let requests = model.requests();
    let last = requests.last().unwrap()["messages"].to_string();
    let unknown = last.find("this task holds no file 'may.csv'; it holds: orders.csv");
    let refused = last.find(
        "Sub-task sum on text-only could not be created: orders.csv (text/csv) cannot be sent: \
         the agent takes only text/plain",
    );
    assert!(unknown.is_some() && refused.is_some(), "{last}");
    assert!(unknown < refused, "{last}");

    let stats = taker.stats().await;
    let briefs = stats["messages"].as_array().unwrap();
    assert_eq!(
        briefs.len(),
        1,
        "only the third call reached an agent: {stats}"
    );
    let file = &briefs[0]["files"][0];
    assert_eq!(file["raw"], BASE64.encode(CSV), "{file}");
    assert_eq!(file["filename"], "orders.csv");
    assert_eq!(file["mediaType"], "text/csv");
    assert!(
        text_only.stats().await["messages"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// What `order_files` of the test MCP server gives (tests/peers/mcp_server.py).
fn order_png() -> Vec<u8> {
    b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain((0..=255u8).cycle().take(256 * 4))
        .collect()
}
const ORDER_CSV: &str = "sku,item,qty\nL1,walnut desk lamp,1\n";

/// An MCP tool that answers with an image and an embedded CSV resource: both become files of
/// the task, the model reads them (the image as an image), the caller gets them as artifacts
/// byte for byte, and history holds references only.
/// `config` with the test MCP server `shop`, whose `order_files` gives an image and a CSV.
fn with_shop_tools(config: WorkerConfig) -> WorkerConfig {
    config.with_push_receiver().mcp_server(&format!(
        "id = \"shop\"\ncommand = {:?}\nargs = [{:?}, \"--transport\", \"stdio\"]",
        venv_program("python").display().to_string(),
        workspace()
            .join("tests/peers/mcp_server.py")
            .display()
            .to_string(),
    ))
}

#[tokio::test]
async fn a_tools_image_and_resource_are_files_of_the_task() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(|request| {
        if all_text(request).contains("The files tool order_files gave") {
            reply("Here are the chart and the items of order 1042.")
        } else {
            call("order_files", json!({"order": "1042"}))
        }
    })
    .await;
    let content = tempfile::tempdir().unwrap();
    let mut config = with_shop_tools(WorkerConfig::new(&temporal, &model.base_url()));
    config.content = vec![format!("directory = {:?}", content.path())];
    config.allow_private_push_urls = true;
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let webhook = Webhook::start().await;
    let alice = SdkClient::new(&url, "JSONRPC", "alice");
    let sent = alice
        .call(
            "send",
            &["--text", "Show me order 1042.", "--push-url", &webhook.url],
        )
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");

    // The tool result names the files; the note after it shows them.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "a turn for the call, one for the answer");
    let messages = requests[1]["messages"].as_array().unwrap();
    let tool_result = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool_result["content"]
            .as_str()
            .unwrap()
            .contains(r#"[file "items.csv", text/csv, 35 bytes: kept as a file of the task"#),
        "{tool_result}"
    );
    let note = messages.last().unwrap();
    let parts = note["content"].as_array().expect("a note with parts");
    let text = parts[0]["text"].as_str().unwrap();
    for expected in [
        "The files tool order_files gave:",
        "[file 1, image/png, 1.0 kB]",
        "[file 2: items.csv, text/csv, 35 B]",
        ORDER_CSV,
    ] {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/png;base64,{}", BASE64.encode(order_png()))
    );

    // The caller gets the answer, then the tool's files, byte for byte.
    let artifacts = task["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 3, "{artifacts:?}");
    assert_eq!(artifacts[1]["parts"][0]["raw"], BASE64.encode(order_png()));
    assert_eq!(artifacts[1]["parts"][0]["mediaType"], "image/png");
    assert_eq!(artifacts[1]["description"], "given by tool order_files");
    assert_eq!(artifacts[2]["parts"][0]["raw"], BASE64.encode(ORDER_CSV));
    assert_eq!(artifacts[2]["parts"][0]["filename"], "items.csv");

    // The webhook gets the same artifacts, whole, before the status that completes the task.
    let pushed = webhook
        .wait_for("the completion pushed", |pushed| {
            pushed
                .iter()
                .any(|(_, body)| body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
        })
        .await;
    let pushed: Vec<&serde_json::Value> = pushed.iter().map(|(_, body)| body).collect();
    let completed = pushed
        .iter()
        .position(|body| body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
        .unwrap();
    let pushed_artifacts: Vec<&serde_json::Value> = pushed[..completed]
        .iter()
        .filter_map(|body| body.get("artifactUpdate"))
        .map(|update| &update["artifact"])
        .collect();
    assert_eq!(pushed_artifacts.len(), artifacts.len(), "{pushed:?}");
    for (pushed, got) in pushed_artifacts.iter().zip(artifacts) {
        assert_eq!(pushed["artifactId"], got["artifactId"]);
        assert_eq!(pushed["parts"], got["parts"]);
    }

    let task_id = task["id"].as_str().unwrap();
    let history = history_text(temporal.history(task_id).await).await;
    assert!(history.contains("sha256:"), "no reference");
    assert!(
        !history.contains(&BASE64.encode(order_png())) && !history.contains("walnut desk lamp"),
        "the history holds a tool file's bytes"
    );
    assert_eq!(files_under(content.path()).len(), 2);
}

/// The model names the files its answer gives: only those reach the caller; a name the task made
/// no file of is refused with the names it did make, and nothing changes.
#[tokio::test]
async fn the_model_chooses_which_files_its_answer_gives() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("your answer will give: items.csv") {
            reply("Here are the items of order 1042.")
        } else if text.contains("it made: items.csv") {
            call("choose_answer_files", json!({"attachments": ["items.csv"]}))
        } else if text.contains("The files tool order_files gave") {
            call(
                "choose_answer_files",
                json!({"attachments": ["invoice.pdf"]}),
            )
        } else {
            call("order_files", json!({"order": "1042"}))
        }
    })
    .await;
    let config = with_shop_tools(WorkerConfig::new(&temporal, &model.base_url()));
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let sent = SdkClient::new(&url, "JSONRPC", "alice")
        .call("send", &["--text", "Send me the items of order 1042."])
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(
        model.requests().len(),
        4,
        "the call, two choices, the answer"
    );
    let artifacts = task["artifacts"].as_array().unwrap();
    let names: Vec<&str> = artifacts
        .iter()
        .map(|artifact| artifact["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["answer", "items.csv"], "{artifacts:?}");
    assert_eq!(artifacts[1]["parts"][0]["raw"], BASE64.encode(ORDER_CSV));
    let refused = all_text(&model.requests()[2]);
    assert!(
        refused.contains("this task made no file 'invoice.pdf'; it made: items.csv"),
        "{refused}"
    );
}

/// Two hops: a client sends a PNG and a CSV to one Baton, which delegates them to a second
/// Baton, which delegates them to an a2a-sdk agent; that agent's CSV, image and data come back
/// through both Batons to the client byte for byte, and no history on the way holds bytes.
#[tokio::test]
async fn files_cross_two_batons_to_an_sdk_agent_and_its_files_come_back_whole() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&[
        "--behaviour",
        "files",
        "--input-mode",
        "image/png",
        "--input-mode",
        "text/csv",
    ])
    .await;
    // Each Baton's model hands the two files on to the agent it knows, waits, then answers.
    let inner_model = FakeModel::responding(hands_files_on("peer", "The analyst's report.")).await;
    let inner_content = tempfile::tempdir().unwrap();
    let mut inner = WorkerConfig::new(&temporal, &inner_model.base_url())
        .with_push_receiver()
        .agent("peer", &peer.url(), "");
    inner.agent_id = "analyst".into();
    inner.content = vec![format!("directory = {:?}", inner_content.path())];
    let inner_url = inner.base_url.clone().unwrap();
    let _inner = WorkerProcess::start(baton(), &inner.render()).await;

    let outer_model = FakeModel::responding(hands_files_on("analyst", "Here is the report.")).await;
    let outer_content = tempfile::tempdir().unwrap();
    let mut outer = WorkerConfig::new(&temporal, &outer_model.base_url())
        .with_push_receiver()
        .agent("analyst", &inner_url, "");
    outer.content = vec![format!("directory = {:?}", outer_content.path())];
    let outer_url = outer.base_url.clone().unwrap();
    let _outer = WorkerProcess::start(baton(), &outer.render()).await;

    let files = sent_files(&[
        ("q1.png", &png(), "image/png"),
        ("orders.csv", CSV.as_bytes(), "text/csv"),
    ]);
    let alice = SdkClient::new(&outer_url, "JSONRPC", "alice");
    let sent = alice
        .call("send", &send_args("Report on these.", &files, &[]))
        .await
        .ok();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");

    // The agent at the end of the chain got both files, byte for byte.
    let stats = peer.stats().await;
    let files = &stats["messages"][0]["files"];
    assert_eq!(files[0]["raw"], BASE64.encode(png()), "{stats}");
    assert_eq!(files[0]["filename"], "q1.png");
    assert_eq!(files[1]["raw"], BASE64.encode(CSV), "{stats}");

    // Its CSV, image and data reached the client through both Batons.
    let artifacts = task["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 4, "{artifacts:?}");
    assert_eq!(artifacts[0]["parts"][0]["text"], "Here is the report.");
    let part = |n: usize| &artifacts[n]["parts"][0];
    assert_eq!(part(1)["raw"], BASE64.encode(PEER_CSV));
    assert_eq!(part(1)["filename"], "march.csv");
    assert_eq!(part(2)["raw"], BASE64.encode(peer_png()));
    assert_eq!(part(2)["mediaType"], "image/png");
    assert_eq!(part(3)["data"]["orders"], 2.0, "{artifacts:?}");

    // No workflow of either Baton holds a file's bytes: each task, and each stand-in when the
    // delegation outlived its create.
    let outer_task = task["id"].as_str().unwrap().to_string();
    let outer_view = temporal.task_view(&outer_task).await;
    let inner_task = outer_view.sub_tasks[0].remote_task_id.clone().unwrap();
    for workflow in [outer_task, inner_task] {
        let history = history_text(temporal.history(&workflow).await).await;
        let stand_in = format!("{workflow}.1");
        let mut histories = vec![(workflow.clone(), history.clone())];
        if history.contains("RemoteTaskWorkflow") {
            let text = history_text(temporal.history(&stand_in).await).await;
            histories.push((stand_in, text));
        }
        for (id, history) in histories {
            assert!(history.contains("sha256:"), "{id}: no reference");
            for bytes in [
                BASE64.encode(png()),
                BASE64.encode(peer_png()),
                "1234,99.50".to_string(),
            ] {
                assert!(
                    !history.contains(&bytes),
                    "{id}'s history holds a file's bytes"
                );
            }
        }
    }
}

/// A file the task holds goes with the model's answer to a sub-task's question
/// (`reply_to_subtask`'s `attachments`), byte for byte, on the same remote task.
#[tokio::test]
async fn a_file_goes_with_the_answer_to_a_sub_tasks_question() {
    let temporal = TestTemporal::start().await;
    let peer = PythonPeer::start(&["--behaviour", "park", "--input-mode", "text/csv"]).await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("is COMPLETED") {
            return reply("The agent has the accounts.");
        }
        if text.contains("answer sent to sub-task") {
            return reply("Waiting for the agent.");
        }
        if let Some(asked) = text.find("is INPUT_REQUIRED") {
            let id = stand_in_named(&text[..asked]);
            return call(
                "reply_to_subtask",
                json!({"sub_task": id, "text": "These accounts.", "attachments": ["orders.csv"]}),
            );
        }
        if text.contains(r#""role":"tool""#) {
            return reply("Waiting.");
        }
        call(
            "spawn_subtask",
            json!({"name": "accounts", "goal": "Close the accounts.", "agent": "parker"}),
        )
    })
    .await;
    let content = tempfile::tempdir().unwrap();
    let mut config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .agent("parker", &peer.url(), "");
    config.content = vec![format!("directory = {:?}", content.path())];
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let files = sent_files(&[("orders.csv", CSV.as_bytes(), "text/csv")]);
    let alice = SdkClient::new(&url, "JSONRPC", "alice");
    let sent = alice
        .call("send", &send_args("Close these accounts.", &files, &[]))
        .await
        .ok();
    assert_eq!(
        sent[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{sent:?}"
    );
    let stats = peer.stats().await;
    let messages = stats["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "the brief and the answer: {stats}");
    assert!(messages[0].get("files").is_none(), "{stats}");
    assert_eq!(messages[1]["text"], "These accounts.");
    let file = &messages[1]["files"][0];
    assert_eq!(file["raw"], BASE64.encode(CSV), "{file}");
    assert_eq!(file["filename"], "orders.csv");
}

/// The stand-in id the last `(id <id>,` before `text`'s end names.
fn stand_in_named(text: &str) -> String {
    let start = text.rfind("(id ").expect("a sub-task id") + 4;
    text[start..].split([',', ' ']).next().unwrap().to_string()
}

/// The content store down (an S3-compatible server, moto, behind a gate that refuses and cuts
/// connections):
/// a message with a file is refused as retryable and nothing starts; sent again once the store
/// is back, it is taken whole. A sub-task that ends with files while the store is down keeps
/// trying to collect them, and once the store is back its files reach the caller whole.
#[tokio::test]
async fn a_store_that_is_down_loses_nothing_and_is_caught_up_with_once_back() {
    let temporal = TestTemporal::start().await;
    let s3 = S3Server::start().await;
    s3.create_bucket("baton-content").await;
    let store = TcpGate::start(&format!("127.0.0.1:{}", s3.port)).await;
    let hold = tempfile::tempdir().unwrap();
    let hold_file = hold.path().join("go");
    let peer = PythonPeer::start(&[
        "--behaviour",
        "files",
        "--hold-file",
        &hold_file.display().to_string(),
    ])
    .await;
    let model = FakeModel::responding(|request| {
        let text = all_text(request);
        if text.contains("Sub-task ") && text.contains("is COMPLETED") {
            return reply("The report is attached.");
        }
        if text.contains(r#""role":"tool""#) {
            return reply("Waiting for the report.");
        }
        if text.contains("consult@") {
            let agent = consulted_agent(&text);
            return call(
                "spawn_subtask",
                json!({"name": "report", "goal": "the March report", "agent": agent}),
            );
        }
        reply("Read it.")
    })
    .await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .agent("reporter", &peer.url(), "");
    config.content = vec![
        r#"store = "s3""#.to_string(),
        r#"bucket = "baton-content""#.to_string(),
        format!("endpoint = {:?}", store.url()),
        r#"retry_for = "2s""#.to_string(),
    ];
    let url = config.base_url.clone().unwrap();
    let _worker = WorkerProcess::start_with_env(
        baton(),
        &config.render(),
        &[
            ("AWS_ACCESS_KEY_ID", TEST_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", TEST_SECRET),
        ],
    )
    .await;
    let csv_dir = tempfile::tempdir().unwrap();
    let csv_path = csv_dir.path().join("orders.csv");
    std::fs::write(&csv_path, CSV).unwrap();
    let csv_arg = format!("{}=text/csv", csv_path.display());
    let alice = SdkClient::new(&url, "JSONRPC", "alice");

    // Down: refused, retryable, naming the store; nothing runs.
    store.set_closed(true);
    let refused = alice
        .call(
            "send",
            &[
                "--text",
                "Read this.",
                "--file",
                &csv_arg,
                "--message-id",
                "m-1",
            ],
        )
        .await;
    assert!(
        refused.message().contains("cannot be stored now")
            && refused.message().contains("s3://baton-content"),
        "{}",
        refused.message()
    );
    assert!(store.refused() > 0);
    assert!(model.requests().is_empty(), "nothing ran");

    // Back: the same message is taken whole.
    store.set_closed(false);
    let sent = alice
        .call(
            "send",
            &[
                "--text",
                "Read this.",
                "--file",
                &csv_arg,
                "--message-id",
                "m-1",
            ],
        )
        .await
        .ok();
    assert_eq!(
        sent[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{sent:?}"
    );
    assert!(all_text(&model.requests()[0]).contains("1234,99.50"));

    // A sub-task ends with files while the store is down: collected once it is back.
    let asked = tokio::spawn({
        let alice = SdkClient::new(&url, "JSONRPC", "alice");
        async move {
            alice
                .call("send", &["--text", "consult@reporter"])
                .await
                .ok()
        }
    });
    peer.wait_for("the brief", |stats| {
        stats["messages"].as_array().is_some_and(|m| !m.is_empty())
    })
    .await;
    store.set_closed(true);
    let refused_before = store.refused();
    std::fs::write(&hold_file, b"").unwrap();
    poll_until(
        "the collection to find the store down",
        Duration::from_secs(60),
        || async { (store.refused() > refused_before).then_some(()) },
    )
    .await;
    store.set_closed(false);
    let sent = asked.await.unwrap();
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let artifacts = task["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 4, "{artifacts:?}");
    assert_eq!(artifacts[1]["parts"][0]["raw"], BASE64.encode(PEER_CSV));
    assert_eq!(artifacts[2]["parts"][0]["raw"], BASE64.encode(peer_png()));
}

/// With `content.fetch_urls`, a file given by URL is fetched as a webhook is called: its bytes
/// reach the model; a redirect, a body over the limit or a private address refuses the message
/// naming why, and a server that fails refuses it as retryable. Without `allow_private_push_urls`
/// a loopback URL is never called.
#[tokio::test]
async fn a_file_given_by_url_is_fetched_only_when_allowed_and_as_a_webhook_is_called() {
    let files = CardServer::start(|path| match path {
        "/orders.csv" => card_server_response(200, &[("content-type", "text/csv")], CSV.into()),
        "/moved.csv" => card_server_response(302, &[("location", "/orders.csv")], Vec::new()),
        "/big.csv" => card_server_response(200, &[], vec![b'x'; 4096]),
        _ => card_server_response(503, &[], Vec::new()),
    })
    .await;
    let temporal = TestTemporal::start().await;
    let model = FakeModel::responding(|_| reply("Read it.")).await;
    let start = |allow_private: bool| {
        let mut config = WorkerConfig::new(&temporal, &model.base_url()).with_push_receiver();
        config.content = vec!["fetch_urls = true".into(), "max_part_bytes = 1024".into()];
        config.allow_private_push_urls = allow_private;
        config
    };
    let open = start(true);
    let open_url = open.base_url.clone().unwrap();
    let _open = WorkerProcess::start(baton(), &open.render()).await;
    let alice = SdkClient::new(&open_url, "JSONRPC", "alice");
    let send = |path: &str| {
        let file = format!("{}{path}=text/csv", files.url());
        let alice = &alice;
        async move {
            alice
                .call("send", &["--text", "Read this.", "--file-url", &file])
                .await
        }
    };

    let sent = send("/orders.csv").await.ok();
    assert_eq!(
        sent[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{sent:?}"
    );
    let shown = all_text(&model.requests()[0]);
    assert!(
        shown.contains("[file 1, text/csv, 34 B]") && shown.contains("1234,99.50"),
        "{shown}"
    );
    for (path, said) in [
        ("/moved.csv", "was not fetched: it answered 302 Found"),
        (
            "/big.csv",
            "was not fetched: it is over 1024 bytes (content.max_part_bytes)",
        ),
        (
            "/down.csv",
            "could not be fetched now (it answered 503 Service Unavailable)",
        ),
    ] {
        let refused = send(path).await;
        assert!(
            refused.message().contains(said),
            "{path}: {}",
            refused.message()
        );
    }
    assert_eq!(
        model.requests().len(),
        1,
        "no refused message reached the model"
    );
    let fetched: Vec<String> = files.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        fetched,
        ["/orders.csv", "/moved.csv", "/big.csv", "/down.csv"],
        "each URL called once, and no redirect followed"
    );

    let strict = start(false);
    let strict_url = strict.base_url.clone().unwrap();
    let _strict = WorkerProcess::start(baton(), &strict.render()).await;
    let before = files.requests().len();
    let refused = SdkClient::new(&strict_url, "JSONRPC", "alice")
        .call(
            "send",
            &[
                "--text",
                "Read this.",
                "--file-url",
                &format!("{}/orders.csv=text/csv", files.url()),
            ],
        )
        .await;
    assert!(
        refused
            .message()
            .contains("it points at a loopback or private address"),
        "{}",
        refused.message()
    );
    assert_eq!(
        files.requests().len(),
        before,
        "the loopback URL was never called"
    );
}

/// A worker killed (SIGKILL) while a delegation carries files: restarted, it finishes the task
/// with one remote task, the agent got the files once and whole, and the caller gets the
/// agent's files byte for byte.
#[tokio::test]
async fn a_worker_killed_with_files_in_flight_loses_nothing() {
    let temporal = TestTemporal::start().await;
    let hold = tempfile::tempdir().unwrap();
    let hold_file = hold.path().join("go");
    let peer = PythonPeer::start(&[
        "--behaviour",
        "files",
        "--hold-file",
        &hold_file.display().to_string(),
        "--input-mode",
        "image/png",
        "--input-mode",
        "text/csv",
    ])
    .await;
    let model = FakeModel::responding(hands_files_on("reporter", "The report is attached.")).await;
    let content = tempfile::tempdir().unwrap();
    let mut config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .agent("reporter", &peer.url(), "");
    config.content = vec![format!("directory = {:?}", content.path())];
    let url = config.base_url.clone().unwrap();
    let mut worker = WorkerProcess::start(baton(), &config.render()).await;
    let files = sent_files(&[
        ("q1.png", &png(), "image/png"),
        ("orders.csv", CSV.as_bytes(), "text/csv"),
    ]);
    let alice = SdkClient::new(&url, "JSONRPC", "alice");
    let sent = alice
        .call(
            "send",
            &send_args("Report on these.", &files, &["--return-immediately"]),
        )
        .await
        .ok();
    let task_id = sent[0]["task"]["id"].as_str().unwrap().to_string();
    peer.wait_for("the brief with its files", |stats| {
        stats["messages"][0]["files"]
            .as_array()
            .is_some_and(|f| f.len() == 2)
    })
    .await;

    worker.kill().await;
    worker.restart().await;
    std::fs::write(&hold_file, b"").unwrap();

    let view = temporal
        .wait_for_task(&task_id, Duration::from_secs(90), |v| v.state.is_terminal())
        .await;
    assert_eq!(view.state, baton_proto::TaskState::Completed, "{view:#?}");
    let stats = peer.stats().await;
    assert_eq!(
        stats["tasks_created"], 1,
        "exactly one remote task: {stats}"
    );
    let files = &stats["messages"][0]["files"];
    assert_eq!(files[0]["raw"], BASE64.encode(png()));
    assert_eq!(files[1]["raw"], BASE64.encode(CSV));

    let got = alice.call("get", &["--task-id", &task_id]).await.ok();
    let artifacts = got[0]["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 4, "{artifacts:?}");
    assert_eq!(artifacts[1]["parts"][0]["raw"], BASE64.encode(PEER_CSV));
    assert_eq!(artifacts[2]["parts"][0]["raw"], BASE64.encode(peer_png()));
    assert_eq!(artifacts[3]["parts"][0]["data"]["orders"], 2.0);
    let history = history_text(temporal.history(&task_id).await).await;
    assert!(
        !history.contains(&BASE64.encode(png())) && !history.contains("1234,99.50"),
        "the history holds a file's bytes"
    );
}
