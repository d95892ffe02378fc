//! What a task's model turns cost in tokens: its own turns' usage, counted in workflow state
//! from each turn's recorded result (so exactly once, under replay too), and its whole tree's,
//! its sub-tasks' as their agents report them; and the budget a task may be given, which bounds
//! the whole tree.

use baton_proto::{SubTaskRow, Usage};

/// Error code: the task's budget is spent, so it delegates no more.
pub const BUDGET_SPENT: &str = "budget.spent";

/// The tokens a task with `budget` has left once its tree used `used`.
pub fn budget_left(budget: u64, used: Usage) -> u64 {
    budget.saturating_sub(used.tokens())
}

/// Why a task whose tree used `used` of its `budget` ends.
pub fn budget_spent(budget: u64, used: Usage) -> String {
    format!(
        "budget spent: the task and its sub-tasks used {} of the {budget} model tokens its \
         delegator gave it",
        used.tokens()
    )
}

/// The budget a sub-task is given when its task has `left` tokens: half, so the task keeps
/// enough to read what comes back and answer; never under one.
pub fn sub_task_share(left: u64) -> u64 {
    (left / 2).max(1)
}

/// The line of the task section that tells the model its budget: what is left of it.
pub fn budget_line(budget: u64, used: Usage) -> String {
    format!(
        "budget: {} of {budget} model tokens left (this task's turns and its sub-tasks' count \
         against it; each sub-task gets half of what is left)",
        budget_left(budget, used)
    )
}

/// The usage of a task's whole tree: `own`, and each sub-task's as last reported.
pub fn tree_usage(own: Usage, sub_tasks: &[SubTaskRow]) -> Usage {
    sub_tasks
        .iter()
        .filter_map(|row| row.usage)
        .fold(own, Usage::plus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(usage: Option<(u64, u64)>) -> SubTaskRow {
        let mut row: SubTaskRow = serde_json::from_value(serde_json::json!({
            "stand_in_id": "t.1", "name": "n", "agent": "a",
            "state": "TASK_STATE_COMPLETED", "resolved": true
        }))
        .unwrap();
        row.usage = usage.map(|(input_tokens, output_tokens)| Usage {
            input_tokens,
            output_tokens,
        });
        row
    }

    #[test]
    fn a_budget_is_counted_against_the_whole_tree_and_a_sub_task_gets_half_of_what_is_left() {
        let used = Usage {
            input_tokens: 700,
            output_tokens: 100,
        };
        assert_eq!(budget_left(1_000, used), 200);
        assert_eq!(budget_left(500, used), 0);
        assert_eq!(sub_task_share(200), 100);
        assert_eq!(sub_task_share(1), 1);
        assert_eq!(sub_task_share(0), 1);
        assert_eq!(
            budget_spent(500, used),
            "budget spent: the task and its sub-tasks used 800 of the 500 model tokens its delegator gave it"
        );
        assert!(budget_line(1_000, used).starts_with("budget: 200 of 1000 model tokens left"));
    }

    #[test]
    fn a_tree_adds_the_sub_tasks_that_report_to_the_task_s_own() {
        let own = Usage {
            input_tokens: 100,
            output_tokens: 10,
        };
        let rows = [row(Some((50, 5))), row(None), row(Some((7, 1)))];
        assert_eq!(
            tree_usage(own, &rows),
            Usage {
                input_tokens: 157,
                output_tokens: 16
            }
        );
        assert_eq!(tree_usage(own, &[]), own);
    }
}
