//! A task's stored files as A2A parts: their bytes read from the content store for one
//! rendering (GetTask, a stream, a push), within a bound, and each artifact of an answer as an
//! A2A `Artifact`.

use std::collections::HashMap;
use std::time::Duration;

use a2a::{Artifact, Part, PartContent};
use baton_content::ContentStore;
use baton_core::attachments::heading;
use baton_proto::{AnswerArtifact, Attachment, AttachmentKind};
use bytes::Bytes;

/// The longest a rendering of a task (GetTask, a stream's artifacts, a push) waits for the
/// bytes of its files: past it, those not yet read are named instead of sent.
pub const READ_FOR_RENDERING: Duration = Duration::from_secs(5);

/// The bytes of stored attachments, by digest, read for one rendering of a task.
#[derive(Debug, Default)]
pub struct Contents(HashMap<String, Bytes>);

impl Contents {
    /// None: every stored attachment is rendered as a line that names it.
    pub fn none() -> Contents {
        Contents::default()
    }

    /// Keeps the bytes of `digest`.
    pub fn insert(&mut self, digest: String, bytes: Bytes) {
        self.0.insert(digest, bytes);
    }

    /// Whether it holds no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes of `attachments` of task `task_id` that `store` holds. One that cannot be read
    /// now is left out (the rendering names it instead), so a store that is down never keeps a
    /// caller from its task: reading stops at the first sign that the store is down, and all of
    /// it takes at most [`READ_FOR_RENDERING`].
    pub async fn read<'a>(
        store: &ContentStore,
        task_id: &str,
        attachments: impl Iterator<Item = &'a Attachment>,
    ) -> Contents {
        let deadline = tokio::time::Instant::now() + READ_FOR_RENDERING;
        let mut contents = Contents::none();
        for content in attachments.filter_map(|attachment| attachment.content.as_ref()) {
            if contents.0.contains_key(&content.digest) {
                continue;
            }
            match tokio::time::timeout_at(deadline, store.get(content)).await {
                Ok(Ok(bytes)) => contents.insert(content.digest.clone(), bytes),
                Ok(Err(error)) if !error.is_retryable() => {
                    tracing::warn!(task = %task_id, "a file of the task is left out of its rendering: {error}");
                }
                Ok(Err(error)) => {
                    tracing::warn!(task = %task_id, "the task's files are left out of its rendering: {error}");
                    break;
                }
                Err(_) => {
                    tracing::warn!(task = %task_id, "the task's files are left out of its rendering: the content store ({}) gave them not within {}s", store.place(), READ_FOR_RENDERING.as_secs());
                    break;
                }
            }
        }
        contents
    }

    /// The bytes of the files and data parts among `artifacts` of task `task_id`, as
    /// [`Contents::read`] reads them.
    pub async fn of_artifacts(
        store: &ContentStore,
        task_id: &str,
        artifacts: &[AnswerArtifact],
    ) -> Contents {
        let files = artifacts.iter().filter_map(|a| a.attachment.as_ref());
        Contents::read(store, task_id, files).await
    }
}

/// One artifact of task `task_id`'s answer as A2A says it: the answer as a text part, a file or
/// data part whole when `contents` holds its bytes.
pub fn artifact_of(task_id: &str, artifact: &AnswerArtifact, contents: &Contents) -> Artifact {
    let part = match (&artifact.text, &artifact.attachment) {
        (_, Some(attachment)) => part_of(attachment, 0, contents),
        (text, None) => Part::text(text.clone().unwrap_or_default()),
    };
    Artifact {
        artifact_id: format!("{task_id}:{}", artifact.id),
        name: Some(artifact.name.clone()),
        description: artifact.description.clone(),
        parts: vec![part],
        metadata: None,
        extensions: None,
    }
}

/// One attachment (`index`, 0-based, among its message's) as a part: a file by URL as its URL;
/// stored bytes whole (a data part's as its JSON value); stored bytes not at hand as a text part
/// that names them.
pub fn part_of(attachment: &Attachment, index: usize, contents: &Contents) -> Part {
    let bytes = attachment
        .content
        .as_ref()
        .and_then(|content| contents.0.get(&content.digest));
    let content = match (&attachment.url, bytes, attachment.kind) {
        (Some(url), _, _) => PartContent::Url(url.clone()),
        (None, Some(bytes), AttachmentKind::Data) => match serde_json::from_slice(bytes) {
            Ok(value) => PartContent::Data(value),
            Err(_) => PartContent::Raw(bytes.to_vec()),
        },
        (None, Some(bytes), AttachmentKind::File) => PartContent::Raw(bytes.to_vec()),
        (None, None, _) => {
            return Part::text(format!(
                "{} (not available now)",
                heading(attachment, index)
            ));
        }
    };
    Part {
        content,
        filename: attachment.name.clone(),
        media_type: Some(attachment.media_type.clone()),
        metadata: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::ContentRef;

    fn csv() -> Attachment {
        Attachment {
            kind: AttachmentKind::File,
            name: Some("order-1043.csv".into()),
            media_type: "text/csv".into(),
            content: Some(ContentRef {
                digest: "sha256:aa".into(),
                size: 8,
            }),
            url: None,
        }
    }

    fn file_artifact(attachment: Attachment) -> AnswerArtifact {
        AnswerArtifact {
            id: "tool:1".into(),
            name: "order-1043.csv".into(),
            description: Some("given by tool order_csv".into()),
            text: None,
            attachment: Some(attachment),
        }
    }

    #[test]
    fn a_file_artifact_is_sent_whole_a_data_one_as_its_value_and_the_answer_as_text() {
        let mut contents = Contents::none();
        contents.insert("sha256:aa".into(), Bytes::from_static(b"order,\n1"));
        contents.insert("sha256:bb".into(), Bytes::from_static(br#"{"total":12}"#));
        let file = artifact_of("t-1", &file_artifact(csv()), &contents);
        assert_eq!(file.artifact_id, "t-1:tool:1");
        assert_eq!(file.name.as_deref(), Some("order-1043.csv"));
        assert_eq!(file.description.as_deref(), Some("given by tool order_csv"));
        assert_eq!(
            file.parts[0].content,
            PartContent::Raw(b"order,\n1".to_vec())
        );
        assert_eq!(file.parts[0].media_type.as_deref(), Some("text/csv"));

        let data = Attachment {
            kind: AttachmentKind::Data,
            name: None,
            media_type: "application/json".into(),
            content: Some(ContentRef {
                digest: "sha256:bb".into(),
                size: 12,
            }),
            url: None,
        };
        let data = artifact_of("t-1", &file_artifact(data), &contents);
        assert_eq!(
            data.parts[0].content,
            PartContent::Data(serde_json::json!({"total": 12}))
        );

        let answer = AnswerArtifact {
            id: "answer".into(),
            name: "answer".into(),
            description: None,
            text: Some("Here it is.".into()),
            attachment: None,
        };
        let answer = artifact_of("t-1", &answer, &contents);
        assert_eq!(answer.artifact_id, "t-1:answer");
        assert_eq!(answer.parts, vec![Part::text("Here it is.")]);
    }

    #[test]
    fn a_file_the_store_cannot_give_now_is_named_not_dropped_and_a_url_stays_a_url() {
        let missing = artifact_of("t-1", &file_artifact(csv()), &Contents::none());
        assert_eq!(
            missing.parts[0].content,
            PartContent::Text("[file 1: order-1043.csv, text/csv, 8 B] (not available now)".into())
        );
        let by_url = Attachment {
            content: None,
            url: Some("https://files.example.com/o.csv".into()),
            ..csv()
        };
        let by_url = artifact_of("t-1", &file_artifact(by_url), &Contents::none());
        assert_eq!(
            by_url.parts[0].content,
            PartContent::Url("https://files.example.com/o.csv".into())
        );
    }

    /// A store that takes connections and never answers: a rendering gives up on its files
    /// within its bound, not the store's minute of retries per file.
    #[tokio::test(start_paused = true)]
    async fn a_rendering_waits_for_a_silent_store_at_most_its_bound() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let location = baton_content::S3Location {
            bucket: "b".into(),
            prefix: "p".into(),
            region: "us-east-1".into(),
            endpoint: Some(format!("http://{}", silent.local_addr().unwrap())),
            keys: Some(baton_content::S3Keys {
                id: "k".into(),
                secret: "s".into(),
            }),
        };
        let store = ContentStore::s3(&location, Duration::from_secs(60)).unwrap();
        let files: Vec<Attachment> = (0..3)
            .map(|n| Attachment {
                content: Some(ContentRef {
                    digest: format!("sha256:{n:064}"),
                    size: 1,
                }),
                ..csv()
            })
            .collect();
        let started = tokio::time::Instant::now();
        let contents = Contents::read(&store, "t-1", files.iter()).await;
        assert!(contents.is_empty());
        assert!(started.elapsed() <= READ_FOR_RENDERING + Duration::from_secs(1));
        drop(silent);
    }
}
