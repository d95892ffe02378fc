//! Fetching a file a message gave by URL, when the operator allows it (`content.fetch_urls`).
//! The URL is a stranger's, so it is called as a webhook is: no redirect is followed, and only
//! addresses outside this network are reached (checked on the addresses the name resolves to,
//! when it connects) unless private addresses are allowed; the body is read up to a bound and
//! no further.

use std::sync::Arc;
use std::time::Duration;

use baton_core::network::is_internal_host;
use bytes::{Bytes, BytesMut};
use url::Url;

use crate::outside_only::OutsideOnly;

/// The longest one fetch may take, from connecting to the last byte.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Why a file's URL gave no bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL may not be called, or its answer cannot be taken (a private address, a redirect,
    /// a 4xx, a body past the bound): fetching again will not help.
    #[error("{0}")]
    Refused(String),
    /// No answer, or a 5xx: a later fetch may succeed.
    #[error("{0}")]
    Failed(String),
}

/// The HTTP clients file URLs are fetched with.
#[derive(Clone)]
pub struct UrlFetcher {
    outside: reqwest::Client,
    anywhere: reqwest::Client,
    allow_private: bool,
}

impl UrlFetcher {
    /// The fetcher; `allow_private` lets it reach loopback and private addresses
    /// (`server.allow_private_push_urls`, the same rule as webhooks).
    pub fn new(allow_private: bool) -> UrlFetcher {
        let builder = || {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(TIMEOUT)
        };
        UrlFetcher {
            outside: builder()
                .dns_resolver(Arc::new(OutsideOnly {
                    for_what: "a file's URL",
                }))
                .build()
                .expect("the TLS backend is compiled in, so the client always builds"),
            anywhere: builder()
                .build()
                .expect("the TLS backend is compiled in, so the client always builds"),
            allow_private,
        }
    }

    /// The bytes at `url`, at most `max_bytes` of them.
    pub async fn fetch(&self, url: &Url, max_bytes: usize) -> Result<Bytes, FetchError> {
        let client = if self.allow_private {
            &self.anywhere
        } else {
            match url.host() {
                Some(host) if !is_internal_host(&host) => &self.outside,
                _ => {
                    return Err(FetchError::Refused(
                        "it points at a loopback or private address".into(),
                    ));
                }
            }
        };
        let mut response =
            client.get(url.clone()).send().await.map_err(|error| {
                FetchError::Failed(format!("no answer: {}", error_chain(&error)))
            })?;
        let status = response.status();
        if status.is_server_error() {
            return Err(FetchError::Failed(format!("it answered {status}")));
        }
        if !status.is_success() {
            return Err(FetchError::Refused(format!("it answered {status}")));
        }
        let too_big = || {
            FetchError::Refused(format!(
                "it is over {max_bytes} bytes (content.max_part_bytes)"
            ))
        };
        if response
            .content_length()
            .is_some_and(|length| length > max_bytes as u64)
        {
            return Err(too_big());
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| FetchError::Failed(format!("the body broke off: {error}")))?
        {
            if body.len() + chunk.len() > max_bytes {
                return Err(too_big());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }
}

/// An error with its sources, which say what actually failed (a refused address, a timeout).
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_loopback_or_private_address_is_not_fetched_unless_allowed() {
        let strict = UrlFetcher::new(false);
        for inward in [
            "http://127.0.0.1:9/f.csv",
            "http://localhost:9/f.csv",
            "http://10.0.0.7/f.csv",
            "http://[::1]/f.csv",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let url = Url::parse(inward).unwrap();
            assert!(
                matches!(strict.fetch(&url, 1024).await, Err(FetchError::Refused(_))),
                "{inward}"
            );
        }
    }
}
