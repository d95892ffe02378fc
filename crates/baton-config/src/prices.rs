//! `model.prices` and `model.currency`: what each model's tokens cost, so that every model turn
//! has a cost and a task may be given a budget in money.

use std::collections::BTreeMap;

use crate::error::Errors;
use crate::walk::{Field, Section};

/// The price of one model's tokens, in millionths of `model.currency` per million tokens (a
/// price of 2.50 per million is 2 500 000): whole numbers, so settings compare exactly and a
/// cost is the same on every worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPrice {
    /// What the model reads.
    pub input_micros_per_million: u64,
    /// What the model writes.
    pub output_micros_per_million: u64,
}

impl ModelPrice {
    /// What `input` tokens read and `output` tokens written cost, in billionths of the
    /// currency (millionths per million tokens are billionths per thousand tokens).
    pub fn cost_nanos(&self, input: u64, output: u64) -> u64 {
        let millis = u128::from(input) * u128::from(self.input_micros_per_million)
            + u128::from(output) * u128::from(self.output_micros_per_million);
        u64::try_from(millis / 1000).unwrap_or(u64::MAX)
    }
}

/// The default `model.currency`.
pub const DEFAULT_CURRENCY: &str = "USD";

/// The highest price a million tokens may have: past it, a price is a mistake (a price per
/// token written where one per million belongs).
const MOST_PER_MILLION: f64 = 1_000_000.0;

const PRICE_KEYS: [&str; 2] = ["input", "output"];

/// `model.prices`: a table of model names, each `{ input = 2.5, output = 10 }` in
/// `model.currency` per million tokens.
pub(crate) fn read_prices(
    section: Section<'_>,
    errors: &mut Errors,
) -> BTreeMap<String, ModelPrice> {
    let mut prices = BTreeMap::new();
    for (model, field) in section.entries() {
        let price = field.section("a table like { input = 2.5, output = 10 }", errors);
        if !price.is_table() {
            continue;
        }
        price.refuse_unknown(&PRICE_KEYS, errors);
        let input = per_million(&price.field("input"), errors);
        let output = per_million(&price.field("output"), errors);
        if let (Some(input), Some(output)) = (input, output) {
            prices.insert(
                model.to_string(),
                ModelPrice {
                    input_micros_per_million: input,
                    output_micros_per_million: output,
                },
            );
        }
    }
    prices
}

/// One price per million tokens, in millionths of the currency.
fn per_million(field: &Field<'_>, errors: &mut Errors) -> Option<u64> {
    let expected = "a price per million tokens like 2.5";
    if !field.require(expected, errors) {
        return None;
    }
    let price = field.number(expected, errors)?;
    if !(0.0..=MOST_PER_MILLION).contains(&price) {
        field.fail(
            errors,
            format!("must be a price per million tokens from 0 to 1000000 (got {price})"),
        );
        return None;
    }
    Some((price * 1_000_000.0).round() as u64)
}

/// `model.currency`: an ISO 4217 code like "USD", which costs and budgets in money are in.
pub(crate) fn read_currency(field: &Field<'_>, errors: &mut Errors) -> String {
    let expected = "a currency code like \"USD\"";
    let Some(code) = field.optional_text(expected, errors) else {
        return DEFAULT_CURRENCY.to_string();
    };
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        code.to_string()
    } else {
        field.fail(errors, format!("must be {expected} (got {code:?})"));
        DEFAULT_CURRENCY.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn prices_are_read_per_million_tokens_as_whole_millionths() {
        let model = parse(
            "[model]\ncurrency = \"EUR\"\n[model.prices]\n\"gpt-4.1-mini\" = { input = 0.4, output = 1.6 }\nlocal = { input = 0, output = 0 }",
        )
        .unwrap()
        .model;
        assert_eq!(model.currency, "EUR");
        assert_eq!(
            model.prices["gpt-4.1-mini"],
            ModelPrice {
                input_micros_per_million: 400_000,
                output_micros_per_million: 1_600_000
            }
        );
        assert_eq!(model.prices["local"].cost_nanos(1_000, 1_000), 0);
        let defaults = parse("").unwrap().model;
        assert!(defaults.prices.is_empty());
        assert_eq!(defaults.currency, "USD");
    }

    #[test]
    fn a_cost_is_exact_to_the_billionth() {
        let price = ModelPrice {
            input_micros_per_million: 2_500_000,
            output_micros_per_million: 10_000_000,
        };
        // 1 000 read at 2.50 per million and 100 written at 10 per million: 0.0025 + 0.001.
        assert_eq!(price.cost_nanos(1_000, 100), 3_500_000);
        assert_eq!(price.cost_nanos(1, 0), 2_500);
        assert_eq!(price.cost_nanos(0, 0), 0);
        assert_eq!(price.cost_nanos(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn a_bad_price_or_currency_is_refused_with_what_to_write() {
        assert_only_error(
            "[model.prices]\nm = { input = -1, output = 1 }",
            "model.prices.m.input",
            "must be a price per million tokens from 0 to 1000000 (got -1)",
        );
        assert_only_error(
            "[model.prices]\nm = { input = 1 }",
            "model.prices.m.output",
            "required (a price per million tokens like 2.5)",
        );
        assert_only_error(
            "[model.prices]\nm = { input = \"1\", output = 1 }",
            "model.prices.m.input",
            "must be a price per million tokens like 2.5 (got a string)",
        );
        assert_only_error(
            "[model.prices]\nm = 2.5",
            "model.prices.m",
            "must be a table like { input = 2.5, output = 10 } (got a float)",
        );
        assert_only_error(
            "[model]\ncurrency = \"dollars\"",
            "model.currency",
            "must be a currency code like \"USD\" (got \"dollars\")",
        );
    }
}
