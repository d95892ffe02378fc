//! Ids derived from what they identify, so a retry of the same act lands on the same id.

use sha2::{Digest, Sha256};

use crate::push_token::hex;

/// A stable id from `parts`, shaped as a UUID (8-4-4-4-12 lowercase hex digits of their
/// SHA-256), so any agent that expects a UUID takes it. The parts are joined with newlines,
/// which no id Baton derives from contains.
pub fn derived_id(parts: &[&str]) -> String {
    let digest = hex(&Sha256::digest(parts.join("\n").as_bytes()));
    format!(
        "{}-{}-{}-{}-{}",
        &digest[0..8],
        &digest[8..12],
        &digest[12..16],
        &digest[16..20],
        &digest[20..32]
    )
}

/// The ids a delegation's brief carries: the same on every attempt to create the task, and
/// never the same for two delegations, so a retry finds what an earlier attempt created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegationIds {
    /// The brief's `messageId`: an agent that deduplicates messages takes a resend as a repeat.
    pub message_id: String,
    /// The brief's `contextId`: the attempts after the first look the task up by it.
    pub context_id: String,
}

/// The ids of the delegation `stand_in_id` of the parent whose first run is
/// `parent_first_run_id`. The run id keeps a workflow id used again later (a parent started
/// again under the same id) from finding the tasks of the earlier one.
pub fn delegation_ids(parent_first_run_id: &str, stand_in_id: &str) -> DelegationIds {
    DelegationIds {
        message_id: derived_id(&[parent_first_run_id, stand_in_id, "brief"]),
        context_id: derived_id(&[parent_first_run_id, stand_in_id, "context"]),
    }
}

/// The `messageId` of answer number `n` the parent whose first run is `parent_first_run_id`
/// sends its sub-tasks, for the sub-task `stand_in_id`: the same on every attempt to send it.
pub fn reply_message_id(parent_first_run_id: &str, stand_in_id: &str, n: u32) -> String {
    derived_id(&[parent_first_run_id, stand_in_id, "reply", &n.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_uuid_shaped(id: &str) -> bool {
        let groups: Vec<&str> = id.split('-').collect();
        groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
            && id
                .chars()
                .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
    }

    #[test]
    fn a_derived_id_is_stable_and_uuid_shaped() {
        let id = derived_id(&["alice", "m-1"]);
        assert_eq!(id, derived_id(&["alice", "m-1"]));
        assert!(is_uuid_shaped(&id), "{id}");
        // The digest of "alice\nm-1", cut into UUID groups.
        let digest = hex(&Sha256::digest(b"alice\nm-1"));
        assert_eq!(id.replace('-', ""), digest[..32]);
    }

    #[test]
    fn the_parts_are_kept_apart() {
        assert_ne!(derived_id(&["ab", "c"]), derived_id(&["a", "bc"]));
        assert_ne!(derived_id(&["a"]), derived_id(&["a", ""]));
    }

    #[test]
    fn delegation_ids_are_the_same_on_every_attempt() {
        assert_eq!(
            delegation_ids("run-1", "t-1.1"),
            delegation_ids("run-1", "t-1.1")
        );
    }

    #[test]
    fn delegation_ids_differ_by_delegation_and_by_parent_run() {
        let first = delegation_ids("run-1", "t-1.1");
        for other in [
            delegation_ids("run-1", "t-1.2"),
            delegation_ids("run-2", "t-1.1"),
        ] {
            assert_ne!(first.context_id, other.context_id);
            assert_ne!(first.message_id, other.message_id);
        }
        assert_ne!(first.message_id, first.context_id);
        assert!(is_uuid_shaped(&first.message_id));
        assert!(is_uuid_shaped(&first.context_id));
    }

    #[test]
    fn reply_ids_are_stable_and_differ_by_number_sub_task_and_run_and_from_the_brief() {
        let first = reply_message_id("run-1", "t-1.1", 1);
        assert_eq!(first, reply_message_id("run-1", "t-1.1", 1));
        assert!(is_uuid_shaped(&first));
        for other in [
            reply_message_id("run-1", "t-1.1", 2),
            reply_message_id("run-1", "t-1.2", 1),
            reply_message_id("run-2", "t-1.1", 1),
            delegation_ids("run-1", "t-1.1").message_id,
        ] {
            assert_ne!(first, other);
        }
    }
}
