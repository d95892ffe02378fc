//! The checks every URL in the settings goes through.

use url::{Host, Url};

use crate::error::Errors;
use crate::walk::Field;

/// An absolute http or https URL without query or fragment: every URL in the settings is
/// a base that paths get appended to.
pub(crate) fn base_url(field: &Field<'_>, example: &str, errors: &mut Errors) -> Option<Url> {
    let text = field.string(&format!("a string like {example:?}"), errors)?;
    let url = match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        _ => {
            field.fail(
                errors,
                format!("must be an absolute http or https URL like {example:?} (got {text:?})"),
            );
            return None;
        }
    };
    if url.query().is_some() || url.fragment().is_some() {
        field.fail(
            errors,
            format!("must not have a query or fragment (got {text:?})"),
        );
        return None;
    }
    Some(url)
}

/// `localhost`, 127.0.0.0/8 or ::1.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://localhost:8000/v1",
            "http://LOCALHOST/",
            "http://127.0.0.1:1234",
            "http://127.8.9.10",
            "http://[::1]:8000",
        ] {
            assert!(is_loopback(&Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "http://10.0.0.1",
            "http://128.0.0.1",
            "http://[::2]",
            "http://localhost.example.com",
            "http://mylocalhost",
        ] {
            assert!(!is_loopback(&Url::parse(url).unwrap()), "{url}");
        }
    }
}
