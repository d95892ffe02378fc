//! `/livez` and `/readyz` on a real worker and its gateway, with Temporal up, down and back.

use std::time::{Duration, Instant};

use crate::common::baton;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess};
use baton_tests::fake_model::FakeModel;

async fn get(url: &str) -> (u16, String) {
    match reqwest::get(url).await {
        Ok(response) => (
            response.status().as_u16(),
            response.text().await.unwrap_or_default(),
        ),
        Err(error) => (0, error.to_string()),
    }
}

/// Polls `url` until it answers `status`; panics with the last answer after `within`.
async fn wait_for_status(url: &str, status: u16, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let (got, body) = get(url).await;
        if got == status {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{url} still answers {got} {body:?}, not {status}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_probes_say_not_ready_while_temporal_is_down_and_ready_again_when_it_is_back() {
    let mut temporal = TestTemporal::start().await;
    let model = FakeModel::start(vec![]).await;
    let config = WorkerConfig::new(&temporal, &model.base_url())
        .with_push_receiver()
        .with_health();
    let _worker = WorkerProcess::start(baton(), &config.render()).await;
    let readyz = config.readyz_url().unwrap();
    let livez = readyz.replace("/readyz", "/livez");
    let gateway_readyz = format!("{}/readyz", config.base_url.as_ref().unwrap());

    assert_eq!(get(&livez).await, (200, "live\n".into()));
    assert_eq!(get(&readyz).await, (200, "ready\n".into()));
    assert_eq!(get(&gateway_readyz).await, (200, "ready\n".into()));

    let address = temporal.address().to_string();
    temporal.kill();
    let body = wait_for_status(&readyz, 503, Duration::from_secs(30)).await;
    // The probe tells a stranger what is wrong, never where Temporal is; the log says where.
    assert_eq!(body, "not ready: Temporal does not answer\n");
    assert!(!body.contains(&address));
    assert_eq!(get(&gateway_readyz).await.0, 503);
    assert_eq!(get(&livez).await.0, 200, "still live: the process runs");

    temporal.start_again().await;
    wait_for_status(&readyz, 200, Duration::from_secs(60)).await;
    wait_for_status(&gateway_readyz, 200, Duration::from_secs(60)).await;
}
