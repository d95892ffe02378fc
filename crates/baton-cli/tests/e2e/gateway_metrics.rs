//! The gateway's own metrics on a real worker: each request by binding and status, refusals
//! included, its latency, and which build runs.

use crate::common::baton;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, http_post};
use baton_tests::fake_model::FakeModel;
use baton_tests::metrics::{sample, scrape};

#[tokio::test]
async fn requests_are_counted_by_binding_and_status_and_the_build_is_named() {
    let temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .with_metrics();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let base = config.base_url.clone().unwrap();

    let card = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    // A JSON-RPC call for a task that does not exist: answered, with an A2A error.
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}"#;
    let (status, _) = http_post(
        &format!("{base}/"),
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0"),
            ("X-Participant-Id", "alice"),
        ],
        body.to_vec(),
    )
    .await;
    assert_eq!(status, 200);
    // A push without a token is refused.
    let (status, _) = http_post(&format!("{base}/a2a/push/t-1.1"), &[], b"{}".to_vec()).await;
    assert_eq!(status, 401);

    let text = scrape(&config.metrics_url().unwrap()).await;
    let requests = "baton_gateway_requests_total";
    for (binding, status) in [("card", "200"), ("jsonrpc", "200"), ("push", "401")] {
        assert_eq!(
            sample(
                &text,
                requests,
                &[
                    ("agent", "front-desk"),
                    ("binding", binding),
                    ("status", status)
                ]
            ),
            Some(1.0),
            "{binding} {status}:\n{text}"
        );
    }
    assert_eq!(
        sample(
            &text,
            "baton_gateway_calls_total",
            &[
                ("agent", "front-desk"),
                ("method", "GetTask"),
                ("outcome", "TASK_NOT_FOUND")
            ]
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "baton_gateway_refusals_total",
            &[
                ("agent", "front-desk"),
                ("binding", "push"),
                ("reason", "UNAUTHENTICATED")
            ]
        ),
        Some(1.0),
        "{text}"
    );
    assert!(
        text.lines().any(|line| line.starts_with(
            "baton_gateway_request_duration_seconds_count{agent=\"front-desk\",binding=\"jsonrpc\"}"
        )),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "baton_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        Some(1.0)
    );
}
