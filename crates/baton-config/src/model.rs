//! `[model]`: the OpenAI-compatible model endpoint and the budgets of a turn.

use std::collections::BTreeMap;
use std::time::Duration;

use url::Url;

use crate::error::Errors;
use crate::prices::{ModelPrice, read_currency, read_prices};
use crate::secret::{Secret, explain_secret_key, secret_from_env};
use crate::urls::{base_url, is_loopback};
use crate::walk::Field;

/// `[model]`: the OpenAI-compatible model endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSettings {
    /// The endpoint `/chat/completions` is appended to: `BATON_MODEL_BASE_URL`, else the file's,
    /// else `OPENAI_BASE_URL`, else OpenAI's.
    pub base_url: Url,
    /// The model a task uses unless its input names one; `BATON_MODEL` overrides it.
    pub model: String,
    /// From `BATON_MODEL_API_KEY`, else `OPENAI_API_KEY` when `base_url` is the endpoint that
    /// key is for (`OPENAI_BASE_URL`, else OpenAI's); never from the file.
    pub api_key: Option<Secret>,
    /// Why a key set in the environment is not sent, for the worker to log at start.
    pub api_key_withheld: Option<String>,
    /// The longest one call to the provider may take, from connecting to the last byte;
    /// default 60 s.
    pub timeout: Duration,
    /// How long a model turn keeps retrying errors worth retrying (429, 5xx, timeouts, broken
    /// connections) before the task fails; default 5 minutes.
    pub retry_for: Duration,
    /// The most tokens (estimated at 4 characters each) one turn sends: past it the oldest
    /// history is left out, with a marker the model reads.
    pub context_budget: usize,
    /// Whether the model reads images: image files go to it as images (OpenAI-compatible
    /// `image_url` parts); when false, by their heading only, for a text-only model that would
    /// refuse the request. Default true.
    pub images: bool,
    /// What each model's tokens cost (`model.prices`), by model name: a model without a price
    /// costs nothing. Empty by default.
    pub prices: BTreeMap<String, ModelPrice>,
    /// The currency of the prices and of budgets in money (`model.currency`); default "USD".
    pub currency: String,
}

const KEYS: [&str; 8] = [
    "base_url",
    "model",
    "timeout",
    "retry_for",
    "context_budget",
    "images",
    "prices",
    "currency",
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
/// The endpoint `OPENAI_API_KEY` is for, and the base URL when neither Baton's variable nor
/// the file sets one (the OpenAI SDKs' convention).
pub const OPENAI_BASE_URL_VARIABLE: &str = "OPENAI_BASE_URL";
const OPENAI_KEY_VARIABLE: &str = "OPENAI_API_KEY";
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
    let openai_base_url = overriding(env, OPENAI_BASE_URL_VARIABLE);
    let base_url_field = match (&base_url_override, &openai_base_url) {
        (Some(value), _) => Field::detached(
            format!("{BASE_URL_VARIABLE} (overriding model.base_url)"),
            value,
        ),
        (None, Some(value)) if !section.field("base_url").is_set() => {
            Field::detached(OPENAI_BASE_URL_VARIABLE.to_string(), value)
        }
        _ => section.field("base_url"),
    };
    let base_url = base_url(&base_url_field, DEFAULT_BASE_URL, errors)
        .unwrap_or_else(|| Url::parse(DEFAULT_BASE_URL).expect("the default model URL parses"));
    let openai_key_for = openai_base_url
        .as_ref()
        .and_then(toml::Value::as_str)
        .unwrap_or(DEFAULT_BASE_URL);
    let (api_key, api_key_withheld) = api_key(env, &base_url, openai_key_for);
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
    let images = section.field("images").boolean(errors).unwrap_or(true);
    let prices = read_prices(
        section
            .field("prices")
            .section("a table of model names", errors),
        errors,
    );
    let currency = read_currency(&section.field("currency"), errors);
    ModelSettings {
        base_url,
        model: model.to_owned(),
        api_key,
        api_key_withheld,
        timeout,
        retry_for,
        context_budget,
        images,
        prices,
        currency,
    }
}

/// The key sent to `base_url`: `BATON_MODEL_API_KEY`, which is for whatever endpoint Baton is
/// given, else `OPENAI_API_KEY` when `base_url` is `openai_key_for`, the endpoint it is for.
/// Otherwise none, with why `OPENAI_API_KEY` was withheld when it is set: a key is never sent to
/// an endpoint it was not given for.
fn api_key(
    env: &dyn Fn(&str) -> Option<String>,
    base_url: &Url,
    openai_key_for: &str,
) -> (Option<Secret>, Option<String>) {
    if let Some(key) = secret_from_env(env, &API_KEY_VARIABLES[..1]) {
        return (Some(key), None);
    }
    let Some(key) = secret_from_env(env, &[OPENAI_KEY_VARIABLE]) else {
        return (None, None);
    };
    let same = |url: &str| url.trim_end_matches('/') == base_url.as_str().trim_end_matches('/');
    if same(openai_key_for) {
        return (Some(key), None);
    }
    let withheld = format!(
        "{OPENAI_KEY_VARIABLE} is set but not sent: it is for {openai_key_for} and the model \
         endpoint is {base_url}; set BATON_MODEL_API_KEY for that endpoint, or \
         {OPENAI_BASE_URL_VARIABLE} to it"
    );
    (None, Some(withheld))
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
    fn openai_base_url_is_the_endpoint_unless_baton_s_variable_or_the_file_names_one() {
        let openai = [("OPENAI_BASE_URL", "https://llm.example.com/v1")];
        let model = parse_with_env("", &openai).unwrap().model;
        assert_eq!(model.base_url.as_str(), "https://llm.example.com/v1");
        let model = parse_with_env(
            "[model]\nbase_url = \"https://file.example.com/v1\"",
            &openai,
        )
        .unwrap()
        .model;
        assert_eq!(model.base_url.as_str(), "https://file.example.com/v1");
        let both = [
            openai[0],
            ("BATON_MODEL_BASE_URL", "https://baton.example.com/v1"),
        ];
        let model = parse_with_env("", &both).unwrap().model;
        assert_eq!(model.base_url.as_str(), "https://baton.example.com/v1");
        assert_only_error_with_env(
            "",
            &[("OPENAI_BASE_URL", "llm.example.com")],
            "OPENAI_BASE_URL",
            "must be an absolute http or https URL like \"https://api.openai.com/v1\" (got \"llm.example.com\")",
        );
    }

    #[test]
    fn openai_api_key_goes_only_to_the_endpoint_it_is_for() {
        let key = ("OPENAI_API_KEY", "sk-openai");
        // OpenAI's endpoint, by default or named.
        let model = parse_with_env("", &[key]).unwrap().model;
        assert_eq!(model.api_key, Some(Secret::new("sk-openai")));
        let named = "[model]\nbase_url = \"https://api.openai.com/v1/\"";
        assert!(
            parse_with_env(named, &[key])
                .unwrap()
                .model
                .api_key
                .is_some()
        );
        // The endpoint OPENAI_BASE_URL names.
        let proxy = ("OPENAI_BASE_URL", "https://llm.example.com/v1");
        let model = parse_with_env("", &[key, proxy]).unwrap().model;
        assert_eq!(model.api_key, Some(Secret::new("sk-openai")));
        // Any other endpoint: withheld, and the worker is told why.
        for (text, variables) in [
            (
                "[model]\nbase_url = \"https://other.example.com/v1\"",
                vec![key],
            ),
            (
                "[model]\nbase_url = \"https://other.example.com/v1\"",
                vec![key, proxy],
            ),
            (
                "",
                vec![
                    key,
                    ("BATON_MODEL_BASE_URL", "https://other.example.com/v1"),
                ],
            ),
        ] {
            let model = parse_with_env(text, &variables).unwrap().model;
            assert_eq!(model.api_key, None, "{text} {variables:?}");
            let why = model.api_key_withheld.unwrap();
            assert!(
                why.starts_with("OPENAI_API_KEY is set but not sent: it is for ")
                    && why.contains("the model endpoint is https://other.example.com/v1"),
                "{why}"
            );
            assert!(!why.contains("sk-openai"));
        }
        // Baton's own key goes wherever Baton is pointed.
        let baton_key = ("BATON_MODEL_API_KEY", "sk-baton");
        let model = parse_with_env(
            "[model]\nbase_url = \"https://other.example.com/v1\"",
            &[key, baton_key],
        )
        .unwrap()
        .model;
        assert_eq!(model.api_key, Some(Secret::new("sk-baton")));
        assert_eq!(model.api_key_withheld, None);
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
        let key = [("BATON_MODEL_API_KEY", "sk-123")];
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
    fn images_are_read_unless_the_model_is_set_to_read_none() {
        assert!(parse("").unwrap().model.images);
        assert!(!parse("[model]\nimages = false").unwrap().model.images);
        assert_only_error(
            "[model]\nimages = \"no\"",
            "model.images",
            "must be true or false (got a string)",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            "[model]\napi = \"responses\"",
            "model.api",
            "unknown setting (allowed: base_url, model, timeout, retry_for, context_budget, images, prices, currency)",
        );
    }
}
