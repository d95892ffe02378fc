//! `invoke_tool`: one call of an MCP tool. What the tool said (its output, or its own error) is
//! an answer the model reads; a call that got no answer fails the attempt, and the workflow's
//! retry policy for the tool decides whether another is made.

use baton_core::mcp_tool::{tool_arguments, tool_error_output, tool_output_content};
use baton_mcp::{CallError, McpServers};
use baton_proto::failure_types::TOOL_REFUSED;
use baton_proto::{InvokeToolIn, InvokeToolOut};
use temporalio_sdk::activities::ActivityError;

use crate::non_retryable;

pub async fn invoke(
    servers: &McpServers,
    input: InvokeToolIn,
) -> Result<InvokeToolOut, ActivityError> {
    let arguments = match tool_arguments(&input.arguments) {
        Ok(arguments) => arguments,
        Err(content) => {
            return Ok(InvokeToolOut {
                content,
                is_error: true,
            });
        }
    };
    match servers.call(&input.tool, arguments).await {
        Ok(output) if output.is_error => Ok(InvokeToolOut {
            content: tool_error_output(&input.tool, &output.text),
            is_error: true,
        }),
        Ok(output) => Ok(InvokeToolOut {
            content: tool_output_content(&output.text),
            is_error: false,
        }),
        Err(error) if error.may_succeed_later() => {
            tracing::warn!(task = %input.task_id, tool = %input.tool, "the tool call failed: {error}");
            Err(ActivityError::from(anyhow::anyhow!(error.to_string())))
        }
        Err(error @ CallError::Refused { .. }) => Ok(InvokeToolOut {
            content: tool_error_output(&input.tool, &error.to_string()),
            is_error: true,
        }),
        Err(error) => Err(non_retryable(TOOL_REFUSED, error.to_string())),
    }
}
