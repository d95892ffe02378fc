//! Which serde type each schema message stands for, and the serde shapes the schema can only
//! spell out in words: strict types, string enums, tagged enums and defaults that are not
//! proto3's.

use baton_proto::envelope::{AcceptanceCriterion, EntityRef, ExtensionTaskRef};
use baton_proto::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads JSON as a serde type and writes it back.
pub type RoundTrip = fn(&Value) -> Result<Value, String>;

fn via<T: Serialize + DeserializeOwned>(value: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// Every message of the schema and the serde type of the same name it describes.
pub const MESSAGES: &[(&str, RoundTrip)] = &[
    ("TaskInput", via::<TaskInput>),
    ("TaskLimits", via::<TaskLimits>),
    ("TaskCarry", via::<TaskCarry>),
    ("TaskRoster", via::<TaskRoster>),
    ("Participant", via::<Participant>),
    ("TaskRef", via::<TaskRef>),
    ("HistoryItem", via::<HistoryItem>),
    ("ToolCallRecord", via::<ToolCallRecord>),
    ("SubTaskRow", via::<SubTaskRow>),
    ("ChildDone", via::<ChildDone>),
    ("InboxMessage", via::<InboxMessage>),
    ("InboxReceipt", via::<InboxReceipt>),
    ("PushConfig", via::<PushConfig>),
    ("PushAuthentication", via::<PushAuthentication>),
    ("TaskView", via::<TaskView>),
    ("TaskMessage", via::<TaskMessage>),
    ("EventPage", via::<EventPage>),
    ("EventLog", via::<EventLog>),
    ("ContentRef", via::<ContentRef>),
    ("Attachment", via::<Attachment>),
    ("ToolFile", via::<ToolFile>),
    ("AnswerArtifact", via::<AnswerArtifact>),
    ("AnswerFiles", via::<AnswerFiles>),
    ("ClosedAgent", via::<ClosedAgent>),
    ("Usage", via::<Usage>),
    ("RemoteFiles", via::<RemoteFiles>),
    ("EventEntry", via::<EventEntry>),
    ("TaskEvent", via::<TaskEvent>),
    ("ForwardedReply", via::<ForwardedReply>),
    ("RemoteStart", via::<RemoteStart>),
    ("RemoteSnapshot", via::<RemoteSnapshot>),
    ("RemoteWatch", via::<RemoteWatch>),
    ("RemoteCarry", via::<RemoteCarry>),
    ("SubTaskReply", via::<SubTaskReply>),
    ("PushIn", via::<PushIn>),
    ("RemoteView", via::<RemoteView>),
    ("StartAgentTaskIn", via::<StartAgentTaskIn>),
    ("StartAgentTaskOut", via::<StartAgentTaskOut>),
    ("CancelContextIn", via::<CancelContextIn>),
    ("RemoteTaskIn", via::<RemoteTaskIn>),
    ("FollowIn", via::<FollowIn>),
    ("FollowOut", via::<FollowOut>),
    ("DeletePushIn", via::<DeletePushIn>),
    ("RemoteReplyIn", via::<RemoteReplyIn>),
    ("RemoteReplyOut", via::<RemoteReplyOut>),
    ("InvokeModelIn", via::<InvokeModelIn>),
    ("InvokeModelOut", via::<InvokeModelOut>),
    ("OfferedTool", via::<OfferedTool>),
    ("InvokeToolIn", via::<InvokeToolIn>),
    ("InvokeToolOut", via::<InvokeToolOut>),
    ("PushDelivery", via::<PushDelivery>),
    ("DelegationEnd", via::<DelegationEnd>),
    ("TaskFailure", via::<TaskFailure>),
    ("TaskEnvelope", via::<TaskEnvelope>),
    ("TaskEnvelopePayload", via::<TaskEnvelopePayload>),
    ("AcceptanceCriterion", via::<AcceptanceCriterion>),
    ("EntityRef", via::<EntityRef>),
    ("ExtensionTaskRef", via::<ExtensionTaskRef>),
];

/// The round trip through the serde type `name`.
pub fn round_trip(name: &str) -> RoundTrip {
    MESSAGES
        .iter()
        .find(|(message, _)| *message == name)
        .unwrap_or_else(|| panic!("no serde type for the message {name}"))
        .1
}

/// The types that refuse an unknown field: what a person or a foreign system writes by hand.
/// Every other type is internal and ignores one (docs/contract.md, Conventions).
pub const STRICT: &[&str] = &[
    "TaskInput",
    "TaskLimits",
    "Participant",
    "TaskRef",
    "InboxMessage",
    "TaskEnvelope",
    "TaskEnvelopePayload",
    "AcceptanceCriterion",
    "EntityRef",
    "ExtensionTaskRef",
];

/// `optional` in the schema, since a reader must tell absent from zero, yet Baton always writes
/// them: an absent one reads as a default that is not proto3's zero (`delegated`, 50, …).
pub const DEFAULTED: &[&str] = &[
    "TaskInput.lifecycle",
    "TaskLimits.max_turns",
    "TaskLimits.history_event_bound",
    "TaskLimits.idle_timeout_secs",
];

/// The JSON strings of every variant of a serde enum; the `match` stops compiling when the enum
/// grows, so the list cannot fall behind.
macro_rules! names {
    ($ty:ident: $($variant:ident),+) => {{
        let _every_variant = |v: $ty| match v { $($ty::$variant)|+ => () };
        [$($ty::$variant),+]
            .iter()
            .map(|v| serde_json::to_value(v).unwrap().as_str().unwrap().to_string())
            .collect::<Vec<String>>()
    }};
}

/// A serde enum written as a lower-case JSON string. The schema gives it as a `string` field
/// (a proto enum value would have to be upper case, and `agent` unique in the package); the
/// field's comment names every value in backticks.
pub struct StringEnum {
    pub serde_type: &'static str,
    pub values: Vec<String>,
    /// `Message.field`, every field of this type.
    pub fields: &'static [&'static str],
}

pub fn string_enums() -> Vec<StringEnum> {
    vec![
        StringEnum {
            serde_type: "Lifecycle",
            values: names!(Lifecycle: Delegated, Conversation),
            fields: &[
                "TaskInput.lifecycle",
                "TaskView.lifecycle",
                "TaskEnvelopePayload.lifecycle",
            ],
        },
        StringEnum {
            serde_type: "ParticipantKind",
            values: names!(ParticipantKind: Human, Agent),
            fields: &["Participant.kind"],
        },
        StringEnum {
            serde_type: "ParticipantRole",
            values: names!(ParticipantRole: Assignee, Reporter, Watcher, Admin),
            fields: &["Participant.role"],
        },
        StringEnum {
            serde_type: "Source",
            values: names!(Source: Participant, Agent),
            fields: &["HistoryItem.source"],
        },
        StringEnum {
            serde_type: "MessageRole",
            values: names!(MessageRole: User, Agent),
            fields: &["TaskMessage.role"],
        },
        StringEnum {
            serde_type: "AttachmentKind",
            values: names!(AttachmentKind: File, Data),
            fields: &["Attachment.kind"],
        },
        StringEnum {
            serde_type: "WatchKind",
            values: names!(WatchKind: Push, Follow, Off),
            fields: &[
                "RemoteWatch.kind",
                "RemoteStart.watch",
                "StartAgentTaskOut.watch",
            ],
        },
    ]
}

/// The values a `string` field of a string enum takes, if it is one.
pub fn string_enum_values(message: &str, field: &str) -> Option<Vec<String>> {
    let path = format!("{message}.{field}");
    string_enums()
        .into_iter()
        .find(|e| e.fields.contains(&path.as_str()))
        .map(|e| e.values)
}

/// A message that stands for an internally tagged serde enum (`#[serde(tag = "…")]`): its tag
/// field and every variant's fields. JSON holds one variant, so a sample sets only its fields.
pub struct Tagged {
    pub message: &'static str,
    pub tag: &'static str,
    pub variants: &'static [Variant],
}

pub struct Variant {
    /// The tag's value.
    pub name: &'static str,
    pub fields: &'static [&'static str],
    /// The fields the variant may leave out (the others are `optional` only in the schema).
    pub optional: &'static [&'static str],
    /// A sample, as JSON, for a `google.protobuf.Value` field, whose shape is the variant's.
    pub values: &'static [(&'static str, &'static str)],
}

pub const TAGGED: &[Tagged] = &[
    Tagged {
        message: "HistoryItem",
        tag: "type",
        variants: &[
            Variant {
                name: "user",
                fields: &["text", "source", "attachments"],
                optional: &[],
                values: &[],
            },
            Variant {
                name: "assistant",
                fields: &["text", "tool_calls"],
                optional: &["text"],
                values: &[],
            },
            Variant {
                name: "tool_result",
                fields: &["call_id", "content"],
                optional: &[],
                values: &[],
            },
        ],
    },
    Tagged {
        message: "TaskEvent",
        tag: "kind",
        variants: &[
            Variant {
                name: "status",
                fields: &["state", "sub_state", "message"],
                optional: &["sub_state", "message"],
                values: &[("message", r#""the customer withdrew the request""#)],
            },
            Variant {
                name: "sub_task",
                fields: &["row"],
                optional: &[],
                values: &[],
            },
            Variant {
                name: "message",
                fields: &["message"],
                optional: &[],
                values: &[(
                    "message",
                    r#"{"message_id": "m-1", "role": "user", "text": "Hello."}"#,
                )],
            },
        ],
    },
    Tagged {
        message: "StartAgentTaskOut",
        tag: "outcome",
        variants: &[
            Variant {
                name: "started",
                fields: &["task", "deadline_secs", "watch", "sent_again"],
                optional: &["deadline_secs", "watch", "sent_again"],
                values: &[],
            },
            Variant {
                name: "answered",
                fields: &["text"],
                optional: &[],
                values: &[],
            },
            Variant {
                name: "failed",
                fields: &["reason"],
                optional: &[],
                values: &[],
            },
        ],
    },
    Tagged {
        message: "RemoteReplyOut",
        tag: "outcome",
        variants: &[
            Variant {
                name: "sent",
                fields: &["task"],
                optional: &[],
                values: &[],
            },
            Variant {
                name: "refused",
                fields: &["reason"],
                optional: &[],
                values: &[],
            },
        ],
    },
];

pub fn tagged(message: &str) -> Option<&'static Tagged> {
    TAGGED.iter().find(|t| t.message == message)
}
