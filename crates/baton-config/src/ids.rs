//! The id patterns, checked by hand (no regex engine for two character classes).

use crate::error::Errors;
use crate::walk::Field;

/// This agent's own id: it names the state directory and the default task queue.
pub(crate) const AGENT_ID_PATTERN: &str = "^[a-z0-9][a-z0-9-]{0,62}$";

/// A remote agent's id: it becomes part of workflow ids and roster lines.
pub(crate) const REMOTE_AGENT_ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$";

pub(crate) fn is_agent_id(text: &str) -> bool {
    matches_id(
        text,
        |b| b.is_ascii_lowercase() || b.is_ascii_digit(),
        |b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-',
    )
}

pub(crate) fn is_remote_agent_id(text: &str) -> bool {
    matches_id(
        text,
        |b| b.is_ascii_alphanumeric(),
        |b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'),
    )
}

/// A required id that must match [`REMOTE_AGENT_ID_PATTERN`]: a remote agent's (`agents[].id`)
/// or an MCP server's (`mcp[].id`). `expected` describes it, e.g. `a string like "ledger"`.
pub(crate) fn required_remote_agent_id<'a>(
    field: &Field<'a>,
    expected: &str,
    errors: &mut Errors,
) -> Option<&'a str> {
    let id = field.required_text(expected, errors)?;
    if !is_remote_agent_id(id) {
        field.fail(
            errors,
            format!(
                "must match {REMOTE_AGENT_ID_PATTERN}: letters, digits, '.', '_' and '-', \
                 starting with a letter or digit, at most 63 characters (got {id:?})"
            ),
        );
        return None;
    }
    Some(id)
}

/// `^[first][rest]{0,62}$`
fn matches_id(text: &str, first: impl Fn(u8) -> bool, rest: impl Fn(u8) -> bool) -> bool {
    match text.as_bytes() {
        [head, tail @ ..] => tail.len() <= 62 && first(*head) && tail.iter().all(|&b| rest(b)),
        [] => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids() {
        let longest = format!("a{}", "-".repeat(62));
        for good in ["baton", "a", "0", "front-desk", "agent-2", longest.as_str()] {
            assert!(is_agent_id(good), "{good}");
        }
        let too_long = format!("a{}", "b".repeat(63));
        for bad in [
            "",
            "-a",
            "Baton",
            "front_desk",
            "a.b",
            "a b",
            "é",
            too_long.as_str(),
        ] {
            assert!(!is_agent_id(bad), "{bad}");
        }
    }

    #[test]
    fn remote_agent_ids() {
        let longest = format!("A{}", "._-".repeat(20) + "zz");
        for good in ["ledger", "Ledger.v2", "a_b-c", "9", longest.as_str()] {
            assert!(is_remote_agent_id(good), "{good}");
        }
        let too_long = format!("a{}", "b".repeat(63));
        for bad in [
            "",
            ".ledger",
            "_a",
            "-a",
            "a b",
            "a/b",
            "a:b",
            "ü",
            too_long.as_str(),
        ] {
            assert!(!is_remote_agent_id(bad), "{bad}");
        }
    }
}
