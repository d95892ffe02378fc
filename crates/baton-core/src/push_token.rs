//! Push tokens: a stand-in registers a random token with the agent and keeps only its SHA-256
//! digest, so the token never enters workflow history, logs or the Web UI. A push is accepted
//! only when the digest of the token it carries matches, compared in constant time.

use sha2::{Digest, Sha256};

/// The lowercase hex SHA-256 of `token`.
pub fn token_digest(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Whether two digests are equal, taking the same time wherever they differ.
pub fn digests_match(expected: &str, presented: &str) -> bool {
    let (a, b) = (expected.as_bytes(), presented.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_the_hex_sha256() {
        assert_eq!(
            token_digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn digests_match_only_when_equal() {
        let d = token_digest("token");
        assert!(digests_match(&d, &token_digest("token")));
        assert!(!digests_match(&d, &token_digest("tokem")));
        assert!(!digests_match(&d, ""));
        assert!(!digests_match(&d, &d[..63]));
    }
}
