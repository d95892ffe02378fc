//! The Chat Completions provider against FakeModel over real HTTP on 127.0.0.1: what it puts
//! on the wire, what it makes of each answer, and how it classifies each failure.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use baton_model::{
    ChatCompletions, ChatMessage, Finish, MAX_RESPONSE_BYTES, ModelError, ModelProvider,
    ModelRequest, ModelResponse, ToolCall, ToolSpec,
};
use baton_tests::fake_model::{FakeModel, ModelResponseSpec, Scripted, call, reply};
use baton_tests::wait::{HANG_GUARD, within};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(10);

fn provider_at(base_url: &str, api_key: Option<&str>, timeout: Duration) -> ChatCompletions {
    let base_url = reqwest::Url::parse(base_url).expect("a valid base URL");
    ChatCompletions::new(base_url, api_key.map(str::to_string), timeout)
}

fn provider(fake: &FakeModel) -> ChatCompletions {
    provider_at(&fake.base_url(), None, TIMEOUT)
}

fn ask(question: &str) -> ModelRequest {
    ModelRequest {
        model: "gpt-test".into(),
        system: "You are Baton.".into(),
        messages: vec![ChatMessage::User {
            content: question.into(),
            images: vec![],
        }],
        tools: vec![],
        reasoning_effort: None,
        max_output_tokens: None,
    }
}

async fn complete(fake: &FakeModel, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
    provider(fake).complete(request).await
}

#[tokio::test]
async fn a_text_reply_comes_back_with_its_finish_usage_and_model() {
    let fake = FakeModel::start(vec![reply("Paris.")]).await;
    let response = complete(&fake, &ask("Capital of France?")).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("Paris."));
    assert_eq!(response.tool_calls, vec![]);
    assert_eq!(response.finish, Finish::Stop);
    assert_eq!(response.model, "gpt-test");
    assert!(response.usage.input_tokens > 0, "{:?}", response.usage);
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_tool_call_round_trips_with_its_arguments_byte_for_byte() {
    let args = json!({"query": "café ☕", "limit": 3, "tags": ["a", "b"]});
    let fake = FakeModel::start(vec![call("lookup", args.clone()), reply("Found it.")]).await;
    let provider = provider(&fake);
    let mut request = ask("Find it");

    let first = provider.complete(&request).await.unwrap();
    assert_eq!(first.finish, Finish::ToolCalls);
    assert_eq!(first.text, None);
    assert_eq!(
        first.tool_calls,
        vec![ToolCall {
            id: "call_1".into(),
            name: "lookup".into(),
            arguments: args.to_string(),
        }]
    );

    request.messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: first.tool_calls.clone(),
    });
    request.messages.push(ChatMessage::Tool {
        tool_call_id: "call_1".into(),
        content: "row 42".into(),
    });
    let second = provider.complete(&request).await.unwrap();
    assert_eq!(second.text.as_deref(), Some("Found it."));

    let sent = &fake.requests()[1]["messages"];
    assert_eq!(
        sent[2],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "lookup", "arguments": args.to_string()}}
        ]})
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "row 42"})
    );

    // Ids stay unique across the server's lifetime.
    fake.push(call("lookup", json!({})));
    let third = provider.complete(&request).await.unwrap();
    assert_eq!(third.tool_calls[0].id, "call_2");
}

#[tokio::test]
async fn arguments_are_kept_exactly_as_the_server_wrote_them() {
    // Spacing, escapes and number spelling that a parse-and-reserialise would lose.
    let arguments = "{ \"path\" : \"caf\\u00e9/\\\"x\\\"\",\n  \"n\": 1.50 }";
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_x", "type": "function",
                            "function": {"name": "read", "arguments": arguments}}]
        }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2,
                  "prompt_tokens_details": {"cached_tokens": 8}}
    });
    let fake = FakeModel::start(vec![Scripted::Status(200, body.to_string())]).await;
    let response = complete(&fake, &ask("read it")).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, arguments);
    assert_eq!(response.usage.cached_tokens, 8);
}

#[tokio::test]
async fn the_system_message_is_sent_first_and_byte_identical() {
    let system = "<system_prompt>\r\n## role\n\tÉtape «1» 🚀 \"quoted\" \\ back\u{0}slash  \n</system_prompt>\n\n";
    let fake = FakeModel::start(vec![reply("ok")]).await;
    let mut request = ask("hello");
    request.system = system.into();
    complete(&fake, &request).await.unwrap();

    let messages = &fake.requests()[0]["messages"];
    assert_eq!(messages[0], json!({"role": "system", "content": system}));
    assert_eq!(
        messages[0]["content"].as_str().unwrap().as_bytes(),
        system.as_bytes()
    );
    assert_eq!(messages[1], json!({"role": "user", "content": "hello"}));
}

#[tokio::test]
async fn tools_and_options_are_sent_only_when_set() {
    let fake = FakeModel::start(vec![reply("bare"), reply("full")]).await;
    complete(&fake, &ask("bare")).await.unwrap();

    let parameters = json!({
        "type": "object",
        "properties": {"goal": {"type": "string"}},
        "required": ["goal"],
        "additionalProperties": false
    });
    let mut request = ask("full");
    request.tools = vec![ToolSpec {
        name: "spawn_subtask".into(),
        description: "Delegates a sub-task".into(),
        parameters: parameters.clone(),
    }];
    request.reasoning_effort = Some("low".into());
    request.max_output_tokens = Some(256);
    complete(&fake, &request).await.unwrap();

    let [bare, full] = fake.requests().try_into().unwrap();
    for absent in ["tools", "reasoning_effort", "max_completion_tokens"] {
        assert!(bare.get(absent).is_none(), "{absent} sent in {bare}");
    }
    assert_eq!(
        full["tools"],
        json!([{"type": "function", "function": {
            "name": "spawn_subtask", "description": "Delegates a sub-task", "parameters": parameters
        }}])
    );
    assert_eq!(full["reasoning_effort"], "low");
    assert_eq!(full["max_completion_tokens"], 256);
    assert_eq!(full["model"], "gpt-test");
}

#[tokio::test]
async fn the_key_is_sent_as_a_bearer_token_only_when_set() {
    let fake = FakeModel::start(vec![reply("one"), reply("two")]).await;
    provider_at(&fake.base_url(), None, TIMEOUT)
        .complete(&ask("no key"))
        .await
        .unwrap();
    provider_at(&fake.base_url(), Some("k"), TIMEOUT)
        .complete(&ask("key"))
        .await
        .unwrap();

    let headers = fake.headers();
    assert!(
        headers[0].get("authorization").is_none(),
        "{:?}",
        headers[0]
    );
    assert_eq!(headers[1]["authorization"], "Bearer k");
    assert_eq!(headers[1]["content-type"], "application/json");
}

fn openai_error(message: &str) -> String {
    json!({"error": {"message": message, "type": "server_error", "param": null, "code": null}})
        .to_string()
}

#[tokio::test]
async fn a_rate_limit_carries_the_providers_retry_after() {
    let fake = FakeModel::start(vec![Scripted::RateLimited {
        retry_after_secs: 3,
    }])
    .await;
    let error = complete(&fake, &ask("a")).await.unwrap_err();
    assert!(error.retryable);
    assert_eq!(error.status, Some(429));
    assert_eq!(error.retry_after, Some(Duration::from_secs(3)));
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retryable() {
    let fake = FakeModel::start(vec![
        Scripted::Status(429, openai_error("Rate limit reached for gpt-test")),
        Scripted::Status(503, openai_error("The engine is currently overloaded")),
        Scripted::Status(502, "<html><body>Bad Gateway</body></html>".into()),
    ])
    .await;

    let error = complete(&fake, &ask("a")).await.unwrap_err();
    assert!(error.retryable);
    assert_eq!(error.status, Some(429));
    assert_eq!(
        error.message,
        "model provider answered 429 Too Many Requests: Rate limit reached for gpt-test"
    );

    let error = complete(&fake, &ask("b")).await.unwrap_err();
    assert!(error.retryable);
    assert_eq!(error.status, Some(503));
    assert!(
        error.message.contains("The engine is currently overloaded"),
        "{error}"
    );

    // A body that is not an OpenAI error is quoted as it came.
    let error = complete(&fake, &ask("c")).await.unwrap_err();
    assert!(error.retryable);
    assert_eq!(
        error.message,
        "model provider answered 502 Bad Gateway: <html><body>Bad Gateway</body></html>"
    );
}

#[tokio::test]
async fn a_bad_request_is_final_and_carries_the_provider_message() {
    let fake = FakeModel::start(vec![Scripted::Status(400, openai_error("Invalid 'model'"))]).await;
    let error = complete(&fake, &ask("hi")).await.unwrap_err();
    assert_eq!(
        error,
        ModelError {
            retryable: false,
            status: Some(400),
            message: "model provider answered 400 Bad Request: Invalid 'model'".into(),
            retry_after: None,
        }
    );
}

#[tokio::test]
async fn an_exhausted_script_answers_500_which_is_retryable() {
    let fake = FakeModel::start(vec![]).await;
    let error = complete(&fake, &ask("anyone?")).await.unwrap_err();
    assert!(error.retryable);
    assert_eq!(error.status, Some(500));
    assert!(
        error
            .message
            .contains("FakeModel has no scripted response left"),
        "{error}"
    );
}

#[tokio::test]
async fn a_hanging_server_hits_the_timeout_which_is_retryable() {
    let fake = FakeModel::start(vec![Scripted::Hang]).await;
    let provider = provider_at(&fake.base_url(), None, Duration::from_millis(300));
    // The server never answers: only the provider's own timeout can end the call.
    let error = within(
        "the call to time out",
        HANG_GUARD,
        provider.complete(&ask("hello?")),
    )
    .await
    .unwrap_err();
    assert!(error.retryable);
    assert_eq!(error.status, None);
    assert!(error.message.contains("within 300ms"), "{error}");
}

#[tokio::test]
async fn a_refused_connection_is_retryable() {
    let base_url = format!("http://127.0.0.1:{}/v1", baton_tests::free_port());
    let error = provider_at(&base_url, None, TIMEOUT)
        .complete(&ask("hello?"))
        .await
        .unwrap_err();
    assert!(error.retryable, "{error}");
    assert_eq!(error.status, None);
    assert!(
        error.message.contains("cannot complete the call"),
        "{error}"
    );
}

#[tokio::test]
async fn a_garbage_success_body_is_final() {
    let fake = FakeModel::start(vec![
        Scripted::Status(200, "<html>Welcome to nginx!</html>".into()),
        Scripted::Status(
            200,
            json!({"object": "chat.completion", "choices": []}).to_string(),
        ),
    ])
    .await;

    let error = complete(&fake, &ask("a")).await.unwrap_err();
    assert!(!error.retryable);
    assert_eq!(error.status, Some(200));
    assert!(
        error.message.contains("not a Chat Completions response"),
        "{error}"
    );
    assert!(error.message.contains("Welcome to nginx!"), "{error}");

    let error = complete(&fake, &ask("b")).await.unwrap_err();
    assert!(!error.retryable);
    assert!(error.message.contains("no choices"), "{error}");
}

#[tokio::test]
async fn an_oversized_body_is_refused() {
    // A well-formed reply, so only its size can be the reason.
    let fake = FakeModel::start(vec![reply(&"x".repeat(MAX_RESPONSE_BYTES))]).await;
    let error = complete(&fake, &ask("say a lot")).await.unwrap_err();
    assert!(!error.retryable);
    assert_eq!(error.status, Some(200));
    assert!(error.message.contains("larger than 8 MiB"), "{error}");
}

#[tokio::test]
async fn the_base_url_works_with_and_without_a_trailing_slash() {
    let fake = FakeModel::start(vec![reply("without"), reply("with")]).await;
    for (base_url, expected) in [
        (fake.base_url(), "without"),
        (format!("{}/", fake.base_url()), "with"),
    ] {
        let response = provider_at(&base_url, None, TIMEOUT)
            .complete(&ask("hi"))
            .await
            .unwrap_or_else(|e| panic!("{base_url}: {e}"));
        assert_eq!(response.text.as_deref(), Some(expected));
    }
}

#[tokio::test]
async fn several_tool_calls_in_one_reply_keep_their_order() {
    let fake = FakeModel::start(vec![Scripted::Reply(ModelResponseSpec {
        text: Some("Two lookups.".into()),
        tool_calls: vec![
            ("first".into(), json!({"n": 1})),
            ("second".into(), json!({"n": 2})),
        ],
    })])
    .await;
    let response = complete(&fake, &ask("go")).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("Two lookups."));
    let calls: Vec<(&str, &str, &str)> = response
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_1", "first", "{\"n\":1}"),
            ("call_2", "second", "{\"n\":2}")
        ]
    );
}

/// What the fmt subscriber writes, for the whole test binary.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs a global subscriber once. A thread-scoped one would miss events: tracing caches
/// a callsite as disabled when another test's thread, with no subscriber, reaches it first.
fn captured_logs() -> &'static Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        tracing_subscriber::fmt()
            .with_env_filter("baton_model=trace")
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .init();
        captured
    })
}

#[tokio::test]
async fn each_call_logs_one_debug_line_without_contents_or_key() {
    let captured = captured_logs();
    let fake = FakeModel::start(vec![reply("the secret answer")]).await;
    let request = ModelRequest {
        model: "gpt-log-probe".into(),
        system: "the confidential instructions".into(),
        ..ask("the private question")
    };
    provider_at(&fake.base_url(), Some("sk-do-not-log"), TIMEOUT)
        .complete(&request)
        .await
        .unwrap();

    // Other tests log into the same buffer; this test's lines name its model.
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("gpt-log-probe"))
        .collect();
    assert_eq!(lines.len(), 1, "{logs}");
    let line = lines[0];
    assert!(line.contains("DEBUG"), "{line}");
    for field in [
        "model=gpt-log-probe",
        "finish=Stop",
        "input_tokens=",
        "output_tokens=",
    ] {
        assert!(line.contains(field), "{field} missing from {line}");
    }
    for secret in [
        "sk-do-not-log",
        "secret answer",
        "private question",
        "confidential",
    ] {
        assert!(!logs.contains(secret), "{secret} logged: {logs}");
    }
}

#[test]
fn request_types_round_trip_through_serde() {
    // Activities pass these through Temporal as JSON payloads.
    let request = ModelRequest {
        tools: vec![ToolSpec {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }],
        ..ask("hi")
    };
    let value: Value = serde_json::to_value(&request).unwrap();
    assert_eq!(
        value["messages"][0],
        json!({"role": "user", "content": "hi"})
    );
    assert_eq!(
        serde_json::from_value::<ModelRequest>(value).unwrap(),
        request
    );
}
