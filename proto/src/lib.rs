//! Baton's public contract: the JSON its workflows take and give, and the names Temporal knows
//! them by ([`temporal`]).
//!
//! Everything here travels through Temporal (workflow inputs, signals, queries, activity
//! payloads) or over A2A (the task envelope), so it shows in the Web UI and can be written by
//! hand on the Temporal CLI. `docs/contract.md` shows the exact JSON; its examples are tested
//! against these types.

pub mod envelope;
pub mod failure_types;
mod refusal;
pub mod remote;
pub mod task;
pub mod temporal;

pub use envelope::{ENVELOPE_KIND_TASK, TaskEnvelope, TaskEnvelopePayload};
pub use refusal::{Refusal, RefusalCode};
pub use remote::*;
pub use task::*;

/// The schema of record, `proto/schema/baton/v1/*.proto`, as prost types for clients that speak
/// protobuf. The workflows use the serde types above; `tests/schema` holds the two together.
#[allow(clippy::all)]
pub mod schema {
    include!(concat!(env!("OUT_DIR"), "/baton.v1.rs"));
}

/// The schema's encoded `FileDescriptorSet`, with its imports and comments, for a
/// `prost_reflect::DescriptorPool` that reads and writes the contract's JSON by message name.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/baton_v1.bin"));
