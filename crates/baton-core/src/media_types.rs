//! Media type patterns, as `[content] media_types` lists them: exact (`image/png`), a family
//! (`image/*`), or any (`*/*`).

/// Whether `media_type` (parameters and case ignored) matches one of `patterns`.
pub fn accepts(patterns: &[String], media_type: &str) -> bool {
    let essence = essence(media_type);
    let family = essence.split('/').next().unwrap_or_default();
    patterns.iter().any(|pattern| {
        pattern == "*/*"
            || *pattern == essence
            || pattern
                .strip_suffix("/*")
                .is_some_and(|wanted| wanted == family)
    })
}

/// Whether `text` is a pattern [`accepts`] understands.
pub fn is_pattern(text: &str) -> bool {
    let token = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
    };
    match text.split_once('/') {
        Some(("*", "*")) => true,
        Some((family, "*")) => token(family),
        Some((family, sub)) => token(family) && token(sub),
        None => false,
    }
}

/// The media type without parameters, lower case: `Text/CSV; charset=utf-8` is `text/csv`.
pub fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_match_exactly_by_family_or_any() {
        let patterns = vec!["image/*".to_string(), "text/csv".to_string()];
        for (media_type, taken) in [
            ("image/png", true),
            ("IMAGE/JPEG", true),
            ("text/csv; charset=utf-8", true),
            ("text/plain", false),
            ("application/pdf", false),
            ("imagex/png", false),
            ("", false),
        ] {
            assert_eq!(accepts(&patterns, media_type), taken, "{media_type}");
        }
        assert!(accepts(&["*/*".to_string()], "application/x-anything"));
    }

    #[test]
    fn patterns_are_checked() {
        for good in ["*/*", "image/*", "text/csv", "application/vnd.ms-excel"] {
            assert!(is_pattern(good), "{good}");
        }
        for bad in ["image", "*/png", "image/", "/png", "text/c sv", ""] {
            assert!(!is_pattern(bad), "{bad}");
        }
    }
}
