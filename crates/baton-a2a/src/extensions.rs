//! The extensions and headers Baton uses on outbound calls.

pub use baton_core::extensions::{STATUS_EXTENSION, SUPPORTED_EXTENSIONS, TASK_EXTENSION};

/// The header that names the participant a call is made as (decision-003 of the reference).
pub const PARTICIPANT_HEADER: &str = "X-Participant-Id";
