//! Asking the task's participants a question: the `ask_participant` tool. The task then waits,
//! INPUT_REQUIRED with the sub-state [`crate::sub_tasks::AWAITING_ANSWER`] and the question as its status message,
//! until a participant's next message, which the model reads as the answer. A delegating agent
//! (another Baton, or any A2A client) reads the question from the task's status and answers it
//! on the same task, as tiny-harness's `ask_participant` does.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::spawn_subtask::ToolError;
use crate::turn_bounds::cut;

/// The tool's name.
pub const ASK_PARTICIPANT: &str = "ask_participant";
/// The longest question, in characters; a longer one is cut with `…`.
pub const MAX_QUESTION_CHARS: usize = 4_000;

/// What the model reads about the tool.
pub const ASK_PARTICIPANT_DESCRIPTION: &str = "Ask this task's participants a question that \
    only they can answer: something the goal, their messages and your own results do not say. \
    The task waits for their answer, which arrives as their next message. Ask one clear, \
    standalone question; never ask for credentials.";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    question: String,
}

/// The question the model's arguments ask: one that is not blank, cut to
/// [`MAX_QUESTION_CHARS`]. Bad JSON, an unknown field or a blank question gives
/// [`INVALID_ARGUMENTS`](crate::spawn_subtask::INVALID_ARGUMENTS).
pub fn validate_ask(arguments: &str) -> Result<String, ToolError> {
    let args: AskArgs = serde_json::from_str(arguments)
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))?;
    let question = args.question.trim();
    if question.is_empty() {
        return Err(ToolError::invalid_arguments(
            "question must not be blank".into(),
        ));
    }
    Ok(cut(question, MAX_QUESTION_CHARS))
}

/// What the model reads once its question has gone to the participants.
pub const ASKED_CONTENT: &str =
    "your question went to the participants; their answer arrives as their next message";

/// The JSON Schema of the tool's parameters, committed as `docs/schemas/ask_participant.json`.
/// Keys in alphabetical order.
pub fn ask_participant_schema() -> Value {
    json!({
        "additionalProperties": false,
        "properties": {
            "question": {
                "description": "The question, standing alone: the participants see it as this task's status.",
                "type": "string"
            }
        },
        "required": ["question"],
        "type": "object"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn_subtask::INVALID_ARGUMENTS;

    #[test]
    fn a_question_is_taken_trimmed() {
        assert_eq!(
            validate_ask(r#"{"question": "  Which order do you mean?\n"}"#).unwrap(),
            "Which order do you mean?"
        );
    }

    #[test]
    fn a_long_question_is_cut() {
        let long = format!(r#"{{"question": "{}"}}"#, "q".repeat(10_000));
        let question = validate_ask(&long).unwrap();
        assert_eq!(question.chars().count(), MAX_QUESTION_CHARS);
        assert!(question.ends_with('…'));
    }

    #[test]
    fn bad_arguments_are_refused_with_the_reason() {
        for (arguments, message) in [
            (r#"{"question": " "}"#, "question must not be blank"),
            ("{}", "missing field `question`"),
            (r#"{"question": "q", "to": "bob"}"#, "unknown field `to`"),
            ("[1]", "invalid type"),
            ("", "EOF while parsing"),
        ] {
            let error = validate_ask(arguments).expect_err(arguments);
            assert_eq!(error.code, INVALID_ARGUMENTS);
            assert!(
                error.message.contains(message),
                "{arguments}: {}",
                error.message
            );
        }
    }

    #[test]
    fn the_committed_schema_matches_the_code() {
        crate::committed_schema::check(
            "ask_participant.json",
            "ask_participant_schema",
            &ask_participant_schema(),
        );
    }
}
