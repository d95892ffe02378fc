//! The schema of record (`proto/schema/baton/v1/*.proto`) and the serde types of `proto/src`,
//! held to each other both ways, so neither can change alone:
//!
//! - serde → schema: every JSON example of docs/contract.md and a value of every serde type with
//!   every field set, as serde writes them, read as their message with unknown fields refused
//!   and written back, must come back the same: serde writes no field or shape the schema lacks.
//! - schema → serde: every message with every field set (one per variant of a tagged one), as
//!   JSON, read by serde and written back, must come back the same: the schema has no field
//!   serde drops or reads differently.
//! - presence: a field the schema marks `optional` may be left out, and serde leaves it out when
//!   it has no value; any other field serde always writes.
//! - coverage: every message is a serde type and every serde type is in the schema.
//!
//! The schema's JSON is written as `json::write` does; `table` spells out what the schema can
//! only say in comments. `newer_writer` holds the rolling-deploy fixtures.

mod full;
mod json;
mod newer_writer;
mod sample;
mod table;

use std::collections::BTreeSet;

use baton_proto::TaskState;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value as Field};
use serde_json::Value;

const CONTRACT: &str = include_str!("../../../docs/contract.md");
const ENVELOPE_MEDIA_TYPE: &str = "application/vnd.tiny-harness.event+json";

/// Serde's JSON of `name`, read as its message with unknown fields refused and written back.
fn serde_to_schema(name: &str, serde_json: &Value) -> Result<(), String> {
    let message = json::read(&json::message(name), serde_json, false)?;
    let back = json::write(&message);
    if json::same(serde_json, &back) {
        Ok(())
    } else {
        Err(format!(
            "the schema writes it otherwise:\n  serde:  {serde_json}\n  schema: {back}"
        ))
    }
}

/// The schema's JSON of a message, read by its serde type and written back.
fn schema_to_serde(message: &DynamicMessage) -> Result<(), String> {
    let written = json::write(message);
    let back = table::round_trip(message.descriptor().name())(&written)?;
    if json::same(&written, &back) {
        Ok(())
    } else {
        Err(format!(
            "serde writes it otherwise:\n  schema: {written}\n  serde:  {back}"
        ))
    }
}

/// The JSON blocks of docs/contract.md with their `<!-- type: … -->`, as serde writes them (a
/// `partial` block with its defaults filled in). The CLI's bare values (`String`, `u64`) are
/// wrapper types in the schema and skipped; an A2A message gives its envelope part.
fn contract_examples() -> Vec<(String, Value)> {
    let lines: Vec<&str> = CONTRACT.lines().collect();
    let mut examples = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "```json" || i == 0 {
            continue;
        }
        let annotation = lines[i - 1].trim();
        let Some(name) = annotation
            .strip_prefix("<!-- type:")
            .and_then(|rest| rest.strip_suffix("-->"))
            .map(|text| text.split(',').next().unwrap().trim().to_string())
        else {
            continue;
        };
        let body: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.trim() != "```")
            .copied()
            .collect();
        let value: Value = serde_json::from_str(&body.join("\n")).expect("an example is JSON");
        match name.as_str() {
            "String" | "u64" => {}
            "a2a::Message" => {
                for part in value["parts"].as_array().expect("parts") {
                    if part["mediaType"] == ENVELOPE_MEDIA_TYPE {
                        examples.push(("TaskEnvelope".to_string(), part["data"].clone()));
                    }
                }
            }
            _ => {
                let serde_json = table::round_trip(&name)(&value)
                    .unwrap_or_else(|e| panic!("line {}: {name}: {e}", i + 1));
                examples.push((name, serde_json));
            }
        }
    }
    examples
}

#[test]
fn serde_json_reads_as_the_schema_and_writes_back_unchanged() {
    let examples = contract_examples();
    assert!(examples.len() > 50, "{} examples", examples.len());
    let full: Vec<(String, Value)> = full::values()
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    let failures: Vec<String> = examples
        .iter()
        .map(|example| ("contract.md", example))
        .chain(full.iter().map(|value| ("full value", value)))
        .filter_map(|(origin, (name, value))| {
            serde_to_schema(name, value)
                .err()
                .map(|e| format!("{name} ({origin}): {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn schema_json_reads_as_serde_and_writes_back_unchanged() {
    let mut failures = Vec::new();
    for descriptor in json::messages() {
        for sample in sample::samples(&descriptor) {
            if let Err(e) = schema_to_serde(&sample.message) {
                failures.push(format!("{}: {e}", sample.label));
            }
        }
    }
    // Every value of every string enum, in every field that takes it.
    for string_enum in table::string_enums() {
        for path in string_enum.fields {
            let (message, field) = path.split_once('.').unwrap();
            for mut sample in sample::samples(&json::message(message)) {
                if !sample.message.has_field_by_name(field) {
                    continue;
                }
                for value in &string_enum.values {
                    sample
                        .message
                        .set_field_by_name(field, Field::String(value.clone()));
                    if let Err(e) = schema_to_serde(&sample.message) {
                        failures.push(format!("{} with {field} {value:?}: {e}", sample.label));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// What is wrong when `field` is left out of a sample, if anything: an optional field must read
/// as absent and stay absent (or take its default, for one of `table::DEFAULTED`); any other
/// field serde must need, or write even at its default.
fn left_out(sample: &sample::Sample, field: &FieldDescriptor) -> Option<String> {
    let descriptor = field.parent_message();
    let name = field.name();
    let optional = match sample.variant {
        Some(variant) => variant.optional.contains(&name),
        None => field.field_descriptor_proto().proto3_optional(),
    };
    let mut message = sample.message.clone();
    message.clear_field(field);
    let written = json::write(&message);
    let back = match table::round_trip(descriptor.name())(&written) {
        Ok(back) => back,
        Err(_) if !optional => return None,
        Err(e) => return Some(format!("serde refuses it absent: {e}")),
    };
    let defaulted = table::DEFAULTED.contains(&format!("{}.{name}", descriptor.name()).as_str());
    if optional && defaulted {
        return back
            .get(name)
            .is_none()
            .then(|| format!("serde leaves out its default: {back}"));
    }
    if !optional && back.get(name).is_none() {
        return Some(format!(
            "serde leaves it out at its default, so the schema must mark it `optional`: {back}"
        ));
    }
    // A message field the schema left out, serde writes with its default.
    let compare = optional || written.get(name).is_some();
    (compare && !json::same(&written, &back))
        .then(|| format!("serde writes otherwise:\n  schema: {written}\n  serde:  {back}"))
}

#[test]
fn an_optional_field_may_be_left_out_and_every_other_field_is_always_written() {
    let mut failures = Vec::new();
    for descriptor in json::messages() {
        for sample in sample::samples(&descriptor) {
            for field in descriptor.fields() {
                if field.is_list() || !sample.message.has_field(&field) {
                    continue;
                }
                if let Some(failure) = left_out(&sample, &field) {
                    failures.push(format!(
                        "{} without {}: {failure}",
                        sample.label,
                        field.name()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// `pub struct`s and `pub enum`s of `proto/src` that derive a serde trait.
fn serde_types_in_source() -> BTreeSet<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let mut derives_serde = false;
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let line = line.trim();
            if line.starts_with("#[derive(") {
                derives_serde = line.contains("Serialize") || line.contains("Deserialize");
            } else if let Some(rest) = ["pub struct ", "pub enum ", "struct ", "enum "]
                .iter()
                .find_map(|item| line.strip_prefix(item))
            {
                if derives_serde && line.starts_with("pub ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    names.insert(name);
                }
                derives_serde = false;
            }
        }
    }
    names
}

#[test]
fn every_message_is_a_serde_type_and_every_serde_type_is_in_the_schema() {
    let messages: BTreeSet<String> = json::messages()
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    let table: BTreeSet<String> = table::MESSAGES
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(
        messages, table,
        "the schema's messages and the table's serde types"
    );

    let string_enums = table::string_enums();
    let mut expected = table.clone();
    expected.insert("TaskState".to_string());
    expected.extend(string_enums.iter().map(|e| e.serde_type.to_string()));
    assert_eq!(
        serde_types_in_source(),
        expected,
        "every serde type of proto/src is a message of the schema, TaskState, or a string enum of the table"
    );

    for descriptor in json::messages() {
        for field in descriptor.fields() {
            assert_eq!(
                field.json_name(),
                field.name(),
                "{}: json_name",
                field.full_name()
            );
        }
    }
}

#[test]
fn task_state_is_the_same_enum_in_the_schema_and_in_serde() {
    let schema = json::pool().get_enum_by_name("baton.v1.TaskState").unwrap();
    let named: Vec<String> = schema
        .values()
        .filter(|v| v.number() != 0)
        .map(|v| v.name().to_string())
        .collect();
    let mut serde: Vec<String> = TaskState::ALL
        .iter()
        .map(|s| {
            serde_json::to_value(s)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    serde.sort();
    let mut named_sorted = named.clone();
    named_sorted.sort();
    assert_eq!(named_sorted, serde);
    assert!(serde_json::from_str::<TaskState>(r#""TASK_STATE_UNSPECIFIED""#).is_err());
}

#[test]
fn the_schema_names_every_value_of_a_string_enum_and_every_variant_of_a_tagged_one() {
    let mut failures = Vec::new();
    for string_enum in table::string_enums() {
        for path in string_enum.fields {
            let (message, name) = path.split_once('.').unwrap();
            let field = json::message(message).get_field_by_name(name).unwrap();
            assert!(matches!(field.kind(), Kind::String), "{path} is a string");
            let comment = json::comment(&field);
            for value in &string_enum.values {
                if !comment.contains(&format!("`{value}`")) {
                    failures.push(format!(
                        "{path}'s comment does not name `{value}`: {comment:?}"
                    ));
                }
            }
        }
    }
    let full = full::values();
    for tagged in table::TAGGED {
        let descriptor = json::message(tagged.message);
        let tag = descriptor.get_field_by_name(tagged.tag).unwrap();
        let comment = json::comment(&tag);
        let variants: BTreeSet<&str> = tagged.variants.iter().map(|v| v.name).collect();
        let written: BTreeSet<&str> = full
            .iter()
            .filter(|(name, _)| *name == tagged.message)
            .map(|(_, value)| value[tagged.tag].as_str().unwrap())
            .collect();
        assert_eq!(
            written, variants,
            "{}: the variants serde writes",
            tagged.message
        );
        for variant in &variants {
            if !comment.contains(&format!("`{variant}`")) {
                failures.push(format!(
                    "{}.{}'s comment does not name `{variant}`",
                    tagged.message, tagged.tag
                ));
            }
        }
        // Each field belongs to a variant, so the JSON of another leaves it out.
        let mut covered: BTreeSet<&str> = tagged
            .variants
            .iter()
            .flat_map(|v| v.fields.iter().copied())
            .collect();
        covered.insert(tagged.tag);
        for field in descriptor.fields() {
            if !covered.contains(field.name()) {
                failures.push(format!(
                    "{}.{} is in no variant of the table",
                    tagged.message,
                    field.name()
                ));
            }
            let optional = field.is_list() || field.field_descriptor_proto().proto3_optional();
            if field.name() != tagged.tag && !optional {
                failures.push(format!(
                    "{}.{} must be `optional`: another variant leaves it out",
                    tagged.message,
                    field.name()
                ));
            }
        }
    }
    for path in table::DEFAULTED {
        let (message, name) = path.split_once('.').unwrap();
        let field = json::message(message).get_field_by_name(name).unwrap();
        assert!(
            field.field_descriptor_proto().proto3_optional(),
            "{path} is optional"
        );
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_rpc_of_the_schema_has_its_section_in_the_contract() {
    let headings: Vec<&str> = CONTRACT.lines().filter(|l| l.starts_with("### ")).collect();
    let mut missing = Vec::new();
    for service in json::pool().services() {
        for method in service.methods() {
            let name = format!("`{}`", method.name());
            if method.name() != "run" && !headings.iter().any(|h| h.contains(&name)) {
                missing.push(format!("{}.{}", service.name(), method.name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no section of docs/contract.md names {missing:?}"
    );
}
