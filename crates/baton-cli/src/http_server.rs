//! The HTTP server every Baton process runs its routes on (gateway, push receiver, health), bound
//! within `[server]`'s connection limits, with a stop that drains within `server.drain_timeout`:
//! streams end at once, other requests under way may finish, and what is still open then is cut.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::serve::{ListenerExt, TapIo};
use baton_config::ServerSettings;
use baton_gateway::Draining;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::listener::{GuardedListener, GuardedStream};

/// Baton's HTTP server, running in the background until `stop`.
pub struct HttpServer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
    draining: Draining,
    drain_timeout: Duration,
}

/// Serves `routes` on `server.bind`, within `server`'s connection limits; `draining` ends their
/// streams and blocking sends when the server stops.
pub async fn start(
    server: &ServerSettings,
    routes: Router,
    draining: Draining,
) -> anyhow::Result<HttpServer> {
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
    Ok(HttpServer {
        stop,
        task,
        draining,
        drain_timeout: server.drain_timeout,
    })
}

/// The listener Baton serves on: guarded, and tapped (with nothing) so that axum hands the
/// peer's address to the routes, as it does for a plain TCP listener.
pub type ServedListener = TapIo<GuardedListener, fn(&mut GuardedStream)>;

/// A listener on `server.bind` with its cap on connections and its deadline for headers.
async fn guarded_listener(server: &ServerSettings) -> anyhow::Result<ServedListener> {
    let listener = tokio::net::TcpListener::bind(server.bind)
        .await
        .with_context(|| format!("server.bind: cannot listen on {}", server.bind))?;
    let untouched: fn(&mut GuardedStream) = |_| {};
    Ok(
        GuardedListener::new(listener, server.max_connections, server.header_timeout)
            .tap_io(untouched),
    )
}

impl HttpServer {
    /// Stops taking connections, ends the streams and blocking sends under way (their clients
    /// subscribe or send again; a repeated messageId is taken once), lets the other requests
    /// finish for up to `server.drain_timeout`, then cuts what is still open.
    pub async fn stop(self) {
        self.draining.start();
        self.stop.send(()).ok();
        let mut task = self.task;
        if tokio::time::timeout(self.drain_timeout, &mut task)
            .await
            .is_err()
        {
            tracing::info!(
                "requests still open {:?} after the stop are cut (server.drain_timeout)",
                self.drain_timeout
            );
            task.abort();
            task.await.ok();
        }
    }
}
