//! The time of a task event as the event log writes it.

use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};

/// `at` (workflow time) in RFC 3339 with milliseconds; empty when the workflow has no time yet.
pub fn event_time(at: Option<SystemTime>) -> String {
    at.map(|t| DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Millis, true))
        .unwrap_or_default()
}
