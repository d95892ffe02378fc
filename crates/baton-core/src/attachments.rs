//! How the model is shown the files and data a message carried: an image as an image, a text-like
//! file or data inline (bounded), anything else by its name, type and size.

use baton_proto::{Attachment, AttachmentKind};

use crate::media_types::essence;

/// The image types OpenAI-compatible vision models take as `image_url` parts.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// The largest image sent to the model as an image (OpenAI's limit per image).
pub const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;
/// The most characters of one text-like file or data part the model reads inline; the rest is
/// cut with a marker that says how much was left out.
pub const MAX_INLINE_CHARS: usize = 20_000;
/// What an image is counted as against the context budget, in characters: about 1,000 tokens,
/// a large image at high detail.
const IMAGE_CHARS: usize = 4_000;
/// What a line that names an attachment is counted as, in characters.
const LINE_CHARS: usize = 120;
/// The longest name shown.
const MAX_NAME_CHARS: usize = 120;

/// How the model is shown one attachment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelView {
    /// As an image part.
    Image,
    /// Its text inline, up to [`MAX_INLINE_CHARS`].
    Inline,
    /// A line that names it: name, media type, size or URL.
    Named,
}

/// How the model is shown `attachment`.
pub fn model_view(attachment: &Attachment) -> ModelView {
    let Some(content) = &attachment.content else {
        return ModelView::Named;
    };
    let media_type = essence(&attachment.media_type);
    if attachment.kind == AttachmentKind::Data || is_text_like(&media_type) {
        ModelView::Inline
    } else if IMAGE_TYPES.contains(&media_type.as_str()) && content.size <= MAX_IMAGE_BYTES {
        ModelView::Image
    } else {
        ModelView::Named
    }
}

/// Whether a file of `media_type` is text the model can read: `text/*`, JSON, XML, YAML, CSV.
pub fn is_text_like(media_type: &str) -> bool {
    let media_type = essence(media_type);
    media_type.starts_with("text/")
        || media_type.ends_with("+json")
        || media_type.ends_with("+xml")
        || [
            "application/json",
            "application/xml",
            "application/yaml",
            "application/x-yaml",
            "application/csv",
            "application/x-ndjson",
        ]
        .contains(&media_type.as_str())
}

/// The characters `attachment` is counted as against the context budget.
pub fn budget_chars(attachment: &Attachment) -> usize {
    LINE_CHARS
        + match model_view(attachment) {
            ModelView::Image => IMAGE_CHARS,
            ModelView::Inline => (attachment.size() as usize).min(MAX_INLINE_CHARS),
            ModelView::Named => 0,
        }
}

/// The line that opens attachment `index` (0-based) for the model: `[file 1: q1.png, image/png,
/// 48.2 kB]`, or with the URL of a file Baton did not fetch.
pub fn heading(attachment: &Attachment, index: usize) -> String {
    let kind = match attachment.kind {
        AttachmentKind::File => "file",
        AttachmentKind::Data => "data",
    };
    let name = attachment
        .name
        .as_deref()
        .map(|name| format!(": {}", clean_name(name)))
        .unwrap_or_default();
    let place = match (&attachment.content, &attachment.url) {
        (Some(content), _) => human_size(content.size),
        (None, Some(url)) => format!("at {}, not fetched", clean_name(url)),
        (None, None) => "no content".to_string(),
    };
    format!(
        "[{kind} {}{name}, {}, {place}]",
        index + 1,
        clean_name(&attachment.media_type)
    )
}

/// `text` as the model reads it inline: whole up to [`MAX_INLINE_CHARS`], else cut with a marker.
pub fn inline_text(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_INLINE_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_INLINE_CHARS).collect();
    format!(
        "{kept}\n[… {} more characters left out]",
        total - MAX_INLINE_CHARS
    )
}

/// A size as a person reads it: `812 B`, `48.2 kB`, `3.1 MB`.
pub fn human_size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// `value` with every whole number written as an integer: a protobuf-based client (gRPC, or
/// ProtoJSON from an SDK) holds every number as a double and sends `1234` as `1234.0`.
pub fn whole_numbers(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(float)
                if number.is_f64()
                    && float.fract() == 0.0
                    && float.abs() < 9_007_199_254_740_992.0 =>
            {
                Value::from(float as i64)
            }
            _ => Value::Number(number),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, whole_numbers(value)))
                .collect(),
        ),
        other => other,
    }
}

/// A name from a stranger, safe on one line: no control characters, bounded.
fn clean_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if cleaned.chars().count() > MAX_NAME_CHARS {
        cleaned.chars().take(MAX_NAME_CHARS - 1).collect::<String>() + "…"
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::ContentRef;

    fn file(media_type: &str, size: u64) -> Attachment {
        Attachment {
            kind: AttachmentKind::File,
            name: Some("q1".into()),
            media_type: media_type.into(),
            content: Some(ContentRef {
                digest: "sha256:00".into(),
                size,
            }),
            url: None,
        }
    }

    #[test]
    fn each_kind_of_file_is_shown_its_way() {
        for (media_type, size, view) in [
            ("image/png", 1_000, ModelView::Image),
            ("IMAGE/JPEG", 1_000, ModelView::Image),
            ("image/png", MAX_IMAGE_BYTES + 1, ModelView::Named),
            ("image/svg+xml", 1_000, ModelView::Inline),
            ("image/tiff", 1_000, ModelView::Named),
            ("text/csv; charset=utf-8", 1_000, ModelView::Inline),
            ("application/json", 1_000, ModelView::Inline),
            ("application/vnd.api+json", 1_000, ModelView::Inline),
            ("application/pdf", 1_000, ModelView::Named),
            ("application/octet-stream", 1_000, ModelView::Named),
        ] {
            assert_eq!(model_view(&file(media_type, size)), view, "{media_type}");
        }
    }

    #[test]
    fn data_is_inline_and_a_file_by_url_is_named() {
        let data = Attachment {
            kind: AttachmentKind::Data,
            ..file("application/json", 10)
        };
        assert_eq!(model_view(&data), ModelView::Inline);
        let by_url = Attachment {
            content: None,
            url: Some("https://files.example.com/q1.png".into()),
            ..file("image/png", 0)
        };
        assert_eq!(model_view(&by_url), ModelView::Named);
        assert_eq!(
            heading(&by_url, 1),
            "[file 2: q1, image/png, at https://files.example.com/q1.png, not fetched]"
        );
    }

    #[test]
    fn a_heading_names_the_file_safely() {
        let mut attachment = file("text/csv", 48_213);
        assert_eq!(heading(&attachment, 0), "[file 1: q1, text/csv, 48.2 kB]");
        attachment.name = Some(format!("a\nb{}", "x".repeat(300)));
        let line = heading(&attachment, 0);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.chars().count() < 200, "{line}");
        attachment.name = None;
        assert_eq!(heading(&attachment, 2), "[file 3, text/csv, 48.2 kB]");
    }

    #[test]
    fn long_text_is_cut_with_a_marker() {
        assert_eq!(inline_text("a,b\n1,2"), "a,b\n1,2");
        let long = "é".repeat(MAX_INLINE_CHARS + 5);
        let shown = inline_text(&long);
        assert!(shown.ends_with("[… 5 more characters left out]"), "{shown}");
        assert_eq!(
            shown.chars().filter(|c| *c == 'é').count(),
            MAX_INLINE_CHARS
        );
    }

    #[test]
    fn whole_numbers_are_integers_and_others_stay() {
        let value = serde_json::json!({"a": 1234.0, "b": [2.0, 2.5], "c": "3.0", "d": 1e300});
        assert_eq!(
            whole_numbers(value).to_string(),
            r#"{"a":1234,"b":[2,2.5],"c":"3.0","d":1e+300}"#
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_size(812), "812 B");
        assert_eq!(human_size(48_213), "48.2 kB");
        assert_eq!(human_size(3_100_000), "3.1 MB");
    }

    #[test]
    fn the_budget_counts_what_the_model_is_sent() {
        assert_eq!(budget_chars(&file("image/png", 5_000_000)), 4_120);
        assert_eq!(budget_chars(&file("text/csv", 300)), 420);
        assert_eq!(
            budget_chars(&file("text/csv", 5_000_000)),
            120 + MAX_INLINE_CHARS
        );
        assert_eq!(budget_chars(&file("application/pdf", 5_000_000)), 120);
    }
}
