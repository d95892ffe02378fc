//! What Baton asks a model, independent of any provider's wire format.

use serde::{Deserialize, Serialize};

/// One model turn's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The model to ask: the task's own choice, else `model.model`.
    pub model: String,
    /// The instructions, sent first and byte for byte: callers cache on its exact bytes.
    pub system: String,
    /// The conversation after the instructions, oldest first.
    pub messages: Vec<ChatMessage>,
    /// The functions the model may call; empty offers none.
    pub tools: Vec<ToolSpec>,
    /// Passed through to the provider as is (e.g. `low`, `high`); `None` leaves its default.
    pub reasoning_effort: Option<String>,
    /// A cap on the tokens the model may answer with; `None` leaves the provider's limit.
    pub max_output_tokens: Option<u32>,
}

/// One message of the conversation after the system instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// Text the model reads as the user's.
    User {
        /// The text.
        content: String,
        /// Images the model sees after the text, each a URL: `data:<media type>;base64,…` for
        /// bytes Baton holds.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
    },
    /// An earlier answer of the model.
    Assistant {
        /// Its text; `None` when it only called tools.
        content: Option<String>,
        /// The calls it asked for.
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The [`ToolCall::id`] it answers.
        tool_call_id: String,
        /// The result as text.
        content: String,
    },
}

/// A function call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call; the result's `tool_call_id` names it.
    pub id: String,
    /// The function called.
    pub name: String,
    /// The raw JSON text exactly as the model sent it; it may be invalid JSON, and parsing it
    /// is the caller's job.
    pub arguments: String,
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model to read.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: serde_json::Value,
}
