//! A tool result's content as one text the model can read: text blocks as they are, a text
//! resource by its text, and a line that names anything else (an image, audio, a link), which a
//! text model cannot read.

use serde_json::Value;

/// The text of a `tools/call` result: its content blocks, one after the other; with no content,
/// its structured content as JSON.
pub fn output_text(content: &[Value], structured: Option<&Value>) -> String {
    if content.is_empty() {
        return structured.map(Value::to_string).unwrap_or_default();
    }
    content
        .iter()
        .map(block_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn block_text(block: &Value) -> String {
    let text =
        |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => text(block, "text").unwrap_or_default(),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            text(resource, "text").unwrap_or_else(|| {
                format!(
                    "[a binary resource, not shown: {}]",
                    text(resource, "uri").unwrap_or_default()
                )
            })
        }
        "resource_link" => format!("[a link: {}]", text(block, "uri").unwrap_or_default()),
        "image" | "audio" => format!(
            "[{kind} content ({}), not shown]",
            text(block, "mimeType").unwrap_or_else(|| "unknown type".into())
        ),
        other => format!("[content of type {other:?}, not shown]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_are_joined_by_lines() {
        let content = [
            json!({"type": "text", "text": "one"}),
            json!({"type": "text", "text": "two"}),
        ];
        assert_eq!(output_text(&content, None), "one\ntwo");
    }

    #[test]
    fn a_text_resource_reads_as_its_text_and_a_binary_one_by_its_uri() {
        let content = [
            json!({"type": "resource", "resource": {"uri": "file:///o.json", "text": "{}"}}),
            json!({"type": "resource", "resource": {"uri": "file:///o.png", "blob": "AAAA"}}),
        ];
        assert_eq!(
            output_text(&content, None),
            "{}\n[a binary resource, not shown: file:///o.png]"
        );
    }

    #[test]
    fn what_a_text_model_cannot_read_is_named() {
        let content = [
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "AAAA"}),
            json!({"type": "resource_link", "uri": "https://o.example.com/1042", "name": "o"}),
            json!({"type": "video"}),
        ];
        assert_eq!(
            output_text(&content, None),
            "[image content (image/png), not shown]\n\
             [audio content (unknown type), not shown]\n\
             [a link: https://o.example.com/1042]\n\
             [content of type \"video\", not shown]"
        );
    }

    #[test]
    fn with_no_content_the_structured_content_is_read() {
        assert_eq!(
            output_text(&[], Some(&json!({"order": "1042"}))),
            r#"{"order":"1042"}"#
        );
        assert_eq!(output_text(&[], None), "");
    }
}
