//! A model for load: it decides each answer from the request alone, so any number of tasks can
//! share one [`FakeModel`](crate::fake_model::FakeModel) (`FakeModel::under_load(delegating)`).
//! The benchmarks run on it.
//! - no `spawn_subtask` call in the conversation yet → call `spawn_subtask` on the agent the task
//!   names (`via=<agent id>` in its goal), carrying the task's phase marker into the brief;
//! - a spawn, but no "is COMPLETED" note yet → "waiting";
//! - the note is there → the answer;
//! - a task marked [`DIRECT_MARKER`] → the answer at once, no delegation.

use serde_json::{Value, json};

use crate::fake_model::{Scripted, call, reply};

/// The final answer of a delegating task.
pub const ANSWER: &str = "The ledger says 42.";
/// What the model says while its sub-task is open.
pub const WAITING: &str = "waiting";
/// Marks a task the model answers at once.
pub const DIRECT_MARKER: &str = "bench:direct";

/// The answer to this conversation.
pub fn delegating(request: &Value) -> Scripted {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let role_is = |m: &Value, role: &str| m["role"].as_str() == Some(role);
    if request["messages"].to_string().contains(DIRECT_MARKER) {
        return reply(ANSWER);
    }
    let spawned = messages.iter().any(|m| {
        role_is(m, "assistant") && m["tool_calls"].as_array().is_some_and(|c| !c.is_empty())
    });
    if !spawned {
        let task = messages
            .iter()
            .find(|m| role_is(m, "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let agent = task
            .split_whitespace()
            .find_map(|word| word.strip_prefix("via="))
            .unwrap_or("peer");
        let marker = task
            .split_whitespace()
            .find(|word| word.starts_with("bench:"))
            .unwrap_or("bench:answer");
        return call(
            "spawn_subtask",
            json!({
                "name": "lookup",
                "goal": format!("{marker} What does the ledger say?"),
                "agent": agent,
            }),
        );
    }
    let answered = messages.iter().any(|m| {
        role_is(m, "user")
            && m["content"]
                .as_str()
                .is_some_and(|c| c.contains("is COMPLETED"))
    });
    reply(if answered { ANSWER } else { WAITING })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    fn text_of(scripted: Scripted) -> Option<String> {
        match scripted {
            Scripted::Reply(spec) if spec.tool_calls.is_empty() => spec.text,
            _ => None,
        }
    }

    #[test]
    fn spawns_on_the_named_agent_then_waits_then_answers() {
        let task = user("# task\ngoal: bench:park via=peer-push");
        let Scripted::Reply(first) = delegating(&json!({"messages": [task.clone()]})) else {
            panic!("a reply");
        };
        let [(name, args)] = &first.tool_calls[..] else {
            panic!("one tool call");
        };
        assert_eq!(name, "spawn_subtask");
        assert_eq!(args["agent"], "peer-push");
        assert!(args["goal"].as_str().unwrap().starts_with("bench:park "));

        let spawned = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "spawn_subtask", "arguments": args.to_string()}}]});
        let tool = json!({"role": "tool", "tool_call_id": "call_1", "content": "spawned"});
        let waiting =
            delegating(&json!({"messages": [task.clone(), spawned.clone(), tool.clone()]}));
        assert_eq!(text_of(waiting).as_deref(), Some(WAITING));

        let note = user(
            "<untrusted>Sub-task lookup (id t.1, task t on peer) is COMPLETED: 42</untrusted>",
        );
        let answer = delegating(&json!({"messages": [task, spawned, tool, note]}));
        assert_eq!(text_of(answer).as_deref(), Some(ANSWER));
    }

    #[test]
    fn a_direct_task_is_answered_at_once() {
        let task = user("# task\ngoal: bench:direct 7");
        let answer = delegating(&json!({"messages": [task]}));
        assert_eq!(text_of(answer).as_deref(), Some(ANSWER));
    }
}
