//! The push side of a stand-in's watch: a fresh 256-bit token per registration, and the URL of
//! Baton's push receiver for one stand-in.

use baton_core::push_token::hex;
use url::Url;

/// The path under `server.base_url` where the push receiver listens.
pub const PUSH_PATH: &str = "a2a/push";

/// A new random token: 32 bytes from the OS, as 64 hex characters.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    hex(&bytes)
}

/// `<base>/a2a/push/<stand-in id>`, the id percent-encoded as one path segment.
pub fn push_url(base: &Url, stand_in_id: &str) -> Url {
    let mut url = base.clone();
    url.path_segments_mut()
        .expect("server.base_url is an http(s) URL")
        .pop_if_empty()
        .extend(PUSH_PATH.split('/'))
        .push(stand_in_id);
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_256_bits_and_fresh() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }

    #[test]
    fn the_push_url_sits_under_the_base_url() {
        let base: Url = "https://baton.example/agents/front/".parse().unwrap();
        assert_eq!(
            push_url(&base, "t-1.2").as_str(),
            "https://baton.example/agents/front/a2a/push/t-1.2"
        );
        let bare: Url = "http://127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            push_url(&bare, "a/b c").as_str(),
            "http://127.0.0.1:8080/a2a/push/a%2Fb%20c"
        );
    }
}
