//! The pure core of Baton: text rendering and validation with no I/O, no
//! logging, no clocks and no randomness. Every function returns data; the
//! caller decides what to log and what to do.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod a2a_state;
pub mod answer;
pub mod ask_participant;
pub mod attachments;
pub mod brief;
pub mod choose_answer_files;
#[cfg(test)]
mod committed_schema;
pub mod completion;
pub mod context;
pub mod context_budget;
pub mod deadline;
pub mod delegation_chain;
pub mod deployment_key;
pub mod derived_id;
pub mod display;
pub mod extensions;
pub mod mcp_tool;
pub mod media_types;
pub mod network;
pub mod push_token;
pub mod redact;
pub mod roster;
pub mod spawn_subtask;
pub mod sub_task_reply;
pub mod sub_tasks;
pub mod system_prompt;
pub mod tool_result;
pub mod turn_bounds;
pub mod untrusted;
pub mod usage;
pub mod watch;
