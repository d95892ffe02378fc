//! `collect_remote_files`: the files and data of an ended remote task's artifacts, kept in the
//! content store so that history holds references only.

use a2a::{Artifact, PartContent, Task};
use baton_a2a::RemoteAgent;
use baton_content::ContentStore;
use baton_core::attachments::{human_size, whole_numbers};
use baton_core::extensions::ENVELOPE_MEDIA_TYPE;
use baton_proto::{Attachment, AttachmentKind, RemoteFiles, RemoteTaskIn};
use bytes::Bytes;
use temporalio_sdk::activities::ActivityError;

use crate::remote_calls::classify;

/// The most files and data parts one sub-task hands its parent.
pub const MAX_FILES: usize = 20;
/// The media type of a file an agent sent without one.
const UNKNOWN_MEDIA_TYPE: &str = "application/octet-stream";

/// Reads the task and keeps each file and data part of its artifacts, in order. A store that
/// does not answer fails the attempt (retried); storing by digest makes a retry write nothing
/// new.
pub async fn collect(
    agent: &RemoteAgent,
    store: &ContentStore,
    max_part_bytes: usize,
    input: &RemoteTaskIn,
) -> Result<RemoteFiles, ActivityError> {
    let task = agent
        .get_task(&input.remote_task_id)
        .await
        .map_err(classify)?;
    let mut files = RemoteFiles {
        attachments: Vec::new(),
        left_out: Vec::new(),
    };
    for found in files_of(&task) {
        let place = found.place();
        if files.attachments.len() == MAX_FILES {
            files
                .left_out
                .push(format!("{place}: past the first {MAX_FILES} files"));
            continue;
        }
        let attachment = match found.body {
            Body::Url(url) => Attachment {
                content: None,
                url: Some(url),
                ..found.attachment
            },
            Body::Bytes(bytes) if bytes.len() > max_part_bytes => {
                files.left_out.push(format!(
                    "{place} is {}, over content.max_part_bytes ({max_part_bytes} bytes)",
                    human_size(bytes.len() as u64)
                ));
                continue;
            }
            Body::Bytes(bytes) => {
                let stored = store.put(bytes).await.map_err(|error| {
                    ActivityError::from(anyhow::anyhow!(
                        "the files of sub-task {} cannot be stored now: {error}",
                        input.stand_in_id
                    ))
                })?;
                Attachment {
                    content: Some(stored),
                    ..found.attachment
                }
            }
        };
        files.attachments.push(attachment);
    }
    for why in &files.left_out {
        tracing::warn!(stand_in = %input.stand_in_id, agent = %input.agent, "a file of task {} is left out: {why}", input.remote_task_id);
    }
    Ok(files)
}

/// One file or data part of an artifact, before it is stored.
struct Found {
    artifact: String,
    part: usize,
    attachment: Attachment,
    body: Body,
}

enum Body {
    Bytes(Bytes),
    Url(String),
}

impl Found {
    /// Where the part is, for a reader: `part 2 of artifact report (scan.tiff)`.
    fn place(&self) -> String {
        let name = self
            .attachment
            .name
            .as_deref()
            .map(|name| format!(" ({name})"))
            .unwrap_or_default();
        format!("part {} of artifact {}{name}", self.part + 1, self.artifact)
    }
}

/// Every file and data part of the task's artifacts, in order; text parts and the task envelope
/// are left out. A part without a file name takes its artifact's name.
fn files_of(task: &Task) -> Vec<Found> {
    task.artifacts.iter().flatten().flat_map(parts_of).collect()
}

fn parts_of(artifact: &Artifact) -> Vec<Found> {
    let label = artifact
        .name
        .clone()
        .unwrap_or_else(|| artifact.artifact_id.clone());
    artifact
        .parts
        .iter()
        .enumerate()
        .filter_map(|(n, part)| {
            let (kind, body, media_type) = match &part.content {
                PartContent::Text(_) => return None,
                PartContent::Data(_) if part.media_type.as_deref() == Some(ENVELOPE_MEDIA_TYPE) => {
                    return None;
                }
                PartContent::Data(value) => (
                    AttachmentKind::Data,
                    Body::Bytes(Bytes::from(whole_numbers(value.clone()).to_string())),
                    "application/json".to_string(),
                ),
                PartContent::Raw(bytes) => (
                    AttachmentKind::File,
                    Body::Bytes(Bytes::from(bytes.clone())),
                    media_type_of(part.media_type.as_deref()),
                ),
                PartContent::Url(url) => (
                    AttachmentKind::File,
                    Body::Url(url.clone()),
                    media_type_of(part.media_type.as_deref()),
                ),
            };
            Some(Found {
                artifact: label.clone(),
                part: n,
                attachment: Attachment {
                    kind,
                    name: part.filename.clone().or_else(|| artifact.name.clone()),
                    media_type,
                    content: None,
                    url: None,
                },
                body,
            })
        })
        .collect()
}

fn media_type_of(given: Option<&str>) -> String {
    given
        .map(str::trim)
        .filter(|given| !given.is_empty())
        .unwrap_or(UNKNOWN_MEDIA_TYPE)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_file_and_data_part_is_found_in_order_with_a_name() {
        let task: Task = serde_json::from_value(json!({
            "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [
                {"artifactId": "a1", "name": "report", "parts": [
                    {"text": "Here it is."},
                    {"raw": "YSxiCjEsMg==", "mediaType": "text/csv", "filename": "march.csv"},
                    {"url": "https://files.example.com/chart.png"}
                ]},
                {"artifactId": "a2", "parts": [
                    {"data": {"total": 3}},
                    {"data": {"kind": "task"}, "mediaType": ENVELOPE_MEDIA_TYPE}
                ]}
            ]
        }))
        .unwrap();
        let found = files_of(&task);
        let seen: Vec<(String, AttachmentKind, Option<&str>, &str)> = found
            .iter()
            .map(|f| {
                (
                    f.place(),
                    f.attachment.kind,
                    f.attachment.name.as_deref(),
                    f.attachment.media_type.as_str(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "part 2 of artifact report (march.csv)".to_string(),
                    AttachmentKind::File,
                    Some("march.csv"),
                    "text/csv"
                ),
                (
                    "part 3 of artifact report (report)".to_string(),
                    AttachmentKind::File,
                    Some("report"),
                    UNKNOWN_MEDIA_TYPE
                ),
                (
                    "part 1 of artifact a2".to_string(),
                    AttachmentKind::Data,
                    None,
                    "application/json"
                ),
            ]
        );
        assert!(matches!(&found[0].body, Body::Bytes(b) if b.as_ref() == b"a,b\n1,2"));
        assert!(
            matches!(&found[1].body, Body::Url(u) if u == "https://files.example.com/chart.png")
        );
        assert!(matches!(&found[2].body, Body::Bytes(b) if b.as_ref() == br#"{"total":3}"#));
    }
}
