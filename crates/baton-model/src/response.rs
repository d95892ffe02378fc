//! What a model answered, independent of any provider's wire format.

use serde::{Deserialize, Serialize};

use crate::ToolCall;

/// One model turn's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    pub text: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish: Finish,
    pub usage: Usage,
    /// The model that answered, as the provider names it (it may differ from the one asked for,
    /// e.g. a dated snapshot of an alias).
    pub model: String,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other,
}

/// Token counts of one turn; a count the provider did not report is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    /// The part of `input_tokens` served from the provider's prompt cache.
    pub cached_tokens: u64,
    pub output_tokens: u64,
}
