//! Fetching `<url>/.well-known/agent-card.json`, bounded in time and size: a card comes from a
//! third party, so a hanging server or a huge body must not stall or bloat startup.

use std::time::Duration;

use url::Url;

use crate::AgentError;

/// Where a card is, under the agent's URL.
pub(crate) const CARD_PATH: &str = ".well-known/agent-card.json";

/// Bounds on one card fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardLimits {
    /// The whole fetch: connect, headers and body.
    pub timeout: Duration,
    /// The largest body read; a bigger card is refused.
    pub max_bytes: usize,
}

impl Default for CardLimits {
    fn default() -> Self {
        CardLimits {
            timeout: Duration::from_secs(10),
            max_bytes: 1024 * 1024,
        }
    }
}

/// The card's URL for an agent at `base`.
pub fn card_url(base: &Url) -> String {
    format!("{}/{CARD_PATH}", base.as_str().trim_end_matches('/'))
}

/// Fetches the raw card JSON of agent `agent` at `base`, sending `A2A-Version: 1.0`.
pub async fn fetch_card(
    http: &reqwest::Client,
    agent: &str,
    base: &Url,
    limits: CardLimits,
) -> Result<serde_json::Value, AgentError> {
    let url = card_url(base);
    let unavailable = |reason: String| AgentError::CardUnavailable {
        agent: agent.to_string(),
        url: url.clone(),
        reason,
    };
    let body = tokio::time::timeout(limits.timeout, read_body(http, &url, limits.max_bytes))
        .await
        .map_err(|_| unavailable(format!("no complete answer within {:?}", limits.timeout)))?
        .map_err(unavailable)?;
    serde_json::from_slice(&body).map_err(|e| AgentError::CardInvalid {
        agent: agent.to_string(),
        url: url.clone(),
        reason: format!("not JSON: {e}"),
    })
}

async fn read_body(http: &reqwest::Client, url: &str, max_bytes: usize) -> Result<Vec<u8>, String> {
    let mut response = http
        .get(url)
        .header(a2a::SVC_PARAM_VERSION, a2a::VERSION)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| with_causes(&e.without_url()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let too_large = || format!("the card is larger than {max_bytes} bytes");
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| with_causes(&e.without_url()))?
    {
        if body.len() + chunk.len() > max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An error's message with the messages of its causes, which carry the reason (a refused
/// redirect, a DNS failure).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}
