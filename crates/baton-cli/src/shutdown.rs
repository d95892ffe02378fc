//! SIGINT and SIGTERM, caught from the start, so every long-running command stops gracefully.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Ctrl-C (SIGINT) and SIGTERM, caught from the moment this exists: install it before saying
/// "ready", or a signal sent right after would kill the process the hard way.
pub struct ShutdownSignals {
    terminate: Signal,
    interrupt: Signal,
}

impl ShutdownSignals {
    /// Catches both signals from now on.
    pub fn install() -> std::io::Result<ShutdownSignals> {
        Ok(ShutdownSignals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Resolves on the first of the two, naming it.
    pub async fn requested(mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}
