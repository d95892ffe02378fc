//! Baton's components against real counterparts, without the `baton` binary: the workflows on
//! an in-process worker with every activity held by the test (`task_workflow_interleavings`,
//! `remote_task_workflow_exits`), the A2A client against real Python a2a-sdk agents, the model
//! provider, MCP servers, the embedded Temporal launcher, and what strangers send. The end-to-end
//! tests, which run the binary, are `crates/baton-cli/tests/e2e`.

mod content_store;
mod embedded_temporal;
mod hostile_inputs;
mod mcp_servers;
mod model_provider;
mod outbound_auth;
mod python_peer;
mod python_peer_behaviours;
mod registry;
mod remote_cards;
mod remote_task_workflow_exits;
mod task_workflow_interleavings;
mod tiny_harness_payloads;
