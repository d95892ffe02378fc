//! Bounds on one model answer, so a model that answers with thousands of tool calls or huge
//! arguments cannot grow the task past what Temporal can carry (2 MB a payload) and wedge it.
//!
//! The first [`MAX_TOOL_CALLS_RUN`] calls run. Later calls, up to [`MAX_TOOL_CALLS_KEPT`] in
//! all, are kept without their arguments and refused, so the model reads a tool error for
//! each and learns the limit; any beyond that are dropped. A call whose arguments pass
//! [`MAX_ARGUMENT_BYTES`] is refused with its arguments dropped. The answer's text is cut at
//! [`MAX_ANSWER_CHARS`].

use baton_proto::ToolCallRecord;

/// Tool calls of one answer that run.
pub const MAX_TOOL_CALLS_RUN: usize = 16;
/// Tool calls of one answer kept in the history, refused past [`MAX_TOOL_CALLS_RUN`].
pub const MAX_TOOL_CALLS_KEPT: usize = 64;
/// The largest arguments of one tool call, in bytes.
pub const MAX_ARGUMENT_BYTES: usize = 32 * 1024;
/// The longest tool name kept; a longer one is cut (it can name no tool).
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// The longest answer text kept, in characters.
pub const MAX_ANSWER_CHARS: usize = 100_000;
/// The largest activity input or continue-as-new payload a task may build, in bytes: under
/// the 2 MB Temporal accepts, with room for the envelope around it.
pub const MAX_PAYLOAD_BYTES: usize = 1_500_000;
/// Marks a cut.
const ELLIPSIS: char = '…';

/// The calls of one answer within the bounds, and how many were dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedCalls {
    /// The calls kept, in order; one over a bound has its refusal in `refused`.
    pub calls: Vec<ToolCallRecord>,
    /// Calls past [`MAX_TOOL_CALLS_KEPT`], left out.
    pub dropped: usize,
}

/// Applies the bounds to the tool calls of one answer, in order.
pub fn bound_tool_calls(calls: Vec<ToolCallRecord>) -> BoundedCalls {
    let total = calls.len();
    let calls = calls
        .into_iter()
        .take(MAX_TOOL_CALLS_KEPT)
        .enumerate()
        .map(|(index, call)| bound_one(index, total, call))
        .collect();
    BoundedCalls {
        calls,
        dropped: total.saturating_sub(MAX_TOOL_CALLS_KEPT),
    }
}

fn bound_one(index: usize, total: usize, mut call: ToolCallRecord) -> ToolCallRecord {
    call.name = cut(&call.name, MAX_TOOL_NAME_CHARS);
    let refusal = if index >= MAX_TOOL_CALLS_RUN {
        Some(format!(
            "only {MAX_TOOL_CALLS_RUN} tool calls run per answer and this answer made {total}: \
             this is call {}; make fewer calls and try again",
            index + 1
        ))
    } else if call.arguments.len() > MAX_ARGUMENT_BYTES {
        Some(format!(
            "the arguments are {} bytes, over the {MAX_ARGUMENT_BYTES}-byte limit of a tool call",
            call.arguments.len()
        ))
    } else {
        None
    };
    if refusal.is_some() {
        call.arguments = String::new();
        call.refused = refusal;
    }
    call
}

/// Why a payload of `bytes` cannot be sent, when it is over [`MAX_PAYLOAD_BYTES`]; `what`
/// names it ("the model's input").
pub fn payload_too_large(what: &str, bytes: usize) -> Option<String> {
    (bytes > MAX_PAYLOAD_BYTES).then(|| {
        format!(
            "{what} has grown to {bytes} bytes, past the {MAX_PAYLOAD_BYTES} bytes a Temporal \
             payload may safely carry; the task cannot go on (start a new task with what it \
             needs)"
        )
    })
}

/// `text` cut at [`MAX_ANSWER_CHARS`] characters, marked with `…` when cut.
pub fn bound_answer(text: String) -> String {
    if text.chars().nth(MAX_ANSWER_CHARS).is_none() {
        return text;
    }
    cut(&text, MAX_ANSWER_CHARS)
}

/// `text` whole when it has at most `limit` characters, else its first `limit - 1` and `…`.
pub fn cut(text: &str, limit: usize) -> String {
    if text.chars().nth(limit).is_none() {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(limit - 1).collect();
    kept.push(ELLIPSIS);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: usize, arguments: &str) -> ToolCallRecord {
        ToolCallRecord {
            id: format!("call_{n}"),
            name: "spawn_subtask".into(),
            arguments: arguments.into(),
            refused: None,
        }
    }

    fn calls(count: usize) -> Vec<ToolCallRecord> {
        (0..count).map(|n| call(n, "{}")).collect()
    }

    #[test]
    fn calls_within_the_bounds_are_untouched() {
        for count in [0, 1, MAX_TOOL_CALLS_RUN] {
            let bounded = bound_tool_calls(calls(count));
            assert_eq!(bounded.calls, calls(count), "{count}");
            assert_eq!(bounded.dropped, 0);
        }
    }

    #[test]
    fn calls_past_the_run_limit_are_kept_refused_and_past_the_keep_limit_dropped() {
        for count in [
            MAX_TOOL_CALLS_RUN + 1,
            MAX_TOOL_CALLS_KEPT,
            MAX_TOOL_CALLS_KEPT + 1,
            1500,
        ] {
            let bounded = bound_tool_calls(calls(count));
            assert_eq!(
                bounded.calls.len(),
                count.min(MAX_TOOL_CALLS_KEPT),
                "{count}"
            );
            assert_eq!(bounded.dropped, count.saturating_sub(MAX_TOOL_CALLS_KEPT));
            for (index, kept) in bounded.calls.iter().enumerate() {
                assert_eq!(kept.id, format!("call_{index}"), "order and ids are kept");
                if index < MAX_TOOL_CALLS_RUN {
                    assert_eq!(
                        (kept.refused.as_deref(), kept.arguments.as_str()),
                        (None, "{}")
                    );
                } else {
                    let refusal = kept.refused.as_deref().unwrap();
                    assert!(
                        refusal.contains(&format!("this answer made {count}")),
                        "{refusal}"
                    );
                    assert!(
                        refusal.contains(&format!("call {}", index + 1)),
                        "{refusal}"
                    );
                    assert_eq!(kept.arguments, "");
                }
            }
        }
    }

    #[test]
    fn oversized_arguments_are_refused_and_dropped_at_the_exact_limit() {
        let fits = "x".repeat(MAX_ARGUMENT_BYTES);
        let over = "x".repeat(MAX_ARGUMENT_BYTES + 1);
        let bounded = bound_tool_calls(vec![call(0, &fits), call(1, &over)]);
        assert_eq!(bounded.calls[0].refused, None);
        assert_eq!(bounded.calls[0].arguments, fits);
        let refusal = bounded.calls[1].refused.as_deref().unwrap();
        assert!(
            refusal.contains(&format!("{} bytes", MAX_ARGUMENT_BYTES + 1)),
            "{refusal}"
        );
        assert_eq!(bounded.calls[1].arguments, "");
    }

    #[test]
    fn a_long_tool_name_is_cut() {
        let mut long = call(0, "{}");
        long.name = "n".repeat(10_000);
        let name = &bound_tool_calls(vec![long]).calls[0].name;
        assert_eq!(name.chars().count(), MAX_TOOL_NAME_CHARS);
        assert!(name.ends_with(ELLIPSIS));
    }

    #[test]
    fn the_answer_is_cut_by_characters_not_bytes() {
        let fits = "é".repeat(MAX_ANSWER_CHARS);
        assert_eq!(bound_answer(fits.clone()), fits);
        let over = "é".repeat(MAX_ANSWER_CHARS + 1);
        let cut = bound_answer(over);
        assert_eq!(cut.chars().count(), MAX_ANSWER_CHARS);
        assert!(cut.ends_with(ELLIPSIS));
    }

    #[test]
    fn a_payload_is_too_large_only_past_the_limit() {
        assert_eq!(
            payload_too_large("the model's input", MAX_PAYLOAD_BYTES),
            None
        );
        let reason = payload_too_large("the model's input", MAX_PAYLOAD_BYTES + 1).unwrap();
        assert!(
            reason.starts_with("the model's input has grown to 1500001 bytes"),
            "{reason}"
        );
    }

    #[test]
    fn cut_keeps_short_text_and_marks_long_text() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        assert_eq!(cut("", 1), "");
    }
}
