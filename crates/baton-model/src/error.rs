//! A failed model call, and whether retrying it can help.
//!
//! | cause                                   | retryable |
//! |-----------------------------------------|-----------|
//! | HTTP 429 or 5xx                         | yes       |
//! | timeout, connection or transfer failure | yes       |
//! | any other non-2xx status                | no        |
//! | a 2xx body that cannot be used          | no        |

use std::error::Error as _;
use std::time::Duration;

use reqwest::StatusCode;

/// Why a model call failed. The activity turns `retryable: false` into a non-retryable
/// Temporal failure, so a retry is only spent where it can help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// Whether asking again can help (429, 5xx, a timeout or a broken transfer).
    pub retryable: bool,
    /// The HTTP status, when the provider answered at all.
    pub status: Option<u16>,
    /// What went wrong; it becomes the message of the activity's failure.
    pub message: String,
    /// How long the provider asked to be left alone (`Retry-After`, in seconds), if it said.
    pub retry_after: Option<Duration>,
}

impl ModelError {
    /// The provider answered a non-2xx status; `detail` is its own explanation.
    pub(crate) fn from_status(status: StatusCode, detail: &str) -> Self {
        ModelError {
            retryable: status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error(),
            status: Some(status.as_u16()),
            message: format!("{}: {detail}{}", answered(status), hint(status)),
            retry_after: None,
        }
    }

    /// With the provider's `Retry-After` header, when it is a whole number of seconds (the
    /// form OpenAI-compatible APIs send; an HTTP date is ignored).
    pub(crate) fn with_retry_after(mut self, header: Option<&str>) -> Self {
        self.retry_after = header
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        self
    }

    /// The provider answered 2xx with a body that cannot be used; asking again would give the
    /// same kind of body. `reason` completes "model provider answered 200 OK …".
    pub(crate) fn unusable_body(status: StatusCode, reason: &str) -> Self {
        ModelError {
            retryable: false,
            status: Some(status.as_u16()),
            message: format!("{} {reason}", answered(status)),
            retry_after: None,
        }
    }

    pub(crate) fn timeout(limit: Duration) -> Self {
        ModelError {
            retryable: true,
            status: None,
            message: format!(
                "the model provider gave no complete answer within {limit:?}; \
                 raise model.timeout if the model needs longer"
            ),
            retry_after: None,
        }
    }

    /// The call broke before a status, or while reading the body. Only a request that could
    /// never be sent (a bad URL) or a redirect loop is final.
    pub(crate) fn from_transport(error: &reqwest::Error) -> Self {
        let mut message = format!("cannot complete the call to the model provider: {error}");
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        ModelError {
            retryable: !(error.is_builder() || error.is_redirect()),
            status: None,
            message,
            retry_after: None,
        }
    }
}

fn answered(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("model provider answered {} {reason}", status.as_u16()),
        None => format!("model provider answered {}", status.as_u16()),
    }
}

fn hint(status: StatusCode) -> &'static str {
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            " (check the API key in BATON_MODEL_API_KEY or OPENAI_API_KEY)"
        }
        StatusCode::NOT_FOUND => " (check model.base_url and model.model)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> StatusCode {
        StatusCode::from_u16(code).unwrap()
    }

    #[test]
    fn rate_limits_and_server_errors_are_retryable() {
        for code in [429, 500, 502, 503, 504, 599] {
            let error = ModelError::from_status(status(code), "busy");
            assert!(error.retryable, "{code}");
            assert_eq!(error.status, Some(code));
        }
    }

    #[test]
    fn other_statuses_are_final() {
        for code in [300, 400, 401, 403, 404, 409, 413, 422] {
            assert!(
                !ModelError::from_status(status(code), "no").retryable,
                "{code}"
            );
        }
    }

    #[test]
    fn the_message_leads_with_the_status_and_keeps_the_detail() {
        let error = ModelError::from_status(status(400), "Invalid 'model'");
        assert_eq!(
            error.to_string(),
            "model provider answered 400 Bad Request: Invalid 'model'"
        );
        let error = ModelError::from_status(status(599), "odd");
        assert_eq!(error.message, "model provider answered 599: odd");
    }

    #[test]
    fn auth_and_not_found_say_which_setting_to_check() {
        let error = ModelError::from_status(status(401), "Incorrect API key provided");
        assert!(error.message.contains("Incorrect API key provided"));
        assert!(error.message.contains("BATON_MODEL_API_KEY"));
        let error = ModelError::from_status(status(404), "The model `x` does not exist");
        assert!(error.message.contains("model.base_url"));
    }

    #[test]
    fn retry_after_in_seconds_is_kept_and_anything_else_ignored() {
        let error =
            |header| ModelError::from_status(status(429), "slow down").with_retry_after(header);
        assert_eq!(error(Some("7")).retry_after, Some(Duration::from_secs(7)));
        assert_eq!(error(Some(" 0 ")).retry_after, Some(Duration::ZERO));
        for ignored in [
            None,
            Some("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some("-3"),
            Some("1.5"),
        ] {
            assert_eq!(error(ignored).retry_after, None, "{ignored:?}");
        }
    }

    #[test]
    fn a_timeout_is_retryable_and_names_the_setting() {
        let error = ModelError::timeout(Duration::from_millis(300));
        assert!(error.retryable);
        assert_eq!(error.status, None);
        assert!(error.message.contains("300ms"), "{}", error.message);
        assert!(error.message.contains("model.timeout"));
    }

    #[test]
    fn an_unusable_success_body_is_final() {
        let error = ModelError::unusable_body(status(200), "with no choices");
        assert!(!error.retryable);
        assert_eq!(error.status, Some(200));
        assert_eq!(
            error.message,
            "model provider answered 200 OK with no choices"
        );
    }
}
