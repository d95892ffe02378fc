//! What a model answered, independent of any provider's wire format.

use serde::{Deserialize, Serialize};

use crate::ToolCall;

/// One model turn's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The answer's text, if it has any.
    pub text: Option<String>,
    /// The function calls the model asked for, in its order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish: Finish,
    /// The tokens the turn took.
    pub usage: Usage,
    /// The model that answered, as the provider names it (it may differ from the one asked for,
    /// e.g. a dated snapshot of an alias).
    pub model: String,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// It finished its answer.
    Stop,
    /// It stopped to have tools called.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// The provider's content filter cut it off.
    ContentFilter,
    /// Any other reason, or none given.
    Other,
}

/// Token counts of one turn; a count the provider did not report is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The tokens the request took.
    pub input_tokens: u64,
    /// The part of `input_tokens` served from the provider's prompt cache.
    pub cached_tokens: u64,
    /// The tokens of the answer.
    pub output_tokens: u64,
}
