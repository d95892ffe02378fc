//! Failure reasons on their way to a model: a transport error names the URL it failed on
//! (`error sending request for url (http://10.0.3.7:8201/rpc)`), and an agent's URL is
//! configuration the model never sees.

/// What a URL in a failure reason becomes.
pub const ADDRESS_WITHHELD: &str = "(address withheld)";

/// `text` with every URL (`scheme://…`, up to whitespace, a closing bracket or quote, or
/// trailing punctuation) replaced by [`ADDRESS_WITHHELD`].
pub fn withhold_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(separator) = rest.find("://") {
        let scheme_start = rest[..separator]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            .last()
            .map_or(separator, |(at, _)| at);
        let scheme = &rest[scheme_start..separator];
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push_str(&rest[..separator + 3]);
            rest = &rest[separator + 3..];
            continue;
        }
        let after = &rest[separator + 3..];
        let mut end = after
            .find(|c: char| {
                c.is_whitespace() || matches!(c, ')' | ']' | '}' | '>' | '"' | '\'' | '`')
            })
            .unwrap_or(after.len());
        while end > 0 && after[..end].ends_with(['.', ',', ';', ':', '!', '?']) {
            end -= 1;
        }
        out.push_str(&rest[..scheme_start]);
        out.push_str(ADDRESS_WITHHELD);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transport_error_keeps_its_words_and_loses_its_url() {
        assert_eq!(
            withhold_urls(
                "error sending request for url (http://10.0.3.7:8201/rpc?x=1): connection refused"
            ),
            "error sending request for url ((address withheld)): connection refused"
        );
    }

    #[test]
    fn every_scheme_and_every_url_is_withheld() {
        assert_eq!(
            withhold_urls("grpc+tls://a:1, https://user:pw@b.example/c. and wss://d"),
            "(address withheld), (address withheld). and (address withheld)"
        );
    }

    #[test]
    fn text_without_a_url_is_unchanged() {
        for text in ["", "timed out", "a :// b", "1://x", "ratio 3://4"] {
            assert_eq!(withhold_urls(text), text, "{text}");
        }
    }

    #[test]
    fn a_url_in_quotes_or_brackets_ends_at_the_closing_mark() {
        assert_eq!(
            withhold_urls("card at \"https://x/.well-known/agent-card.json\" [http://y]"),
            "card at \"(address withheld)\" [(address withheld)]"
        );
    }
}
