//! Durations as the settings file writes them (`"5s"`, `"1m30s"`).

use std::time::Duration;

/// Units from largest to smallest, with their length in milliseconds.
const UNITS: [(&str, u64); 4] = [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)];

/// Parses a duration written as whole numbers with units, largest unit first:
/// `"5s"`, `"250ms"`, `"1m"`, `"2h"`, `"1m30s"`. The error says what form is allowed.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let not_a_duration = || {
        format!(
            "{text:?} is not a duration: use whole numbers with the units h, m, s or ms, \
             largest first, such as \"5s\", \"250ms\" or \"1m30s\""
        )
    };
    if text.is_empty() {
        return Err(not_a_duration());
    }
    let mut rest = text;
    let mut total_ms: u64 = 0;
    let mut smallest_unit_so_far = None;
    while !rest.is_empty() {
        let (digits, after_digits) =
            rest.split_at(rest.bytes().take_while(u8::is_ascii_digit).count());
        let (unit, after_unit) = after_digits.split_at(
            after_digits
                .bytes()
                .take_while(u8::is_ascii_alphabetic)
                .count(),
        );
        let Some(unit_index) = UNITS.iter().position(|(name, _)| *name == unit) else {
            return Err(not_a_duration());
        };
        if digits.is_empty() || smallest_unit_so_far.is_some_and(|previous| unit_index <= previous)
        {
            return Err(not_a_duration());
        }
        smallest_unit_so_far = Some(unit_index);
        total_ms = digits
            .parse::<u64>()
            .ok()
            .and_then(|amount| amount.checked_mul(UNITS[unit_index].1))
            .and_then(|ms| total_ms.checked_add(ms))
            .ok_or_else(|| format!("{text:?} is too long a duration"))?;
        rest = after_unit;
    }
    Ok(Duration::from_millis(total_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_each_unit_and_combinations() {
        let cases = [
            ("250ms", Duration::from_millis(250)),
            ("5s", Duration::from_secs(5)),
            ("1m", Duration::from_secs(60)),
            ("2h", Duration::from_secs(7_200)),
            ("1m30s", Duration::from_secs(90)),
            ("1h2m3s4ms", Duration::from_millis(3_723_004)),
            ("0s", Duration::ZERO),
            ("007s", Duration::from_secs(7)),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn refuses_anything_else_and_says_what_is_allowed() {
        for text in [
            "", "5", "s", "1.5s", "-5s", "+5s", "5 s", " 5s", "5s ", "5S", "5sec", "5d", "PT5S",
            "30s1m", "1s1s", "1m30", "5ms5s",
        ] {
            let error = parse_duration(text).expect_err(text);
            assert_eq!(
                error,
                format!(
                    "{text:?} is not a duration: use whole numbers with the units h, m, s or ms, \
                     largest first, such as \"5s\", \"250ms\" or \"1m30s\""
                )
            );
        }
    }

    #[test]
    fn refuses_a_duration_too_long_to_hold() {
        for text in [
            "99999999999999999999s",
            "9999999999999999h",
            "5124095576030h26m",
        ] {
            assert_eq!(
                parse_duration(text),
                Err(format!("{text:?} is too long a duration"))
            );
        }
    }
}
