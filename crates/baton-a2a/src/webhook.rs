//! Pushes to a participant's webhook: one change of a Baton task, POSTed as an A2A
//! `StreamResponse` (`{"statusUpdate": …}`), after one `{"artifactUpdate": …}` per artifact when
//! the change gives the task's answer, as a stream sends them. The token goes in both header
//! spellings agents use; `Authorization` comes from the config's authentication. Neither is
//! ever logged.
//!
//! A webhook URL is a stranger's: the push never follows a redirect, and it connects only to
//! addresses outside this network (checked on the addresses the name resolves to, at the time
//! it connects, so a name that changes to point inward after the registration reaches nothing),
//! unless `server.allow_private_push_urls` is on or the URL is this agent's own push receiver.

use std::sync::Arc;
use std::time::Duration;

use a2a::{
    Message, Part, Role, StreamResponse, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent,
};
use baton_content::ContentStore;
use baton_core::a2a_state::to_a2a;
use baton_core::deployment_key::DeploymentKey;
use baton_core::extensions::status_metadata;
use baton_core::network::{is_internal_host, is_own_push_receiver};
use baton_proto::PushDelivery;
use chrono::{DateTime, Utc};
use url::Url;

use crate::outside_only::OutsideOnly;
use crate::rendering::{Contents, artifact_of};

const TIMEOUT: Duration = Duration::from_secs(8);

/// Why a push did not reach its webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushFailure {
    /// The webhook may not be called at all (its address, or a token that does not open):
    /// trying again cannot help.
    Refused(String),
    /// The webhook could not be reached, or did not answer 2xx: a later try may succeed.
    Failed(String),
}

impl std::fmt::Display for PushFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PushFailure::Refused(why) | PushFailure::Failed(why) => f.write_str(why),
        }
    }
}

/// The HTTP clients pushes go out on, and the rule for which one a webhook gets.
#[derive(Clone)]
pub struct Webhooks {
    /// Connects only to addresses outside this network.
    outside: reqwest::Client,
    /// Connects anywhere: for this agent's own receiver, or every webhook when allowed.
    anywhere: reqwest::Client,
    allow_private: bool,
    /// `server.base_url`, whose push receiver is trusted on whatever address it has.
    public_url: Option<Url>,
    /// Opens the token and credentials the gateway sealed before they reached history.
    key: Arc<DeploymentKey>,
}

impl Webhooks {
    /// The clients for one deployment: `allow_private` is `server.allow_private_push_urls`,
    /// `public_url` is `server.base_url`, `key` opens what the gateway sealed.
    pub fn new(allow_private: bool, public_url: Option<Url>, key: Arc<DeploymentKey>) -> Webhooks {
        let builder = || {
            // No proxy from the environment (HTTPS_PROXY, …): a proxy would resolve the webhook's
            // host itself, past the address check, or refuse to reach it at all.
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(TIMEOUT)
        };
        Webhooks {
            outside: builder()
                .dns_resolver(Arc::new(OutsideOnly {
                    for_what: "a webhook",
                }))
                .build()
                .expect("the TLS backend is compiled in, so the client always builds"),
            anywhere: builder()
                .build()
                .expect("the TLS backend is compiled in, so the client always builds"),
            allow_private,
            public_url,
            key,
        }
    }

    /// The client for `url`, or why it may not be called.
    fn client_for(&self, url: &Url) -> Result<&reqwest::Client, String> {
        let own = self
            .public_url
            .as_ref()
            .is_some_and(|base| is_own_push_receiver(url, base));
        if own || self.allow_private {
            return Ok(&self.anywhere);
        }
        // A name is checked by the resolver when it connects; an address literal here.
        match url.host() {
            Some(host) if !is_internal_host(&host) => Ok(&self.outside),
            _ => Err("it points at a loopback or private address".into()),
        }
    }
}

/// POSTs one change to the delivery's webhook: its artifacts first (their files read from
/// `store`), then its status. An artifact the webhook refuses is left out; one it could not
/// take now fails the push, to be tried again whole.
pub async fn deliver(
    webhooks: &Webhooks,
    store: &ContentStore,
    delivery: &PushDelivery,
) -> Result<(), PushFailure> {
    if !delivery.artifacts.is_empty() {
        let contents = Contents::of_artifacts(store, &delivery.task_id, &delivery.artifacts).await;
        for event in artifact_events(delivery, &contents) {
            match post(webhooks, delivery, &event).await {
                Err(PushFailure::Refused(why)) => {
                    tracing::warn!(task = %delivery.task_id, "an artifact is left out of the push: {why}");
                }
                sent => sent?,
            }
        }
    }
    post(webhooks, delivery, &body(delivery)).await
}

/// POSTs one event to the delivery's webhook.
async fn post(
    webhooks: &Webhooks,
    delivery: &PushDelivery,
    event: &StreamResponse,
) -> Result<(), PushFailure> {
    let refused = |why: String| {
        PushFailure::Refused(format!(
            "webhook {} of task {} is not pushed to: {why}",
            delivery.config.id, delivery.task_id
        ))
    };
    let url = Url::parse(&delivery.config.url).map_err(|e| refused(e.to_string()))?;
    let http = webhooks.client_for(&url).map_err(refused)?;
    let mut request = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .json(event);
    let open = |sealed: &str| {
        webhooks
            .key
            .open(sealed)
            .map_err(|e| refused(e.to_string()))
    };
    if let Some(token) = &delivery.config.token {
        let token = open(token)?;
        request = request
            .header("A2A-Notification-Token", &token)
            .header("X-A2A-Notification-Token", &token);
    }
    if let Some(auth) = &delivery.config.authentication {
        let value = match &auth.credentials {
            Some(credentials) => format!("{} {}", auth.scheme, open(credentials)?),
            None => auth.scheme.clone(),
        };
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let response = request.send().await.map_err(|e| {
        let e = e.without_url();
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            reason.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        PushFailure::Failed(format!(
            "push to webhook {} of task {} failed: {reason}",
            delivery.config.id, delivery.task_id,
        ))
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let why = format!(
        "webhook {} of task {} answered {status} (a redirect is never followed)",
        delivery.config.id, delivery.task_id,
    );
    Err(if worth_retrying(status) {
        PushFailure::Failed(why)
    } else {
        PushFailure::Refused(why)
    })
}

/// Whether a webhook that answered `status` may take the same push later: it was busy or
/// failed, not refusing what it was sent.
fn worth_retrying(status: reqwest::StatusCode) -> bool {
    status.is_server_error()
        || status == reqwest::StatusCode::REQUEST_TIMEOUT
        || status == reqwest::StatusCode::TOO_MANY_REQUESTS
}

/// The artifact updates a push sends before its status: one per artifact, whole.
fn artifact_events(delivery: &PushDelivery, contents: &Contents) -> Vec<StreamResponse> {
    delivery
        .artifacts
        .iter()
        .map(|artifact| {
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: delivery.task_id.clone(),
                context_id: delivery.context_id.clone(),
                artifact: artifact_of(&delivery.task_id, artifact, contents),
                append: None,
                last_chunk: Some(true),
                metadata: None,
            })
        })
        .collect()
}

fn body(delivery: &PushDelivery) -> StreamResponse {
    let message = delivery.message.as_ref().map(|text| Message {
        message_id: format!("{}:push:{}", delivery.task_id, delivery.at),
        context_id: Some(delivery.context_id.clone()),
        task_id: Some(delivery.task_id.clone()),
        role: Role::Agent,
        parts: vec![Part::text(text.clone())],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    });
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: delivery.task_id.clone(),
        context_id: delivery.context_id.clone(),
        status: TaskStatus {
            state: to_a2a(delivery.state),
            message,
            timestamp: DateTime::parse_from_rfc3339(&delivery.at)
                .ok()
                .map(|at| at.with_timezone(&Utc)),
        },
        metadata: delivery.sub_state.as_deref().map(status_metadata),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_key() -> Arc<DeploymentKey> {
        Arc::new(DeploymentKey::from_secret("a test deployment secret"))
    }

    fn client_kind(webhooks: &Webhooks, url: &str) -> Result<&'static str, String> {
        let client = webhooks.client_for(&Url::parse(url).unwrap())?;
        Ok(if std::ptr::eq(client, &webhooks.outside) {
            "outside"
        } else {
            "anywhere"
        })
    }

    /// A push of task `t1`'s change to `state`, saying `message`.
    fn delivery(state: baton_proto::TaskState, message: &str) -> PushDelivery {
        PushDelivery {
            config: baton_proto::PushConfig {
                id: "c1".into(),
                url: "https://hooks.example.com/a".into(),
                token: None,
                authentication: None,
            },
            task_id: "t1".into(),
            context_id: "ctx1".into(),
            state,
            sub_state: None,
            message: Some(message.into()),
            at: "2026-12-02T04:00:00.250Z".into(),
            artifacts: Vec::new(),
        }
    }

    #[test]
    fn a_push_is_a_status_update_in_the_a2a_wire_shape() {
        let delivery = PushDelivery {
            sub_state: Some("awaiting-answer".into()),
            ..delivery(baton_proto::TaskState::InputRequired, "Which ledger?")
        };
        assert_eq!(
            serde_json::to_value(body(&delivery)).unwrap(),
            serde_json::json!({"statusUpdate": {
                "taskId": "t1",
                "contextId": "ctx1",
                "status": {
                    "state": "TASK_STATE_INPUT_REQUIRED",
                    "timestamp": "2026-12-02T04:00:00.250Z",
                    "message": {
                        "messageId": "t1:push:2026-12-02T04:00:00.250Z",
                        "taskId": "t1",
                        "contextId": "ctx1",
                        "role": "ROLE_AGENT",
                        "parts": [{"text": "Which ledger?"}],
                    },
                },
                "metadata": {
                    "io.github.madarauchiha-314.tiny-harness/status": {"sub_state": "awaiting-answer"}
                },
            }})
        );
    }

    #[test]
    fn a_webhook_gets_the_client_its_address_allows() {
        let own = Url::parse("http://127.0.0.1:8080").unwrap();
        let strict = Webhooks::new(false, Some(own.clone()), test_key());
        assert_eq!(
            client_kind(&strict, "https://hooks.example.com/a"),
            Ok("outside")
        );
        assert_eq!(
            client_kind(&strict, "http://127.0.0.1:8080/a2a/push/t-1.1"),
            Ok("anywhere")
        );
        for inward in [
            "http://127.0.0.1:9000/hook",
            "http://[::ffff:127.0.0.1]/hook",
            "http://169.254.169.254/latest",
            "http://localhost./hook",
            "http://127.0.0.1:8080/a2a/push/x/../../../",
        ] {
            assert!(client_kind(&strict, inward).is_err(), "{inward}");
        }
        let open = Webhooks::new(true, None, test_key());
        assert_eq!(
            client_kind(&open, "http://127.0.0.1:9000/hook"),
            Ok("anywhere")
        );
    }

    #[test]
    fn a_webhook_busy_or_failing_is_tried_again_and_one_that_refuses_is_not() {
        for (code, again) in [
            (500, true),
            (503, true),
            (408, true),
            (429, true),
            (400, false),
            (401, false),
            (404, false),
            (413, false),
            (302, false),
        ] {
            let status = reqwest::StatusCode::from_u16(code).unwrap();
            assert_eq!(worth_retrying(status), again, "{code}");
        }
    }

    #[test]
    fn the_artifacts_of_an_answer_go_out_as_artifact_updates_in_order() {
        let delivery = PushDelivery {
            artifacts: vec![
                baton_proto::AnswerArtifact {
                    id: "answer".into(),
                    name: "answer".into(),
                    description: None,
                    text: Some("Here it is.".into()),
                    attachment: None,
                },
                baton_proto::AnswerArtifact {
                    id: "tool:1".into(),
                    name: "o.csv".into(),
                    description: Some("given by tool order_csv".into()),
                    text: None,
                    attachment: Some(baton_proto::Attachment {
                        kind: baton_proto::AttachmentKind::File,
                        name: Some("o.csv".into()),
                        media_type: "text/csv".into(),
                        content: Some(baton_proto::ContentRef {
                            digest: "sha256:aa".into(),
                            size: 3,
                        }),
                        url: None,
                    }),
                },
            ],
            ..delivery(baton_proto::TaskState::Completed, "Here it is.")
        };
        let mut contents = Contents::none();
        contents.insert("sha256:aa".into(), bytes::Bytes::from_static(b"a,b"));
        let events = artifact_events(&delivery, &contents);
        let json: Vec<serde_json::Value> = events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        assert_eq!(
            json[0]["artifactUpdate"]["artifact"]["artifactId"],
            "t1:answer"
        );
        assert_eq!(json[0]["artifactUpdate"]["lastChunk"], true);
        assert_eq!(
            json[1]["artifactUpdate"]["artifact"]["artifactId"],
            "t1:tool:1"
        );
        assert_eq!(
            json[1]["artifactUpdate"]["artifact"]["parts"][0]["raw"],
            "YSxi"
        );
        assert_eq!(json[1]["artifactUpdate"]["contextId"], "ctx1");
    }
}
