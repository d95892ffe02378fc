//! Delegating to agents that require a credential: a real a2a-sdk agent whose card declares an
//! HTTP bearer scheme, or OAuth2 client credentials at a token endpoint of ours. Baton presents
//! what `agents[].auth` gives as the card says, refuses a card it cannot satisfy before calling
//! anything, and never sends a client secret where only the card says to.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use baton_a2a::{AgentError, CardLimits, RemoteAgent};
use baton_config::{AgentAuth, ClientCredentials, EnvSecret, RemoteAgentSpec, Secret};
use baton_tests::PythonPeer;
use serde_json::json;

const PEER_TOKEN: &str = "peer-token-5b1e0c";

fn spec(url: &str, auth: Option<AgentAuth>) -> RemoteAgentSpec {
    RemoteAgentSpec {
        auth,
        ..RemoteAgentSpec::new("vault", url.parse().unwrap())
    }
}

fn secret(value: &str) -> EnvSecret {
    EnvSecret {
        variable: "VAULT_SECRET".into(),
        secret: Secret::new(value),
    }
}

async fn connect(peer: &PythonPeer, auth: Option<AgentAuth>) -> Result<RemoteAgent, AgentError> {
    RemoteAgent::connect(
        &spec(&peer.url(), auth),
        "front-desk",
        &reqwest::Client::new(),
        CardLimits::default(),
    )
    .await
}

/// A call that reaches the agent's task store: an unknown task is TaskNotFound (-32001).
async fn reaches_the_agent(agent: &RemoteAgent) -> bool {
    match agent.get_task("no-such-task").await {
        Err(AgentError::Call { source, .. }) => source.code == a2a::error_code::TASK_NOT_FOUND,
        _ => false,
    }
}

#[tokio::test]
async fn a_bearer_token_is_presented_where_the_card_asks_and_nothing_is_called_without_one() {
    let peer = PythonPeer::start(&["--bearer", PEER_TOKEN]).await;

    let refused = connect(&peer, None).await.err().expect("refused");
    assert_eq!(refused.code(), "a2a.security_unsatisfiable");
    assert!(
        refused
            .to_string()
            .contains("peer-auth: a bearer token: set agents[].auth.bearer_env"),
        "{refused}"
    );
    let stats = peer.stats().await;
    assert_eq!(
        (
            stats["unauthorized"].clone(),
            stats["tasks_created"].clone()
        ),
        (json!(0), json!(0))
    );

    let agent = connect(&peer, Some(AgentAuth::Bearer(secret(PEER_TOKEN))))
        .await
        .expect("the card is satisfied");
    assert!(reaches_the_agent(&agent).await);
    assert_eq!(peer.stats().await["unauthorized"], 0);

    // A token the agent does not take: the call is made and the agent's 401 is the answer.
    let wrong = connect(&peer, Some(AgentAuth::Bearer(secret("another-token"))))
        .await
        .unwrap();
    assert!(!reaches_the_agent(&wrong).await);
    assert_eq!(peer.stats().await["unauthorized"], 1);
}

/// An OAuth2 token endpoint: issues `PEER_TOKEN` for client `desk`/`s3cret` and scope `a2a`,
/// valid 31 s (so Baton, renewing 30 s early, asks again after a second), and counts requests.
struct TokenEndpoint {
    url: String,
    issued: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TokenEndpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn token_endpoint() -> TokenEndpoint {
    async fn issue(
        State(issued): State<Arc<AtomicUsize>>,
        headers: HeaderMap,
        body: String,
    ) -> (StatusCode, axum::Json<serde_json::Value>) {
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode("desk:s3cret");
        let authorized = headers.get("authorization").and_then(|v| v.to_str().ok())
            == Some(format!("Basic {basic}").as_str());
        if !authorized {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"error": "invalid_client"})),
            );
        }
        if body != "grant_type=client_credentials&scope=a2a" {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": "invalid_request", "body": body})),
            );
        }
        issued.fetch_add(1, Ordering::SeqCst);
        (
            StatusCode::OK,
            axum::Json(
                json!({"access_token": PEER_TOKEN, "token_type": "Bearer", "expires_in": 31}),
            ),
        )
    }
    let issued = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/oauth/token", post(issue))
        .with_state(issued.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/oauth/token", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.ok();
    });
    TokenEndpoint { url, issued, task }
}

fn client_credentials(client_secret: &str, token_url: Option<&str>) -> AgentAuth {
    AgentAuth::ClientCredentials(ClientCredentials {
        client_id: "desk".into(),
        client_secret: secret(client_secret),
        token_url: token_url.map(|u| u.parse().unwrap()),
        scopes: vec![],
    })
}

#[tokio::test]
async fn client_credentials_are_exchanged_for_tokens_that_are_kept_and_renewed() {
    let endpoint = token_endpoint().await;
    let peer =
        PythonPeer::start(&["--bearer", PEER_TOKEN, "--oauth-token-url", &endpoint.url]).await;

    // The card's token endpoint is on another origin than the agent: the secret is not sent
    // there on the card's word alone.
    let refused = connect(&peer, Some(client_credentials("s3cret", None)))
        .await
        .err()
        .expect("refused");
    assert!(
        refused
            .to_string()
            .contains("on another origin than the agent"),
        "{refused}"
    );
    assert_eq!(endpoint.issued.load(Ordering::SeqCst), 0);

    // Named by the operator, it is used: one token for the calls within its lifetime, and a new
    // one once it is about to expire.
    let agent = connect(
        &peer,
        Some(client_credentials("s3cret", Some(&endpoint.url))),
    )
    .await
    .unwrap();
    assert!(reaches_the_agent(&agent).await);
    assert!(reaches_the_agent(&agent).await);
    let first = endpoint.issued.load(Ordering::SeqCst);
    assert!(first >= 1, "a token was fetched");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while endpoint.issued.load(Ordering::SeqCst) == first {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the token was never renewed"
        );
        assert!(reaches_the_agent(&agent).await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(peer.stats().await["unauthorized"], 0);

    // A wrong client secret: the endpoint's refusal is the answer, and the agent is not called.
    let wrong = connect(
        &peer,
        Some(client_credentials("wrong", Some(&endpoint.url))),
    )
    .await
    .unwrap();
    match wrong.get_task("no-such-task").await {
        Err(AgentError::Call { source, .. }) => {
            assert!(
                source.message.contains("refused the client credentials"),
                "{source}"
            );
            assert!(
                !AgentError::Call {
                    agent: "vault".into(),
                    method: "GetTask",
                    source
                }
                .is_transient()
            );
        }
        other => panic!("{:?}", other.map(|t| t.id)),
    }
    assert_eq!(peer.stats().await["unauthorized"], 0);
}
