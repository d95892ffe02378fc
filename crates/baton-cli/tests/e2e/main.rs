//! Baton's end-to-end tests: each starts what it needs (a real Temporal dev server, the `baton`
//! binary built beside this test, real Python a2a-sdk agents, a fake OpenAI-compatible model) on
//! 127.0.0.1 and stops it when it ends. One binary, one module per subject; the fault suite,
//! slower, is a target of its own (`faults`). What the tests share is in `common`.

mod common;

mod agents_check_cli;
mod deploy_files;
mod embedded_restart;
mod engine_ask;
mod engine_cli;
mod engine_delegation;
mod engine_lifecycle;
mod engine_mcp;
mod engine_outcomes;
mod engine_push;
mod example_delegation;
mod files;
mod gateway_a2a;
mod gateway_delegation;
mod gateway_metrics;
mod health;
mod logs;
mod networks;
mod replay_cli;
mod setup_script;
mod task_cli;
mod temporal_serve_cli;
mod temporal_tls;
mod traces;
mod web_ui;
