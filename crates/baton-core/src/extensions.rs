//! The A2A extensions Baton implements. The task and status extensions are tiny-harness's,
//! published as such, so a Baton and a tiny-harness agent can brief and answer each other; the
//! deadline extension is Baton's own. Both halves of A2A use them: the gateway
//! advertises them, the outbound client requests those the other side advertises.

use std::collections::HashMap;

use baton_proto::Usage;
use serde_json::Value;

use crate::attachments::whole_numbers;

/// The task extension: a brief (name, goal, criteria, participants) as one data part.
pub const TASK_EXTENSION: &str = "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/task/v1";
/// The status extension: the sub-state of an interrupted task.
pub const STATUS_EXTENSION: &str =
    "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/status/v1";
/// Where the status extension keeps its payload, in a task's or a status update's metadata:
/// `{STATUS_METADATA_KEY: {"sub_state": …}}`.
pub const STATUS_METADATA_KEY: &str = "io.github.madarauchiha-314.tiny-harness/status";

/// The deadline extension: a brief's `metadata[DEADLINE_EXTENSION] = {"seconds": N}` says how
/// long the delegator will wait for the task; the agent ends the task FAILED past it, and gives
/// its own delegations no longer than what is left.
pub const DEADLINE_EXTENSION: &str = "urn:baton:a2a:ext:deadline:v1";

/// The budget extension, shaped after A2A proposal #2121 (cost and budget propagation): a
/// task's `metadata[BUDGET_EXTENSION] = {"usage": {…}, "total": {…}}` reports the model tokens
/// its own turns used and those of its whole tree (its sub-tasks' as they reported them), each
/// `{"input_tokens", "output_tokens"}`; a brief's `metadata[BUDGET_EXTENSION] = {"tokens": N}`
/// gives the task a budget of N tokens, its own delegations' included.
pub const BUDGET_EXTENSION: &str = "urn:baton:a2a:ext:budget:v1";

/// Every extension URI Baton implements; a remote card may require only these.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    TASK_EXTENSION,
    STATUS_EXTENSION,
    DEADLINE_EXTENSION,
    BUDGET_EXTENSION,
];

/// The budget extension's report of a task's usage: its own turns', and its whole tree's.
pub fn usage_metadata(own: Usage, total: Usage) -> Value {
    serde_json::json!({ "usage": own, "total": total })
}

/// The usage of a whole task tree that a task's metadata reports (the budget extension's
/// `total`), if it reports one.
pub fn reported_usage(metadata: Option<&HashMap<String, Value>>) -> Option<Usage> {
    let total = metadata?.get(BUDGET_EXTENSION)?.get("total")?;
    serde_json::from_value(whole_numbers(total.clone())).ok()
}

/// The media type of a task envelope data part.
pub const ENVELOPE_MEDIA_TYPE: &str = "application/vnd.tiny-harness.event+json";

/// The status extension's metadata for `sub_state`.
pub fn status_metadata(sub_state: &str) -> HashMap<String, Value> {
    HashMap::from([(
        STATUS_METADATA_KEY.to_string(),
        serde_json::json!({ "sub_state": sub_state }),
    )])
}

/// The sub-state the status extension's metadata carries, if any.
pub fn sub_state_of(metadata: Option<&HashMap<String, Value>>) -> Option<String> {
    metadata?
        .get(STATUS_METADATA_KEY)?
        .get("sub_state")?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_usage_reads_back_its_total_also_from_a_protobuf_client_s_doubles() {
        let own = Usage {
            input_tokens: 120,
            output_tokens: 30,
            cost_nanos: 0,
        };
        let total = Usage {
            input_tokens: 400,
            output_tokens: 90,
            cost_nanos: 1_250,
        };
        let metadata = HashMap::from([(BUDGET_EXTENSION.to_string(), usage_metadata(own, total))]);
        assert_eq!(reported_usage(Some(&metadata)), Some(total));
        let doubles = HashMap::from([(
            BUDGET_EXTENSION.to_string(),
            serde_json::json!({"total": {"input_tokens": 400.0, "output_tokens": 90.0,
                "cost_nanos": 1250.0}}),
        )]);
        assert_eq!(reported_usage(Some(&doubles)), Some(total));
        for unreported in [
            HashMap::new(),
            HashMap::from([(
                BUDGET_EXTENSION.to_string(),
                serde_json::json!({"tokens": 5}),
            )]),
            HashMap::from([(
                BUDGET_EXTENSION.to_string(),
                serde_json::json!({"total": {"input_tokens": -1}}),
            )]),
        ] {
            assert_eq!(reported_usage(Some(&unreported)), None, "{unreported:?}");
        }
        assert_eq!(reported_usage(None), None);
    }

    #[test]
    fn the_sub_state_reads_back_from_its_metadata() {
        let metadata = status_metadata("awaiting-answer");
        assert_eq!(
            serde_json::to_value(&metadata).unwrap(),
            serde_json::json!({STATUS_METADATA_KEY: {"sub_state": "awaiting-answer"}})
        );
        assert_eq!(
            sub_state_of(Some(&metadata)).as_deref(),
            Some("awaiting-answer")
        );
        assert_eq!(sub_state_of(None), None);
        let other = HashMap::from([("other".to_string(), serde_json::json!({"sub_state": "x"}))]);
        assert_eq!(sub_state_of(Some(&other)), None);
    }
}
