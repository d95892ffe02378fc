//! The HTTP server every Baton process runs its routes on (gateway, push receiver, health), bound
//! within `[server]`'s connection limits, with a graceful stop that cuts requests still open after
//! it.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::serve::{ListenerExt, TapIo};
use baton_config::ServerSettings;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::listener::{GuardedListener, GuardedStream};

/// Baton's HTTP server, running in the background until `stop`.
pub struct HttpServer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// Serves `routes` on `server.bind`, within `server`'s connection limits.
pub async fn start(server: &ServerSettings, routes: Router) -> anyhow::Result<HttpServer> {
    let bind = server.bind;
    let listener = guarded_listener(server).await?;
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

/// The listener Baton serves on: guarded, and tapped (with nothing) so that axum hands the
/// peer's address to the routes, as it does for a plain TCP listener.
pub type ServedListener = TapIo<GuardedListener, fn(&mut GuardedStream)>;

/// A listener on `server.bind` with its cap on connections and its deadline for headers.
pub async fn guarded_listener(server: &ServerSettings) -> anyhow::Result<ServedListener> {
    let listener = tokio::net::TcpListener::bind(server.bind)
        .await
        .with_context(|| format!("server.bind: cannot listen on {}", server.bind))?;
    let untouched: fn(&mut GuardedStream) = |_| {};
    Ok(
        GuardedListener::new(listener, server.max_connections, server.header_timeout)
            .tap_io(untouched),
    )
}

/// How long a stop waits for requests under way to finish. A stream on a quiet task or a
/// blocking send would hold it for as long as its client listens; past this they are cut, and
/// their clients subscribe or send again (a repeated messageId is taken once).
const STOP_GRACE: Duration = Duration::from_secs(5);

impl HttpServer {
    /// Stops taking connections and lets the requests under way finish for up to 5 s, then cuts
    /// them.
    pub async fn stop(self) {
        self.stop.send(()).ok();
        let mut task = self.task;
        if tokio::time::timeout(STOP_GRACE, &mut task).await.is_err() {
            tracing::info!(
                "requests still open {}s after the stop (streams, blocking sends) are cut",
                STOP_GRACE.as_secs()
            );
            task.abort();
            task.await.ok();
        }
    }
}
