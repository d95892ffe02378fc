use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Logs to stderr, at INFO unless `RUST_LOG` says otherwise; stdout stays for results.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
