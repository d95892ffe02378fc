//! The errors of a settings file: every wrong setting at once, each named by its full path.

use std::fmt;

/// Everything wrong with one settings file: every error found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file path, or `baton.toml` when the text did not come from a file.
    pub source_name: String,
    /// Every wrong setting, in the order the file was read.
    pub errors: Vec<SettingError>,
}

/// One wrong setting, named by its full path (`card.skills[1].id`), or `""` for the file
/// as a whole (unreadable, or not valid TOML).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The setting's full path; empty for the file as a whole.
    pub setting: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn whole_file(source_name: &str, message: String) -> ConfigError {
        ConfigError {
            source_name: source_name.to_owned(),
            errors: vec![SettingError {
                setting: String::new(),
                message,
            }],
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: invalid settings", self.source_name)?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.setting.is_empty() {
            write!(f, "{}: ", self.setting)?;
        }
        // Messages from the TOML parser span several lines; keep them inside the list.
        let mut lines = self.message.trim_end().lines();
        if let Some(first) = lines.next() {
            f.write_str(first)?;
        }
        for line in lines {
            write!(f, "\n    {line}")?;
        }
        Ok(())
    }
}

/// Collects errors while the whole file is read, so all of them are reported together.
#[derive(Debug, Default)]
pub(crate) struct Errors(Vec<SettingError>);

impl Errors {
    pub(crate) fn push(&mut self, setting: impl Into<String>, message: impl Into<String>) {
        self.0.push(SettingError {
            setting: setting.into(),
            message: message.into(),
        });
    }

    pub(crate) fn into_result(self, source_name: &str) -> Result<(), ConfigError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ConfigError {
                source_name: source_name.to_owned(),
                errors: self.0,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_lists_every_error_under_the_source_name() {
        let error = ConfigError {
            source_name: "conf/baton.toml".into(),
            errors: vec![
                SettingError {
                    setting: "agent.id".into(),
                    message: "must not be blank".into(),
                },
                SettingError {
                    setting: "server.bind".into(),
                    message: "must be a string".into(),
                },
            ],
        };
        assert_eq!(
            error.to_string(),
            "conf/baton.toml: invalid settings\n  agent.id: must not be blank\n  server.bind: must be a string"
        );
    }

    #[test]
    fn display_of_a_whole_file_error_has_no_setting_and_indents_continuation_lines() {
        let error = ConfigError::whole_file("baton.toml", "line one\nline two\n".into());
        assert_eq!(
            error.to_string(),
            "baton.toml: invalid settings\n  line one\n    line two"
        );
    }
}
