//! The files and data of an incoming message: checked against `[content]`'s limits before anything
//! is stored, so a message is taken whole or refused whole.

use a2a::{A2AError, Message, PartContent};
use baton_core::attachments::whole_numbers;
use baton_core::extensions::ENVELOPE_MEDIA_TYPE;
use baton_core::media_types;
use baton_proto::{Attachment, AttachmentKind, ContentRef};
use bytes::Bytes;

/// What `[content]` lets a message carry.
#[derive(Debug, Clone)]
pub struct PartLimits {
    /// `content.max_part_bytes`: the largest file or data part, decoded.
    pub max_part_bytes: usize,
    /// `content.media_types`: the media types a file may have.
    pub media_types: Vec<String>,
    /// `content.max_task_bytes`: the most bytes of files and data one task's messages carry.
    pub max_task_bytes: u64,
    /// `content.fetch_urls`: whether a file given by URL is fetched and kept like one sent as
    /// bytes.
    pub fetch_urls: bool,
}

/// The longest URL a file given by URL may have.
const MAX_URL_CHARS: usize = 2_048;
/// The longest file name kept.
const MAX_NAME_CHARS: usize = 255;
/// The media type of a file sent without one.
const UNKNOWN_MEDIA_TYPE: &str = "application/octet-stream";
/// The media type of a data part, whatever it says: its value is JSON.
const DATA_MEDIA_TYPE: &str = "application/json";

/// A file or data part of a message, checked and not yet stored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IncomingPart {
    kind: AttachmentKind,
    name: Option<String>,
    media_type: String,
    body: Body,
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    /// Bytes to store: a file's, or a data part's JSON text.
    Bytes(Bytes),
    /// A file by URL, fetched only when `content.fetch_urls` is on.
    Url(String),
}

impl IncomingPart {
    /// The bytes to store, if the part has any (a file by URL has none).
    pub(crate) fn bytes(&self) -> Option<&Bytes> {
        match &self.body {
            Body::Bytes(bytes) => Some(bytes),
            Body::Url(_) => None,
        }
    }

    /// The URL of a file given by URL.
    pub(crate) fn url(&self) -> Option<&str> {
        match &self.body {
            Body::Url(url) => Some(url),
            Body::Bytes(_) => None,
        }
    }

    /// The part as the task keeps it, with `stored`, the reference to its bytes.
    pub(crate) fn attachment(self, stored: Option<ContentRef>) -> Attachment {
        Attachment {
            kind: self.kind,
            name: self.name,
            media_type: self.media_type,
            content: stored,
            url: match self.body {
                Body::Url(url) => Some(url),
                Body::Bytes(_) => None,
            },
        }
    }
}

/// The message's files and data, in order, each checked against `limits`; text parts and the
/// task envelope are not among them. The first part over a limit refuses the message, naming the
/// part and the setting.
pub(crate) fn incoming_parts(
    message: &Message,
    limits: &PartLimits,
) -> Result<Vec<IncomingPart>, A2AError> {
    let mut parts = Vec::new();
    for (n, part) in message.parts.iter().enumerate() {
        let name = part
            .filename
            .as_deref()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| name.chars().take(MAX_NAME_CHARS).collect::<String>());
        let incoming = match &part.content {
            PartContent::Text(_) => continue,
            PartContent::Data(_) if part.media_type.as_deref() == Some(ENVELOPE_MEDIA_TYPE) => {
                continue;
            }
            PartContent::Data(value) => IncomingPart {
                kind: AttachmentKind::Data,
                name,
                media_type: DATA_MEDIA_TYPE.to_string(),
                body: Body::Bytes(Bytes::from(
                    serde_json::to_vec(&whole_numbers(value.clone()))
                        .expect("a JSON value always serialises"),
                )),
            },
            PartContent::Raw(bytes) => IncomingPart {
                kind: AttachmentKind::File,
                name,
                media_type: file_media_type(n, part.media_type.as_deref(), limits)?,
                body: Body::Bytes(Bytes::from(bytes.clone())),
            },
            PartContent::Url(url) => IncomingPart {
                kind: AttachmentKind::File,
                name,
                media_type: file_media_type(n, part.media_type.as_deref(), limits)?,
                body: Body::Url(checked_url(n, url)?),
            },
        };
        if let Some(bytes) = incoming.bytes()
            && bytes.len() > limits.max_part_bytes
        {
            return Err(A2AError::invalid_params(format!(
                "part {n} is {} bytes, over this agent's limit of {} bytes a part \
                 (content.max_part_bytes)",
                bytes.len(),
                limits.max_part_bytes
            )));
        }
        parts.push(incoming);
    }
    Ok(parts)
}

/// Refuses `parts` when with the `held` bytes of the task's messages they would pass
/// `content.max_task_bytes`.
pub(crate) fn within_task_limit(
    held: u64,
    parts: &[IncomingPart],
    limits: &PartLimits,
) -> Result<(), A2AError> {
    let adding: u64 = parts
        .iter()
        .filter_map(IncomingPart::bytes)
        .map(|bytes| bytes.len() as u64)
        .sum();
    if adding == 0 || held + adding <= limits.max_task_bytes {
        return Ok(());
    }
    Err(A2AError::invalid_params(format!(
        "the message's files and data are {adding} bytes, and the task's messages already carry          {held}: together over this agent's limit of {} bytes a task (content.max_task_bytes);          start a new task for more",
        limits.max_task_bytes
    )))
}

/// The bytes of files and data the messages of a task carry.
pub(crate) fn held_bytes(messages: &[baton_proto::TaskMessage]) -> u64 {
    messages
        .iter()
        .flat_map(|message| &message.attachments)
        .map(Attachment::size)
        .sum()
}

/// A file's media type, `application/octet-stream` when it gives none, if `limits` take it.
fn file_media_type(n: usize, given: Option<&str>, limits: &PartLimits) -> Result<String, A2AError> {
    let media_type = given
        .map(str::trim)
        .filter(|given| !given.is_empty())
        .unwrap_or(UNKNOWN_MEDIA_TYPE);
    if !media_types::is_pattern(&media_types::essence(media_type)) || media_type.contains('*') {
        return Err(A2AError::invalid_params(format!(
            "part {n} has the media type {media_type:?}, which is not a media type like \"image/png\""
        )));
    }
    if !media_types::accepts(&limits.media_types, media_type) {
        return Err(A2AError::new(
            a2a::error_code::CONTENT_TYPE_NOT_SUPPORTED,
            format!(
                "part {n} is a file of {media_type}: this agent takes files of {} only \
                 (content.media_types)",
                limits.media_types.join(", ")
            ),
        ));
    }
    Ok(media_type.to_string())
}

/// A file's URL: absolute `http` or `https`, of bounded length. Baton keeps it and never fetches
/// it.
fn checked_url(n: usize, url: &str) -> Result<String, A2AError> {
    let refused = |why: &str| {
        A2AError::invalid_params(format!(
            "part {n} is a file by URL that {why}: give an absolute http or https URL of at most \
             {MAX_URL_CHARS} characters, or send the bytes"
        ))
    };
    if url.chars().count() > MAX_URL_CHARS {
        return Err(refused("is too long"));
    }
    match url::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => {
            Ok(parsed.to_string())
        }
        Ok(_) => Err(refused("is not http or https")),
        Err(_) => Err(refused("is not a URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(parts: serde_json::Value) -> Message {
        serde_json::from_value(json!({"messageId": "m", "role": "ROLE_USER", "parts": parts}))
            .unwrap()
    }

    fn any() -> PartLimits {
        PartLimits {
            max_part_bytes: 16,
            media_types: vec!["*/*".into()],
            max_task_bytes: 32,
            fetch_urls: false,
        }
    }

    #[test]
    fn files_and_data_come_in_and_text_and_the_envelope_stay_out() {
        let parts = incoming_parts(
            &message(json!([
                {"text": "What is in these?"},
                {"raw": "aGVsbG8=", "mediaType": "image/png", "filename": "a.png"},
                {"url": "https://files.example.com/q1.pdf", "mediaType": "application/pdf"},
                {"data": {"rows": 2}},
                {"data": {"kind": "task", "payload": {}}, "mediaType": ENVELOPE_MEDIA_TYPE},
                {"raw": "aGk="}
            ])),
            &any(),
        )
        .unwrap();
        let attachments: Vec<Attachment> = parts
            .into_iter()
            .map(|part| part.attachment(None))
            .collect();
        let summary: Vec<(AttachmentKind, Option<&str>, &str, Option<&str>)> = attachments
            .iter()
            .map(|a| {
                (
                    a.kind,
                    a.name.as_deref(),
                    a.media_type.as_str(),
                    a.url.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (AttachmentKind::File, Some("a.png"), "image/png", None),
                (
                    AttachmentKind::File,
                    None,
                    "application/pdf",
                    Some("https://files.example.com/q1.pdf")
                ),
                (AttachmentKind::Data, None, "application/json", None),
                (AttachmentKind::File, None, "application/octet-stream", None),
            ]
        );
    }

    #[test]
    fn a_task_takes_files_up_to_its_limit_in_all() {
        let parts = incoming_parts(&message(json!([{"raw": "aGVsbG8="}])), &any()).unwrap();
        assert!(within_task_limit(27, &parts, &any()).is_ok(), "27 + 5 = 32");
        let error = within_task_limit(28, &parts, &any()).unwrap_err();
        assert!(
            error.message.contains("content.max_task_bytes"),
            "{}",
            error.message
        );
        let text_only = incoming_parts(&message(json!([{"text": "hi"}])), &any()).unwrap();
        assert!(within_task_limit(1000, &text_only, &any()).is_ok());
    }

    #[test]
    fn the_bytes_are_the_files_and_the_datas_json() {
        let parts = incoming_parts(
            &message(json!([{"raw": "aGVsbG8="}, {"data": {"a": [1, 2]}}])),
            &any(),
        )
        .unwrap();
        assert_eq!(parts[0].bytes().unwrap().as_ref(), b"hello");
        assert_eq!(parts[1].bytes().unwrap().as_ref(), br#"{"a":[1,2]}"#);
    }

    #[test]
    fn whole_numbers_of_a_protobuf_client_are_integers_again() {
        let parts = incoming_parts(
            &message(json!([{"data": {"order": 1234.0, "total": 99.5, "ids": [1.0, 2.0]}}])),
            &any_size(),
        )
        .unwrap();
        assert_eq!(
            parts[0].bytes().unwrap().as_ref(),
            br#"{"ids":[1,2],"order":1234,"total":99.5}"#
        );
    }

    fn any_size() -> PartLimits {
        PartLimits {
            max_part_bytes: 1024,
            ..any()
        }
    }

    #[test]
    fn a_part_over_the_size_limit_refuses_the_message_naming_the_setting() {
        let error = incoming_parts(
            &message(json!([{"raw": "aGVsbG8="}, {"raw": "MDEyMzQ1Njc4OWFiY2RlZmc="}])),
            &any(),
        )
        .unwrap_err();
        assert_eq!(error.code, a2a::error_code::INVALID_PARAMS);
        assert!(
            error
                .message
                .contains("part 1 is 17 bytes, over this agent's limit of 16 bytes"),
            "{}",
            error.message
        );
        assert!(error.message.contains("content.max_part_bytes"));
        let data = incoming_parts(
            &message(json!([{"data": {"long": "x".repeat(20)}}])),
            &any(),
        );
        assert!(data.is_err());
    }

    #[test]
    fn a_file_of_a_type_not_taken_is_refused_as_content_type_not_supported() {
        let limits = PartLimits {
            max_part_bytes: 1024,
            max_task_bytes: 4096,
            fetch_urls: false,
            media_types: vec!["image/*".into()],
        };
        let error = incoming_parts(
            &message(json!([{"raw": "aGk=", "mediaType": "application/pdf"}])),
            &limits,
        )
        .unwrap_err();
        assert_eq!(error.code, a2a::error_code::CONTENT_TYPE_NOT_SUPPORTED);
        assert!(
            error.message.contains(
                "part 0 is a file of application/pdf: this agent takes files of image/* only"
            ),
            "{}",
            error.message
        );
        let untyped = incoming_parts(&message(json!([{"raw": "aGk="}])), &limits).unwrap_err();
        assert_eq!(untyped.code, a2a::error_code::CONTENT_TYPE_NOT_SUPPORTED);
        assert!(
            incoming_parts(
                &message(json!([{"raw": "aGk=", "mediaType": "image/png"}])),
                &limits
            )
            .is_ok()
        );
    }

    #[test]
    fn a_malformed_media_type_or_url_is_refused() {
        for (part, said) in [
            (
                json!({"raw": "aGk=", "mediaType": "png"}),
                "not a media type",
            ),
            (
                json!({"raw": "aGk=", "mediaType": "image/*"}),
                "not a media type",
            ),
            (json!({"url": "file:///etc/passwd"}), "is not http or https"),
            (json!({"url": "not a url"}), "is not a URL"),
            (
                json!({"url": format!("https://a.example.com/{}", "x".repeat(2100))}),
                "is too long",
            ),
        ] {
            let error = incoming_parts(&message(json!([part])), &any()).unwrap_err();
            assert_eq!(error.code, a2a::error_code::INVALID_PARAMS, "{part}");
            assert!(error.message.contains(said), "{part}: {}", error.message);
        }
    }
}
