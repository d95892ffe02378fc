//! The quiet-streams phase of `baton-bench gateway`: what open SubscribeToTask streams on parked
//! tasks cost while nothing happens. The dev server's CPU and the bench process's (gateway,
//! worker and client) are read over the same window with no stream open, then with every stream
//! open, so the figure is a ratio within one run.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use baton_core::extensions::STATUS_EXTENSION;
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use serde_json::json;

use super::delegation::progress;
use super::measure::{CPU_WINDOW, cpu_per_second, round, split};
use super::subscribe;

/// The longest one stream may take to show its first event.
const FIRST_EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// What holding the streams cost, against holding none.
#[derive(Debug, Clone, Serialize)]
pub struct QuietStreams {
    streams: usize,
    /// Streams that did not open, and the first few reasons.
    failed: usize,
    errors: Vec<String>,
    tasks: usize,
    window_s: f64,
    /// CPU-seconds per second of the dev server, with no stream open and with all open.
    dev_server_cpu_idle: Option<f64>,
    dev_server_cpu_streams: Option<f64>,
    /// The same for the bench process: the gateway, the worker and the streams' client.
    process_cpu_idle: Option<f64>,
    process_cpu_streams: Option<f64>,
    /// How long opening every stream took, to its first event.
    open_s: f64,
}

impl QuietStreams {
    /// Streams that did not open.
    pub fn failed(&self) -> usize {
        self.failed
    }

    pub fn print(&self) {
        let show = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        println!(
            "quiet streams: {} SubscribeToTask streams on {} parked tasks, opened in {} s; \
             CPU-seconds per second over {} s, none open → all open:",
            self.streams - self.failed,
            self.tasks,
            self.open_s,
            self.window_s
        );
        for error in &self.errors {
            println!("  not opened ({} in all): {error}", self.failed);
        }
        println!(
            "  dev server {} → {}; gateway, worker and client {} → {}",
            show(self.dev_server_cpu_idle),
            show(self.dev_server_cpu_streams),
            show(self.process_cpu_idle),
            show(self.process_cpu_streams)
        );
    }
}

/// Parks `tasks` conversations on the gateway at `url`, reads the CPU for a window, opens
/// `streams` SubscribeToTask streams spread over them, and reads it again.
pub async fn measure(
    url: &str,
    participant: &str,
    dev_server: Option<u32>,
    streams: usize,
    tasks: usize,
) -> anyhow::Result<QuietStreams> {
    // No overall timeout: a stream stays open for as long as the phase lasts.
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(0)
        .build()?;
    progress(&format!("quiet streams: parking {tasks} tasks"));
    let task_ids: Vec<String> = futures::stream::iter(0..tasks)
        .map(|n| park(&http, url, participant, n))
        .buffer_unordered(10)
        .try_collect()
        .await?;
    progress(&format!("quiet streams: {CPU_WINDOW:?} with none open"));
    let (dev_server_cpu_idle, process_cpu_idle) = cpu_per_second(dev_server, CPU_WINDOW).await;
    progress(&format!(
        "quiet streams: opening {streams} on {tasks} tasks"
    ));
    let opening = Instant::now();
    let opened: Vec<anyhow::Result<reqwest::Response>> = futures::stream::iter(0..streams)
        .map(|n| subscribe(&http, url, participant, &task_ids[n % task_ids.len()]))
        .buffer_unordered(10)
        .collect()
        .await;
    let open_s = opening.elapsed().as_secs_f64();
    let (open, errors) = split(opened);
    let failed = errors.len();
    progress(&format!(
        "quiet streams: {CPU_WINDOW:?} with {} open",
        open.len()
    ));
    let (dev_server_cpu_streams, process_cpu_streams) =
        cpu_per_second(dev_server, CPU_WINDOW).await;
    drop(open);
    Ok(QuietStreams {
        streams,
        failed,
        errors: errors.into_iter().take(3).collect(),
        tasks,
        window_s: CPU_WINDOW.as_secs_f64(),
        dev_server_cpu_idle,
        dev_server_cpu_streams,
        process_cpu_idle,
        process_cpu_streams,
        open_s: round(open_s),
    })
}

/// A blocking SendMessage from a caller that speaks the status extension, so its task is a
/// conversation: it has answered and parked awaiting the next message when the call returns.
async fn park(
    http: &reqwest::Client,
    url: &str,
    participant: &str,
    n: usize,
) -> anyhow::Result<String> {
    let body = json!({
        "jsonrpc": "2.0", "id": n, "method": "SendMessage",
        "params": {"message": {
            "messageId": format!("quiet-{n}"),
            "role": "ROLE_USER",
            "parts": [{"text": format!("{} parked {n}", baton_tests::delegating_model::DIRECT_MARKER)}],
        }},
    });
    let answer: serde_json::Value = http
        .post(url)
        .timeout(Duration::from_secs(90))
        .header("A2A-Version", "1.0")
        .header("X-Participant-Id", participant)
        .header("A2A-Extensions", STATUS_EXTENSION)
        .json(&body)
        .send()
        .await?
        .json()
        .await?;
    answer["result"]["task"]["id"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("SendMessage answered no task: {answer}"))
}

/// SubscribeToTask over JSON-RPC, read up to its first event; the stream stays open while the
/// response is held.
async fn subscribe(
    http: &reqwest::Client,
    url: &str,
    participant: &str,
    task_id: &str,
) -> anyhow::Result<reqwest::Response> {
    let mut response = subscribe::open(http, url, participant, task_id, None).await?;
    let first = tokio::time::timeout(FIRST_EVENT_TIMEOUT, response.chunk())
        .await
        .context("the stream showed no event")??;
    match first {
        Some(chunk) if String::from_utf8_lossy(&chunk).contains("data:") => Ok(response),
        other => bail!("SubscribeToTask on {task_id} began with {other:?}"),
    }
}
