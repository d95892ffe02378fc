//! `[log]`: how log lines are written.

use crate::error::Errors;
use crate::walk::Field;

/// `[log]`: how the process writes its log lines (to stderr; `RUST_LOG` picks the levels).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogSettings {
    /// How each line is written; default text.
    pub format: LogFormat,
}

/// One line per event: readable text, or one JSON object for a log pipeline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// One readable line per event.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `fields`, `target` and the spans.
    Json,
}

const KEYS: [&str; 1] = ["format"];
const FORMATS: [(&str, LogFormat); 2] = [("text", LogFormat::Text), ("json", LogFormat::Json)];

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> LogSettings {
    let section = field.section("a table like [log]", errors);
    section.refuse_unknown(&KEYS, errors);
    LogSettings {
        format: section
            .field("format")
            .choice(&FORMATS, errors)
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::LogFormat;
    use crate::test_support::*;

    #[test]
    fn text_by_default_and_json_on_request() {
        assert_eq!(parse("").unwrap().log.format, LogFormat::Text);
        assert_eq!(
            parse("[log]\nformat = \"json\"").unwrap().log.format,
            LogFormat::Json
        );
        assert_only_error(
            "[log]\nformat = \"xml\"",
            "log.format",
            "must be \"text\" or \"json\" (got \"xml\")",
        );
    }
}
