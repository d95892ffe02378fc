//! `[agent]`: who this agent is (its id) and what it is for (its instructions).

use std::path::Path;

use crate::error::Errors;
use crate::ids::{AGENT_ID_PATTERN, is_agent_id};
use crate::walk::Field;

/// `[agent]`: who this agent is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// Names the state directory and the default task queue; default `"baton"`.
    pub id: String,
    /// What this agent is for, in the operator's words (`instructions`, or the text of
    /// `instructions_file`); none by default.
    pub instructions: Option<String>,
    /// How many delegations below its root task a task may be and still delegate; default 8.
    pub max_delegation_depth: u32,
}

const DEFAULT_ID: &str = "baton";

/// `agent.max_delegation_depth` when unset.
pub const DEFAULT_MAX_DELEGATION_DEPTH: u32 = 8;
/// The deepest `agent.max_delegation_depth` may be: a brief carries at most 64 parent tasks.
const MAX_DELEGATION_DEPTH: i64 = 64;

/// The most instructions an agent takes: they go in front of every model turn.
pub const INSTRUCTIONS_MAX_BYTES: usize = 32 * 1024;

pub(crate) fn read(field: Field<'_>, base_dir: &Path, errors: &mut Errors) -> AgentSettings {
    let section = field.section("a table like [agent]", errors);
    section.refuse_unknown(
        &[
            "id",
            "instructions",
            "instructions_file",
            "max_delegation_depth",
        ],
        errors,
    );
    let max_delegation_depth = section
        .field("max_delegation_depth")
        .count_between(
            "an integer number of delegations like 8",
            (1, MAX_DELEGATION_DEPTH),
            "",
            errors,
        )
        .map_or(DEFAULT_MAX_DELEGATION_DEPTH, |depth| depth as u32);
    let instructions = read_instructions(
        section.field("instructions"),
        section.field("instructions_file"),
        base_dir,
        errors,
    );
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
    AgentSettings {
        id: id.to_owned(),
        instructions,
        max_delegation_depth,
    }
}

/// `instructions` inline, or the text of `instructions_file` (relative to the settings file's
/// directory); never both.
fn read_instructions(
    inline: Field<'_>,
    file: Field<'_>,
    base_dir: &Path,
    errors: &mut Errors,
) -> Option<String> {
    if inline.is_set() && file.is_set() {
        file.fail(
            errors,
            "cannot be set beside agent.instructions: give the instructions inline or in a file",
        );
        return None;
    }
    let (field, text) = if inline.is_set() {
        let text = inline.optional_text("a string of instructions", errors)?;
        (inline, text.to_owned())
    } else {
        let name = file.optional_text("a path like \"instructions.md\"", errors)?;
        let path = base_dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().is_empty() => {
                file.fail(errors, format!("{} is empty", path.display()));
                return None;
            }
            Ok(text) => (file, text),
            Err(error) => {
                file.fail(errors, format!("cannot read {}: {error}", path.display()));
                return None;
            }
        }
    };
    if text.len() > INSTRUCTIONS_MAX_BYTES {
        field.fail(
            errors,
            format!(
                "must be at most {INSTRUCTIONS_MAX_BYTES} bytes, since they go in front of every \
                 model turn (got {} bytes)",
                text.len()
            ),
        );
        return None;
    }
    Some(text.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::INSTRUCTIONS_MAX_BYTES;
    use crate::Settings;
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
    fn max_delegation_depth_defaults_to_8_and_takes_1_to_64() {
        assert_eq!(parse("").unwrap().agent.max_delegation_depth, 8);
        assert_eq!(
            parse("[agent]\nmax_delegation_depth = 2")
                .unwrap()
                .agent
                .max_delegation_depth,
            2
        );
        for bad in ["0", "65", "-1"] {
            assert_only_error(
                &format!("[agent]\nmax_delegation_depth = {bad}"),
                "agent.max_delegation_depth",
                &format!("must be between 1 and 64 (got {bad})"),
            );
        }
        assert_only_error(
            "[agent]\nmax_delegation_depth = \"deep\"",
            "agent.max_delegation_depth",
            "must be an integer number of delegations like 8 (got a string)",
        );
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
            "unknown setting (allowed: id, instructions, instructions_file, max_delegation_depth)",
        );
    }

    #[test]
    fn instructions_are_none_by_default_and_kept_trimmed_when_inline() {
        assert_eq!(parse("").unwrap().agent.instructions, None);
        let settings =
            parse("[agent]\ninstructions = \"\"\"\nYou keep the books.\n\"\"\"").unwrap();
        assert_eq!(
            settings.agent.instructions.as_deref(),
            Some("You keep the books.")
        );
    }

    #[test]
    fn instructions_file_is_read_relative_to_the_settings_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ledger.md"), "You keep the books.\n").unwrap();
        let settings = Settings::parse(
            "[agent]\ninstructions_file = \"ledger.md\"",
            dir.path(),
            &|_| None,
        )
        .unwrap();
        assert_eq!(
            settings.agent.instructions.as_deref(),
            Some("You keep the books.")
        );
    }

    #[test]
    fn a_missing_or_empty_instructions_file_is_refused_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty.md"), " \n").unwrap();
        let errors = |name: &str| {
            errors_of(Settings::parse(
                &format!("[agent]\ninstructions_file = {name:?}"),
                dir.path(),
                &|_| None,
            ))
        };
        let [(setting, message)] = &errors("missing.md")[..] else {
            panic!("one error expected")
        };
        assert_eq!(setting, "agent.instructions_file");
        assert!(
            message.starts_with(&format!(
                "cannot read {}: ",
                dir.path().join("missing.md").display()
            )),
            "{message}"
        );
        assert_eq!(
            errors("empty.md"),
            vec![(
                "agent.instructions_file".to_owned(),
                format!("{} is empty", dir.path().join("empty.md").display())
            )]
        );
    }

    #[test]
    fn instructions_inline_and_from_a_file_are_refused_together() {
        assert_only_error(
            "[agent]\ninstructions = \"a\"\ninstructions_file = \"a.md\"",
            "agent.instructions_file",
            "cannot be set beside agent.instructions: give the instructions inline or in a file",
        );
    }

    #[test]
    fn instructions_that_are_blank_or_too_long_are_refused() {
        assert_only_error(
            "[agent]\ninstructions = \" \"",
            "agent.instructions",
            "must not be blank; leave it out to keep the default",
        );
        let long = "a".repeat(INSTRUCTIONS_MAX_BYTES + 1);
        assert_only_error(
            &format!("[agent]\ninstructions = {long:?}"),
            "agent.instructions",
            &format!(
                "must be at most {INSTRUCTIONS_MAX_BYTES} bytes, since they go in front of every \
                 model turn (got {} bytes)",
                INSTRUCTIONS_MAX_BYTES + 1
            ),
        );
    }
}
