use tokio::signal::unix::{SignalKind, signal};

/// Resolves on Ctrl-C (SIGINT) or SIGTERM, naming the signal.
pub async fn shutdown_requested() -> &'static str {
    let mut terminate = signal(SignalKind::terminate()).expect("installing a SIGTERM handler");
    let mut interrupt = signal(SignalKind::interrupt()).expect("installing a SIGINT handler");
    tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    }
}
