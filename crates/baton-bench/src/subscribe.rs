//! SubscribeToTask over JSON-RPC, read until a text shows: how a bench waits for a task that a
//! blocking call left before the moment it measures to.

use std::time::Duration;

use serde_json::json;

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
    let body = json!({
        "jsonrpc": "2.0", "id": task_id, "method": "SubscribeToTask",
        "params": {"id": task_id},
    });
    let mut stream = http
        .post(url)
        .timeout(timeout)
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream")
        .header("X-Participant-Id", participant)
        .json(&body)
        .send()
        .await?;
    let mut seen = String::new();
    while let Some(chunk) = stream.chunk().await? {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains(text) {
            return Ok(Ok(()));
        }
    }
    Ok(Err(seen))
}
