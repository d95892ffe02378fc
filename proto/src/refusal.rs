//! Why a workflow refused a message, as a stable code a client can act on.
//!
//! The Temporal SDK carries an update validator's error to the caller as a failure message
//! only (it sets no failure type), so a refusal travels as `"<code>: <reason>"` and
//! [`Refusal::parse`] reads the code back. Callers match on [`RefusalCode`], never on the
//! reason's wording.

use std::fmt;

/// What a refusal means for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    /// The task has ended and takes nothing more.
    TaskClosed,
    /// The sender is not one of the task's participants.
    NotParticipant,
    /// The message names a sub-task that cannot take an answer now.
    SubTaskNotAnswerable,
}

impl RefusalCode {
    /// Every code, for [`Refusal::parse`].
    const ALL: [RefusalCode; 3] = [
        RefusalCode::TaskClosed,
        RefusalCode::NotParticipant,
        RefusalCode::SubTaskNotAnswerable,
    ];

    /// The code as it is written in a failure message.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::TaskClosed => "task_closed",
            RefusalCode::NotParticipant => "not_participant",
            RefusalCode::SubTaskNotAnswerable => "sub_task_not_answerable",
        }
    }
}

/// A refusal: its code and the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What the refusal means: what a client acts on.
    pub code: RefusalCode,
    /// The reason in words, for people.
    pub reason: String,
}

impl Refusal {
    /// A refusal with `code`, for `reason`.
    pub fn new(code: RefusalCode, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
        }
    }

    /// The refusal a failure message carries, if it carries one.
    pub fn parse(message: &str) -> Option<Refusal> {
        let (code, reason) = message.split_once(": ")?;
        let code = RefusalCode::ALL.into_iter().find(|c| c.as_str() == code)?;
        Some(Refusal::new(code, reason))
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.reason)
    }
}

impl std::error::Error for Refusal {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_from_its_message() {
        for code in RefusalCode::ALL {
            let refusal = Refusal::new(code, "the task is closed (COMPLETED): no more");
            assert_eq!(Refusal::parse(&refusal.to_string()), Some(refusal));
        }
    }

    #[test]
    fn a_message_without_a_known_code_is_no_refusal() {
        for message in [
            "",
            "not a participant",
            "task_closed",
            "task_closed:no space",
            "Task_Closed: wrong case",
            "other: reason",
        ] {
            assert_eq!(Refusal::parse(message), None, "{message:?}");
        }
    }
}
