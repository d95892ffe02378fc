//! The `spawn_subtask` intrinsic: its parameter schema, and the check that
//! turns the model's arguments into a request for a registered agent.
//!
//! The check runs before anything is created: an unknown agent yields an
//! error and no [`SpawnRequest`], so no sub-task exists and no URL is
//! contacted. The model picks among registered ids only; a URL is just an
//! id that is not registered.

use std::collections::BTreeSet;

use baton_proto::Attachment;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tool's name.
pub const SPAWN_SUBTASK: &str = "spawn_subtask";
/// The reserved id of this agent itself; `agent: null` means this id.
pub const SELF_AGENT: &str = "self";
/// Error code: the named agent is not registered.
pub const AGENT_UNKNOWN: &str = "agent.unknown";
/// Error code: the arguments do not fit the schema.
pub const INVALID_ARGUMENTS: &str = "tool.invalid_arguments";

/// The arguments of a `spawn_subtask` call, as the model sends them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnSubtaskArgs {
    /// A short name for the sub-task.
    pub name: String,
    /// What the sub-task must achieve, standing alone.
    pub goal: String,
    /// The context the sub-task needs.
    #[serde(default)]
    pub description: String,
    /// Checks that tell when the sub-task is done.
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    /// A registered agent id, or `None` for this agent itself.
    #[serde(default)]
    pub agent: Option<String>,
    /// The longest the sub-task may run, in seconds; the agent's `deadline` caps it.
    #[serde(default)]
    pub deadline_secs: Option<u64>,
    /// The names of files the task holds, sent with the brief.
    #[serde(default)]
    pub attachments: Vec<String>,
}

/// A validated request to create a sub-task on a registered agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The registered agent id; [`SELF_AGENT`] when the model passed null.
    pub agent: String,
    /// A short name for the sub-task.
    pub name: String,
    /// What the sub-task must achieve.
    pub goal: String,
    /// The context the sub-task needs.
    pub description: String,
    /// Checks that tell when the sub-task is done.
    pub acceptance_criteria: Vec<String>,
    /// The deadline the model asked for, in seconds.
    pub deadline_secs: Option<u64>,
    /// The names of the files to send with the brief, as the model gave them.
    pub attachments: Vec<String>,
}

/// An error result for the model to read and correct its call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    /// A stable code: [`INVALID_ARGUMENTS`] or [`AGENT_UNKNOWN`].
    pub code: String,
    /// What went wrong, for the model.
    pub message: String,
    /// The agent id that was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// The registered ids, sorted, when an agent was refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub available: Vec<String>,
}

impl ToolError {
    /// [`INVALID_ARGUMENTS`] with `message`: the arguments of one of Baton's own tools were bad.
    pub(crate) fn invalid_arguments(message: String) -> Self {
        Self {
            code: INVALID_ARGUMENTS.to_string(),
            message,
            rejected: None,
            available: Vec::new(),
        }
    }

    fn agent_unknown(rejected: String, registered: &BTreeSet<String>) -> Self {
        let available: Vec<String> = registered.iter().cloned().collect();
        let listed = if available.is_empty() {
            "none are registered".to_string()
        } else {
            available.join(", ")
        };
        let hint = if rejected == SELF_AGENT {
            " (this agent takes no sub-tasks of its own here: do the step yourself)"
        } else {
            ""
        };
        Self {
            code: AGENT_UNKNOWN.to_string(),
            message: format!("no agent '{rejected}'{hint}; available: {listed}"),
            rejected: Some(rejected),
            available,
        }
    }
}

/// Parses the model's JSON arguments and checks the agent against the
/// registered ids (which include [`SELF_AGENT`]).
///
/// Bad JSON, a wrong type, an unknown field or a missing `name` or `goal`
/// gives [`INVALID_ARGUMENTS`] with serde's message; a blank `name` or `goal`
/// gives [`INVALID_ARGUMENTS`] naming the field. An agent that is empty or
/// not registered gives [`AGENT_UNKNOWN`]. A null agent means
/// [`SELF_AGENT`], which must be registered too: it fails closed, never
/// falling back to some other way of running the step.
pub fn validate_spawn(
    arguments: &str,
    registered: &BTreeSet<String>,
) -> Result<SpawnRequest, ToolError> {
    let args: SpawnSubtaskArgs = serde_json::from_str(arguments)
        .map_err(|error| ToolError::invalid_arguments(error.to_string()))?;
    require_not_blank("name", &args.name)?;
    require_not_blank("goal", &args.goal)?;
    if args.deadline_secs == Some(0) {
        return Err(ToolError::invalid_arguments(
            "deadline_secs must be at least 1; leave it null for the agent's own limit".into(),
        ));
    }
    let agent = args.agent.unwrap_or_else(|| SELF_AGENT.to_string());
    if agent.is_empty() || !registered.contains(&agent) {
        return Err(ToolError::agent_unknown(agent, registered));
    }
    Ok(SpawnRequest {
        agent,
        name: args.name,
        goal: args.goal,
        description: args.description,
        acceptance_criteria: args.acceptance_criteria,
        deadline_secs: args.deadline_secs,
        attachments: args.attachments,
    })
}

/// Error code: an attachment the call names is not a file the task holds.
pub const ATTACHMENT_UNKNOWN: &str = "attachment.unknown";

/// The files `names` asks for, among those the task holds (`held`, by name, the latest of a
/// name winning). A name the task does not hold refuses the call, listing the names it does.
pub fn pick_attachments(
    names: &[String],
    held: &[Attachment],
) -> Result<Vec<Attachment>, ToolError> {
    names
        .iter()
        .map(|name| {
            held.iter()
                .rev()
                .find(|attachment| attachment.name.as_deref() == Some(name.as_str()))
                .cloned()
                .ok_or_else(|| {
                    let mut available: Vec<String> =
                        held.iter().filter_map(|a| a.name.clone()).collect();
                    available.sort();
                    available.dedup();
                    let listed = if available.is_empty() {
                        "(none: this task holds no named files)".to_string()
                    } else {
                        available.join(", ")
                    };
                    ToolError {
                        code: ATTACHMENT_UNKNOWN.to_string(),
                        message: format!("this task holds no file '{name}'; it holds: {listed}"),
                        rejected: Some(name.clone()),
                        available,
                    }
                })
        })
        .collect()
}

fn require_not_blank(field: &str, value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        return Err(ToolError::invalid_arguments(format!(
            "{field} must not be blank"
        )));
    }
    Ok(())
}

/// The JSON Schema of the tool's parameters; the descriptions are what the
/// model reads. Committed as `docs/schemas/spawn_subtask.json`.
///
/// Keys are written in alphabetical order so the rendered text is the same
/// whether or not serde_json preserves insertion order.
pub fn spawn_subtask_schema() -> Value {
    json!({
        "additionalProperties": false,
        "properties": {
            "acceptance_criteria": {
                "default": [],
                "description": "Checks that tell when the sub-task is done, each on its own.",
                "items": { "type": "string" },
                "type": "array"
            },
            "attachments": {
                "default": [],
                "description": "Names of files this task holds (a participant's, a tool's or a sub-task's), sent with the brief. The agent must take their types.",
                "items": { "type": "string" },
                "type": "array"
            },
            "agent": {
                "default": null,
                "description": "An agent id listed under `agents`, or null to run this step on this agent itself (`self`) in a clean context.",
                "type": ["string", "null"]
            },
            "deadline_secs": {
                "default": null,
                "description": "The longest the sub-task may run, in seconds. Past it the sub-task is cancelled and reported failed. Null leaves the agent's own limit, which also caps this.",
                "minimum": 1,
                "type": ["integer", "null"]
            },
            "description": {
                "default": "",
                "description": "The context the sub-task needs. It sees nothing of this task but this.",
                "type": "string"
            },
            "goal": {
                "description": "What the sub-task must achieve. It stands alone: the sub-task sees nothing of this task but its brief.",
                "type": "string"
            },
            "name": {
                "description": "A short name for the sub-task.",
                "type": "string"
            }
        },
        "required": ["name", "goal"],
        "type": "object"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(ToString::to_string).collect()
    }

    fn with_self() -> BTreeSet<String> {
        registered(&["self", "ledger", "billing"])
    }

    fn call(agent: Value) -> String {
        json!({ "name": "check", "goal": "Balance the ledger.", "agent": agent }).to_string()
    }

    fn expect_error(arguments: &str, ids: &BTreeSet<String>) -> ToolError {
        validate_spawn(arguments, ids).expect_err("the call is refused")
    }

    #[test]
    fn a_deadline_of_zero_seconds_is_refused_naming_the_field() {
        let arguments =
            json!({ "name": "check", "goal": "g", "agent": "ledger", "deadline_secs": 0 })
                .to_string();
        let error = expect_error(&arguments, &with_self());
        assert_eq!(error.code, INVALID_ARGUMENTS);
        assert!(error.message.contains("deadline_secs"), "{}", error.message);
        let negative = json!({ "name": "check", "goal": "g", "deadline_secs": -5 }).to_string();
        assert_eq!(
            expect_error(&negative, &with_self()).code,
            INVALID_ARGUMENTS
        );
    }

    // Agents

    #[test]
    fn a_known_agent_gives_a_request_with_every_field() {
        let arguments = json!({
            "name": "check",
            "goal": "Balance the ledger.",
            "description": "The books for March.",
            "acceptance_criteria": ["Debits equal credits.", "No open items."],
            "agent": "ledger",
            "deadline_secs": 600
        })
        .to_string();
        assert_eq!(
            validate_spawn(&arguments, &with_self()),
            Ok(SpawnRequest {
                agent: "ledger".to_string(),
                name: "check".to_string(),
                goal: "Balance the ledger.".to_string(),
                description: "The books for March.".to_string(),
                acceptance_criteria: vec![
                    "Debits equal credits.".to_string(),
                    "No open items.".to_string()
                ],
                deadline_secs: Some(600),
                attachments: Vec::new(),
            })
        );
    }

    #[test]
    fn optional_fields_default_to_empty() {
        let request = validate_spawn(r#"{"name": "n", "goal": "g"}"#, &with_self()).expect("valid");
        assert_eq!(request.description, "");
        assert!(request.acceptance_criteria.is_empty());
    }

    #[test]
    fn a_missing_agent_means_self() {
        let request = validate_spawn(r#"{"name": "n", "goal": "g"}"#, &with_self()).expect("valid");
        assert_eq!(request.agent, SELF_AGENT);
    }

    #[test]
    fn a_null_agent_means_self() {
        let request = validate_spawn(&call(Value::Null), &with_self()).expect("valid");
        assert_eq!(request.agent, SELF_AGENT);
    }

    #[test]
    fn self_by_name_is_self() {
        let request = validate_spawn(&call(json!("self")), &with_self()).expect("valid");
        assert_eq!(request.agent, SELF_AGENT);
    }

    #[test]
    fn an_unknown_agent_is_refused_with_the_available_ids() {
        assert_eq!(
            expect_error(&call(json!("payroll")), &with_self()),
            ToolError {
                code: AGENT_UNKNOWN.to_string(),
                message: "no agent 'payroll'; available: billing, ledger, self".to_string(),
                rejected: Some("payroll".to_string()),
                available: vec![
                    "billing".to_string(),
                    "ledger".to_string(),
                    "self".to_string()
                ],
            }
        );
    }

    #[test]
    fn an_empty_agent_is_unknown_not_self() {
        let error = expect_error(&call(json!("")), &with_self());
        assert_eq!(error.code, AGENT_UNKNOWN);
        assert_eq!(
            error.message,
            "no agent ''; available: billing, ledger, self"
        );
        assert_eq!(error.rejected.as_deref(), Some(""));
    }

    #[test]
    fn a_url_is_just_an_unknown_id() {
        let error = expect_error(&call(json!("https://evil")), &with_self());
        assert_eq!(error.code, AGENT_UNKNOWN);
        assert_eq!(
            error.message,
            "no agent 'https://evil'; available: billing, ledger, self"
        );
        assert_eq!(error.rejected.as_deref(), Some("https://evil"));
    }

    #[test]
    fn agent_ids_match_exactly() {
        for near_miss in ["Ledger", " ledger", "ledger ", "ledger\n", "ledge"] {
            let error = expect_error(&call(json!(near_miss)), &with_self());
            assert_eq!(error.code, AGENT_UNKNOWN, "{near_miss:?}");
        }
    }

    #[test]
    fn with_nothing_registered_the_message_says_so() {
        let error = expect_error(&call(json!("ledger")), &BTreeSet::new());
        assert_eq!(
            error.message,
            "no agent 'ledger'; available: none are registered"
        );
        assert!(error.available.is_empty());
    }

    #[test]
    fn a_null_agent_without_self_registered_fails_closed() {
        let error = expect_error(&call(Value::Null), &registered(&["ledger"]));
        assert_eq!(error.code, AGENT_UNKNOWN);
        assert_eq!(
            error.message,
            "no agent 'self' (this agent takes no sub-tasks of its own here: do the step yourself); available: ledger"
        );
        assert_eq!(error.rejected.as_deref(), Some(SELF_AGENT));
        assert_eq!(error.available, ["ledger"]);
    }

    // Arguments

    #[test]
    fn bad_json_is_invalid_arguments() {
        let error = expect_error("{not json", &with_self());
        assert_eq!(error.code, INVALID_ARGUMENTS);
        assert!(
            error.message.contains("key must be a string"),
            "{}",
            error.message
        );
        assert_eq!(error.rejected, None);
        assert!(error.available.is_empty());
    }

    #[test]
    fn arguments_that_are_not_an_object_are_invalid() {
        for arguments in ["null", "[]", "\"spawn\"", ""] {
            assert_eq!(
                expect_error(arguments, &with_self()).code,
                INVALID_ARGUMENTS
            );
        }
    }

    #[test]
    fn an_unknown_field_is_invalid_arguments() {
        let error = expect_error(
            r#"{"name": "n", "goal": "g", "url": "https://evil"}"#,
            &with_self(),
        );
        assert_eq!(error.code, INVALID_ARGUMENTS);
        assert!(
            error.message.starts_with("unknown field `url`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_missing_goal_is_invalid_arguments() {
        let error = expect_error(r#"{"name": "n"}"#, &with_self());
        assert_eq!(error.code, INVALID_ARGUMENTS);
        assert!(
            error.message.starts_with("missing field `goal`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_missing_name_is_invalid_arguments() {
        let error = expect_error(r#"{"goal": "g"}"#, &with_self());
        assert!(
            error.message.starts_with("missing field `name`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_wrong_type_is_invalid_arguments() {
        for arguments in [
            r#"{"name": 1, "goal": "g"}"#,
            r#"{"name": "n", "goal": "g", "agent": 7}"#,
            r#"{"name": "n", "goal": "g", "acceptance_criteria": "done"}"#,
            r#"{"name": "n", "goal": "g", "description": null}"#,
        ] {
            let error = expect_error(arguments, &with_self());
            assert_eq!(error.code, INVALID_ARGUMENTS, "{arguments}");
            assert!(
                error.message.starts_with("invalid type"),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn a_blank_name_is_invalid_arguments_naming_the_field() {
        let error = expect_error(r#"{"name": " \n\t", "goal": "g"}"#, &with_self());
        assert_eq!(
            error,
            ToolError {
                code: INVALID_ARGUMENTS.to_string(),
                message: "name must not be blank".to_string(),
                rejected: None,
                available: Vec::new(),
            }
        );
    }

    #[test]
    fn a_blank_goal_is_invalid_arguments_naming_the_field() {
        let error = expect_error(r#"{"name": "n", "goal": ""}"#, &with_self());
        assert_eq!(error.code, INVALID_ARGUMENTS);
        assert_eq!(error.message, "goal must not be blank");
    }

    #[test]
    fn bad_arguments_are_reported_before_an_unknown_agent() {
        let error = expect_error(
            r#"{"name": "", "goal": "g", "agent": "nobody"}"#,
            &with_self(),
        );
        assert_eq!(error.code, INVALID_ARGUMENTS);
    }

    // The error as the model reads it

    #[test]
    fn an_unknown_agent_error_serialises_with_its_ids() {
        let error = expect_error(&call(json!("x")), &registered(&["self"]));
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({
                "code": "agent.unknown",
                "message": "no agent 'x'; available: self",
                "rejected": "x",
                "available": ["self"]
            })
        );
    }

    #[test]
    fn an_invalid_arguments_error_serialises_without_empty_fields() {
        let error = expect_error(r#"{"name": "n", "goal": " "}"#, &with_self());
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({ "code": "tool.invalid_arguments", "message": "goal must not be blank" })
        );
    }

    // The schema

    #[test]
    fn the_schema_describes_exactly_the_argument_fields() {
        let args = SpawnSubtaskArgs {
            name: "n".to_string(),
            goal: "g".to_string(),
            description: String::new(),
            acceptance_criteria: Vec::new(),
            agent: None,
            deadline_secs: None,
            attachments: Vec::new(),
        };
        let serialised = serde_json::to_value(&args).unwrap();
        let schema = spawn_subtask_schema();
        let field_names: BTreeSet<&String> = serialised.as_object().unwrap().keys().collect();
        let property_names: BTreeSet<&String> =
            schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(field_names, property_names);
        assert_eq!(schema["required"], json!(["name", "goal"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        for (name, property) in schema["properties"].as_object().unwrap() {
            assert!(
                property["description"].is_string(),
                "{name} has a description"
            );
        }
    }

    #[test]
    fn the_agent_description_points_at_the_roster_and_self() {
        let schema = spawn_subtask_schema();
        assert_eq!(
            schema["properties"]["agent"]["description"],
            "An agent id listed under `agents`, or null to run this step on this agent itself \
             (`self`) in a clean context."
        );
        assert_eq!(
            schema["properties"]["agent"]["type"],
            json!(["string", "null"])
        );
    }

    #[test]
    fn the_committed_schema_matches_the_code() {
        crate::committed_schema::check(
            "spawn_subtask.json",
            "spawn_subtask_schema",
            &spawn_subtask_schema(),
        );
    }

    fn file(name: Option<&str>, digest: &str) -> Attachment {
        Attachment {
            kind: baton_proto::AttachmentKind::File,
            name: name.map(str::to_string),
            media_type: "text/csv".into(),
            content: Some(baton_proto::ContentRef {
                digest: digest.into(),
                size: 3,
            }),
            url: None,
        }
    }

    #[test]
    fn attachments_are_picked_by_name_the_latest_of_a_name_winning() {
        let held = [
            file(Some("march.csv"), "sha256:old"),
            file(None, "sha256:unnamed"),
            file(Some("april.csv"), "sha256:april"),
            file(Some("march.csv"), "sha256:new"),
        ];
        let picked = pick_attachments(&["march.csv".into(), "april.csv".into()], &held).unwrap();
        let digests: Vec<&str> = picked
            .iter()
            .map(|a| a.content.as_ref().unwrap().digest.as_str())
            .collect();
        assert_eq!(digests, ["sha256:new", "sha256:april"]);
        assert_eq!(pick_attachments(&[], &held).unwrap(), []);
    }

    #[test]
    fn an_attachment_the_task_does_not_hold_is_refused_listing_what_it_holds() {
        let held = [
            file(Some("march.csv"), "sha256:a"),
            file(Some("march.csv"), "sha256:b"),
        ];
        let error = pick_attachments(&["may.csv".into()], &held).unwrap_err();
        assert_eq!(error.code, ATTACHMENT_UNKNOWN);
        assert_eq!(
            error.message,
            "this task holds no file 'may.csv'; it holds: march.csv"
        );
        assert_eq!(error.available, ["march.csv"]);
        let none = pick_attachments(&["a.png".into()], &[]).unwrap_err();
        assert!(
            none.message.contains("holds no named files"),
            "{}",
            none.message
        );
    }

    #[test]
    fn the_arguments_may_name_attachments() {
        let arguments = json!({ "name": "n", "goal": "g", "agent": "ledger",
                                "attachments": ["march.csv"] })
        .to_string();
        let request = validate_spawn(&arguments, &with_self()).unwrap();
        assert_eq!(request.attachments, ["march.csv"]);
    }
}
