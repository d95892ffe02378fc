//! `[agent]`: who this agent is (its id).

use crate::error::Errors;
use crate::ids::{AGENT_ID_PATTERN, is_agent_id};
use crate::walk::Field;

/// `[agent]`: who this agent is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// Names the state directory and the default task queue; default `"baton"`.
    pub id: String,
}

const DEFAULT_ID: &str = "baton";

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> AgentSettings {
    let section = field.section("a table like [agent]", errors);
    section.refuse_unknown(&["id"], errors);
    let id_field = section.field("id");
    let id = match id_field.string("a string like \"baton\"", errors) {
        Some(id) if !is_agent_id(id) => {
            id_field.fail(
                errors,
                format!(
                    "must match {AGENT_ID_PATTERN}: lowercase letters, digits and hyphens, \
                     starting with a letter or digit, at most 63 characters (got {id:?})"
                ),
            );
            DEFAULT_ID
        }
        Some(id) => id,
        None => DEFAULT_ID,
    };
    AgentSettings { id: id.to_owned() }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    #[test]
    fn id_defaults_to_baton() {
        assert_eq!(parse("").unwrap().agent.id, "baton");
        assert_eq!(parse("[agent]").unwrap().agent.id, "baton");
    }

    #[test]
    fn id_is_kept() {
        assert_eq!(
            parse("[agent]\nid = \"front-desk\"").unwrap().agent.id,
            "front-desk"
        );
    }

    #[test]
    fn id_must_match_the_pattern() {
        for bad in ["Front_Desk", "", "-desk"] {
            assert_only_error(
                &format!("[agent]\nid = {bad:?}"),
                "agent.id",
                &format!(
                    "must match ^[a-z0-9][a-z0-9-]{{0,62}}$: lowercase letters, digits and hyphens, \
                     starting with a letter or digit, at most 63 characters (got {bad:?})"
                ),
            );
        }
    }

    #[test]
    fn id_must_be_a_string() {
        assert_only_error(
            "[agent]\nid = 7",
            "agent.id",
            "must be a string like \"baton\" (got an integer)",
        );
    }

    #[test]
    fn agent_must_be_a_table() {
        assert_only_error(
            "agent = \"baton\"",
            "agent",
            "must be a table like [agent] (got a string)",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            "[agent]\nname = \"x\"",
            "agent.name",
            "unknown setting (allowed: id)",
        );
    }
}
