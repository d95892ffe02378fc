//! What Baton asks a model, independent of any provider's wire format.

use serde::{Deserialize, Serialize};

/// One model turn's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub model: String,
    /// The instructions, sent first and byte for byte: callers cache on its exact bytes.
    pub system: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub reasoning_effort: Option<String>,
    pub max_output_tokens: Option<u32>,
}

/// One message of the conversation after the system instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    User {
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A function call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The raw JSON text exactly as the model sent it; it may be invalid JSON, and parsing it
    /// is the caller's job.
    pub arguments: String,
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: serde_json::Value,
}
