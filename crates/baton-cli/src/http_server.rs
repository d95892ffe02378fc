use std::net::SocketAddr;

use anyhow::Context;
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Baton's HTTP server, running in the background until `stop`.
pub struct HttpServer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// Serves `routes` on `bind`.
pub async fn start(bind: SocketAddr, routes: Router) -> anyhow::Result<HttpServer> {
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("server.bind: cannot listen on {bind}"))?;
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let served = axum::serve(
            listener,
            routes.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async {
            stopped.await.ok();
        })
        .await;
        if let Err(error) = served {
            tracing::error!("the HTTP server stopped: {error}");
        }
    });
    tracing::info!("listening on http://{bind}");
    Ok(HttpServer { stop, task })
}

impl HttpServer {
    pub async fn stop(self) {
        self.stop.send(()).ok();
        self.task.await.ok();
    }
}
