//! The registry: `self` and agents of the same process get built cards with nothing fetched, and
//! one refused card fails startup naming the agent.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use baton_a2a::{CardLimits, Registry};
use baton_config::Settings;
use baton_core::deployment_key::DeploymentKey;
use baton_tests::wait::{HANG_GUARD, poll_until};
use baton_tests::{CardServer, card_server_json, free_port};
use serde_json::json;

fn settings(toml: &str) -> Settings {
    Settings::parse(toml, Path::new("."), &|_| None).unwrap()
}

fn deployment() -> DeploymentKey {
    DeploymentKey::from_secret(baton_tests::TEST_DEPLOYMENT_SECRET)
}

#[tokio::test]
async fn self_is_registered_from_its_own_settings_without_a_fetch() {
    // Nothing listens at the base URL: a fetch would fail.
    let front = settings(&format!(
        r#"
        [server]
        base_url = "http://127.0.0.1:{}"
        [card]
        name = "Front desk"
        "#,
        free_port()
    ));
    let registry = Registry::build(&front, &[], &deployment(), CardLimits::default())
        .await
        .unwrap();
    assert_eq!(registry.ids().into_iter().collect::<Vec<_>>(), ["self"]);
    let me = registry.get("self").unwrap();
    assert_eq!(me.card().name, "Front desk");
    assert_eq!(format!("{:?}", me.source()), "Built");
}

#[tokio::test]
async fn self_is_offered_only_when_a_gateway_serves_it() {
    let registry = Registry::build(&settings(""), &[], &deployment(), CardLimits::default())
        .await
        .unwrap();
    assert!(registry.ids().is_empty());
    assert!(registry.roster().text.contains("(no agents)"));
}

#[tokio::test]
async fn an_agent_of_the_same_process_gets_a_card_built_from_its_settings() {
    let ledger_port = free_port();
    let ledger = settings(&format!(
        r#"
        [agent]
        id = "ledger"
        [server]
        base_url = "http://127.0.0.1:{ledger_port}/"
        [card]
        name = "Ledger"
        [[card.skills]]
        id = "orders"
        name = "Orders"
        "#
    ));
    // The front desk lists the ledger without the trailing slash: still the same agent.
    let front = settings(&format!(
        r#"agents = [{{ id = "ledger", url = "http://127.0.0.1:{ledger_port}" }}]"#
    ));
    let registry = Registry::build(&front, &[&ledger], &deployment(), CardLimits::default())
        .await
        .unwrap();
    let built = registry.get("ledger").unwrap();
    assert_eq!(built.card().name, "Ledger");
    assert_eq!(built.card().skills.len(), 1);
    assert_eq!(format!("{:?}", built.source()), "Built");

    // Without the same-process settings the card is fetched, and nothing listens there: the
    // ledger is pending, out of the roster, and startup goes on.
    let registry = Registry::build(&front, &[], &deployment(), CardLimits::default())
        .await
        .unwrap();
    assert!(registry.ids().is_empty(), "no gateway, so no `self` either");
    assert_eq!(registry.pending_ids(), ["ledger"]);
    assert!(registry.get("ledger").is_none());
}

#[tokio::test]
async fn an_unreachable_card_is_fetched_again_until_it_joins_the_roster() {
    let ledger = RestartingAgent::start(json!({
        "name": "Ledger", "description": "Answers order questions", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": []
    }))
    .await;
    let front = settings(&format!(
        r#"agents = [{{ id = "ledger", url = "{}", allow_other_origin = true }}]"#,
        ledger.server.url()
    ));
    let registry = Registry::build(&front, &[], &deployment(), CardLimits::default())
        .await
        .unwrap();
    assert_eq!(registry.pending_ids(), ["ledger"]);
    let before = registry.roster();
    assert!(!before.text.contains("ledger"));
    assert_eq!(
        registry.roster_of(&["ledger".to_string()]),
        Err("ledger".to_string()),
        "a roster naming an agent not fetched here cannot be built"
    );

    // Still down at the first refetch; up by a later one.
    let joined = std::sync::Mutex::new(Vec::new());
    let fetching = registry.fetch_pending(CardLimits::default(), |id| {
        joined.lock().unwrap().push(id.to_string());
    });
    tokio::pin!(fetching);
    tokio::select! {
        () = &mut fetching => panic!("nothing joined yet, so fetching cannot be done"),
        () = wait_for_requests(&ledger.server, 2) => {}
    }
    ledger.come_up();
    tokio::time::timeout(std::time::Duration::from_secs(30), fetching)
        .await
        .expect("the ledger joins once its card answers");

    assert_eq!(*joined.lock().unwrap(), ["ledger"]);
    assert!(registry.pending_ids().is_empty());
    assert_eq!(registry.get("ledger").unwrap().card().name, "Ledger");
    assert!(registry.roster().text.contains("- id: ledger"));
    // A task shown the roster before the ledger joined is shown the same roster still.
    assert_eq!(registry.roster_of(&before.ids), Ok(before));
    // An agent the worker is not configured for (removed from the config) is left out.
    assert_eq!(
        registry.roster_of(&["ledger".to_string(), "payroll".to_string()]),
        registry.roster_of(&["ledger".to_string()])
    );
}

#[tokio::test]
async fn a_card_refused_when_it_is_fetched_again_stays_out() {
    let vault = RestartingAgent::start(json!({
        "name": "Vault", "description": "", "version": "1",
        "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"extensions": [{"uri": "urn:vault:sso", "required": true}]},
        "skills": []
    }))
    .await;
    let front = settings(&format!(
        r#"agents = [{{ id = "vault", url = "{}" }}]"#,
        vault.server.url()
    ));
    let registry = Registry::build(&front, &[], &deployment(), CardLimits::default())
        .await
        .unwrap();
    vault.come_up();
    let joined = std::sync::Mutex::new(Vec::<String>::new());
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        registry.fetch_pending(CardLimits::default(), |id| {
            joined.lock().unwrap().push(id.to_string());
        }),
    )
    .await
    .expect("a refused card is not fetched again");
    assert!(joined.lock().unwrap().is_empty());
    assert!(registry.pending_ids().is_empty());
    assert!(registry.get("vault").is_none());
}

/// An agent that answers 503 while it restarts, then serves `card`.
struct RestartingAgent {
    server: CardServer,
    up: Arc<AtomicBool>,
}

impl RestartingAgent {
    async fn start(card: serde_json::Value) -> RestartingAgent {
        let up = Arc::new(AtomicBool::new(false));
        let answering = up.clone();
        let server = CardServer::start(move |path| {
            if !answering.load(Ordering::SeqCst) {
                return axum::response::Response::builder()
                    .status(503)
                    .body(axum::body::Body::from("restarting"))
                    .unwrap();
            }
            assert!(path.ends_with("agent-card.json"), "{path}");
            card_server_json(card.to_string())
        })
        .await;
        RestartingAgent { server, up }
    }

    fn come_up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// Resolves once `server` has seen `count` requests.
async fn wait_for_requests(server: &CardServer, count: usize) {
    let what = format!("{count} requests for the card");
    poll_until(&what, HANG_GUARD, || async {
        (server.requests().len() >= count).then_some(())
    })
    .await;
}

#[tokio::test]
async fn one_refused_card_fails_the_build_naming_the_agent() {
    let hostile = CardServer::start(|_| {
        card_server_json(
            json!({
                "name": "Vault", "description": "", "version": "1",
                "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {"extensions": [{"uri": "urn:vault:sso", "required": true}]},
                "skills": []
            })
            .to_string(),
        )
    })
    .await;
    let front = settings(&format!(
        r#"agents = [{{ id = "vault", url = "{}" }}]"#,
        hostile.url()
    ));
    let error = Registry::build(&front, &[], &deployment(), CardLimits::default())
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), "a2a.unsupported_extension");
    assert_eq!(error.agent(), "vault");
    assert!(
        error.to_string().contains("extension=urn:vault:sso"),
        "{error}"
    );
}

#[tokio::test]
async fn the_roster_lists_registered_agents_and_is_the_same_every_time() {
    let front = settings(&format!(
        "[card]\nname = \"Front desk\"\n[server]\nbase_url = \"http://127.0.0.1:{}\"",
        free_port()
    ));
    let registry = Registry::build(&front, &[], &deployment(), CardLimits::default())
        .await
        .unwrap();
    let first = registry.roster();
    assert_eq!(first.ids, ["self"]);
    assert!(
        first.text.contains("- id: self\n  name: Front desk"),
        "{}",
        first.text
    );
    assert_eq!(registry.roster(), first);
}
