//! The ended-tasks phase of `baton-bench gateway`: what tasks that have ended cost while nothing
//! happens once GetTask keeps them in the gateway's view cache (a task read twice is kept, with
//! a watch on its history). The CPU is read over the same window with the ended tasks unread,
//! then once each has been read twice, so the figure is a ratio within one run.

use std::time::Duration;

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use serde_json::{Value, json};

use super::delegation::progress;
use super::measure::{CPU_WINDOW, cpu_per_second};
use super::subscribe;

/// How long one blocking SendMessage may take to complete its task.
const SEND_TIMEOUT: Duration = Duration::from_secs(90);

/// What keeping the ended tasks in GetTask's cache cost, against leaving them unread.
#[derive(Debug, Clone, Serialize)]
pub struct EndedTasks {
    tasks: usize,
    window_s: f64,
    /// CPU-seconds per second of the dev server, with the ended tasks unread and then kept.
    dev_server_cpu_unread: Option<f64>,
    dev_server_cpu_kept: Option<f64>,
    /// The same for the bench process: the gateway, the worker and the client.
    process_cpu_unread: Option<f64>,
    process_cpu_kept: Option<f64>,
}

impl EndedTasks {
    pub fn print(&self) {
        let show = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        println!(
            "ended tasks: {} completed tasks; CPU-seconds per second over {} s, unread → each \
             read twice (kept in GetTask's cache):",
            self.tasks, self.window_s
        );
        println!(
            "  dev server {} → {}; gateway, worker and client {} → {}",
            show(self.dev_server_cpu_unread),
            show(self.dev_server_cpu_kept),
            show(self.process_cpu_unread),
            show(self.process_cpu_kept)
        );
    }
}

/// Completes `tasks` tasks on the gateway at `url`, reads the CPU for a window, reads each task
/// twice with GetTask, and reads the CPU again.
pub async fn measure(
    url: &str,
    participant: &str,
    dev_server: Option<u32>,
    tasks: usize,
) -> anyhow::Result<EndedTasks> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .build()?;
    progress(&format!("ended tasks: completing {tasks}"));
    let task_ids: Vec<String> = futures::stream::iter(0..tasks)
        .map(|n| send_until_completed(&http, url, participant, n))
        .buffer_unordered(10)
        .try_collect()
        .await?;
    progress(&format!("ended tasks: {CPU_WINDOW:?} with none read"));
    let (dev_server_cpu_unread, process_cpu_unread) = cpu_per_second(dev_server, CPU_WINDOW).await;
    progress("ended tasks: reading each twice");
    for _ in 0..2 {
        futures::stream::iter(task_ids.clone().into_iter().enumerate())
            .map(|(n, id)| {
                complete(rpc(
                    &http,
                    url,
                    participant,
                    n,
                    "GetTask",
                    json!({"id": id}),
                ))
            })
            .buffer_unordered(10)
            .try_collect::<Vec<String>>()
            .await?;
    }
    progress(&format!("ended tasks: {CPU_WINDOW:?} with each kept"));
    let (dev_server_cpu_kept, process_cpu_kept) = cpu_per_second(dev_server, CPU_WINDOW).await;
    Ok(EndedTasks {
        tasks,
        window_s: CPU_WINDOW.as_secs_f64(),
        dev_server_cpu_unread,
        dev_server_cpu_kept,
        process_cpu_unread,
        process_cpu_kept,
    })
}

/// A first message from a caller without the status extension, so its task completes with the
/// model's answer.
fn first_message(n: usize) -> Value {
    json!({"message": {
        "messageId": format!("ended-{n}"),
        "role": "ROLE_USER",
        "parts": [{"text": format!("{} ended {n}", baton_tests::delegating_model::DIRECT_MARKER)}],
    }})
}

/// Sends the first message of task `n` and waits for the task to complete: a worker still busy
/// with the earlier phases' tasks may take the message after the blocking call has answered
/// SUBMITTED, and then the task is followed with SubscribeToTask (which, unlike GetTask, does
/// not put it in the view cache) until it ends.
async fn send_until_completed(
    http: &reqwest::Client,
    url: &str,
    participant: &str,
    n: usize,
) -> anyhow::Result<String> {
    let answer = rpc(http, url, participant, n, "SendMessage", first_message(n)).await?;
    let task = &answer["task"];
    let task_id = task["id"]
        .as_str()
        .with_context(|| format!("SendMessage answered no task: {answer}"))?;
    if task["status"]["state"].as_str() == Some("TASK_STATE_COMPLETED") {
        return Ok(task_id.to_string());
    }
    let followed = subscribe::until_shown(
        http,
        url,
        participant,
        task_id,
        "TASK_STATE_COMPLETED",
        SEND_TIMEOUT,
    );
    let Err(seen) = followed.await? else {
        return Ok(task_id.to_string());
    };
    // A task that ended before the subscription is refused one: read it once instead (the view
    // cache keeps a task only from its second read).
    complete(rpc(
        http,
        url,
        participant,
        n,
        "GetTask",
        json!({"id": task_id}),
    ))
    .await
    .with_context(|| format!("task {task_id} after its stream: {seen}"))
}

/// The id of the task a call answered with, which must have completed.
async fn complete(answer: impl Future<Output = anyhow::Result<Value>>) -> anyhow::Result<String> {
    let answer = answer.await?;
    let task = answer.get("task").unwrap_or(&answer);
    let state = task["status"]["state"].as_str();
    if state != Some("TASK_STATE_COMPLETED") {
        bail!("the task is {state:?}, not completed: {answer}");
    }
    task["id"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("the answer holds no task id: {answer}"))
}

/// One JSON-RPC call; its result.
async fn rpc(
    http: &reqwest::Client,
    url: &str,
    participant: &str,
    id: usize,
    method: &str,
    params: Value,
) -> anyhow::Result<Value> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut answer: Value = http
        .post(url)
        .timeout(SEND_TIMEOUT)
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", participant)
        .json(&body)
        .send()
        .await?
        .json()
        .await?;
    if let Some(error) = answer.get("error") {
        bail!("{method} failed: {error}");
    }
    Ok(answer["result"].take())
}
