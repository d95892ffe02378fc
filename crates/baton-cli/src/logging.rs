//! Log lines on stderr, at INFO unless `RUST_LOG` says otherwise; stdout stays for results. The
//! lines start as text, and switch to `[log] format` once a command has read its settings.

use std::io::IsTerminal;
use std::sync::OnceLock;

use baton_config::LogFormat;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry, reload};

type FormatLayer = Box<dyn Layer<Registry> + Send + Sync>;

static FORMAT: OnceLock<reload::Handle<FormatLayer, Registry>> = OnceLock::new();

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (format, handle) = reload::Layer::new(layer(LogFormat::Text));
    tracing_subscriber::registry()
        .with(format)
        .with(filter)
        .init();
    FORMAT.set(handle).ok();
}

/// Writes every line from now on in `format`.
pub fn use_format(format: LogFormat) {
    if format == LogFormat::Text {
        return;
    }
    if let Some(handle) = FORMAT.get() {
        handle.reload(layer(format)).ok();
    }
}

fn layer(format: LogFormat) -> FormatLayer {
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false);
    match format {
        LogFormat::Text => lines.with_ansi(std::io::stderr().is_terminal()).boxed(),
        LogFormat::Json => lines.json().with_ansi(false).boxed(),
    }
}
