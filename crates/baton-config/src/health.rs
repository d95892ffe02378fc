//! `[health]`: the probes' endpoint.

use std::net::SocketAddr;

use crate::error::Errors;
use crate::server::read_bind_section;
use crate::walk::Field;

/// `[health]`: where the process answers `/livez` and `/readyz` for probes (the gateway answers
/// them on `server.bind` too).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthSettings {
    /// Where the probes listen. None, the default, serves them only on the gateway.
    pub bind: Option<SocketAddr>,
}

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> HealthSettings {
    HealthSettings {
        bind: read_bind_section(field, "a table like [health]", "8081", errors),
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::test_support::*;

    #[test]
    fn no_probe_listener_by_default() {
        assert_eq!(parse("").unwrap().health.bind, None);
    }

    #[test]
    fn bind_is_read_and_checked() {
        let health = parse("[health]\nbind = \"0.0.0.0:8081\"").unwrap().health;
        assert_eq!(
            health.bind,
            Some("0.0.0.0:8081".parse::<SocketAddr>().unwrap())
        );
        assert_only_error(
            "[health]\nbind = 8081",
            "health.bind",
            "must be a string like \"127.0.0.1:8081\" (got an integer)",
        );
    }
}
