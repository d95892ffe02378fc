//! The pure core of Baton: text rendering and validation with no I/O, no
//! logging, no clocks and no randomness. Every function returns data; the
//! caller decides what to log and what to do.

#![forbid(unsafe_code)]

pub mod agent_card;
pub mod extensions;
pub mod roster;
pub mod spawn_subtask;
pub mod untrusted;
