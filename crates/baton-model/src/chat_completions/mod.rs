//! The OpenAI-compatible Chat Completions provider: `POST <base_url>/chat/completions`.

mod wire_request;
mod wire_response;

use std::fmt;
use std::time::{Duration, Instant};

use tracing::Instrument;
use tracing::field::Empty;
use url::Url;

use crate::body::{LimitedBody, read_limited};
use crate::{ModelError, ModelProvider, ModelRequest, ModelResponse};
use wire_request::wire_request;
use wire_response::{parse_response, provider_error_message};

/// The largest success body read; a bigger one is refused. A long reply is tens of KiB, so
/// this only stops a broken or hostile endpoint from bloating the worker.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;
/// How much of an error body is read to find the provider's message.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// How much of a body that is not the expected JSON goes into an error message.
const BODY_EXCERPT_CHARS: usize = 500;

/// A Chat Completions endpoint: OpenAI, or any server that copies its API.
pub struct ChatCompletions {
    http: reqwest::Client,
    endpoint: Url,
    api_key: Option<String>,
    timeout: Duration,
}

impl ChatCompletions {
    /// A provider for the API at `base_url`, such as `https://api.openai.com/v1` (a trailing
    /// `/` makes no difference). The key is sent as `Authorization: Bearer`; an empty key
    /// counts as none. Each call, from connecting to the last byte, is bounded by `timeout`.
    pub fn new(base_url: Url, api_key: Option<String>, timeout: Duration) -> Self {
        ChatCompletions {
            http: reqwest::Client::new(),
            endpoint: endpoint(&base_url),
            api_key: api_key.filter(|key| !key.is_empty()),
            timeout,
        }
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut post = self
            .http
            .post(self.endpoint.clone())
            .json(&wire_request(request));
        if let Some(key) = &self.api_key {
            post = post.bearer_auth(key);
        }
        let response = post
            .send()
            .await
            .map_err(|e| ModelError::from_transport(&e))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let detail = match read_limited(response, MAX_ERROR_BODY_BYTES).await {
                Ok(body) => error_detail(&body),
                Err(e) => format!("(the body could not be read: {e})"),
            };
            return Err(
                ModelError::from_status(status, &detail).with_retry_after(retry_after.as_deref())
            );
        }
        let body = read_limited(response, MAX_RESPONSE_BYTES)
            .await
            .map_err(|e| ModelError::from_transport(&e))?;
        if body.truncated {
            return Err(ModelError::unusable_body(
                status,
                &format!(
                    "with a body larger than {} MiB; refused",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                ),
            ));
        }
        parse_response(&body.bytes, &request.model).map_err(|reason| {
            ModelError::unusable_body(
                status,
                &format!(
                    "{reason}; check that model.base_url points at an OpenAI-compatible API \
                     (body: {})",
                    body.excerpt(BODY_EXCERPT_CHARS)
                ),
            )
        })
    }
}

#[async_trait::async_trait]
impl ModelProvider for ChatCompletions {
    /// One call, in a client span named and described by OpenTelemetry's GenAI conventions
    /// (`chat <model>`, `gen_ai.*`), exported when traces are.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let span = tracing::info_span!(
            "gen_ai.chat",
            otel.name = %format_args!("chat {}", request.model),
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = "openai",
            gen_ai.system = "openai",
            gen_ai.request.model = %request.model,
            gen_ai.response.model = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.response.finish_reasons = Empty,
            server.address = self.endpoint.host_str().unwrap_or_default(),
            server.port = self.endpoint.port_or_known_default().unwrap_or_default(),
            "error.type" = Empty,
        );
        let started = Instant::now();
        let result = tokio::time::timeout(self.timeout, self.call(request))
            .instrument(span.clone())
            .await
            .unwrap_or_else(|_| Err(ModelError::timeout(self.timeout)));
        record_outcome(&span, &result);
        let elapsed_ms = started.elapsed().as_millis();
        let _in_the_call = span.enter();
        match &result {
            Ok(response) => tracing::debug!(
                model = %response.model,
                finish = ?response.finish,
                input_tokens = response.usage.input_tokens,
                cached_tokens = response.usage.cached_tokens,
                output_tokens = response.usage.output_tokens,
                elapsed_ms,
                "model call answered"
            ),
            Err(error) => tracing::debug!(
                model = %request.model,
                status = ?error.status,
                retryable = error.retryable,
                elapsed_ms,
                "model call failed: {error}"
            ),
        }
        result
    }
}

/// Records the answer on the call's span: the model that answered, the tokens, why it stopped;
/// or the error, as an HTTP status or `timeout`/`transport`.
fn record_outcome(span: &tracing::Span, result: &Result<ModelResponse, ModelError>) {
    match result {
        Ok(response) => {
            span.record("gen_ai.response.model", response.model.as_str());
            span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
            span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
            let finish = serde_json::to_value(response.finish)
                .ok()
                .and_then(|value| value.as_str().map(str::to_string))
                .unwrap_or_default();
            span.record("gen_ai.response.finish_reasons", finish);
        }
        Err(error) => {
            let kind = error
                .status
                .map_or_else(|| "transport".to_string(), |status| status.to_string());
            span.record("error.type", kind);
            span.record("otel.status_code", "error");
            span.record("otel.status_description", error.message.as_str());
        }
    }
}

/// Debug never shows the key, only whether one is set.
impl fmt::Debug for ChatCompletions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatCompletions")
            .field("endpoint", &self.endpoint.as_str())
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// `<base_url>/chat/completions`, keeping any query (some gateways carry an API version there).
fn endpoint(base_url: &Url) -> Url {
    let mut endpoint = base_url.clone();
    endpoint.set_path(&format!(
        "{}/chat/completions",
        base_url.path().trim_end_matches('/')
    ));
    endpoint
}

/// The provider's message from an error body, or else the start of the body itself.
fn error_detail(body: &LimitedBody) -> String {
    if let Some(message) = provider_error_message(&body.bytes) {
        return message;
    }
    let excerpt = body.excerpt(BODY_EXCERPT_CHARS);
    if excerpt.is_empty() {
        "(empty body)".to_string()
    } else {
        excerpt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn the_endpoint_is_under_the_base_url_with_or_without_a_trailing_slash() {
        for base in ["https://api.openai.com/v1", "https://api.openai.com/v1/"] {
            assert_eq!(
                endpoint(&url(base)).as_str(),
                "https://api.openai.com/v1/chat/completions"
            );
        }
        assert_eq!(
            endpoint(&url("http://127.0.0.1:11434")).as_str(),
            "http://127.0.0.1:11434/chat/completions"
        );
        assert_eq!(
            endpoint(&url("https://gw.example.com/openai/?api-version=1")).as_str(),
            "https://gw.example.com/openai/chat/completions?api-version=1"
        );
    }

    #[test]
    fn debug_shows_whether_a_key_is_set_but_never_the_key() {
        let base = url("https://api.openai.com/v1");
        let with_key = ChatCompletions::new(
            base.clone(),
            Some("sk-secret-123".into()),
            Duration::from_secs(60),
        );
        let shown = format!("{with_key:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("api_key: Some(\"***\")"), "{shown}");
        assert!(
            shown.contains("https://api.openai.com/v1/chat/completions"),
            "{shown}"
        );

        let without_key = ChatCompletions::new(base, None, Duration::from_secs(60));
        assert!(format!("{without_key:?}").contains("api_key: None"));
    }

    #[test]
    fn an_empty_key_counts_as_none() {
        let provider = ChatCompletions::new(
            url("http://127.0.0.1:8000/v1"),
            Some(String::new()),
            Duration::from_secs(1),
        );
        assert_eq!(provider.api_key, None);
    }

    #[test]
    fn an_error_body_gives_the_provider_message_or_its_start() {
        let body = |text: &str, truncated| LimitedBody {
            bytes: text.as_bytes().to_vec(),
            truncated,
        };
        assert_eq!(
            error_detail(&body(r#"{"error":{"message":"Invalid 'model'"}}"#, false)),
            "Invalid 'model'"
        );
        assert_eq!(error_detail(&body("  \n", false)), "(empty body)");
        assert_eq!(
            error_detail(&body("upstream connect error\n", false)),
            "upstream connect error"
        );
        let long = "x".repeat(600);
        assert_eq!(
            error_detail(&body(&long, true)),
            format!("{}…", "x".repeat(500))
        );
    }
}
