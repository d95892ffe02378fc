//! Model providers behind one trait. Baton's `invoke_model` activity holds an
//! `Arc<dyn ModelProvider>` and hands it a provider-neutral [`ModelRequest`]; the provider speaks
//! its wire protocol and answers a [`ModelResponse`] or a [`ModelError`] that says whether a
//! retry can help.
//!
//! [`ChatCompletions`] speaks OpenAI-compatible Chat Completions, so it works with OpenAI and
//! with any server that copies its API (vLLM, Ollama, llama.cpp, LiteLLM, …).

#![warn(missing_docs)]

mod body;
mod chat_completions;
mod error;
mod request;
mod response;

pub use chat_completions::{ChatCompletions, MAX_RESPONSE_BYTES};
pub use error::ModelError;
pub use request::{ChatMessage, ModelRequest, ToolCall, ToolSpec};
pub use response::{Finish, ModelResponse, Usage};

/// One model turn: the conversation so far in, the model's reply out.
#[async_trait::async_trait]
pub trait ModelProvider: Send + Sync {
    /// Sends `request` to the provider and waits for its whole answer.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;
}
