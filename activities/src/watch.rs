//! `register_remote_push`: choose the watch for a parked task. Push needs the card to offer it
//! and a public URL for the receiver; a failed registration falls back to follow. The token
//! stays in this activity: only its digest goes back into workflow history.

use baton_a2a::RemoteAgent;
use baton_a2a::push::{new_token, push_url};
use baton_core::display::one_line;
use baton_core::push_token::token_digest;
use baton_proto::{RemoteTaskIn, RemoteWatch, WatchKind};
use url::Url;

/// The watch `agent` gets when it needs nothing registered: follow or off. `None` for push,
/// which [`register`] sets up.
pub fn unregistered(agent: &RemoteAgent, push_receiver_reachable: bool) -> Option<WatchKind> {
    match agent.watch(push_receiver_reachable) {
        WatchKind::Push => None,
        other => Some(other),
    }
}

pub async fn register(
    agent: &RemoteAgent,
    push_base: Option<&Url>,
    input: &RemoteTaskIn,
) -> RemoteWatch {
    let follow = || RemoteWatch::unregistered(WatchKind::Follow);
    match (agent.watch(push_base.is_some()), push_base) {
        (WatchKind::Off, _) => RemoteWatch::unregistered(WatchKind::Off),
        (WatchKind::Push, Some(base)) => {
            let token = new_token();
            let url = push_url(base, &input.stand_in_id);
            match agent
                .create_push_config(&input.remote_task_id, url.as_str(), &token)
                .await
            {
                Ok(config) => RemoteWatch {
                    kind: WatchKind::Push,
                    // An agent that names no config id keys it by the task id (a2a-sdk does).
                    config_id: Some(config.id.unwrap_or_else(|| input.remote_task_id.clone())),
                    token_digest: Some(token_digest(&token)),
                    safety_fetch_secs: Some(agent.push_safety_fetch().as_secs()),
                },
                Err(error) => {
                    tracing::warn!(
                        stand_in = %input.stand_in_id,
                        agent = %input.agent,
                        "push registration failed, following instead: {}",
                        one_line(&error.to_string())
                    );
                    follow()
                }
            }
        }
        _ => follow(),
    }
}
