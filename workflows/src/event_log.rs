//! A task's event log: the numbered events the gateway streams, bounded, with sequence numbers that
//! never repeat across continue-as-new.

use std::time::SystemTime;

use baton_proto::{EventEntry, EventPage, TaskEvent};
use chrono::{DateTime, SecondsFormat, Utc};

/// How many events a task keeps across continue-as-new.
pub const EVENT_TAIL: usize = 1000;

/// The ordered event log the gateway streams; sequence numbers never repeat, even across runs.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    events: Vec<EventEntry>,
    next_seq: u64,
}

impl EventLog {
    pub fn restore(events: Vec<EventEntry>, next_seq: u64) -> Self {
        EventLog { events, next_seq }
    }

    pub fn push(&mut self, at: Option<SystemTime>, event: TaskEvent) {
        let at = at
            .map(|t| DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Millis, true))
            .unwrap_or_default();
        self.events.push(EventEntry {
            seq: self.next_seq,
            at,
            event,
        });
        self.next_seq += 1;
    }

    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// When the last status event was recorded.
    pub fn last_status_at(&self) -> Option<String> {
        self.events
            .iter()
            .rev()
            .find(|e| matches!(e.event, TaskEvent::Status { .. }))
            .map(|e| e.at.clone())
    }

    pub fn since(&self, cursor: u64, closed: bool) -> EventPage {
        EventPage {
            events: self
                .events
                .iter()
                .filter(|e| e.seq >= cursor)
                .cloned()
                .collect(),
            next_seq: self.next_seq,
            closed,
        }
    }

    /// The last EVENT_TAIL events and the next sequence number, for the next run.
    pub fn tail(&self) -> (Vec<EventEntry>, u64) {
        let skip = self.events.len().saturating_sub(EVENT_TAIL);
        (self.events[skip..].to_vec(), self.next_seq)
    }
}
