//! Baton's public contract, as JSON.
//!
//! Everything here travels through Temporal (workflow inputs, signals, queries, activity
//! payloads) or over A2A (the task envelope), so it shows in the Web UI and can be written by
//! hand on the Temporal CLI. `docs/contract.md` shows the exact JSON; its examples are tested
//! against these types.

pub mod envelope;
pub mod failure_types;
pub mod remote;
pub mod task;

pub use envelope::{ENVELOPE_KIND_TASK, TaskEnvelope, TaskEnvelopePayload};
pub use remote::*;
pub use task::*;
