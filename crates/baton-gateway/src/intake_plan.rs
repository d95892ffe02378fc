//! What a SendMessage means, decided from the request alone, before Temporal is asked anything:
//! a follow-up to a task, a new task, or a refusal.

use a2a::{A2AError, SendMessageRequest};
use a2a_server::ServiceParams;
use baton_core::derived_id::derived_id;
use baton_core::extensions::STATUS_EXTENSION;
use baton_proto::{InboxMessage, Lifecycle, TaskInput};

use crate::config::GatewayConfig;
use crate::extensions::activates;
use crate::identity::{CallerKind, check_task_id, sender};
use crate::intake::{Trust, follow_up, inbox_message, new_task, text_of};
use crate::part_scan::too_many_parts;
use crate::parts::{IncomingPart, incoming_parts};
use crate::push_configs;

/// What a message asks for.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one plan per request, built once and moved once"
)]
pub(crate) enum Plan {
    /// A message to the task it names: the task must exist and have the sender as a participant.
    FollowUp {
        /// The task it goes to.
        task_id: String,
        /// Who sends it.
        sender: String,
        /// What the task's inbox takes, with the webhook sent along, if any.
        inbox: InboxMessage,
        /// The message's files and data, to store before the inbox takes it.
        parts: Vec<IncomingPart>,
    },
    /// A message that opens a task (or lands again on the one it opened, when repeated).
    NewTask(NewTask),
}

/// A task a message opens.
#[derive(Debug)]
pub(crate) struct NewTask {
    /// Derived from the sender and the message id, so a retried message lands on the same task.
    pub task_id: String,
    /// The message's context, else one derived from the task id.
    pub context_id: String,
    /// Who sends it.
    pub sender: String,
    /// The task's input: its brief, participants and limits.
    pub input: TaskInput,
    /// The first message, with the webhook sent along, if any.
    pub inbox: InboxMessage,
    /// The first message's files and data, to store before the task starts.
    pub parts: Vec<IncomingPart>,
    /// The task goes on from the newest task of the context it names: a caller whose tasks end
    /// (not one that converses, which goes on with the same task), where tasks carry the
    /// context's search attribute, so the lookup reads only that context.
    pub continues_a_context: bool,
}

/// What `req` means for `config`'s agent, from `params` (the caller, the extensions it
/// activates). A refusal names what is wrong.
pub(crate) fn plan(
    config: &GatewayConfig,
    params: &ServiceParams,
    req: &SendMessageRequest,
) -> Result<Plan, A2AError> {
    let message = &req.message;
    if message.parts.len() > config.max_message_parts {
        return Err(A2AError::invalid_params(too_many_parts(
            config.max_message_parts,
        )));
    }
    let parts = incoming_parts(message, &config.part_limits)?;
    let webhook = req
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.as_ref());
    if let Some(task_id) = message.task_id.clone().filter(|id| !id.is_empty()) {
        check_task_id(&task_id)?;
        let sender = sender(params, message, &config.agent_id)?.id;
        let mut inbox = follow_up(&sender, message)?;
        inbox.push_config = webhook
            .map(|w| push_configs::checked(config, &task_id, w))
            .transpose()?;
        return Ok(Plan::FollowUp {
            task_id,
            sender,
            inbox,
            parts,
        });
    }
    let caller = sender(params, message, &config.agent_id)?;
    let trusted = Trust {
        delegators: &config.delegators,
    }
    .trusts(&caller);
    // A retried first message lands on the same task: its id derives from the sender and the
    // message id, and the inbox drops the duplicate. An anonymous task is reached by its id
    // alone, so its id is one only this deployment can derive, from the message's text too:
    // another anonymous caller reusing a message id gets a task of their own.
    let task_id = if caller.kind == CallerKind::Anonymous {
        config
            .deployment
            .keyed_id(&["anonymous task", &message.message_id, &text_of(message)])
    } else {
        derived_id(&[&caller.id, &message.message_id])
    };
    let sender = caller.id;
    let named_context = message.context_id.clone().filter(|c| !c.is_empty());
    let context_id = named_context
        .clone()
        .unwrap_or_else(|| derived_id(&[&task_id, "context"]));
    // A caller that speaks the status extension gets a conversation, which parks awaiting its
    // next message; any other caller a task that completes with its answer.
    let unbriefed = if activates(params, message, STATUS_EXTENSION) {
        Lifecycle::Conversation
    } else {
        Lifecycle::Delegated
    };
    let input = new_task(&sender, message, &context_id, trusted, unbriefed)?;
    let mut inbox = inbox_message(&sender, message);
    inbox.push_config = webhook
        .map(|w| push_configs::checked(config, &task_id, w))
        .transpose()?;
    Ok(Plan::NewTask(NewTask {
        continues_a_context: unbriefed == Lifecycle::Delegated
            && config.search_attributes
            && named_context.is_some(),
        task_id,
        context_id,
        sender,
        input,
        inbox,
        parts,
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use baton_core::deployment_key::DeploymentKey;
    use serde_json::json;

    use super::*;
    use crate::identity::{CALLER_KIND_HEADER, PARTICIPANT_HEADER};
    use crate::parts::PartLimits;

    fn config() -> GatewayConfig {
        GatewayConfig {
            agent_id: "desk".into(),
            task_queue: "desk".into(),
            delegators: vec!["planner".into()],
            card: json!({}),
            temporal_timeout: Duration::from_secs(10),
            blocking_timeout: Duration::from_secs(60),
            allow_private_push_urls: false,
            search_attributes: true,
            public_url: "https://desk.example.com/".parse().unwrap(),
            deployment: Arc::new(DeploymentKey::from_secret("a secret of this deployment")),
            max_message_parts: 4,
            part_limits: PartLimits {
                max_part_bytes: 1024,
                media_types: vec!["*/*".into()],
                max_task_bytes: 4096,
                fetch_urls: false,
            },
        }
    }

    fn as_caller(id: &str, kind: &str) -> ServiceParams {
        ServiceParams::from([
            (PARTICIPANT_HEADER.to_string(), vec![id.to_string()]),
            (CALLER_KIND_HEADER.to_string(), vec![kind.to_string()]),
        ])
    }

    fn request(message: serde_json::Value) -> SendMessageRequest {
        serde_json::from_value(json!({ "message": message })).unwrap()
    }

    fn text(message_id: &str, more: serde_json::Value) -> serde_json::Value {
        let mut message = json!({
            "messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "Reconcile March."}]
        });
        message
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        message
    }

    fn new_task_of(plan: Plan) -> NewTask {
        match plan {
            Plan::NewTask(task) => task,
            other => panic!("expected a new task, got {other:?}"),
        }
    }

    #[test]
    fn a_message_without_a_task_id_opens_a_task_that_a_retry_lands_on_again() {
        let alice = as_caller("alice", "authenticated");
        let first = new_task_of(plan(&config(), &alice, &request(text("m-1", json!({})))).unwrap());
        let again = new_task_of(plan(&config(), &alice, &request(text("m-1", json!({})))).unwrap());
        let other = new_task_of(plan(&config(), &alice, &request(text("m-2", json!({})))).unwrap());
        assert_eq!(first.task_id, again.task_id);
        assert_ne!(first.task_id, other.task_id);
        assert_eq!(first.sender, "alice");
        assert_eq!(first.inbox.message_id, "m-1");
        assert_eq!(first.input.lifecycle, Lifecycle::Delegated);
        // No context named: one of its own, and nothing to continue.
        assert!(!first.continues_a_context);
        assert_eq!(
            first.input.context_id.as_deref(),
            Some(first.context_id.as_str())
        );
    }

    #[test]
    fn the_same_message_id_from_two_senders_opens_two_tasks() {
        let request = request(text("m-1", json!({})));
        let alice =
            new_task_of(plan(&config(), &as_caller("alice", "authenticated"), &request).unwrap());
        let bob =
            new_task_of(plan(&config(), &as_caller("bob", "authenticated"), &request).unwrap());
        assert_ne!(alice.task_id, bob.task_id);
    }

    #[test]
    fn an_anonymous_task_id_is_keyed_by_the_deployment_and_the_text() {
        let anonymous = ServiceParams::new();
        let one =
            new_task_of(plan(&config(), &anonymous, &request(text("m-1", json!({})))).unwrap());
        let other_text = request(json!({
            "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Something else."}]
        }));
        let two = new_task_of(plan(&config(), &anonymous, &other_text).unwrap());
        assert_ne!(one.task_id, two.task_id);
        let mut elsewhere = config();
        elsewhere.deployment = Arc::new(DeploymentKey::from_secret("another deployment"));
        let three =
            new_task_of(plan(&elsewhere, &anonymous, &request(text("m-1", json!({})))).unwrap());
        assert_ne!(one.task_id, three.task_id);
    }

    #[test]
    fn a_named_context_is_continued_only_by_a_caller_whose_tasks_end_and_only_where_it_is_indexed()
    {
        let alice = as_caller("alice", "authenticated");
        let in_context = request(text("m-1", json!({"contextId": "ctx-7"})));
        let task = new_task_of(plan(&config(), &alice, &in_context).unwrap());
        assert_eq!(task.context_id, "ctx-7");
        assert!(task.continues_a_context);

        let mut unindexed = config();
        unindexed.search_attributes = false;
        assert!(!new_task_of(plan(&unindexed, &alice, &in_context).unwrap()).continues_a_context);

        let mut conversing = alice.clone();
        conversing.insert("a2a-extensions".into(), vec![STATUS_EXTENSION.into()]);
        let conversation = new_task_of(plan(&config(), &conversing, &in_context).unwrap());
        assert_eq!(conversation.input.lifecycle, Lifecycle::Conversation);
        assert!(!conversation.continues_a_context);
    }

    #[test]
    fn a_message_with_a_task_id_is_a_follow_up_from_its_sender() {
        let alice = as_caller("alice", "authenticated");
        let task_id = derived_id(&["alice", "m-1"]);
        let follow = plan(
            &config(),
            &alice,
            &request(text("m-2", json!({"taskId": task_id}))),
        )
        .unwrap();
        let Plan::FollowUp {
            task_id: to,
            sender,
            inbox,
            ..
        } = follow
        else {
            panic!("expected a follow-up, got {follow:?}");
        };
        assert_eq!((to.as_str(), sender.as_str()), (task_id.as_str(), "alice"));
        assert_eq!(inbox.message_id, "m-2");
        assert_eq!(inbox.participant_id, "alice");
    }

    #[test]
    fn the_files_and_data_of_a_message_wait_to_be_stored_and_one_too_big_refuses_it() {
        let alice = as_caller("alice", "authenticated");
        let with = |parts: serde_json::Value| {
            request(json!({"messageId": "m-1", "role": "ROLE_USER", "parts": parts}))
        };
        let task = new_task_of(
            plan(
                &config(),
                &alice,
                &with(
                    json!([{"text": "Sum it."}, {"raw": "YSxiCjEsMg==", "mediaType": "text/csv"}]),
                ),
            )
            .unwrap(),
        );
        assert_eq!(task.parts.len(), 1);
        assert_eq!(task.parts[0].bytes().unwrap().as_ref(), b"a,b\n1,2");
        assert!(
            task.inbox.attachments.is_empty(),
            "stored first, by the handler"
        );
        let big = format!("{{\"raw\": \"{}\"}}", "A".repeat(2000));
        let refused = plan(
            &config(),
            &alice,
            &with(json!([
                serde_json::from_str::<serde_json::Value>(&big).unwrap()
            ])),
        )
        .unwrap_err();
        assert!(
            refused.message.contains("content.max_part_bytes"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn a_request_past_the_part_limit_an_unreadable_task_id_or_a_private_webhook_is_refused() {
        let alice = as_caller("alice", "authenticated");
        let parts: Vec<_> = (0..5)
            .map(|n| json!({"text": format!("part {n}")}))
            .collect();
        let too_many = request(json!({"messageId": "m", "role": "ROLE_USER", "parts": parts}));
        let refused = plan(&config(), &alice, &too_many).unwrap_err();
        assert!(refused.message.contains('4'), "{refused:?}");

        let unprintable = request(text("m", json!({"taskId": "t\u{7}1"})));
        let refused = plan(&config(), &alice, &unprintable).unwrap_err();
        assert!(refused.message.contains("printable ASCII"), "{refused:?}");

        let mut private_webhook: SendMessageRequest = request(text("m", json!({})));
        private_webhook.configuration = Some(
            serde_json::from_value(json!({
                "taskPushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}
            }))
            .unwrap(),
        );
        let refused = plan(&config(), &alice, &private_webhook).unwrap_err();
        assert!(
            refused.message.contains("server.allow_private_push_urls"),
            "{refused:?}"
        );
    }
}
