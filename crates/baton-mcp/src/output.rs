//! A tool result's content as the model and the task take it: text blocks as one text, and each
//! image, audio clip or embedded resource as a file of the task, which the text names where it
//! stood (a link stays a line that names it: Baton does not fetch it).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::{ToolFile, ToolOutput};

/// What the tool's text says of a file where it stood: the model reads the file itself in a note
/// after the turn's tool results, as it reads any file of the task.
const KEPT: &str = "kept as a file of the task, shown after the tool results";
/// The media type of a file a tool gave without one.
const UNKNOWN_MEDIA_TYPE: &str = "application/octet-stream";

/// What a `tools/call` result gives: its text blocks, one after the other, with a line naming
/// each file where it stood; with no content, its structured content as JSON.
pub fn output_of(content: &[Value], structured: Option<&Value>, is_error: bool) -> ToolOutput {
    let mut files = Vec::new();
    let text = if content.is_empty() {
        structured.map(Value::to_string).unwrap_or_default()
    } else {
        content
            .iter()
            .map(|block| block_text(block, &mut files))
            .collect::<Vec<_>>()
            .join("\n")
    };
    ToolOutput {
        text,
        is_error,
        files,
    }
}

fn block_text(block: &Value, files: &mut Vec<ToolFile>) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let file = match kind {
        "text" => return text(block, "text").unwrap_or_default(),
        "resource_link" => return format!("[a link: {}]", text(block, "uri").unwrap_or_default()),
        "image" | "audio" => decoded(block, "data").map(|bytes| ToolFile {
            name: None,
            media_type: media_type(block),
            bytes,
        }),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let bytes = match text(resource, "text") {
                Some(text) => Ok(text.into_bytes()),
                None => decoded(resource, "blob"),
            };
            bytes.map(|bytes| ToolFile {
                name: text(resource, "uri").and_then(|uri| file_name(&uri)),
                media_type: media_type(resource),
                bytes,
            })
        }
        other => return format!("[content of type {other:?}, not shown]"),
    };
    match file {
        Ok(file) => {
            let line = format!(
                "[file{}, {}, {} bytes: {KEPT}]",
                file.name
                    .as_ref()
                    .map(|name| format!(" {name:?}"))
                    .unwrap_or_default(),
                file.media_type,
                file.bytes.len(),
            );
            files.push(file);
            line
        }
        Err(why) => format!("[{kind} content the tool sent is unreadable: {why}]"),
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

fn media_type(value: &Value) -> String {
    text(value, "mimeType")
        .filter(|media_type| !media_type.trim().is_empty())
        .unwrap_or_else(|| UNKNOWN_MEDIA_TYPE.to_string())
}

fn decoded(value: &Value, key: &str) -> Result<Vec<u8>, String> {
    let encoded = text(value, key).ok_or_else(|| format!("no {key}"))?;
    STANDARD
        .decode(encoded.trim())
        .map_err(|error| format!("its {key} is not base64 ({error})"))
}

/// The last segment of a resource's URI, as the file's name: `orders://1042/items.csv` is
/// `items.csv`.
fn file_name(uri: &str) -> Option<String> {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let name = path.rsplit('/').next().unwrap_or(path).trim();
    (!name.is_empty() && !name.contains(':')).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn output(content: &[Value]) -> ToolOutput {
        output_of(content, None, false)
    }

    #[test]
    fn text_blocks_are_joined_by_lines() {
        let content = [
            json!({"type": "text", "text": "one"}),
            json!({"type": "text", "text": "two"}),
        ];
        assert_eq!(output(&content).text, "one\ntwo");
        assert!(output(&content).files.is_empty());
    }

    #[test]
    fn an_embedded_resource_is_a_file_named_by_its_uri() {
        let content = [
            json!({"type": "text", "text": "the order's items:"}),
            json!({"type": "resource", "resource": {
                "uri": "orders://1042/items.csv", "mimeType": "text/csv", "text": "sku,qty\nL1,1\n"}}),
            json!({"type": "resource", "resource": {"uri": "file:///o.png", "blob": "iVBORw=="}}),
        ];
        let out = output(&content);
        assert_eq!(
            out.text,
            format!(
                "the order's items:\n\
             [file \"items.csv\", text/csv, 13 bytes: {KEPT}]\n\
             [file \"o.png\", application/octet-stream, 4 bytes: {KEPT}]"
            )
        );
        assert_eq!(
            out.files,
            vec![
                ToolFile {
                    name: Some("items.csv".into()),
                    media_type: "text/csv".into(),
                    bytes: b"sku,qty\nL1,1\n".to_vec(),
                },
                ToolFile {
                    name: Some("o.png".into()),
                    media_type: UNKNOWN_MEDIA_TYPE.into(),
                    bytes: vec![0x89, b'P', b'N', b'G'],
                },
            ]
        );
    }

    #[test]
    fn images_and_audio_are_files_and_links_are_named() {
        let content = [
            json!({"type": "image", "data": "AAEC", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "AAEC", "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "https://o.example.com/1042", "name": "o"}),
            json!({"type": "video"}),
        ];
        let out = output(&content);
        assert_eq!(
            out.text,
            format!(
                "[file, image/png, 3 bytes: {KEPT}]\n\
             [file, audio/wav, 3 bytes: {KEPT}]\n\
             [a link: https://o.example.com/1042]\n\
             [content of type \"video\", not shown]"
            )
        );
        assert_eq!(out.files.len(), 2);
        assert_eq!(out.files[0].bytes, vec![0, 1, 2]);
        assert_eq!(out.files[1].media_type, "audio/wav");
    }

    #[test]
    fn content_that_does_not_decode_is_named_and_not_kept() {
        let content = [
            json!({"type": "image", "data": "not base64!", "mimeType": "image/png"}),
            json!({"type": "image", "mimeType": "image/png"}),
            json!({"type": "resource", "resource": {"uri": "x://y"}}),
        ];
        let out = output(&content);
        assert!(out.files.is_empty());
        assert!(
            out.text
                .starts_with("[image content the tool sent is unreadable: its data is not base64")
        );
        assert!(
            out.text
                .contains("[image content the tool sent is unreadable: no data]")
        );
        assert!(
            out.text
                .ends_with("[resource content the tool sent is unreadable: no blob]")
        );
    }

    #[test]
    fn file_names_come_from_the_last_segment_of_the_uri() {
        assert_eq!(
            file_name("orders://1042/items.csv?v=2").as_deref(),
            Some("items.csv")
        );
        assert_eq!(file_name("file:///tmp/a.png").as_deref(), Some("a.png"));
        assert_eq!(file_name("orders://1042/"), None);
        assert_eq!(file_name("urn:x"), None);
    }

    #[test]
    fn with_no_content_the_structured_content_is_read() {
        assert_eq!(
            output_of(&[], Some(&json!({"order": "1042"})), false).text,
            r#"{"order":"1042"}"#
        );
        assert_eq!(output(&[]).text, "");
    }
}
