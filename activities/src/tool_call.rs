//! `invoke_tool`: one call of an MCP tool. What the tool said (its output, or its own error) is
//! an answer the model reads; a call that got no answer fails the attempt, and the workflow's
//! retry policy for the tool decides whether another is made. The images, audio and embedded
//! resources of an answer are kept in the content store, as files of the task.

use baton_content::ContentStore;
use baton_core::attachments::human_size;
use baton_core::mcp_tool::{tool_arguments, tool_error_output, tool_output_content};
use baton_mcp::{CallError, McpServers, ToolFile};
use baton_proto::failure_types::TOOL_REFUSED;
use baton_proto::{Attachment, AttachmentKind, InvokeToolIn, InvokeToolOut};
use bytes::Bytes;
use temporalio_sdk::activities::ActivityError;

use crate::{TaskContent, non_retryable};

pub async fn invoke(
    servers: &McpServers,
    content: &TaskContent,
    input: InvokeToolIn,
) -> Result<InvokeToolOut, ActivityError> {
    let answer = |content: String, is_error: bool| InvokeToolOut {
        content,
        is_error,
        attachments: Vec::new(),
    };
    let arguments = match tool_arguments(&input.arguments) {
        Ok(arguments) => arguments,
        Err(content) => return Ok(answer(content, true)),
    };
    match servers.call(&input.tool, arguments).await {
        Ok(output) if output.is_error => {
            Ok(answer(tool_error_output(&input.tool, &output.text), true))
        }
        Ok(output) => {
            let (attachments, left_out) = kept(content, &input, output.files).await;
            let text = std::iter::once(output.text)
                .chain(left_out)
                .collect::<Vec<_>>()
                .join("\n");
            Ok(InvokeToolOut {
                attachments,
                ..answer(tool_output_content(&text), false)
            })
        }
        Err(error) if error.may_succeed_later() => {
            tracing::warn!(task = %input.task_id, tool = %input.tool, "the tool call failed: {error}");
            Err(ActivityError::from(anyhow::anyhow!(error.to_string())))
        }
        Err(error @ CallError::Refused { .. }) => Ok(answer(
            tool_error_output(&input.tool, &error.to_string()),
            true,
        )),
        Err(error) => Err(non_retryable(TOOL_REFUSED, error.to_string())),
    }
}

/// The files of a tool's answer, stored, and a line for each one that could not be: the tool has
/// run (it may have changed something), so its answer is never thrown away for a file. The
/// store retries for `content.retry_for` before it gives up on one.
async fn kept(
    content: &TaskContent,
    input: &InvokeToolIn,
    files: Vec<ToolFile>,
) -> (Vec<Attachment>, Vec<String>) {
    let mut attachments = Vec::new();
    let mut left_out = Vec::new();
    for (index, file) in files.into_iter().enumerate() {
        let place = format!(
            "file {} of the answer{}",
            index + 1,
            file.name
                .as_ref()
                .map(|name| format!(" ({name})"))
                .unwrap_or_default()
        );
        match store(&content.store, content.max_part_bytes, file).await {
            Ok(attachment) => attachments.push(attachment),
            Err(why) => {
                tracing::warn!(task = %input.task_id, tool = %input.tool, "{place} is left out: {why}");
                left_out.push(format!("[{place} is left out: {why}]"));
            }
        }
    }
    (attachments, left_out)
}

async fn store(
    store: &ContentStore,
    max_part_bytes: usize,
    file: ToolFile,
) -> Result<Attachment, String> {
    if file.bytes.len() > max_part_bytes {
        return Err(format!(
            "it is {}, over content.max_part_bytes ({max_part_bytes} bytes)",
            human_size(file.bytes.len() as u64)
        ));
    }
    let stored = store
        .put(Bytes::from(file.bytes))
        .await
        .map_err(|error| format!("the content store did not take it: {error}"))?;
    Ok(Attachment {
        kind: AttachmentKind::File,
        name: file.name,
        media_type: file.media_type,
        content: Some(stored),
        url: None,
    })
}
