//! The files a delegation sends with its brief: each checked against what the agent's card says
//! it takes, then read from the content store into a file or data part.

use a2a::{Part, PartContent};
use baton_a2a::RemoteAgent;
use baton_content::ContentStore;
use baton_core::media_types;
use baton_proto::{Attachment, AttachmentKind};

/// Why the files could not go with the brief.
#[derive(Debug)]
pub enum NotSent {
    /// The agent cannot take one of them, or its bytes are gone: the delegation fails with this
    /// reason, and nothing is created.
    Refused(String),
    /// The content store does not answer: worth another attempt.
    StoreDown(String),
}

/// The parts for `attachments`, in order, for `agent`.
pub async fn brief_parts(
    agent: &RemoteAgent,
    store: &ContentStore,
    attachments: &[Attachment],
) -> Result<Vec<Part>, NotSent> {
    let modes = &agent.card().default_input_modes;
    let mut parts = Vec::with_capacity(attachments.len());
    for (index, attachment) in attachments.iter().enumerate() {
        let name = attachment.label(index);
        if let Some(why) = not_taken(modes, attachment) {
            return Err(NotSent::Refused(format!(
                "{name} ({}) cannot be sent: {why}",
                attachment.media_type
            )));
        }
        let content = match (&attachment.content, &attachment.url) {
            (Some(stored), _) => {
                let bytes = store.get(stored).await.map_err(|error| {
                    if error.is_retryable() {
                        NotSent::StoreDown(error.to_string())
                    } else {
                        NotSent::Refused(format!("{name} cannot be read: {error}"))
                    }
                })?;
                match attachment.kind {
                    AttachmentKind::Data => serde_json::from_slice(&bytes)
                        .map(PartContent::Data)
                        .unwrap_or_else(|_| PartContent::Raw(bytes.to_vec())),
                    AttachmentKind::File => PartContent::Raw(bytes.to_vec()),
                }
            }
            (None, Some(url)) => PartContent::Url(url.clone()),
            (None, None) => return Err(NotSent::Refused(format!("{name} has no content"))),
        };
        parts.push(Part {
            content,
            filename: attachment.name.clone(),
            media_type: Some(attachment.media_type.clone()),
            metadata: None,
        });
    }
    Ok(parts)
}

/// Why an agent whose card lists `modes` (its `defaultInputModes`) cannot take `attachment`;
/// none when it can. A card that lists no modes says nothing, and is trusted to take it.
fn not_taken(modes: &[String], attachment: &Attachment) -> Option<String> {
    let taken = modes.is_empty()
        || media_types::accepts(modes, &attachment.media_type)
        || (attachment.kind == AttachmentKind::Data
            && modes.iter().any(|mode| mode.ends_with("json")));
    (!taken).then(|| format!("the agent takes only {}", modes.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attachment(kind: AttachmentKind, media_type: &str) -> Attachment {
        Attachment {
            kind,
            name: Some("a".into()),
            media_type: media_type.into(),
            content: None,
            url: None,
        }
    }

    #[test]
    fn a_file_goes_only_to_an_agent_whose_card_takes_its_type() {
        let modes = |list: &[&str]| list.iter().map(ToString::to_string).collect::<Vec<_>>();
        let csv = attachment(AttachmentKind::File, "text/csv");
        assert_eq!(
            not_taken(&modes(&["text/plain"]), &csv).as_deref(),
            Some("the agent takes only text/plain")
        );
        assert_eq!(not_taken(&modes(&["text/plain", "text/csv"]), &csv), None);
        assert_eq!(not_taken(&modes(&["text/*"]), &csv), None);
        assert_eq!(not_taken(&modes(&["*/*"]), &csv), None);
        assert_eq!(not_taken(&[], &csv), None, "a card that says nothing");
        let data = attachment(AttachmentKind::Data, "application/json");
        assert_eq!(
            not_taken(&modes(&["text/plain", "application/json"]), &data),
            None
        );
        assert!(not_taken(&modes(&["text/plain"]), &data).is_some());
    }
}
