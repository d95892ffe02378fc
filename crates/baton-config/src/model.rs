//! `[model]`: the OpenAI-compatible model endpoint and the budgets of a turn.

use std::time::Duration;

use url::Url;

use crate::error::Errors;
use crate::secret::{Secret, explain_secret_key, secret_from_env};
use crate::urls::{base_url, is_loopback};
use crate::walk::Field;

/// `[model]`: the OpenAI-compatible model endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSettings {
    /// The endpoint `/chat/completions` is appended to; `BATON_MODEL_BASE_URL` overrides it.
    pub base_url: Url,
    /// The model a task uses unless its input names one; `BATON_MODEL` overrides it.
    pub model: String,
    /// From `BATON_MODEL_API_KEY`, else `OPENAI_API_KEY`; never from the file.
    pub api_key: Option<Secret>,
    /// The longest one call to the provider may take, from connecting to the last byte;
    /// default 60 s.
    pub timeout: Duration,
    /// How long a model turn keeps retrying errors worth retrying (429, 5xx, timeouts, broken
    /// connections) before the task fails; default 5 minutes.
    pub retry_for: Duration,
    /// The most tokens (estimated at 4 characters each) one turn sends: past it the oldest
    /// history is left out, with a marker the model reads.
    pub context_budget: usize,
}

const KEYS: [&str; 5] = [
    "base_url",
    "model",
    "timeout",
    "retry_for",
    "context_budget",
];
/// The default context budget, in tokens: well inside the windows of today's models.
pub const DEFAULT_CONTEXT_BUDGET: usize = 100_000;
const CONTEXT_BUDGET_RANGE: std::ops::RangeInclusive<usize> = 1_000..=10_000_000;
/// The longest `retry_for`: the engine's own bound on a model turn is a little longer.
pub const MAX_MODEL_RETRY_FOR: Duration = Duration::from_secs(3600);
const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(300);
const API_KEY_VARIABLES: [&str; 2] = ["BATON_MODEL_API_KEY", "OPENAI_API_KEY"];
/// Overrides `model.base_url`, so one command can point an agent at another endpoint.
pub const BASE_URL_VARIABLE: &str = "BATON_MODEL_BASE_URL";
/// Overrides `model.model`.
pub const MODEL_VARIABLE: &str = "BATON_MODEL";
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
const DEFAULT_MODEL: &str = "gpt-4.1-mini";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) fn read(
    field: Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> ModelSettings {
    let section = field.section("a table like [model]", errors);
    section.refuse_unknown_explained(&KEYS, explain_secret_key(&API_KEY_VARIABLES), errors);
    let base_url_override = overriding(env, BASE_URL_VARIABLE);
    let model_override = overriding(env, MODEL_VARIABLE);
    let base_url_field = match &base_url_override {
        Some(value) => Field::detached(
            format!("{BASE_URL_VARIABLE} (overriding model.base_url)"),
            value,
        ),
        None => section.field("base_url"),
    };
    let base_url = base_url(&base_url_field, DEFAULT_BASE_URL, errors)
        .unwrap_or_else(|| Url::parse(DEFAULT_BASE_URL).expect("the default model URL parses"));
    let api_key = secret_from_env(env, &API_KEY_VARIABLES);
    if api_key.is_some() && base_url.scheme() == "http" && !is_loopback(&base_url) {
        base_url_field.fail(
            errors,
            "plain http is allowed only for a loopback host when an API key is set",
        );
    }
    let model_field = match &model_override {
        Some(value) => Field::detached(format!("{MODEL_VARIABLE} (overriding model.model)"), value),
        None => section.field("model"),
    };
    let model = model_field
        .optional_text("a string like \"gpt-4.1-mini\"", errors)
        .unwrap_or(DEFAULT_MODEL);
    let timeout = section
        .field("timeout")
        .duration_at_least_one_second(errors)
        .unwrap_or(DEFAULT_TIMEOUT);
    let retry_for = section
        .field("retry_for")
        .duration_up_to(Some((MAX_MODEL_RETRY_FOR, "1 hour")), errors)
        .unwrap_or(DEFAULT_RETRY_FOR);
    let context_budget = read_context_budget(&section.field("context_budget"), errors);
    ModelSettings {
        base_url,
        model: model.to_owned(),
        api_key,
        timeout,
        retry_for,
        context_budget,
    }
}

/// The value of `variable` as a TOML string, when it is set and not empty.
fn overriding(env: &dyn Fn(&str) -> Option<String>, variable: &str) -> Option<toml::Value> {
    env(variable)
        .filter(|value| !value.is_empty())
        .map(toml::Value::String)
}

/// `model.context_budget`: a number of tokens in [`CONTEXT_BUDGET_RANGE`].
fn read_context_budget(field: &Field<'_>, errors: &mut Errors) -> usize {
    let expected = format!(
        "a number of tokens from {} to {}",
        CONTEXT_BUDGET_RANGE.start(),
        CONTEXT_BUDGET_RANGE.end()
    );
    let Some(number) = field.integer(&expected, errors) else {
        return DEFAULT_CONTEXT_BUDGET;
    };
    match usize::try_from(number) {
        Ok(tokens) if CONTEXT_BUDGET_RANGE.contains(&tokens) => tokens,
        _ => {
            field.fail(errors, format!("must be {expected} (got {number})"));
            DEFAULT_CONTEXT_BUDGET
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::secret::Secret;
    use crate::test_support::*;

    #[test]
    fn defaults() {
        let model = parse("").unwrap().model;
        assert_eq!(model.base_url.as_str(), "https://api.openai.com/v1");
        assert_eq!(model.model, "gpt-4.1-mini");
        assert_eq!(model.api_key, None);
        assert_eq!(model.timeout, Duration::from_secs(60));
        assert_eq!(model.retry_for, Duration::from_secs(300));
        assert_eq!(model.context_budget, 100_000);
    }

    #[test]
    fn the_environment_overrides_the_endpoint_and_the_model() {
        let text = "[model]\nbase_url = \"http://127.0.0.1:8299/v1\"\nmodel = \"example-ledger\"";
        let model = parse_with_env(
            text,
            &[
                ("BATON_MODEL_BASE_URL", "https://models.example.com/v1"),
                ("BATON_MODEL", "gpt-5-mini"),
            ],
        )
        .unwrap()
        .model;
        assert_eq!(model.base_url.as_str(), "https://models.example.com/v1");
        assert_eq!(model.model, "gpt-5-mini");
        let empty = parse_with_env(text, &[("BATON_MODEL_BASE_URL", ""), ("BATON_MODEL", "")])
            .unwrap()
            .model;
        assert_eq!(empty.base_url.as_str(), "http://127.0.0.1:8299/v1");
        assert_eq!(empty.model, "example-ledger");
        assert_only_error_with_env(
            text,
            &[("BATON_MODEL_BASE_URL", "models.example.com")],
            "BATON_MODEL_BASE_URL (overriding model.base_url)",
            "must be an absolute http or https URL like \"https://api.openai.com/v1\" (got \"models.example.com\")",
        );
        assert_only_error_with_env(
            "",
            &[
                ("BATON_MODEL_BASE_URL", "http://models.example.com/v1"),
                ("BATON_MODEL_API_KEY", "sk-test"),
            ],
            "BATON_MODEL_BASE_URL (overriding model.base_url)",
            "plain http is allowed only for a loopback host when an API key is set",
        );
    }

    #[test]
    fn the_context_budget_is_read_and_bounded() {
        let model = parse("[model]\ncontext_budget = 8000").unwrap().model;
        assert_eq!(model.context_budget, 8000);
        for (value, got) in [("999", "999"), ("-5", "-5"), ("10000001", "10000001")] {
            assert_only_error(
                &format!("[model]\ncontext_budget = {value}"),
                "model.context_budget",
                &format!("must be a number of tokens from 1000 to 10000000 (got {got})"),
            );
        }
        assert_only_error(
            "[model]\ncontext_budget = \"big\"",
            "model.context_budget",
            "must be a number of tokens from 1000 to 10000000 (got a string)",
        );
    }

    #[test]
    fn retry_for_is_read_and_bounded() {
        let model = parse("[model]\nretry_for = \"20m\"").unwrap().model;
        assert_eq!(model.retry_for, Duration::from_secs(1200));
        assert_only_error(
            "[model]\nretry_for = \"2h\"",
            "model.retry_for",
            "must be at most 1 hour (got \"2h\")",
        );
    }

    #[test]
    fn every_field_is_read() {
        let model = parse(
            "[model]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"llama3\"\ntimeout = \"2m\"",
        )
        .unwrap()
        .model;
        assert_eq!(model.base_url.as_str(), "http://127.0.0.1:11434/v1");
        assert_eq!(model.model, "llama3");
        assert_eq!(model.timeout, Duration::from_secs(120));
    }

    #[test]
    fn api_key_comes_from_baton_model_api_key_first() {
        let both = [
            ("BATON_MODEL_API_KEY", "baton-key"),
            ("OPENAI_API_KEY", "openai-key"),
        ];
        let model = parse_with_env("", &both).unwrap().model;
        assert_eq!(model.api_key, Some(Secret::new("baton-key")));
        let openai_only = [
            ("BATON_MODEL_API_KEY", ""),
            ("OPENAI_API_KEY", "openai-key"),
        ];
        let model = parse_with_env("", &openai_only).unwrap().model;
        assert_eq!(model.api_key, Some(Secret::new("openai-key")));
    }

    #[test]
    fn the_api_key_is_never_printed() {
        let settings = parse_with_env("", &[("OPENAI_API_KEY", "sk-very-secret")]).unwrap();
        assert_eq!(format!("{:?}", settings.model.api_key), "Some(***)");
        assert!(!format!("{settings:?}").contains("sk-very-secret"));
        assert!(!format!("{settings:#?}").contains("sk-very-secret"));
    }

    #[test]
    fn api_key_in_the_file_is_refused() {
        assert_only_error(
            "[model]\napi_key = \"sk-123\"",
            "model.api_key",
            "not allowed in the settings file: the API key is read from the environment only \
             (set BATON_MODEL_API_KEY or OPENAI_API_KEY)",
        );
    }

    #[test]
    fn plain_http_with_a_key_only_to_loopback() {
        let key = [("OPENAI_API_KEY", "sk-123")];
        assert_only_error_with_env(
            "[model]\nbase_url = \"http://models.internal/v1\"",
            &key,
            "model.base_url",
            "plain http is allowed only for a loopback host when an API key is set",
        );
        for loopback in [
            "http://localhost:8000/v1",
            "http://127.0.0.1/v1",
            "http://[::1]:8000",
        ] {
            let text = format!("[model]\nbase_url = {loopback:?}");
            assert!(parse_with_env(&text, &key).is_ok(), "{loopback}");
        }
        assert!(parse("[model]\nbase_url = \"http://models.internal/v1\"").is_ok());
    }

    #[test]
    fn base_url_must_be_absolute_http_or_https() {
        assert_only_error(
            "[model]\nbase_url = \"api.openai.com/v1\"",
            "model.base_url",
            "must be an absolute http or https URL like \"https://api.openai.com/v1\" (got \"api.openai.com/v1\")",
        );
    }

    #[test]
    fn model_must_not_be_blank() {
        assert_only_error(
            "[model]\nmodel = \"\"",
            "model.model",
            "must not be blank; leave it out to keep the default",
        );
    }

    #[test]
    fn timeout_of_at_least_a_second() {
        assert_only_error(
            "[model]\ntimeout = \"999ms\"",
            "model.timeout",
            "must be at least 1 second (got \"999ms\")",
        );
        assert_only_error(
            "[model]\ntimeout = 60",
            "model.timeout",
            "must be a duration like \"5s\" (got an integer)",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            "[model]\napi = \"responses\"",
            "model.api",
            "unknown setting (allowed: base_url, model, timeout, retry_for, context_budget)",
        );
    }
}
