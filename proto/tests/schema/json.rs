//! The schema's JSON, as Baton writes it: the descriptor pool, and reading and writing a
//! message with the options that give the serde types' JSON.

use std::sync::LazyLock;

use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, FieldDescriptor, MessageDescriptor,
    SerializeOptions,
};
use serde_json::Value;

pub const PACKAGE: &str = "baton.v1";

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(baton_proto::FILE_DESCRIPTOR_SET).expect("the embedded descriptor set")
});

pub fn pool() -> &'static DescriptorPool {
    &POOL
}

/// The message `baton.v1.<name>`.
pub fn message(name: &str) -> MessageDescriptor {
    pool()
        .get_message_by_name(&format!("{PACKAGE}.{name}"))
        .unwrap_or_else(|| panic!("the schema has no message {name}"))
}

/// Every message of Baton's package, by its short name.
pub fn messages() -> Vec<MessageDescriptor> {
    pool()
        .all_messages()
        .filter(|m| m.package_name() == PACKAGE)
        .collect()
}

/// Reads JSON as `descriptor`, refusing a field the schema lacks unless `tolerant`.
pub fn read(
    descriptor: &MessageDescriptor,
    json: &Value,
    tolerant: bool,
) -> Result<DynamicMessage, String> {
    let options = DeserializeOptions::new().deny_unknown_fields(!tolerant);
    DynamicMessage::deserialize_with_options(descriptor.clone(), json.clone(), &options)
        .map_err(|e| e.to_string())
}

/// Writes a message as Baton does: names as given (each field's `json_name`), 64-bit integers
/// as numbers, fields without presence always, `optional` ones only when set.
pub fn write(message: &DynamicMessage) -> Value {
    let options = SerializeOptions::new()
        .stringify_64_bit_integers(false)
        .skip_default_fields(false);
    message
        .serialize_with_options(serde_json::value::Serializer, &options)
        .expect("a message writes as JSON")
}

/// Whether two JSON values are the same, but for lists: proto3 cannot tell an empty list from
/// an absent one, so a key whose value is `[]` counts as absent.
pub fn same(a: &Value, b: &Value) -> bool {
    without_empty_lists(a) == without_empty_lists(b)
}

fn without_empty_lists(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| v.as_array().is_none_or(|items| !items.is_empty()))
                .map(|(k, v)| (k.clone(), without_empty_lists(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_empty_lists).collect()),
        other => other.clone(),
    }
}

/// A field's comment in the schema, leading and trailing.
pub fn comment(field: &FieldDescriptor) -> String {
    let file = field.parent_file();
    let info = file
        .file_descriptor_proto()
        .source_code_info
        .as_ref()
        .expect("the descriptor set keeps comments");
    info.location
        .iter()
        .filter(|location| location.path == field.path())
        .map(|location| {
            format!(
                "{}{}",
                location.leading_comments(),
                location.trailing_comments()
            )
        })
        .collect()
}
