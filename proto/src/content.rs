//! Content held by reference: what history holds of a file or a data part instead of its bytes.

use serde::{Deserialize, Serialize};

/// Bytes in the content store, by their digest: history and every payload that crosses
/// Temporal hold this, never the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContentRef {
    /// `sha256:` and the lowercase hex SHA-256 of the bytes: the content's address, so the same
    /// bytes are stored once and a read can check what it got.
    pub digest: String,
    /// The length of the bytes.
    pub size: u64,
}

/// A file or a data part of a message, by reference: its bytes are in the content store, or, for
/// a file given by URL, at that URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// A file, or structured data (JSON).
    pub kind: AttachmentKind,
    /// The file name it came with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its media type, like `image/png`; `application/json` for data.
    pub media_type: String,
    /// The stored bytes (a data part's as JSON text); absent for a file by URL not fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ContentRef>,
    /// Where a file given by URL is; fetched (then `content` holds its bytes) only when
    /// `content.fetch_urls` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// What an attachment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentKind {
    /// A file: bytes with a media type.
    File,
    /// Structured data: a JSON value.
    Data,
}

impl Attachment {
    /// The stored size in bytes; 0 for a file by URL.
    pub fn size(&self) -> u64 {
        self.content.as_ref().map_or(0, |content| content.size)
    }

    /// How the attachment is named to a reader: its name, else `<kind> <n>` (1-based).
    pub fn label(&self, index: usize) -> String {
        self.name.clone().unwrap_or_else(|| match self.kind {
            AttachmentKind::File => format!("file {}", index + 1),
            AttachmentKind::Data => format!("data {}", index + 1),
        })
    }
}
