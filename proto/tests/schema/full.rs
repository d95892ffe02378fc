//! A value of every serde type with every field set (each `Option` to `Some`, each list to one
//! item, each number past its default) and every variant of every enum, written as JSON. A
//! struct literal names all its fields, so a field added to a type must be set here too.

use baton_proto::envelope::{AcceptanceCriterion, EntityRef, ExtensionTaskRef};
use baton_proto::*;
use serde::Serialize;
use serde_json::{Value, json};

use crate::sample::BIG;

/// `(serde type, its JSON)`, every tagged enum once per variant.
pub fn values() -> Vec<(&'static str, Value)> {
    let mut values = vec![
        one("TaskInput", task_input()),
        one("TaskLimits", limits()),
        one("TaskCarry", carry()),
        one("Participant", participant()),
        one("TaskRef", task_ref()),
        one("ToolCallRecord", tool_call()),
        one("SubTaskRow", row()),
        one("ChildDone", child_done()),
        one("InboxMessage", inbox_message()),
        one("InboxReceipt", receipt()),
        one("PushConfig", push_config()),
        one("PushAuthentication", authentication()),
        one("TaskView", view()),
        one("TaskMessage", task_message()),
        one("EventPage", event_page()),
        one("EventLog", event_log()),
        one("ContentRef", content_ref()),
        one("Attachment", attachment()),
        one(
            "RemoteFiles",
            RemoteFiles {
                attachments: vec![attachment()],
                left_out: vec!["part 2 is over content.max_part_bytes".into()],
            },
        ),
        one("EventEntry", event_entry()),
        one("ForwardedReply", forwarded()),
        one("TaskRoster", task_roster()),
        one("RemoteStart", remote_start()),
        one("RemoteSnapshot", snapshot()),
        one("RemoteWatch", watch()),
        one("RemoteCarry", remote_carry()),
        one("SubTaskReply", reply()),
        one("PushIn", push_in()),
        one("RemoteView", remote_view()),
        one("StartAgentTaskIn", start_in()),
        one("CancelContextIn", cancel_context()),
        one("RemoteTaskIn", remote_task()),
        one("FollowIn", follow_in()),
        one(
            "FollowOut",
            FollowOut {
                changed: Some(snapshot()),
            },
        ),
        one("DeletePushIn", delete_push()),
        one("RemoteReplyIn", reply_in()),
        one("InvokeModelIn", model_in()),
        one("InvokeModelOut", model_out()),
        one("OfferedTool", offered()),
        one("InvokeToolIn", tool_in()),
        one("InvokeToolOut", tool_out()),
        one("PushDelivery", delivery()),
        one("DelegationEnd", delegation_end()),
        one(
            "TaskFailure",
            TaskFailure {
                task_id: "books-1".into(),
                reason: "turn limit reached".into(),
            },
        ),
        one("TaskEnvelope", TaskEnvelope::task(payload())),
        one("TaskEnvelopePayload", payload()),
        one("AcceptanceCriterion", criterion()),
        one("EntityRef", entity()),
        one("ExtensionTaskRef", extension_ref()),
    ];
    values.extend(history_items().into_iter().map(|v| one("HistoryItem", v)));
    values.extend(task_events().into_iter().map(|v| one("TaskEvent", v)));
    values.extend(
        start_outs()
            .into_iter()
            .map(|v| one("StartAgentTaskOut", v)),
    );
    values.extend(reply_outs().into_iter().map(|v| one("RemoteReplyOut", v)));
    values
}

fn one(name: &'static str, value: impl Serialize) -> (&'static str, Value) {
    (name, serde_json::to_value(value).expect("serde writes it"))
}

fn task_input() -> TaskInput {
    TaskInput {
        name: "books".into(),
        goal: "Check the books.".into(),
        description: "The March ledger is final.".into(),
        acceptance_criteria: vec!["Debits equal credits.".into()],
        participants: vec![participant()],
        lifecycle: Lifecycle::Conversation,
        model: Some("gpt-5-mini".into()),
        reasoning_effort: Some("low".into()),
        parent_tasks: vec![task_ref()],
        limits: limits(),
        context_id: Some("ctx-1".into()),
        earlier: vec![task_message()],
        carry: Some(carry()),
    }
}

fn limits() -> TaskLimits {
    TaskLimits {
        max_turns: 5,
        history_event_bound: 200,
        idle_timeout_secs: BIG,
        deadline_secs: Some(3600),
        budget_tokens: Some(20_000),
        budget_cost_nanos: Some(500_000_000),
    }
}

fn carry() -> TaskCarry {
    TaskCarry {
        state: TaskState::InputRequired,
        history: history_items(),
        sub_tasks: vec![row()],
        pending_notes: vec![HistoryItem::User {
            text: "Sub-task balance is COMPLETED.".into(),
            source: Source::Agent,
            attachments: vec![attachment()],
        }],
        log: event_log(),
        turns: 3,
        turns_since_message: 2,
        last_answer: Some("Waiting on the ledger.".into()),
        cancel_reason: Some("withdrawn".into()),
        messages: vec![task_message()],
        sub_state: Some("awaiting-answer".into()),
        unread_messages: 1,
        arrived: vec![HistoryItem::User {
            text: "And April?".into(),
            source: Source::Participant,
            attachments: vec![attachment()],
        }],
        push_configs: vec![push_config()],
        replies_out: vec![forwarded()],
        replies_sent: 4,
        compacted: 6,
        roster: Some(task_roster()),
        deadline_at_ms: Some(1_775_000_000_000),
        status_message: Some("Which account?".into()),
        outbox: vec![delivery()],
        ended: vec![delegation_end()],
        tool_files: vec![tool_file()],
        answer_files: Some(AnswerFiles {
            ids: vec!["tool:1".into()],
        }),
        usage: usage(),
    }
}

fn participant() -> Participant {
    Participant {
        id: "alice".into(),
        kind: ParticipantKind::Human,
        role: ParticipantRole::Reporter,
        display_name: Some("Alice Martin".into()),
    }
}

fn task_ref() -> TaskRef {
    TaskRef {
        task_id: "q1-close".into(),
        agent: Some("planner".into()),
    }
}

fn history_items() -> Vec<HistoryItem> {
    let items = vec![
        HistoryItem::User {
            text: "Reconcile March.".into(),
            source: Source::Participant,
            attachments: vec![attachment()],
        },
        HistoryItem::Assistant {
            text: Some("Asking the ledger.".into()),
            tool_calls: vec![tool_call()],
        },
        HistoryItem::ToolResult {
            call_id: "call_1".into(),
            content: "started".into(),
        },
    ];
    for item in &items {
        match item {
            HistoryItem::User { .. }
            | HistoryItem::Assistant { .. }
            | HistoryItem::ToolResult { .. } => {}
        }
    }
    items
}

fn tool_call() -> ToolCallRecord {
    ToolCallRecord {
        id: "call_1".into(),
        name: "spawn_subtask".into(),
        arguments: r#"{"name":"balance"}"#.into(),
        refused: Some("too many calls in one answer".into()),
    }
}

fn row() -> SubTaskRow {
    SubTaskRow {
        stand_in_id: "books-1.1".into(),
        name: "balance".into(),
        agent: "ledger".into(),
        remote_task_id: Some("4b1f9c2e".into()),
        context_id: Some("6d2f8b31".into()),
        state: TaskState::AuthRequired,
        sub_state: Some("awaiting-credentials".into()),
        summary: Some("Sign in.".into()),
        resolved: true,
        attachments: vec![attachment()],
        usage: Some(usage()),
    }
}

fn child_done() -> ChildDone {
    ChildDone {
        stand_in_id: "books-1.1".into(),
        remote_task_id: "4b1f9c2e".into(),
        state: TaskState::InputRequired,
        sub_state: Some("awaiting-answer".into()),
        summary: "Which account?".into(),
        attachments: vec![attachment()],
        usage: Some(usage()),
    }
}

fn inbox_message() -> InboxMessage {
    InboxMessage {
        message_id: "m-1".into(),
        participant_id: "alice".into(),
        text: "Use the savings account.".into(),
        push_config: Some(push_config()),
        stand_in_id: Some("books-1.1".into()),
        attachments: vec![attachment()],
    }
}

fn receipt() -> InboxReceipt {
    InboxReceipt {
        message_id: "m-1".into(),
        duplicate: true,
        state: TaskState::Working,
        cursor: BIG,
    }
}

fn push_config() -> PushConfig {
    PushConfig {
        id: "cfg-1".into(),
        url: "https://hooks.example.com/a2a".into(),
        token: Some("tok-1".into()),
        authentication: Some(authentication()),
    }
}

fn authentication() -> PushAuthentication {
    PushAuthentication {
        scheme: "Bearer".into(),
        credentials: Some("secret-1".into()),
    }
}

fn view() -> TaskView {
    TaskView {
        task_id: "books-1".into(),
        name: "books".into(),
        state: TaskState::Failed,
        sub_state: Some("awaiting-answer".into()),
        status_message: Some("turn limit reached".into()),
        sub_tasks: vec![row()],
        last_answer: Some("Done.".into()),
        turns: 50,
        context_id: Some("ctx-1".into()),
        messages: vec![task_message()],
        participants: vec![participant()],
        updated_at: Some("2026-04-02T09:15:11.502Z".into()),
        event_seq: BIG,
        goal: "Check the books.".into(),
        description: "The March ledger is final.".into(),
        acceptance_criteria: vec!["Debits equal credits.".into()],
        lifecycle: Some(Lifecycle::Delegated),
        model: Some("gpt-5-mini".into()),
        reasoning_effort: Some("low".into()),
        parent_tasks: vec![task_ref()],
        earlier: vec![task_message()],
        tool_files: vec![tool_file()],
        answer_files: Some(AnswerFiles {
            ids: vec!["tool:1".into()],
        }),
        usage: usage(),
    }
}

fn usage() -> Usage {
    Usage {
        input_tokens: 1834,
        output_tokens: 19,
        cost_nanos: 4_775_000,
    }
}

fn tool_file() -> ToolFile {
    ToolFile {
        tool: "chart".into(),
        attachment: attachment(),
    }
}

fn task_message() -> TaskMessage {
    TaskMessage {
        message_id: "m-1".into(),
        role: MessageRole::Agent,
        text: "Where is my order?".into(),
        attachments: vec![attachment()],
    }
}

fn content_ref() -> ContentRef {
    ContentRef {
        digest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
        size: BIG,
    }
}

/// Every field set, though no attachment has both stored bytes and a URL.
fn attachment() -> Attachment {
    Attachment {
        kind: AttachmentKind::File,
        name: Some("chart.png".into()),
        media_type: "image/png".into(),
        content: Some(content_ref()),
        url: Some("https://files.example.com/chart.png".into()),
    }
}

fn event_log() -> EventLog {
    EventLog {
        events: vec![event_entry()],
        next_seq: BIG,
    }
}

fn event_page() -> EventPage {
    EventPage {
        events: vec![event_entry()],
        next_seq: BIG,
        closed: true,
    }
}

fn event_entry() -> EventEntry {
    EventEntry {
        seq: BIG,
        at: "2026-04-02T09:15:02.004Z".into(),
        event: task_events().remove(0),
    }
}

fn task_events() -> Vec<TaskEvent> {
    let events = vec![
        TaskEvent::Status {
            state: TaskState::Canceled,
            sub_state: Some("awaiting-answer".into()),
            message: Some("withdrawn".into()),
        },
        TaskEvent::SubTask { row: row() },
        TaskEvent::Message {
            // A `google.protobuf.Value` writes every number as a double: the attachment's size
            // would read back as 48213.0.
            message: TaskMessage {
                attachments: Vec::new(),
                ..task_message()
            },
        },
    ];
    for event in &events {
        match event {
            TaskEvent::Status { .. } | TaskEvent::SubTask { .. } | TaskEvent::Message { .. } => {}
        }
    }
    events
}

fn task_roster() -> TaskRoster {
    TaskRoster {
        agents: vec!["ledger".into(), "self".into()],
    }
}

fn forwarded() -> ForwardedReply {
    ForwardedReply {
        stand_in_id: "books-1.1".into(),
        text: "The savings account.".into(),
        attachments: vec![attachment()],
    }
}

fn remote_start() -> RemoteStart {
    RemoteStart {
        parent_workflow_id: "books-1".into(),
        agent: "ledger".into(),
        name: "balance".into(),
        delegated: true,
        last: snapshot(),
        history_event_bound: 200,
        carry: Some(remote_carry()),
        deadline_at_ms: Some(1_775_000_000_000),
        deadline_secs: Some(3600),
        watch: Some(WatchKind::Follow),
        duplicates_in: Some("3e8a5f10".into()),
    }
}

fn snapshot() -> RemoteSnapshot {
    RemoteSnapshot {
        remote_task_id: "4b1f9c2e".into(),
        state: TaskState::InputRequired,
        sub_state: Some("awaiting-answer".into()),
        text: Some("Which account?".into()),
        carries_files: true,
        usage: Some(usage()),
    }
}

fn watch() -> RemoteWatch {
    RemoteWatch {
        kind: WatchKind::Push,
        config_id: Some("cfg-1".into()),
        token_digest: Some("9f2c6a0e".into()),
        safety_fetch_secs: Some(BIG),
    }
}

fn remote_carry() -> RemoteCarry {
    RemoteCarry {
        watch: Some(watch()),
        told: Some(snapshot()),
        push_pending: true,
        claimed: Some(TaskState::Completed),
        replies: vec![reply()],
        answered: Some(snapshot()),
    }
}

fn reply() -> SubTaskReply {
    SubTaskReply {
        message_id: "0c4f2d8e".into(),
        text: "The savings account.".into(),
        attachments: vec![attachment()],
    }
}

fn push_in() -> PushIn {
    PushIn {
        token_digest: "9f2c6a0e".into(),
        remote_task_id: "4b1f9c2e".into(),
        claimed_state: Some(TaskState::Rejected),
    }
}

fn remote_view() -> RemoteView {
    RemoteView {
        agent: "ledger".into(),
        last: snapshot(),
        watch: Some(watch()),
        closed: true,
    }
}

fn start_in() -> StartAgentTaskIn {
    StartAgentTaskIn {
        agent: "ledger".into(),
        stand_in_id: "books-1.1".into(),
        message_id: "9c41d0e2".into(),
        context_id: Some("3e8a5f10".into()),
        text: "Is the March ledger balanced?".into(),
        envelope: Some(TaskEnvelope::task(payload())),
        deadline_secs: Some(BIG),
        attachments: vec![attachment()],
        budget_tokens: Some(20_000),
        budget_cost_nanos: Some(250_000_000),
    }
}

fn start_outs() -> Vec<StartAgentTaskOut> {
    let outs = vec![
        StartAgentTaskOut::Started {
            task: snapshot(),
            deadline_secs: Some(3600),
            watch: Some(WatchKind::Off),
            sent_again: true,
        },
        StartAgentTaskOut::Answered {
            text: "Yes, balanced.".into(),
        },
        StartAgentTaskOut::Failed {
            reason: "refused".into(),
        },
    ];
    for out in &outs {
        match out {
            StartAgentTaskOut::Started { .. }
            | StartAgentTaskOut::Answered { .. }
            | StartAgentTaskOut::Failed { .. } => {}
        }
    }
    outs
}

fn cancel_context() -> CancelContextIn {
    CancelContextIn {
        stand_in_id: "books-1.3".into(),
        agent: "archive".into(),
        context_id: "7b90e4c2".into(),
        keep: Some("4b1f9c2e".into()),
    }
}

fn remote_task() -> RemoteTaskIn {
    RemoteTaskIn {
        stand_in_id: "books-1.1".into(),
        agent: "ledger".into(),
        remote_task_id: "4b1f9c2e".into(),
    }
}

fn follow_in() -> FollowIn {
    FollowIn {
        task: remote_task(),
        known: snapshot(),
    }
}

fn delete_push() -> DeletePushIn {
    DeletePushIn {
        task: remote_task(),
        config_id: "cfg-1".into(),
    }
}

fn reply_in() -> RemoteReplyIn {
    RemoteReplyIn {
        task: remote_task(),
        message_id: "0c4f2d8e".into(),
        text: "The savings account.".into(),
        attachments: vec![attachment()],
    }
}

fn reply_outs() -> Vec<RemoteReplyOut> {
    let outs = vec![
        RemoteReplyOut::Sent { task: snapshot() },
        RemoteReplyOut::Refused {
            reason: "the task has ended".into(),
        },
    ];
    for out in &outs {
        match out {
            RemoteReplyOut::Sent { .. } | RemoteReplyOut::Refused { .. } => {}
        }
    }
    outs
}

fn model_in() -> InvokeModelIn {
    InvokeModelIn {
        task_id: "books-1".into(),
        model: Some("gpt-5-mini".into()),
        reasoning_effort: Some("low".into()),
        task_section: "<task>\nname: books\n</task>".into(),
        history: history_items(),
        compacted: 2,
        roster: Some(task_roster()),
        parent_tasks: vec![TaskRef {
            task_id: "root-1".into(),
            agent: Some("https://front.example.com".into()),
        }],
    }
}

fn model_out() -> InvokeModelOut {
    InvokeModelOut {
        text: Some("Noted.".into()),
        tool_calls: vec![tool_call()],
        input_tokens: BIG,
        output_tokens: 19,
        prefix_sha256: "3b7e1f0a".into(),
        agents: vec!["ledger".into()],
        cut: 4,
        mcp_tools: vec![offered()],
        closed_agents: vec![ClosedAgent {
            agent: "front".into(),
            code: "delegation.cycle".into(),
            reason: "agent front is already in this task's chain of delegations".into(),
        }],
        cost_nanos: 4_775_000,
    }
}

fn offered() -> OfferedTool {
    OfferedTool {
        name: "get_order".into(),
        retry_safe: true,
    }
}

fn tool_in() -> InvokeToolIn {
    InvokeToolIn {
        task_id: "orders-1".into(),
        tool: "get_order".into(),
        arguments: r#"{"order":"1042"}"#.into(),
    }
}

fn tool_out() -> InvokeToolOut {
    InvokeToolOut {
        content: "no order 9999".into(),
        is_error: true,
        attachments: vec![attachment()],
    }
}

fn delegation_end() -> DelegationEnd {
    DelegationEnd {
        agent: "ledger".into(),
        state: TaskState::Completed,
    }
}

fn delivery() -> PushDelivery {
    PushDelivery {
        config: push_config(),
        task_id: "books-1".into(),
        context_id: "ctx-9".into(),
        state: TaskState::Submitted,
        sub_state: Some("awaiting-next-message".into()),
        message: Some("The March ledger balances.".into()),
        at: "2026-11-29T10:00:03.000Z".into(),
        artifacts: vec![answer_artifact()],
    }
}

fn answer_artifact() -> AnswerArtifact {
    AnswerArtifact {
        id: "tool:1".into(),
        name: "chart.png".into(),
        description: Some("given by tool chart".into()),
        text: Some("The chart.".into()),
        attachment: Some(attachment()),
    }
}

fn payload() -> TaskEnvelopePayload {
    TaskEnvelopePayload {
        name: Some("balance".into()),
        task_type: Some("reconciliation".into()),
        goal: Some("Is the March ledger balanced?".into()),
        description: Some("Use the closing balances.".into()),
        acceptance_criteria: Some(vec![criterion()]),
        participants: Some(vec![participant()]),
        parent_tasks: Some(vec![extension_ref()]),
        sub_tasks: Some(vec![extension_ref()]),
        plan: Some(json!({"steps": [{"text": "Sum the debits.", "done": true}], "empty": []})),
        lifecycle: Some(Lifecycle::Conversation),
        model: Some("gpt-5-mini".into()),
        reasoning_effort: Some("high".into()),
    }
}

fn criterion() -> AcceptanceCriterion {
    AcceptanceCriterion {
        text: "Say yes or no.".into(),
        met: true,
    }
}

fn entity() -> EntityRef {
    EntityRef {
        kind: "agent".into(),
        id: "planner".into(),
        version: Some("2".into()),
    }
}

fn extension_ref() -> ExtensionTaskRef {
    ExtensionTaskRef {
        task_id: "t-1".into(),
        agent: Some(entity()),
        state: Some("WORKING".into()),
        sub_state: Some("awaiting-answer".into()),
    }
}
