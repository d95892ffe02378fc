//! The `baton` command's library half: everything the binary wires together, kept testable.

#![warn(missing_docs)]

/// The environment variable that names the config when a command is given no `--config`.
pub const CONFIG_VARIABLE: &str = "BATON_CONFIG";

pub mod agent_process;
pub mod agent_span;
pub mod agents_check;
pub mod child_process;
pub mod config_check;
pub mod content_store;
pub mod deployment_secret;
pub mod error_report;
pub mod gateway;
pub mod health;
pub mod http_server;
pub mod listener;
pub mod logging;
pub mod metrics;
pub mod open_files;
pub mod replay;
pub mod shutdown;
pub mod task_cli;
pub mod temporal;
pub mod temporal_client;
pub mod temporal_serve;
pub mod tracing_export;
pub mod up;
pub mod worker;
