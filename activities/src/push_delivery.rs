//! `deliver_push`: one change of a Baton task, POSTed to a participant's webhook as an A2A
//! `StreamResponse` (`{"statusUpdate": …}`). The token goes in both header spellings agents use;
//! `Authorization` comes from the config's authentication. Neither is ever logged.

use std::time::Duration;

use baton_core::a2a_state::to_a2a;
use baton_proto::PushDelivery;
use serde_json::json;
use temporalio_sdk::activities::ActivityError;

const TIMEOUT: Duration = Duration::from_secs(8);
/// Where the status extension keeps the sub-state.
const STATUS_METADATA_KEY: &str = "io.github.madarauchiha-314.tiny-harness/status";

pub async fn deliver(http: &reqwest::Client, delivery: &PushDelivery) -> Result<(), ActivityError> {
    let mut request = http
        .post(&delivery.config.url)
        .timeout(TIMEOUT)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .json(&body(delivery));
    if let Some(token) = &delivery.config.token {
        request = request
            .header("A2A-Notification-Token", token)
            .header("X-A2A-Notification-Token", token);
    }
    if let Some(auth) = &delivery.config.authentication {
        let value = match &auth.credentials {
            Some(credentials) => format!("{} {credentials}", auth.scheme),
            None => auth.scheme.clone(),
        };
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let response = request.send().await.map_err(|e| {
        ActivityError::from(anyhow::anyhow!(
            "push to webhook {} of task {} failed: {}",
            delivery.config.id,
            delivery.task_id,
            e.without_url()
        ))
    })?;
    if !response.status().is_success() {
        return Err(ActivityError::from(anyhow::anyhow!(
            "webhook {} of task {} answered {}",
            delivery.config.id,
            delivery.task_id,
            response.status()
        )));
    }
    Ok(())
}

fn body(delivery: &PushDelivery) -> serde_json::Value {
    let state = serde_json::to_value(to_a2a(delivery.state)).unwrap_or_default();
    let mut status = json!({ "state": state, "timestamp": delivery.at });
    if let Some(text) = &delivery.message {
        status["message"] = json!({
            "messageId": format!("{}:push:{}", delivery.task_id, delivery.at),
            "taskId": delivery.task_id,
            "contextId": delivery.context_id,
            "role": "ROLE_AGENT",
            "parts": [{ "text": text }],
        });
    }
    let mut update = json!({
        "taskId": delivery.task_id,
        "contextId": delivery.context_id,
        "status": status,
    });
    if let Some(sub_state) = &delivery.sub_state {
        update["metadata"] = json!({ STATUS_METADATA_KEY: { "sub_state": sub_state } });
    }
    json!({ "statusUpdate": update })
}
