//! Reading Chat Completions answers: a success body into a [`ModelResponse`], an error body
//! into the provider's own message.
//!
//! Compatible servers differ in what they leave out, so everything but `choices[0].message` is
//! optional here.

use serde::Deserialize;

use crate::{Finish, ModelResponse, ToolCall, Usage};

#[derive(Deserialize)]
struct WireResponse {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    content: Option<String>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: String,
    r#type: Option<String>,
    function: Option<WireFunctionCall>,
}

#[derive(Deserialize)]
struct WireFunctionCall {
    name: String,
    /// A JSON string per the API; a few servers send the object itself.
    #[serde(default)]
    arguments: serde_json::Value,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<WirePromptTokensDetails>,
}

#[derive(Deserialize)]
struct WirePromptTokensDetails {
    cached_tokens: Option<u64>,
}

/// The first choice of a success body. `requested_model` stands in when the server does not
/// name the model. The error completes "model provider answered 200 OK …".
pub(super) fn parse_response(body: &[u8], requested_model: &str) -> Result<ModelResponse, String> {
    let wire: WireResponse = serde_json::from_slice(body)
        .map_err(|e| format!("but the body is not a Chat Completions response: {e}"))?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or("but the response has no choices")?;
    let usage = wire.usage.map(usage).unwrap_or_default();
    Ok(ModelResponse {
        text: choice.message.content,
        tool_calls: choice
            .message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .filter_map(tool_call)
            .collect(),
        finish: finish(choice.finish_reason.as_deref()),
        usage,
        model: wire.model.unwrap_or_else(|| requested_model.to_string()),
    })
}

/// The provider's explanation in an error body: `{"error": {"message": …}}` (OpenAI and most
/// compatible servers) or `{"error": "…"}`; `None` for any other body.
pub(super) fn provider_error_message(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: ErrorDetail,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ErrorDetail {
        Object { message: String },
        Text(String),
    }
    match serde_json::from_slice::<ErrorBody>(body).ok()?.error {
        ErrorDetail::Object { message } | ErrorDetail::Text(message) => Some(message),
    }
}

fn tool_call(call: WireToolCall) -> Option<ToolCall> {
    // Baton declares only function tools, so any other kind is not an answer to them.
    let function = match call.function {
        Some(function) if call.r#type.as_deref().is_none_or(|kind| kind == "function") => function,
        _ => {
            tracing::warn!(kind = ?call.r#type, "ignoring a model tool call that is not a function call");
            return None;
        }
    };
    let arguments = match function.arguments {
        serde_json::Value::String(text) => text,
        serde_json::Value::Null => String::new(),
        object => object.to_string(),
    };
    Some(ToolCall {
        id: call.id,
        name: function.name,
        arguments,
    })
}

fn finish(reason: Option<&str>) -> Finish {
    match reason {
        Some("stop") => Finish::Stop,
        Some("tool_calls") => Finish::ToolCalls,
        Some("length") => Finish::Length,
        Some("content_filter") => Finish::ContentFilter,
        _ => Finish::Other,
    }
}

fn usage(wire: WireUsage) -> Usage {
    Usage {
        input_tokens: wire.prompt_tokens.unwrap_or(0),
        cached_tokens: wire
            .prompt_tokens_details
            .and_then(|details| details.cached_tokens)
            .unwrap_or(0),
        output_tokens: wire.completion_tokens.unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: serde_json::Value) -> Result<ModelResponse, String> {
        parse_response(body.to_string().as_bytes(), "asked-model")
    }

    #[test]
    fn a_text_reply() {
        let response = parse(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello", "refusal": null},
                         "logprobs": null, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127,
                      "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0}}
        }))
        .unwrap();
        assert_eq!(
            response,
            ModelResponse {
                text: Some("Hello".into()),
                tool_calls: vec![],
                finish: Finish::Stop,
                usage: Usage {
                    input_tokens: 120,
                    cached_tokens: 64,
                    output_tokens: 7
                },
                model: "gpt-4.1-mini-2025-04-14".into(),
            }
        );
    }

    #[test]
    fn tool_calls_keep_their_arguments_text() {
        let arguments = "{ \"q\" : \"caf\\u00e9\",\n  \"n\": 1.50 }";
        let response = parse(json!({
            "model": "m",
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": arguments}},
                {"id": "call_b", "function": {"name": "other", "arguments": {"k": true}}},
                {"id": "call_c", "type": "custom", "custom": {"name": "x", "input": "y"}}
            ]}, "finish_reason": "tool_calls"}]
        }))
        .unwrap();
        assert_eq!(response.text, None);
        assert_eq!(response.finish, Finish::ToolCalls);
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "lookup".into(),
                    arguments: arguments.into()
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "other".into(),
                    arguments: "{\"k\":true}".into()
                },
            ]
        );
    }

    #[test]
    fn finish_reasons_map_and_unknown_ones_are_other() {
        for (reason, expected) in [
            (json!("stop"), Finish::Stop),
            (json!("tool_calls"), Finish::ToolCalls),
            (json!("length"), Finish::Length),
            (json!("content_filter"), Finish::ContentFilter),
            (json!("function_call"), Finish::Other),
            (json!(null), Finish::Other),
        ] {
            let response = parse(json!({
                "choices": [{"message": {"content": "x"}, "finish_reason": reason}]
            }))
            .unwrap();
            assert_eq!(response.finish, expected, "{reason}");
        }
    }

    #[test]
    fn missing_usage_and_model_fall_back() {
        let response = parse(json!({
            "choices": [{"message": {"content": null, "tool_calls": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "prompt_tokens_details": null}
        }))
        .unwrap();
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 5,
                cached_tokens: 0,
                output_tokens: 0
            }
        );
        assert_eq!(response.model, "asked-model");
        assert_eq!(response.tool_calls, vec![]);
    }

    #[test]
    fn bodies_that_are_not_chat_completions_are_refused() {
        let error = parse_response(b"<html>502 Bad Gateway</html>", "m").unwrap_err();
        assert!(
            error.starts_with("but the body is not a Chat Completions response"),
            "{error}"
        );
        assert_eq!(
            parse(json!({"choices": []})).unwrap_err(),
            "but the response has no choices"
        );
        assert_eq!(
            parse(json!({"object": "list"})).unwrap_err(),
            "but the response has no choices"
        );
        assert!(parse(json!({"choices": [{"finish_reason": "stop"}]})).is_err());
    }

    #[test]
    fn the_provider_message_is_found_in_both_error_shapes() {
        let openai = json!({"error": {"message": "Invalid 'model'", "type": "invalid_request_error",
                                      "param": "model", "code": null}});
        assert_eq!(
            provider_error_message(openai.to_string().as_bytes()).as_deref(),
            Some("Invalid 'model'")
        );
        assert_eq!(
            provider_error_message(br#"{"error": "model not loaded"}"#).as_deref(),
            Some("model not loaded")
        );
        assert_eq!(provider_error_message(b"upstream connect error"), None);
        assert_eq!(provider_error_message(br#"{"detail": "x"}"#), None);
    }
}
