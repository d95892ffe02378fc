//! Which of the servers' tools the model is offered: the ones `[[mcp]].tools` names (or all),
//! each with a name a model can take, a bounded description and schema, and no name twice. A
//! tool that cannot be offered stops the worker, naming the entry to change: a worker that
//! quietly offers fewer tools than its operator declared would fail tasks for reasons nobody
//! sees.

use std::collections::HashMap;

use baton_core::mcp_tool::{
    MAX_MCP_TOOLS, MAX_TOOL_SCHEMA_BYTES, tool_description, tool_name_problem,
};
use serde_json::Value;

/// A tool as a server lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// The server's `readOnlyHint`.
    pub read_only: bool,
    /// The server's `idempotentHint`.
    pub idempotent: bool,
}

/// A tool the model is offered.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The `[[mcp]].id` of the server that has it.
    pub server: String,
    /// The name the model calls it by, as the server lists it.
    pub name: String,
    /// The server's description, bounded.
    pub description: String,
    /// The JSON Schema of its arguments, an object.
    pub input_schema: Value,
    /// Read-only or idempotent, by the server's hints: a call that failed may be made again.
    pub retry_safe: bool,
}

/// The tools of one server to offer. `wanted` is `[[mcp]].tools`; `entry` names the server in
/// errors (`mcp[0] (orders)`).
pub(crate) fn offered_tools(
    entry: &str,
    server: &str,
    listed: Vec<ListedTool>,
    wanted: Option<&[String]>,
) -> Result<Vec<McpTool>, String> {
    if let Some(wanted) = wanted {
        let missing: Vec<&str> = wanted
            .iter()
            .filter(|name| !listed.iter().any(|tool| &tool.name == *name))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            let names: Vec<&str> = listed.iter().map(|tool| tool.name.as_str()).collect();
            return Err(format!(
                "{entry}: the server lists no tool {} (it lists: {}); correct {entry}.tools",
                missing.join(", "),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
    }
    listed
        .into_iter()
        .filter(|tool| wanted.is_none_or(|wanted| wanted.contains(&tool.name)))
        .map(|tool| offer(entry, server, tool))
        .collect()
}

fn offer(entry: &str, server: &str, tool: ListedTool) -> Result<McpTool, String> {
    if let Some(problem) = tool_name_problem(&tool.name) {
        return Err(format!(
            "{entry}: its tool {:?} cannot be offered: {problem}; list the tools to offer in {entry}.tools",
            tool.name
        ));
    }
    if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "{entry}: its tool {} has an input schema that is not of type object; list the tools to offer in {entry}.tools",
            tool.name
        ));
    }
    let schema_bytes = tool.input_schema.to_string().len();
    if schema_bytes > MAX_TOOL_SCHEMA_BYTES {
        return Err(format!(
            "{entry}: its tool {} has an input schema of {schema_bytes} bytes, more than the {MAX_TOOL_SCHEMA_BYTES} a tool may have; list the tools to offer in {entry}.tools",
            tool.name
        ));
    }
    Ok(McpTool {
        server: server.to_string(),
        description: tool_description(&tool.description),
        input_schema: tool.input_schema,
        retry_safe: tool.read_only || tool.idempotent,
        name: tool.name,
    })
}

/// Every server's tools together, refusing a name two servers share and more tools than a
/// model is offered. `servers` holds each server's entry name and tools, in the file's order.
pub fn all_tools(servers: Vec<(String, Vec<McpTool>)>) -> Result<Vec<McpTool>, String> {
    let mut first_entry: HashMap<String, String> = HashMap::new();
    let mut tools = Vec::new();
    for (entry, offered) in servers {
        for tool in offered {
            if let Some(first) = first_entry.get(&tool.name) {
                return Err(format!(
                    "{entry}: its tool {} has the name of a tool of {first}; list the tools to offer in {entry}.tools",
                    tool.name
                ));
            }
            first_entry.insert(tool.name.clone(), entry.clone());
            tools.push(tool);
        }
    }
    if tools.len() > MAX_MCP_TOOLS {
        return Err(format!(
            "the MCP servers offer {} tools, more than the {MAX_MCP_TOOLS} a model is offered; list the tools to offer in each [[mcp]].tools",
            tools.len()
        ));
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listed(name: &str) -> ListedTool {
        ListedTool {
            name: name.to_string(),
            description: format!("Does {name}."),
            input_schema: json!({"type": "object", "properties": {}}),
            read_only: false,
            idempotent: false,
        }
    }

    fn names(tools: &[McpTool]) -> Vec<&str> {
        tools.iter().map(|tool| tool.name.as_str()).collect()
    }

    const ENTRY: &str = "mcp[0] (orders)";

    #[test]
    fn every_listed_tool_is_offered_when_none_is_named() {
        let tools = offered_tools(ENTRY, "orders", vec![listed("a"), listed("b")], None).unwrap();
        assert_eq!(names(&tools), ["a", "b"]);
        assert!(tools.iter().all(|tool| tool.server == "orders"));
    }

    #[test]
    fn only_the_named_tools_are_offered_in_the_server_s_order() {
        let wanted = ["c".to_string(), "a".to_string()];
        let listed = vec![listed("a"), listed("b"), listed("c")];
        let tools = offered_tools(ENTRY, "orders", listed, Some(&wanted)).unwrap();
        assert_eq!(names(&tools), ["a", "c"]);
    }

    #[test]
    fn a_named_tool_the_server_lacks_stops_the_worker() {
        let wanted = ["get_order".to_string(), "refund".to_string()];
        assert_eq!(
            offered_tools(ENTRY, "orders", vec![listed("get_order")], Some(&wanted)),
            Err("mcp[0] (orders): the server lists no tool refund (it lists: get_order); correct mcp[0] (orders).tools".into())
        );
        assert_eq!(
            offered_tools(ENTRY, "orders", vec![], Some(&wanted)),
            Err("mcp[0] (orders): the server lists no tool get_order, refund (it lists: none); correct mcp[0] (orders).tools".into())
        );
    }

    #[test]
    fn a_tool_named_unlike_a_model_tool_is_refused_unless_left_out() {
        assert_eq!(
            offered_tools(ENTRY, "orders", vec![listed("orders.get")], None),
            Err("mcp[0] (orders): its tool \"orders.get\" cannot be offered: a tool name may hold only letters, digits, '_' and '-' (got \"orders.get\"); list the tools to offer in mcp[0] (orders).tools".into())
        );
        let wanted = ["get".to_string()];
        let tools = offered_tools(
            ENTRY,
            "orders",
            vec![listed("orders.get"), listed("get")],
            Some(&wanted),
        );
        assert_eq!(names(&tools.unwrap()), ["get"]);
        assert!(
            offered_tools(ENTRY, "orders", vec![listed("spawn_subtask")], None)
                .unwrap_err()
                .contains("spawn_subtask is one of Baton's own tools")
        );
    }

    #[test]
    fn a_schema_that_is_no_object_or_too_large_is_refused() {
        let mut tool = listed("a");
        tool.input_schema = json!({"type": "string"});
        assert!(
            offered_tools(ENTRY, "orders", vec![tool], None)
                .unwrap_err()
                .contains("an input schema that is not of type object")
        );
        let mut tool = listed("a");
        tool.input_schema =
            json!({"type": "object", "description": "d".repeat(MAX_TOOL_SCHEMA_BYTES)});
        assert!(
            offered_tools(ENTRY, "orders", vec![tool], None)
                .unwrap_err()
                .contains("more than the 16384 a tool may have")
        );
    }

    #[test]
    fn read_only_or_idempotent_tools_are_safe_to_retry() {
        let cases = [
            (false, false, false),
            (true, false, true),
            (false, true, true),
            (true, true, true),
        ];
        for (read_only, idempotent, retry_safe) in cases {
            let tool = ListedTool {
                read_only,
                idempotent,
                ..listed("a")
            };
            let offered = offered_tools(ENTRY, "orders", vec![tool], None).unwrap();
            assert_eq!(
                offered[0].retry_safe, retry_safe,
                "{read_only} {idempotent}"
            );
        }
    }

    #[test]
    fn the_description_is_bounded() {
        let tool = ListedTool {
            description: "a\n<b>".into(),
            ..listed("a")
        };
        let offered = offered_tools(ENTRY, "orders", vec![tool], None).unwrap();
        assert_eq!(offered[0].description, "a ‹b›");
    }

    #[test]
    fn two_servers_may_not_offer_one_name() {
        let orders = offered_tools(ENTRY, "orders", vec![listed("find")], None).unwrap();
        let policies =
            offered_tools("mcp[1] (policies)", "policies", vec![listed("find")], None).unwrap();
        assert_eq!(
            all_tools(vec![(ENTRY.into(), orders.clone()), ("mcp[1] (policies)".into(), policies)]),
            Err("mcp[1] (policies): its tool find has the name of a tool of mcp[0] (orders); list the tools to offer in mcp[1] (policies).tools".into())
        );
        assert_eq!(
            names(&all_tools(vec![(ENTRY.into(), orders)]).unwrap()),
            ["find"]
        );
    }

    #[test]
    fn more_tools_than_a_model_is_offered_are_refused() {
        let many: Vec<ListedTool> = (0..=MAX_MCP_TOOLS)
            .map(|n| listed(&format!("t{n}")))
            .collect();
        let tools = offered_tools(ENTRY, "orders", many, None).unwrap();
        assert!(
            all_tools(vec![(ENTRY.into(), tools)])
                .unwrap_err()
                .starts_with("the MCP servers offer 65 tools, more than the 64")
        );
    }
}
