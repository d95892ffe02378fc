//! A webhook of the test's own on 127.0.0.1 that records every push it takes.

use crate::wait::{HANG_GUARD, poll_until};

/// Every push a webhook received: its headers and body.
pub type Received =
    std::sync::Arc<std::sync::Mutex<Vec<(axum::http::HeaderMap, serde_json::Value)>>>;

/// A webhook of the test's own on 127.0.0.1 that records what arrives; stopped on drop.
pub struct Webhook {
    /// Where it takes pushes.
    pub url: String,
    /// What arrived, in order.
    pub seen: Received,
    server: tokio::task::JoinHandle<()>,
}

impl Webhook {
    /// Starts one on a free port.
    pub async fn start() -> Webhook {
        let seen = Received::default();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post({
                let seen = seen.clone();
                move |headers: axum::http::HeaderMap,
                      axum::Json(body): axum::Json<serde_json::Value>| {
                    let seen = seen.clone();
                    async move {
                        seen.lock().unwrap().push((headers, body));
                        axum::http::StatusCode::OK
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Webhook { url, seen, server }
    }

    /// Waits until what arrived so far satisfies `done`; returns all of it.
    pub async fn wait_for(
        &self,
        what: &str,
        done: impl Fn(&[(axum::http::HeaderMap, serde_json::Value)]) -> bool,
    ) -> Vec<(axum::http::HeaderMap, serde_json::Value)> {
        poll_until(what, HANG_GUARD, || async {
            let seen = self.seen.lock().unwrap().clone();
            done(&seen).then_some(seen)
        })
        .await
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.server.abort();
    }
}
