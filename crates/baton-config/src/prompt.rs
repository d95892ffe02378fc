//! `[prompt]`: the operator's changes to sections of Baton's system prompt.

use std::collections::BTreeMap;

use baton_core::system_prompt::SECTION_NAMES;

use crate::agent::INSTRUCTIONS_MAX_BYTES;
use crate::error::Errors;
use crate::walk::{Field, Section};

/// `[prompt]`: sections of the system prompt the operator replaces or extends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSettings {
    /// `[prompt.replace]`: a new body for each named section.
    pub replace: BTreeMap<String, String>,
    /// `[prompt.extend]`: text appended to each named section.
    pub extend: BTreeMap<String, String>,
}

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> PromptSettings {
    let section = field.section("a table like [prompt]", errors);
    section.refuse_unknown(&["replace", "extend"], errors);
    PromptSettings {
        replace: read_sections(section.field("replace"), "[prompt.replace]", errors),
        extend: read_sections(section.field("extend"), "[prompt.extend]", errors),
    }
}

/// A table from section names to text.
fn read_sections(field: Field<'_>, like: &str, errors: &mut Errors) -> BTreeMap<String, String> {
    let table: Section<'_> = field.section(&format!("a table like {like}"), errors);
    table.refuse_unknown_explained(
        &SECTION_NAMES,
        |_| {
            Some(format!(
                "not a section of the system prompt (the sections: {})",
                SECTION_NAMES.join(", ")
            ))
        },
        errors,
    );
    let mut texts = BTreeMap::new();
    for (name, text_field) in table.entries() {
        if !SECTION_NAMES.contains(&name) {
            continue;
        }
        let Some(text) = text_field.optional_text("a string of markdown", errors) else {
            continue;
        };
        if text.len() > INSTRUCTIONS_MAX_BYTES {
            text_field.fail(
                errors,
                format!(
                    "must be at most {INSTRUCTIONS_MAX_BYTES} bytes, since it goes in front of \
                     every model turn (got {} bytes)",
                    text.len()
                ),
            );
            continue;
        }
        texts.insert(name.to_owned(), text.to_owned());
    }
    texts
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    #[test]
    fn nothing_is_changed_by_default() {
        let prompt = parse("").unwrap().prompt;
        assert!(prompt.replace.is_empty() && prompt.extend.is_empty());
    }

    #[test]
    fn sections_are_replaced_and_extended_by_name() {
        let prompt = parse(
            "[prompt.replace]\nrules = \"Answer in French.\"\n\
             [prompt.extend]\nagents = \"Prefer the ledger.\"\nrole = \"Be brief.\"",
        )
        .unwrap()
        .prompt;
        assert_eq!(prompt.replace["rules"], "Answer in French.");
        assert_eq!(prompt.extend["agents"], "Prefer the ledger.");
        assert_eq!(prompt.extend["role"], "Be brief.");
    }

    #[test]
    fn an_unknown_section_is_refused_with_the_list() {
        assert_only_error(
            "[prompt.extend]\nskills = \"x\"",
            "prompt.extend.skills",
            "not a section of the system prompt (the sections: role, task, participants, tools, \
             agents, rules)",
        );
    }

    #[test]
    fn blank_text_and_wrong_shapes_are_refused() {
        assert_only_error(
            "[prompt.replace]\nrules = \"\"",
            "prompt.replace.rules",
            "must not be blank; leave it out to keep the default",
        );
        assert_only_error(
            "[prompt]\nextend = \"x\"",
            "prompt.extend",
            "must be a table like [prompt.extend] (got a string)",
        );
        assert_only_error(
            "[prompt]\ninstructions = \"x\"",
            "prompt.instructions",
            "unknown setting (allowed: replace, extend)",
        );
    }
}
