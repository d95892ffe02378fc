//! `[card]`: what this agent's A2A agent card says about it.

use crate::error::Errors;
use crate::walk::{Field, Section, UniqueIds};

/// `[card]`: what this agent's A2A agent card says about it. Left-out values get
/// defaults where the card is built.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct CardSettings {
    /// The card's name; none gives "Baton".
    pub(crate) name: Option<String>,
    /// The card's description; none gives Baton's own.
    pub(crate) description: Option<String>,
    /// The card's version; none gives Baton's version.
    pub(crate) version: Option<String>,
    /// The skills the card lists, in order.
    pub(crate) skills: Vec<CardSkill>,
    /// How the card writes the gRPC interface's URL.
    pub(crate) grpc_url: GrpcUrlForm,
}

/// How the card writes the gRPC interface's URL (`[card] grpc_url`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GrpcUrlForm {
    /// `http(s)://host:port`, an absolute URL as A2A 1.0 asks: what strict clients (ADK) accept.
    #[default]
    Origin,
    /// `host:port`, for gRPC clients that hand the card's URL to gRPC unchanged (the a2a-js
    /// SDK's, the Python a2a-sdk's with `grpc.aio.insecure_channel`).
    HostPort,
}

/// One `[[card.skills]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CardSkill {
    /// Unique among the skills.
    pub(crate) id: String,
    /// The skill's name.
    pub(crate) name: String,
    /// What the skill does; empty by default.
    pub(crate) description: String,
    /// Keywords for the skill.
    pub(crate) tags: Vec<String>,
    /// Example requests the skill handles.
    pub(crate) examples: Vec<String>,
}

const KEYS: [&str; 5] = ["name", "description", "version", "skills", "grpc_url"];
const SKILL_KEYS: [&str; 5] = ["id", "name", "description", "tags", "examples"];

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> CardSettings {
    let section = field.section("a table like [card]", errors);
    section.refuse_unknown(&KEYS, errors);
    let text = |key: &str, expected: &str, errors: &mut Errors| {
        section
            .field(key)
            .optional_text(expected, errors)
            .map(str::to_owned)
    };
    let name = text("name", "a string like \"Ledger\"", errors);
    let description = text("description", "a string", errors);
    let version = text("version", "a string like \"1.0.0\"", errors);
    let mut ids = UniqueIds::default();
    let skills = section
        .field("skills")
        .tables(
            "an array of tables like [[card.skills]]",
            "a table like [[card.skills]]",
            errors,
        )
        .iter()
        .filter_map(|skill| read_skill(skill, &mut ids, errors))
        .collect();
    let grpc_url = section
        .field("grpc_url")
        .choice(
            &[
                ("origin", GrpcUrlForm::Origin),
                ("host-port", GrpcUrlForm::HostPort),
            ],
            errors,
        )
        .unwrap_or_default();
    CardSettings {
        name,
        description,
        version,
        skills,
        grpc_url,
    }
}

fn read_skill(
    section: &Section<'_>,
    ids: &mut UniqueIds,
    errors: &mut Errors,
) -> Option<CardSkill> {
    section.refuse_unknown(&SKILL_KEYS, errors);
    let id_field = section.field("id");
    let id = id_field.required_text("a string like \"bookkeeping\"", errors);
    if let Some(id) = id {
        ids.check(id, section.path(), &id_field, errors);
    }
    let name = section
        .field("name")
        .required_text("a string like \"Bookkeeping\"", errors);
    let description = section.field("description").string("a string", errors);
    let tags = section
        .field("tags")
        .strings("an array of strings like [\"accounting\"]", errors);
    let examples = section.field("examples").strings(
        "an array of strings like [\"What did we spend in May?\"]",
        errors,
    );
    Some(CardSkill {
        id: id?.to_owned(),
        name: name?.to_owned(),
        description: description.unwrap_or_default().to_owned(),
        tags,
        examples,
    })
}

#[cfg(test)]
mod tests {
    use super::{CardSettings, CardSkill};
    use crate::test_support::*;

    #[test]
    fn empty_by_default() {
        assert_eq!(parse("").unwrap().card, CardSettings::default());
    }

    #[test]
    fn every_field_is_read() {
        let card = parse(
            "[card]\nname = \"Ledger\"\ndescription = \"Keeps the books.\"\nversion = \"1.2.0\"\n\
             [[card.skills]]\nid = \"bookkeeping\"\nname = \"Bookkeeping\"\n\
             description = \"Records and reports.\"\ntags = [\"accounting\", \"ledger\"]\n\
             examples = [\"What did we spend in May?\"]\n\
             [[card.skills]]\nid = \"audit\"\nname = \"Audit\"",
        )
        .unwrap()
        .card;
        assert_eq!(
            card,
            CardSettings {
                name: Some("Ledger".into()),
                description: Some("Keeps the books.".into()),
                version: Some("1.2.0".into()),
                skills: vec![
                    CardSkill {
                        id: "bookkeeping".into(),
                        name: "Bookkeeping".into(),
                        description: "Records and reports.".into(),
                        tags: vec!["accounting".into(), "ledger".into()],
                        examples: vec!["What did we spend in May?".into()],
                    },
                    CardSkill {
                        id: "audit".into(),
                        name: "Audit".into(),
                        description: String::new(),
                        tags: vec![],
                        examples: vec![],
                    },
                ],
                grpc_url: crate::GrpcUrlForm::Origin,
            }
        );
    }

    #[test]
    fn blank_values_are_refused() {
        for key in ["name", "description", "version"] {
            for blank in ["", "   ", "\t\n"] {
                assert_only_error(
                    &format!("[card]\n{key} = {blank:?}"),
                    &format!("card.{key}"),
                    "must not be blank; leave it out to keep the default",
                );
            }
        }
    }

    #[test]
    fn values_must_be_strings() {
        assert_only_error(
            "[card]\nname = 1",
            "card.name",
            "must be a string like \"Ledger\" (got an integer)",
        );
    }

    #[test]
    fn skill_id_and_name_are_required_and_not_blank() {
        assert_eq!(
            errors_of(parse("[[card.skills]]\ndescription = \"x\"")),
            vec![
                (
                    "card.skills[0].id".to_owned(),
                    "required (a string like \"bookkeeping\")".to_owned()
                ),
                (
                    "card.skills[0].name".to_owned(),
                    "required (a string like \"Bookkeeping\")".to_owned()
                ),
            ]
        );
        assert_only_error(
            "[[card.skills]]\nid = \"a\"\nname = \" \"",
            "card.skills[0].name",
            "must not be blank",
        );
    }

    #[test]
    fn skill_ids_are_unique() {
        assert_only_error(
            "[[card.skills]]\nid = \"a\"\nname = \"A\"\n[[card.skills]]\nid = \"a\"\nname = \"Again\"",
            "card.skills[1].id",
            "duplicate id \"a\" (also card.skills[0])",
        );
    }

    #[test]
    fn tags_and_examples_are_arrays_of_strings() {
        assert_only_error(
            "[[card.skills]]\nid = \"a\"\nname = \"A\"\ntags = \"x\"",
            "card.skills[0].tags",
            "must be an array of strings like [\"accounting\"] (got a string)",
        );
        assert_only_error(
            "[[card.skills]]\nid = \"a\"\nname = \"A\"\nexamples = [\"ok\", 3]",
            "card.skills[0].examples[1]",
            "must be a string (got an integer)",
        );
        assert_only_error(
            "[[card.skills]]\nid = \"a\"\nname = \"A\"\ndescription = false",
            "card.skills[0].description",
            "must be a string (got a boolean)",
        );
    }

    #[test]
    fn skills_must_be_an_array_of_tables() {
        assert_only_error(
            "[card]\nskills = \"all\"",
            "card.skills",
            "must be an array of tables like [[card.skills]] (got a string)",
        );
        assert_only_error(
            "[card]\nskills = [1]",
            "card.skills[0]",
            "must be a table like [[card.skills]] (got an integer)",
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert_only_error(
            "[card]\nlogo = \"x.png\"",
            "card.logo",
            "unknown setting (allowed: name, description, version, skills, grpc_url)",
        );
        assert_only_error(
            "[[card.skills]]\nid = \"a\"\nname = \"A\"\n[[card.skills]]\nid = \"b\"\nname = \"B\"\ncolour = \"red\"",
            "card.skills[1].colour",
            "unknown setting (allowed: id, name, description, tags, examples)",
        );
    }
}
