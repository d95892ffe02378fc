//! What a task's model turns use: tokens and, where `model.prices` prices the model, their cost.
//! Its own turns' usage is counted in workflow state from each turn's recorded result (so exactly
//! once, under replay too), its whole tree's adds its sub-tasks' as their agents report them;
//! and the budget a task may be given, in tokens, in money or both, bounds the whole tree.

use baton_proto::{SubTaskRow, TaskLimits, Usage};

/// Error code: the task's budget is spent, so it delegates no more.
pub const BUDGET_SPENT: &str = "budget.spent";

/// What a task and its sub-tasks may use: model tokens, a cost in billionths of
/// `model.currency`, or both; spent once either runs out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Model tokens.
    pub tokens: Option<u64>,
    /// Cost, in billionths of `model.currency`.
    pub cost_nanos: Option<u64>,
}

impl Budget {
    /// The budget `limits` give, if any.
    pub fn of(limits: &TaskLimits) -> Option<Budget> {
        let budget = Budget {
            tokens: limits.budget_tokens,
            cost_nanos: limits.budget_cost_nanos,
        };
        (budget.tokens.is_some() || budget.cost_nanos.is_some()).then_some(budget)
    }

    /// What is left once the tree used `used`.
    pub fn left(&self, used: Usage) -> Budget {
        Budget {
            tokens: self.tokens.map(|t| t.saturating_sub(used.tokens())),
            cost_nanos: self.cost_nanos.map(|c| c.saturating_sub(used.cost_nanos)),
        }
    }

    /// Why a task whose tree used `used` ends, once any part of its budget is spent.
    pub fn spent(&self, used: Usage) -> Option<String> {
        let left = self.left(used);
        let mut spent = Vec::new();
        if let (Some(budget), Some(0)) = (self.tokens, left.tokens) {
            spent.push(format!(
                "used {} of the {budget} model tokens",
                used.tokens()
            ));
        }
        if let (Some(budget), Some(0)) = (self.cost_nanos, left.cost_nanos) {
            spent.push(format!(
                "cost {} of the {} in model.currency",
                money(used.cost_nanos),
                money(budget)
            ));
        }
        (!spent.is_empty()).then(|| {
            format!(
                "budget spent: the task and its sub-tasks {} its delegator gave it",
                spent.join(" and ")
            )
        })
    }

    /// The budget a sub-task is given when its task's tree used `used`: half of what is left of
    /// each part, so the task keeps enough to read what comes back and answer; never under one.
    pub fn share(&self, used: Usage) -> Budget {
        let left = self.left(used);
        let half = |n: u64| (n / 2).max(1);
        Budget {
            tokens: left.tokens.map(half),
            cost_nanos: left.cost_nanos.map(half),
        }
    }

    /// The line of the task section that tells the model what is left of its budget.
    pub fn line(&self, used: Usage) -> String {
        let left = self.left(used);
        let mut parts = Vec::new();
        if let (Some(budget), Some(left)) = (self.tokens, left.tokens) {
            parts.push(format!("{left} of {budget} model tokens left"));
        }
        if let (Some(budget), Some(left)) = (self.cost_nanos, left.cost_nanos) {
            parts.push(format!(
                "{} of {} left to spend",
                money(left),
                money(budget)
            ));
        }
        format!(
            "budget: {} (this task's turns and its sub-tasks' count against it; each sub-task \
             gets half of what is left)",
            parts.join(", ")
        )
    }
}

/// An amount in billionths, written in units of the currency: `1500000000` is `1.5`.
pub fn money(nanos: u64) -> String {
    let (units, fraction) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
    if fraction == 0 {
        return units.to_string();
    }
    let digits = format!("{fraction:09}");
    format!("{units}.{}", digits.trim_end_matches('0'))
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
            cost_nanos: input_tokens * 10,
        });
        row
    }

    fn used(tokens: (u64, u64), cost_nanos: u64) -> Usage {
        Usage {
            input_tokens: tokens.0,
            output_tokens: tokens.1,
            cost_nanos,
        }
    }

    #[test]
    fn limits_without_a_budget_give_none_and_either_part_gives_one() {
        let mut limits = TaskLimits::default();
        assert_eq!(Budget::of(&limits), None);
        limits.budget_cost_nanos = Some(5);
        assert_eq!(
            Budget::of(&limits),
            Some(Budget {
                tokens: None,
                cost_nanos: Some(5)
            })
        );
    }

    #[test]
    fn a_token_budget_is_counted_against_the_whole_tree_and_a_sub_task_gets_half_of_what_is_left() {
        let budget = Budget {
            tokens: Some(1_000),
            cost_nanos: None,
        };
        let used = used((700, 100), 123);
        assert_eq!(budget.left(used).tokens, Some(200));
        assert_eq!(budget.share(used).tokens, Some(100));
        assert_eq!(budget.share(used).cost_nanos, None);
        assert_eq!(budget.spent(used), None);
        let over = Budget {
            tokens: Some(500),
            cost_nanos: None,
        };
        assert_eq!(over.share(used).tokens, Some(1));
        assert_eq!(
            over.spent(used).unwrap(),
            "budget spent: the task and its sub-tasks used 800 of the 500 model tokens its delegator gave it"
        );
        assert!(
            budget
                .line(used)
                .starts_with("budget: 200 of 1000 model tokens left (")
        );
    }

    #[test]
    fn a_budget_in_money_is_spent_by_cost_and_either_part_spent_ends_it() {
        let budget = Budget {
            tokens: Some(10_000),
            cost_nanos: Some(500_000_000),
        };
        let cheap = used((1_000, 100), 200_000_000);
        assert_eq!(budget.spent(cheap), None);
        assert_eq!(
            budget.share(cheap),
            Budget {
                tokens: Some(4_450),
                cost_nanos: Some(150_000_000)
            }
        );
        assert!(
            budget
                .line(cheap)
                .starts_with("budget: 8900 of 10000 model tokens left, 0.3 of 0.5 left to spend ("),
            "{}",
            budget.line(cheap)
        );
        assert_eq!(
            budget.spent(used((1_000, 100), 500_000_001)).unwrap(),
            "budget spent: the task and its sub-tasks cost 0.500000001 of the 0.5 in \
             model.currency its delegator gave it"
        );
        assert_eq!(
            budget.spent(used((9_000, 1_000), 600_000_000)).unwrap(),
            "budget spent: the task and its sub-tasks used 10000 of the 10000 model tokens and \
             cost 0.6 of the 0.5 in model.currency its delegator gave it"
        );
    }

    #[test]
    fn money_is_written_in_units_to_the_billionth() {
        assert_eq!(money(0), "0");
        assert_eq!(money(1), "0.000000001");
        assert_eq!(money(3_500_000), "0.0035");
        assert_eq!(money(1_500_000_000), "1.5");
        assert_eq!(money(2_000_000_000), "2");
    }

    #[test]
    fn a_tree_adds_the_sub_tasks_that_report_to_the_task_s_own() {
        let own = used((100, 10), 1_000);
        let rows = [row(Some((50, 5))), row(None), row(Some((7, 1)))];
        assert_eq!(tree_usage(own, &rows), used((157, 16), 1_570));
        assert_eq!(tree_usage(own, &[]), own);
    }
}
