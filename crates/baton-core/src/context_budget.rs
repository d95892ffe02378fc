//! The context budget: how much of a task's history one model turn may send.
//!
//! The static prefix (system prompt, participants, agents), the tools and the task section are
//! never cut. When they and the whole history would pass the budget, the oldest history items
//! are left out, cut at a boundary that keeps every tool call with its results, and the model
//! reads a marker that says how many were cut. The workflow then drops the same items from the
//! history it keeps, so what a task carries, turn after turn and across continue-as-new, stays
//! within the budget too.
//!
//! Sizes are estimated, not counted with the model's tokenizer: a token is taken as 4
//! characters, what OpenAI quotes for English text, so the budget is approximate by design.

use baton_proto::HistoryItem;

use crate::attachments::budget_chars;

/// Characters per token, for the estimate.
pub const CHARS_PER_TOKEN: usize = 4;

/// The estimated tokens of `chars` characters.
pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The characters `item` costs in a request: its text and attachments, and each tool call's name
/// and arguments.
pub fn item_chars(item: &HistoryItem) -> usize {
    match item {
        HistoryItem::User {
            text, attachments, ..
        } => text.chars().count() + attachments.iter().map(budget_chars).sum::<usize>(),
        HistoryItem::Assistant { text, tool_calls } => {
            text.as_deref().map_or(0, |t| t.chars().count())
                + tool_calls
                    .iter()
                    .map(|call| call.id.len() + call.name.len() + call.arguments.chars().count())
                    .sum::<usize>()
        }
        HistoryItem::ToolResult { call_id, content } => call_id.len() + content.chars().count(),
    }
}

/// How many of the oldest items of `history` a turn leaves out so that `fixed_chars` (what is
/// never cut) and the rest fit `budget_tokens`. The cut ends where an item that is not a tool
/// result begins, so no result loses its call. It never cuts the newest such item and what
/// follows it: a turn always sends the latest exchange, over budget if it must. 0 when all fits.
pub fn items_to_cut(history: &[HistoryItem], fixed_chars: usize, budget_tokens: usize) -> usize {
    let total: usize = fixed_chars + history.iter().map(item_chars).sum::<usize>();
    if estimate_tokens(total) <= budget_tokens {
        return 0;
    }
    let newest_boundary = (0..history.len())
        .rev()
        .find(|&k| is_boundary(history, k))
        .unwrap_or(0);
    let mut left = total;
    for k in 0..history.len() {
        if k > 0 && is_boundary(history, k) && estimate_tokens(left) <= budget_tokens {
            return k;
        }
        if k == newest_boundary {
            return k;
        }
        left -= item_chars(&history[k]);
    }
    newest_boundary
}

/// The marker the model reads in place of the `cut` oldest items.
pub fn cut_marker(cut: u32) -> String {
    format!(
        "[Baton left out the {cut} oldest messages of this conversation to fit the model's \
         context budget. The task section above is whole; what was cut is not repeated.]"
    )
}

/// Whether a cut may end before item `k`: it is not a tool result.
fn is_boundary(history: &[HistoryItem], k: usize) -> bool {
    !matches!(history[k], HistoryItem::ToolResult { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_proto::{Source, ToolCallRecord};

    fn user(text: &str) -> HistoryItem {
        HistoryItem::User {
            text: text.into(),
            source: Source::Participant,
            attachments: Vec::new(),
        }
    }

    fn answer(text: &str) -> HistoryItem {
        HistoryItem::Assistant {
            text: Some(text.into()),
            tool_calls: Vec::new(),
        }
    }

    fn call(id: &str) -> HistoryItem {
        HistoryItem::Assistant {
            text: None,
            tool_calls: vec![ToolCallRecord {
                id: id.into(),
                name: "t".into(),
                arguments: "{}".into(),
                refused: None,
            }],
        }
    }

    fn result(id: &str, content: &str) -> HistoryItem {
        HistoryItem::ToolResult {
            call_id: id.into(),
            content: content.into(),
        }
    }

    #[test]
    fn tokens_are_estimated_at_four_characters_rounded_up() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(8), 2);
        assert_eq!(estimate_tokens(9), 3);
    }

    #[test]
    fn a_history_that_fits_is_sent_whole() {
        let history = [user(&"a".repeat(40)), answer(&"b".repeat(40))];
        assert_eq!(items_to_cut(&history, 20, 25), 0);
        assert_eq!(items_to_cut(&[], 1_000_000, 1), 0);
    }

    #[test]
    fn the_oldest_items_go_first_until_the_rest_fits() {
        let history = [
            user(&"a".repeat(400)),
            answer(&"b".repeat(400)),
            user(&"c".repeat(40)),
            answer(&"d".repeat(40)),
        ];
        // 100 tokens are fixed and the history holds 220: 150 leaves room for the last two,
        // 250 for all but the first.
        assert_eq!(items_to_cut(&history, 400, 150), 2);
        assert_eq!(items_to_cut(&history, 400, 250), 1);
    }

    #[test]
    fn a_cut_never_separates_a_tool_call_from_its_results() {
        let history = [
            user(&"a".repeat(400)),
            call("c1"),
            result("c1", &"r".repeat(400)),
            result("c1", &"s".repeat(400)),
            user("now"),
        ];
        for budget in 1..400 {
            let cut = items_to_cut(&history, 0, budget);
            assert!(
                !matches!(history.get(cut), Some(HistoryItem::ToolResult { .. })),
                "budget {budget} cut {cut}"
            );
        }
        assert_eq!(
            items_to_cut(&history, 0, 210),
            1,
            "the call and its results fit"
        );
        assert_eq!(
            items_to_cut(&history, 0, 10),
            4,
            "only the newest exchange is left"
        );
    }

    #[test]
    fn the_newest_exchange_is_always_sent_even_over_budget() {
        let history = [user("old"), call("c1"), result("c1", &"r".repeat(4000))];
        assert_eq!(items_to_cut(&history, 0, 1), 1);
        let alone = [user(&"x".repeat(4000))];
        assert_eq!(items_to_cut(&alone, 0, 1), 0);
    }

    #[test]
    fn each_item_costs_its_text_and_its_calls() {
        assert_eq!(item_chars(&user("héllo")), 5);
        assert_eq!(item_chars(&call("c1")), 2 + 1 + 2);
        assert_eq!(item_chars(&result("c1", "ok")), 4);
        assert_eq!(item_chars(&answer("yes")), 3);
    }

    #[test]
    fn the_marker_says_how_many_were_cut() {
        assert!(cut_marker(7).contains("the 7 oldest messages"));
    }
}
