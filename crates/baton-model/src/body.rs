//! Reading a response body with a ceiling, so a hostile or broken endpoint cannot bloat memory.

/// At most `limit` bytes of a body, and whether more was left unread.
pub(crate) struct LimitedBody {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl LimitedBody {
    /// The body as text for a message, lossy and cut to `max_chars` characters.
    pub fn excerpt(&self, max_chars: usize) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let text = text.trim();
        let mut excerpt: String = text.chars().take(max_chars).collect();
        if self.truncated || text.chars().nth(max_chars).is_some() {
            excerpt.push('…');
        }
        excerpt
    }
}

/// Reads until the body ends or passes `limit`; stops reading at the first chunk past it.
pub(crate) async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<LimitedBody, reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(LimitedBody {
                bytes,
                truncated: true,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(LimitedBody {
        bytes,
        truncated: false,
    })
}
