//! Helpers for the unit tests: parse text with a fixed base directory and a fake
//! environment, and compare errors as `(setting, message)` pairs.

use std::path::Path;

use crate::{ConfigError, Settings};

pub(crate) const BASE_DIR: &str = "/srv/baton";

pub(crate) fn parse(text: &str) -> Result<Settings, ConfigError> {
    parse_with_env(text, &[])
}

pub(crate) fn parse_with_env(
    text: &str,
    variables: &[(&str, &str)],
) -> Result<Settings, ConfigError> {
    let env = |name: &str| {
        variables
            .iter()
            .find(|(variable, _)| *variable == name)
            .map(|(_, value)| (*value).to_owned())
    };
    Settings::parse(text, Path::new(BASE_DIR), &env)
}

pub(crate) fn errors_of(result: Result<Settings, ConfigError>) -> Vec<(String, String)> {
    match result {
        Ok(settings) => panic!("expected errors, got {settings:#?}"),
        Err(error) => error
            .errors
            .into_iter()
            .map(|error| (error.setting, error.message))
            .collect(),
    }
}

pub(crate) fn assert_only_error(text: &str, setting: &str, message: &str) {
    assert_only_error_with_env(text, &[], setting, message);
}

pub(crate) fn assert_only_error_with_env(
    text: &str,
    variables: &[(&str, &str)],
    setting: &str,
    message: &str,
) {
    assert_eq!(
        errors_of(parse_with_env(text, variables)),
        vec![(setting.to_owned(), message.to_owned())],
        "settings file:\n{text}"
    );
}
