//! Content held by reference: what history holds of a file or a large part instead of its bytes.

use serde::{Deserialize, Serialize};

/// A piece of content in the content store, by its digest: history and every payload that
/// crosses Temporal hold this, never the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContentRef {
    /// `sha256:` and the lowercase hex SHA-256 of the bytes: the content's address, so the same
    /// bytes are stored once and a read can check what it got.
    pub digest: String,
    /// The length of the bytes.
    pub size: u64,
    /// The media type the content was given with, like `image/png`.
    pub media_type: String,
    /// The file name it was given with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
