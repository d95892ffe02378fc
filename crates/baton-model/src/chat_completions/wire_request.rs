//! The Chat Completions request body: Baton's [`ModelRequest`] in OpenAI's shapes.

use serde::Serialize;

use crate::{ChatMessage, ModelRequest, ToolCall, ToolSpec};

#[derive(Debug, Serialize)]
pub(super) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: WireContent<'a>,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A user message's content: its text alone, or, with images, a list of parts.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: WireImageUrl<'a> },
}

#[derive(Debug, Serialize)]
struct WireImageUrl<'a> {
    url: &'a str,
}

#[derive(Debug, Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    r#type: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    r#type: &'static str,
    function: &'a ToolSpec,
}

/// The body for `request`: the system message first, exactly `request.system`, then the
/// conversation.
pub(super) fn wire_request(request: &ModelRequest) -> WireRequest<'_> {
    let system = WireMessage::System {
        content: &request.system,
    };
    WireRequest {
        model: &request.model,
        messages: std::iter::once(system)
            .chain(request.messages.iter().map(wire_message))
            .collect(),
        tools: request
            .tools
            .iter()
            .map(|function| WireTool {
                r#type: "function",
                function,
            })
            .collect(),
        reasoning_effort: request.reasoning_effort.as_deref(),
        max_completion_tokens: request.max_output_tokens,
    }
}

fn wire_message(message: &ChatMessage) -> WireMessage<'_> {
    match message {
        ChatMessage::User { content, images } if images.is_empty() => WireMessage::User {
            content: WireContent::Text(content),
        },
        ChatMessage::User { content, images } => WireMessage::User {
            content: WireContent::Parts(
                std::iter::once(WirePart::Text { text: content })
                    .chain(images.iter().map(|url| WirePart::ImageUrl {
                        image_url: WireImageUrl { url },
                    }))
                    .collect(),
            ),
        },
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => WireMessage::Assistant {
            content: content.as_deref(),
            tool_calls: tool_calls.iter().map(wire_tool_call).collect(),
        },
        ChatMessage::Tool {
            tool_call_id,
            content,
        } => WireMessage::Tool {
            tool_call_id,
            content,
        },
    }
}

fn wire_tool_call(call: &ToolCall) -> WireToolCall<'_> {
    WireToolCall {
        id: &call.id,
        r#type: "function",
        function: WireFunctionCall {
            name: &call.name,
            arguments: &call.arguments,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn body(request: &ModelRequest) -> Value {
        serde_json::to_value(wire_request(request)).unwrap()
    }

    fn request(messages: Vec<ChatMessage>) -> ModelRequest {
        ModelRequest {
            model: "gpt-4.1-mini".into(),
            system: "You are Baton.".into(),
            messages,
            tools: vec![],
            reasoning_effort: None,
            max_output_tokens: None,
        }
    }

    #[test]
    fn a_bare_request_has_only_model_and_messages() {
        let body = body(&request(vec![ChatMessage::User {
            content: "hi".into(),
            images: vec![],
        }]));
        assert_eq!(
            body,
            json!({
                "model": "gpt-4.1-mini",
                "messages": [
                    {"role": "system", "content": "You are Baton."},
                    {"role": "user", "content": "hi"}
                ]
            })
        );
    }

    #[test]
    fn the_system_message_is_first_and_unchanged() {
        let mut request = request(vec![]);
        request.system =
            "  <system_prompt>\r\n\tÉtape \"1\" \u{1F600}\n</system_prompt>  \n".into();
        let body = body(&request);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][0]["content"], request.system.as_str());
    }

    #[test]
    fn every_message_kind_takes_the_openai_shape() {
        let body = body(&request(vec![
            ChatMessage::User {
                content: "look it up".into(),
                images: vec![],
            },
            ChatMessage::Assistant {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "lookup".into(),
                    arguments: "{\"q\": \"x\"}".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: "call_1".into(),
                content: "found".into(),
            },
            ChatMessage::Assistant {
                content: Some("done".into()),
                tool_calls: vec![],
            },
        ]));
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "You are Baton."},
                {"role": "user", "content": "look it up"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "found"},
                {"role": "assistant", "content": "done"}
            ])
        );
    }

    #[test]
    fn a_message_with_images_is_sent_as_parts_text_first() {
        let body = body(&request(vec![ChatMessage::User {
            content: "What does the chart show?".into(),
            images: vec!["data:image/png;base64,iVBORw0K".into()],
        }]));
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": [
                {"type": "text", "text": "What does the chart show?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}
            ]})
        );
    }

    #[test]
    fn tools_and_options_are_sent_when_set() {
        let mut request = request(vec![]);
        request.tools = vec![ToolSpec {
            name: "lookup".into(),
            description: "Looks things up".into(),
            parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        }];
        request.reasoning_effort = Some("low".into());
        request.max_output_tokens = Some(512);
        let body = body(&request);
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {
                "name": "lookup",
                "description": "Looks things up",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}
            }}])
        );
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(body["max_completion_tokens"], 512);
    }
}
