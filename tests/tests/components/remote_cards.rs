//! Card fetch and validation against real HTTP servers on 127.0.0.1: hostile card servers of our
//! own, each accepted or refused as specified, and what Baton puts on the wire.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use baton_a2a::extensions::{PARTICIPANT_HEADER, TASK_EXTENSION};
use baton_a2a::{AgentError, CardLimits, RemoteAgent};
use baton_config::RemoteAgentSpec;
use baton_tests::CardServer;
use baton_tests::wait::{HANG_GUARD, within};
use serde_json::{Value, json};

fn card(base: &str) -> Value {
    json!({
        "name": "Ledger",
        "description": "Answers order questions",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "extensions": [
            {"uri": TASK_EXTENSION, "required": false},
            {"uri": "urn:example:optional", "required": false}
        ]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "orders", "name": "Orders", "description": "Finds orders", "tags": []}]
    })
}

fn spec(url: &str) -> RemoteAgentSpec {
    RemoteAgentSpec::new("ledger", url.parse().unwrap())
}

async fn connect(url: &str, limits: CardLimits) -> Result<RemoteAgent, AgentError> {
    RemoteAgent::connect(&spec(url), "front-desk", &reqwest::Client::new(), limits).await
}

/// A server whose card is `edit(card)`, with the interface pointing back at itself.
async fn server_with(edit: impl FnOnce(&mut Value)) -> CardServer {
    // The card names its own URL, known only once the server listens: serve a placeholder
    // and rewrite it per request.
    let mut template = card("http://SELF");
    edit(&mut template);
    let template = template.to_string();
    let cell = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let body_cell = cell.clone();
    let server = CardServer::start(move |path| {
        let base = body_cell.get().cloned().unwrap_or_default();
        if path == "/.well-known/agent-card.json" {
            baton_tests::card_server_json(template.replace("http://SELF", &base))
        } else {
            baton_tests::card_server_json(
                r#"{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"Task not found"}}"#
                    .into(),
            )
        }
    })
    .await;
    cell.set(server.url()).unwrap();
    server
}

/// Connecting to the card at `url` fails with `code`, and the error says `says`.
async fn assert_refused(url: &str, code: &str, says: &str) {
    let error = connect(url, CardLimits::default()).await.err().unwrap();
    assert_eq!(error.code(), code, "{error}");
    assert!(error.to_string().contains(says), "{error}");
}

#[tokio::test]
async fn a_plain_card_is_accepted_and_every_request_carries_the_a2a_headers() {
    let server = server_with(|_| {}).await;
    let agent = connect(&server.url(), CardLimits::default()).await.unwrap();
    assert_eq!(agent.card().name, "Ledger");
    assert_eq!(agent.extensions(), [TASK_EXTENSION.to_string()]);

    let error = agent.get_task("no-such-task").await.unwrap_err();
    assert!(
        matches!(error, AgentError::Call { ref source, .. } if source.code == -32001),
        "{error}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let (card_fetch, call) = (&requests[0], &requests[1]);
    assert_eq!(card_fetch.path, "/.well-known/agent-card.json");
    assert_eq!(card_fetch.headers["a2a-version"], "1.0");
    assert_eq!(call.path, "/rpc");
    assert_eq!(call.headers["a2a-version"], "1.0");
    assert_eq!(call.headers[PARTICIPANT_HEADER], "front-desk");
    // Only the extension the card advertises and Baton implements; never the unknown optional one.
    assert_eq!(call.headers["a2a-extensions"], TASK_EXTENSION);
}

#[tokio::test]
async fn no_extensions_header_is_sent_to_a_card_that_advertises_none_baton_knows() {
    let server = server_with(|c| c["capabilities"] = json!({"streaming": true})).await;
    let agent = connect(&server.url(), CardLimits::default()).await.unwrap();
    agent.get_task("t").await.unwrap_err();
    let call = &server.requests()[1];
    assert!(
        call.headers.get("a2a-extensions").is_none(),
        "{:?}",
        call.headers
    );
    assert_eq!(call.headers[PARTICIPANT_HEADER], "front-desk");
}

#[tokio::test]
async fn a_security_scheme_baton_has_no_credential_for_is_refused_and_nothing_else_is_sent() {
    let server = server_with(|c| {
        c["securitySchemes"] = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        c["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    })
    .await;
    let error = connect(&server.url(), CardLimits::default())
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), "a2a.security_unsatisfiable");
    assert!(
        matches!(error, AgentError::SecurityUnsatisfiable { ref agent, .. } if agent == "ledger")
    );
    assert_eq!(server.requests().len(), 1, "only the card fetch");
}

#[tokio::test]
async fn a_required_unknown_extension_is_refused_naming_it() {
    let server = server_with(|c| {
        c["capabilities"]["extensions"] = json!([{"uri": "urn:example:billing", "required": true}]);
    })
    .await;
    assert_refused(
        &server.url(),
        "a2a.unsupported_extension",
        "extension=urn:example:billing",
    )
    .await;
}

#[tokio::test]
async fn an_optional_unknown_extension_is_accepted() {
    let server = server_with(|c| {
        c["capabilities"]["extensions"] =
            json!([{"uri": "urn:example:billing", "required": false}]);
    })
    .await;
    let agent = connect(&server.url(), CardLimits::default()).await.unwrap();
    assert!(agent.extensions().is_empty());
}

#[tokio::test]
async fn a_pinned_version_accepts_that_version_and_refuses_another_before_any_call() {
    let server = server_with(|_| {}).await;
    let mut pinned = spec(&server.url());
    pinned.version = Some("1.0.0".into());
    let http = reqwest::Client::new();
    RemoteAgent::connect(&pinned, "front-desk", &http, CardLimits::default())
        .await
        .unwrap();

    pinned.version = Some("2.0.0".into());
    let error = RemoteAgent::connect(&pinned, "front-desk", &http, CardLimits::default())
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), "a2a.card_version_mismatch");
    assert!(error.to_string().contains("\"2.0.0\""), "{error}");
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert!(
        paths.iter().all(|p| p == "/.well-known/agent-card.json"),
        "{paths:?}"
    );
}

#[tokio::test]
async fn a_0_3_only_card_is_refused() {
    let server = server_with(|c| {
        let object = c.as_object_mut().unwrap();
        object.remove("supportedInterfaces");
        object.insert("url".into(), json!("http://SELF/rpc"));
        object.insert("protocolVersion".into(), json!("0.3"));
        object.insert("preferredTransport".into(), json!("JSONRPC"));
    })
    .await;
    assert_refused(&server.url(), "a2a.no_compatible_interface", "0.3").await;
}

#[tokio::test]
async fn a_huge_card_is_refused_without_reading_it_all() {
    let huge = "x".repeat(10 * 1024 * 1024);
    let server = CardServer::start(move |_| {
        baton_tests::card_server_json(format!(r#"{{"name":"{huge}"}}"#))
    })
    .await;
    assert_refused(
        &server.url(),
        "a2a.card_unavailable",
        "larger than 1048576 bytes",
    )
    .await;
}

#[tokio::test]
async fn a_huge_card_without_a_length_is_cut_off_while_streaming() {
    let server = CardServer::start(|_| {
        let chunks =
            futures::stream::iter((0..160).map(|_| Ok::<_, std::io::Error>(vec![b' '; 64 * 1024])));
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from_stream(chunks))
            .unwrap()
    })
    .await;
    assert_refused(&server.url(), "a2a.card_unavailable", "larger than").await;
}

#[tokio::test]
async fn a_server_that_never_answers_cannot_stall_startup() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // Accept connections and never write a byte.
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let limits = CardLimits {
        timeout: Duration::from_millis(500),
        ..CardLimits::default()
    };
    // Only the card fetch's own timeout can end it: the server never writes a byte.
    let error = within(
        "the card fetch to give up",
        HANG_GUARD,
        connect(&url, limits),
    )
    .await
    .err()
    .unwrap();
    silent.abort();
    assert_eq!(error.code(), "a2a.card_unavailable");
    assert!(
        error.to_string().contains("no complete answer within"),
        "{error}"
    );
}

#[tokio::test]
async fn a_card_that_is_not_json_is_invalid() {
    let server =
        CardServer::start(|_| baton_tests::card_server_json("<html>hi</html>".into())).await;
    let error = connect(&server.url(), CardLimits::default())
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), "a2a.card_invalid");
}

#[tokio::test]
async fn an_error_status_is_reported_with_the_status() {
    let server =
        CardServer::start(|_| Response::builder().status(404).body(Body::empty()).unwrap()).await;
    assert_refused(&server.url(), "a2a.card_unavailable", "404").await;
}

#[tokio::test]
async fn an_interface_on_another_origin_is_refused_unless_the_operator_allows_it() {
    let elsewhere = server_with(|card| {
        card["supportedInterfaces"][0]["url"] = json!("http://127.0.0.1:9/rpc");
    })
    .await;
    let error = match connect(&elsewhere.url(), CardLimits::default()).await {
        Ok(_) => panic!("a card naming another host was accepted"),
        Err(error) => error,
    };
    assert_eq!(error.code(), "a2a.foreign_interface");
    assert!(error.to_string().contains("allow_other_origin"), "{error}");
    let allowed = RemoteAgentSpec {
        allow_other_origin: true,
        ..spec(&elsewhere.url())
    };
    let agent = RemoteAgent::connect(
        &allowed,
        "front-desk",
        &reqwest::Client::new(),
        CardLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(agent.interface().url, "http://127.0.0.1:9/rpc");
}

#[tokio::test]
async fn a_card_that_redirects_to_another_origin_is_not_followed() {
    let elsewhere = server_with(|_| {}).await;
    let target = format!("{}/.well-known/agent-card.json", elsewhere.url());
    let redirecting = CardServer::start(move |_| {
        Response::builder()
            .status(307)
            .header("location", target.clone())
            .body(Body::empty())
            .unwrap()
    })
    .await;
    let error = match RemoteAgent::connect(
        &spec(&redirecting.url()),
        "front-desk",
        &baton_a2a::agent_http_client(),
        CardLimits::default(),
    )
    .await
    {
        Ok(_) => panic!("a cross-origin redirect was followed"),
        Err(error) => error,
    };
    assert_eq!(error.code(), "a2a.card_unavailable");
    assert!(error.to_string().contains("another origin"), "{error}");
    assert!(
        elsewhere.requests().is_empty(),
        "nothing reached the other origin"
    );
}
