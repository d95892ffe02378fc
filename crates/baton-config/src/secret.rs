//! Credentials taken from the environment, which never print.

use std::fmt;

/// A credential. It comes from the environment, never from the settings file, and
/// `Debug` and `Display` print `***` so it cannot leak into a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself: for sending, never for printing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The first of `variables` set to a non-empty value; an empty variable counts as unset.
pub(crate) fn secret_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    variables: &[&str],
) -> Option<Secret> {
    variables
        .iter()
        .filter_map(|name| env(name))
        .find(|value| !value.is_empty())
        .map(Secret)
}

/// Explains an `api_key` written in the file: keys are read from the environment only,
/// so that the settings file can be committed and shared.
pub(crate) fn explain_secret_key(variables: &[&str]) -> impl Fn(&str) -> Option<String> {
    let message = format!(
        "not allowed in the settings file: the API key is read from the environment only (set {})",
        variables.join(" or ")
    );
    move |key| (key == "api_key").then(|| message.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_value() {
        let secret = Secret::new("sk-live-123");
        assert_eq!(format!("{secret:?}"), "***");
        assert_eq!(secret.to_string(), "***");
        assert_eq!(secret.expose(), "sk-live-123");
    }

    #[test]
    fn reads_the_first_non_empty_variable() {
        let env = |name: &str| match name {
            "EMPTY" => Some(String::new()),
            "SET" => Some("value".to_owned()),
            _ => None,
        };
        assert_eq!(
            secret_from_env(&env, &["MISSING", "EMPTY", "SET"]),
            Some(Secret::new("value"))
        );
        assert_eq!(secret_from_env(&env, &["MISSING", "EMPTY"]), None);
    }
}
