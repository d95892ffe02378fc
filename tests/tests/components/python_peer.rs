//! A real A2A 1.0 agent on the official Python a2a-sdk is accepted, and Baton's calls carry the
//! headers it requires: without `A2A-Version: 1.0` it would answer VersionNotSupported (-32009).

use baton_a2a::extensions::{PARTICIPANT_HEADER, TASK_EXTENSION};
use baton_a2a::{AgentError, CardLimits, RemoteAgent};
use baton_config::RemoteAgentSpec;
use baton_tests::PythonPeer;

fn spec(url: &str) -> RemoteAgentSpec {
    RemoteAgentSpec::new("echo", url.parse().unwrap())
}

async fn connect(peer: &PythonPeer) -> RemoteAgent {
    RemoteAgent::connect(
        &spec(&peer.url()),
        "baton",
        &reqwest::Client::new(),
        CardLimits::default(),
    )
    .await
    .expect("the a2a-sdk agent's card is accepted")
}

fn task_not_found(error: AgentError) {
    match error {
        AgentError::Call { source, .. } => assert_eq!(source.code, -32001, "{source}"),
        other => panic!("expected TaskNotFound from the peer, got {other}"),
    }
}

#[tokio::test]
async fn a_python_a2a_sdk_agent_is_accepted_over_json_rpc() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let log_path = log.path().to_str().unwrap();
    let peer = PythonPeer::start(&[
        "--name",
        "Echo",
        "--skills",
        "3",
        "--extension",
        TASK_EXTENSION,
        "--headers-log",
        log_path,
    ])
    .await;
    let agent = connect(&peer).await;
    assert_eq!(agent.card().name, "Echo");
    assert_eq!(agent.card().skills.len(), 3);
    assert_eq!(agent.interface().protocol_binding, "JSONRPC");
    task_not_found(agent.get_task("no-such-task").await.unwrap_err());

    let records: Vec<serde_json::Value> = std::fs::read_to_string(log.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0]["path"], "/.well-known/agent-card.json");
    assert_eq!(records[0]["a2a-version"], "1.0");
    assert_eq!(records[1]["path"], "/rpc");
    assert_eq!(records[1]["a2a-version"], "1.0");
    assert_eq!(records[1][PARTICIPANT_HEADER.to_lowercase()], "baton");
    assert_eq!(records[1]["a2a-extensions"], TASK_EXTENSION);
}

#[tokio::test]
async fn a_python_agent_preferring_http_json_is_called_over_http_json() {
    let peer = PythonPeer::start(&["--prefer", "rest"]).await;
    let agent = connect(&peer).await;
    assert_eq!(agent.interface().protocol_binding, "HTTP+JSON");
    task_not_found(agent.get_task("no-such-task").await.unwrap_err());
}
