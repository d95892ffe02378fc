//! Third-party text on a terminal or in a log line: a card's name, an agent's error message, a
//! path a stranger chose. Shown as is, a newline in it forges a log line and an escape sequence
//! drives the terminal; a huge one floods both.

use crate::turn_bounds::cut;

/// `text` on one line: every control character (newlines, escapes, …) as its `\u{..}` or `\n`
/// escape, so nothing it holds can start a line or command a terminal.
pub fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// [`one_line`], cut at `cap` characters and marked with `…` when cut.
pub fn one_line_capped(text: &str, cap: usize) -> String {
    cut(&one_line(text), cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(one_line("plain é ✓"), "plain é ✓");
        assert_eq!(
            one_line("a\nERROR forged\r\t\u{1b}[31mred\u{7}"),
            "a\\nERROR forged\\r\\t\\u{1b}[31mred\\u{7}"
        );
    }

    #[test]
    fn a_huge_text_is_cut() {
        let shown = one_line_capped(&"n".repeat(500_000), 80);
        assert_eq!(shown.chars().count(), 80);
        assert!(shown.ends_with('…'));
    }
}
