//! The search attributes a task carries, so Temporal visibility can list tasks by A2A context,
//! state, agent and participant (the gateway's ListTasks). They must be registered on the
//! namespace: Baton's embedded server registers them; on a cluster, `temporal operator
//! search-attribute create` does (docs/gateway.md).

use temporalio_common::search_attributes::SearchAttributeKey;

pub const A2A_CONTEXT_ID: SearchAttributeKey<String> = SearchAttributeKey::keyword("A2AContextId");
pub const A2A_TASK_STATE: SearchAttributeKey<String> = SearchAttributeKey::keyword("A2ATaskState");
pub const BATON_AGENT: SearchAttributeKey<String> = SearchAttributeKey::keyword("BatonAgent");
pub const BATON_PARTICIPANTS: SearchAttributeKey<Vec<String>> =
    SearchAttributeKey::keyword_list("BatonParticipants");

/// Every attribute with its Temporal type, as `temporal server start-dev --search-attribute`
/// and `temporal operator search-attribute create` take them.
pub const REGISTRATIONS: [(&str, &str); 4] = [
    ("A2AContextId", "Keyword"),
    ("A2ATaskState", "Keyword"),
    ("BatonAgent", "Keyword"),
    ("BatonParticipants", "KeywordList"),
];
