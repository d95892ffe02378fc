//! SubscribeToTask over JSON-RPC, read until a text shows: how a bench waits for a task that a
//! blocking call left before the moment it measures to.

use std::time::Duration;

use serde_json::json;

/// Opens SubscribeToTask over JSON-RPC on `task_id`, bounded by `timeout` when one is given (a
/// stream held open for as long as a phase lasts has none).
pub async fn open(
    http: &reqwest::Client,
    url: &str,
    participant: &str,
    task_id: &str,
    timeout: Option<Duration>,
) -> reqwest::Result<reqwest::Response> {
    let body = json!({
        "jsonrpc": "2.0", "id": task_id, "method": "SubscribeToTask",
        "params": {"id": task_id},
    });
    let mut request = http
        .post(url)
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream")
        .header("X-Participant-Id", participant)
        .json(&body);
    if let Some(timeout) = timeout {
        request = request.timeout(timeout);
    }
    request.send().await
}

/// Reads SubscribeToTask on `task_id` (its first event is the task as it is) for at most
/// `timeout` until `text` shows in the stream. `Err` holds what the stream showed when it ended
/// first; a call that fails is the outer error.
pub async fn until_shown(
    http: &reqwest::Client,
    url: &str,
    participant: &str,
    task_id: &str,
    text: &str,
    timeout: Duration,
) -> anyhow::Result<Result<(), String>> {
    let mut stream = open(http, url, participant, task_id, Some(timeout)).await?;
    let mut seen = String::new();
    while let Some(chunk) = stream.chunk().await? {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains(text) {
            return Ok(Ok(()));
        }
    }
    Ok(Err(seen))
}
