//! Messages built from the schema alone, every field set to a value that is not its default:
//! what a client generated from the `.proto` files could write.

use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, Value as Field};

use crate::json;
use crate::table::{self, Variant};

/// A `uint64` sample past 2^53, so a trip through a float would show.
pub const BIG: u64 = (1 << 53) + 1;

/// Any JSON, for a `google.protobuf.Value` field that takes any.
const ANY_JSON: &str = r#"{"steps": [{"text": "Check the ledger.", "done": false}]}"#;

/// One sample of a message.
pub struct Sample {
    /// The message, and the variant for a tagged one.
    pub label: String,
    pub variant: Option<&'static Variant>,
    pub message: DynamicMessage,
}

/// Every field set; for a message that stands for a tagged enum, one sample per variant with
/// the tag and that variant's fields set.
pub fn samples(descriptor: &MessageDescriptor) -> Vec<Sample> {
    match table::tagged(descriptor.name()) {
        None => vec![Sample {
            label: descriptor.name().to_string(),
            variant: None,
            message: full(descriptor),
        }],
        Some(tagged) => tagged
            .variants
            .iter()
            .map(|variant| Sample {
                label: format!("{} ({} {:?})", descriptor.name(), tagged.tag, variant.name),
                variant: Some(variant),
                message: variant_sample(descriptor, tagged.tag, variant),
            })
            .collect(),
    }
}

/// The first sample: every field set, or a tagged message's first variant.
pub fn full(descriptor: &MessageDescriptor) -> DynamicMessage {
    if let Some(tagged) = table::tagged(descriptor.name()) {
        return variant_sample(descriptor, tagged.tag, &tagged.variants[0]);
    }
    let mut message = DynamicMessage::new(descriptor.clone());
    for field in descriptor.fields() {
        message.set_field(&field, value(descriptor, &field, None));
    }
    message
}

fn variant_sample(descriptor: &MessageDescriptor, tag: &str, variant: &Variant) -> DynamicMessage {
    let mut message = DynamicMessage::new(descriptor.clone());
    message.set_field_by_name(tag, Field::String(variant.name.to_string()));
    for name in variant.fields {
        let field = descriptor
            .get_field_by_name(name)
            .unwrap_or_else(|| panic!("{} has no field {name}", descriptor.name()));
        let json = variant
            .values
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, j)| *j);
        message.set_field(&field, value(descriptor, &field, json));
    }
    message
}

/// A sample for `field`: one element for a list; `json` for a `google.protobuf.Value`.
fn value(descriptor: &MessageDescriptor, field: &FieldDescriptor, json: Option<&str>) -> Field {
    assert!(
        !field.is_map(),
        "{}.{}: the schema has no map field yet; give it a sample",
        descriptor.name(),
        field.name()
    );
    let one = one(descriptor, field, json);
    if field.is_list() {
        Field::List(vec![one])
    } else {
        one
    }
}

fn one(descriptor: &MessageDescriptor, field: &FieldDescriptor, json: Option<&str>) -> Field {
    match field.kind() {
        Kind::String => Field::String(
            match table::string_enum_values(descriptor.name(), field.name()) {
                Some(values) => values[0].clone(),
                None => format!("{}-1", field.name()),
            },
        ),
        Kind::Bool => Field::Bool(true),
        Kind::Uint32 => Field::U32(7),
        Kind::Uint64 => Field::U64(BIG),
        Kind::Enum(e) => Field::EnumNumber(
            e.values()
                .map(|v| v.number())
                .find(|n| *n != 0)
                .expect("an enum with a value besides 0"),
        ),
        Kind::Message(m) if m.full_name() == "google.protobuf.Value" => {
            let sample = serde_json::from_str(json.unwrap_or(ANY_JSON)).expect("sample JSON");
            Field::Message(json::read(&m, &sample, false).expect("a google.protobuf.Value"))
        }
        Kind::Message(m) => Field::Message(full(&m)),
        other => panic!(
            "{}.{}: no sample for a {other:?} field yet; add one",
            descriptor.name(),
            field.name()
        ),
    }
}
