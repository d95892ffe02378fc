//! `/livez` and `/readyz`, for probes. Live: the process answers. Ready: every Temporal the
//! process uses answers for its namespace, and, in a process that runs workers, they are
//! polling. Served on the gateway's address and, with `[health] bind`, on their own.

use baton_gateway::Draining;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use temporalio_client::Client;
use temporalio_common::protos::temporal::api::workflowservice::v1::DescribeNamespaceRequest;
use tokio::task::JoinHandle;

/// How long `/readyz` waits for Temporal before it calls the process not ready.
const TEMPORAL_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// What `/readyz` checks: nothing by default; the methods below add what readiness needs.
#[derive(Clone, Default)]
pub struct Readiness {
    /// Each Temporal the process uses: its client, namespace and address (for the log).
    temporals: Vec<(Client, String, String)>,
    /// Set while the process's workers poll; none in a process without workers.
    polling: Option<Polling>,
    /// Begun when the process stops: not ready from then on, so no new caller is sent here.
    draining: Option<Draining>,
}

/// Whether the process's workers are polling their task queues.
#[derive(Clone, Default)]
pub struct Polling(Arc<AtomicBool>);

impl Polling {
    pub(crate) fn set(&self, polling: bool) {
        self.0.store(polling, Ordering::SeqCst);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl Readiness {
    /// Also ready only when `client` answers for `namespace` at `address`.
    pub fn with_temporal(mut self, client: &Client, namespace: &str, address: &str) -> Readiness {
        self.temporals
            .push((client.clone(), namespace.to_string(), address.to_string()));
        self
    }

    /// Also ready only while `polling` is set: a process that runs workers.
    pub fn with_workers(mut self, polling: &Polling) -> Readiness {
        self.polling = Some(polling.clone());
        self
    }

    /// Also not ready once `draining` has begun: a stopping gateway.
    pub fn with_draining(mut self, draining: &Draining) -> Readiness {
        self.draining = Some(draining.clone());
        self
    }

    /// Why the process is not ready, if it is not.
    async fn problem(&self) -> Option<String> {
        if self.draining.as_ref().is_some_and(Draining::has_started) {
            return Some("stopping: draining the requests under way".into());
        }
        if self
            .polling
            .as_ref()
            .is_some_and(|polling| !polling.is_set())
        {
            return Some("the workers are not polling their task queues".into());
        }
        for (client, namespace, address) in &self.temporals {
            let request = DescribeNamespaceRequest {
                namespace: namespace.clone(),
                ..Default::default()
            };
            let answer = tokio::time::timeout(
                TEMPORAL_CHECK_TIMEOUT,
                client
                    .connection()
                    .workflow_service()
                    .describe_namespace(tonic::Request::new(request)),
            )
            .await;
            // The probe's answer may reach strangers (it shares the gateway's address): it says
            // what is wrong, and the log says where.
            let detail = match answer {
                Ok(Ok(_)) => continue,
                Ok(Err(status)) => status.message().to_string(),
                Err(_) => format!("no answer within {}s", TEMPORAL_CHECK_TIMEOUT.as_secs()),
            };
            tracing::warn!(%address, %namespace, "not ready: Temporal does not answer: {detail}");
            return Some("Temporal does not answer".into());
        }
        None
    }
}

/// The probes in front of `gateway`, which answers everything else as it would alone (its own
/// fallback and error bodies included).
pub fn beside(gateway: Router, readiness: Readiness) -> Router {
    routes(readiness).fallback_service(gateway)
}

/// `GET /livez` and `GET /readyz`.
pub fn routes(readiness: Readiness) -> Router {
    Router::new()
        .route("/livez", get(|| async { "live\n" }))
        .route("/readyz", get(ready))
        .with_state(Arc::new(readiness))
}

async fn ready(State(readiness): State<Arc<Readiness>>) -> (StatusCode, String) {
    match readiness.problem().await {
        None => (StatusCode::OK, "ready\n".into()),
        Some(problem) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {problem}\n"),
        ),
    }
}

/// The probes on their own listener (`[health] bind`); it stops when dropped.
pub struct HealthServer {
    task: JoinHandle<()>,
    address: SocketAddr,
}

impl HealthServer {
    pub(crate) async fn start(
        bind: SocketAddr,
        readiness: Readiness,
    ) -> anyhow::Result<HealthServer> {
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .with_context(|| format!("health.bind: cannot listen on {bind}"))?;
        let address = listener.local_addr()?;
        let task = tokio::spawn(async move {
            axum::serve(listener, routes(readiness)).await.ok();
        });
        tracing::info!(%address, "serving /livez and /readyz");
        Ok(HealthServer { task, address })
    }

    /// What to probe: `http://<address>/readyz`.
    pub fn url(&self) -> String {
        format!("http://{}/readyz", self.address)
    }
}

impl Drop for HealthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The probe listener of `bind`, when one is set.
pub async fn serve(
    bind: Option<SocketAddr>,
    readiness: &Readiness,
) -> anyhow::Result<Option<HealthServer>> {
    match bind {
        Some(bind) => Ok(Some(HealthServer::start(bind, readiness.clone()).await?)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_process_that_begins_to_drain_is_no_longer_ready() {
        let draining = Draining::default();
        let readiness = Readiness::default().with_draining(&draining);
        assert_eq!(readiness.problem().await, None);
        draining.start();
        assert_eq!(
            readiness.problem().await.as_deref(),
            Some("stopping: draining the requests under way")
        );
    }
}
