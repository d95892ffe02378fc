//! `[metrics]`: the Prometheus endpoint.

use std::net::SocketAddr;

use crate::error::Errors;
use crate::server::read_bind_section;
use crate::walk::Field;

/// `[metrics]`: the Prometheus endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricsSettings {
    /// Where `/metrics` listens. None, the default, serves no metrics.
    pub bind: Option<SocketAddr>,
}

pub(crate) fn read(field: Field<'_>, errors: &mut Errors) -> MetricsSettings {
    MetricsSettings {
        bind: read_bind_section(field, "a table like [metrics]", "9464", errors),
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::test_support::*;

    #[test]
    fn no_endpoint_by_default() {
        assert_eq!(parse("").unwrap().metrics.bind, None);
        assert_eq!(parse("[metrics]").unwrap().metrics.bind, None);
    }

    #[test]
    fn bind_is_read() {
        let metrics = parse("[metrics]\nbind = \"0.0.0.0:9464\"").unwrap().metrics;
        assert_eq!(
            metrics.bind,
            Some("0.0.0.0:9464".parse::<SocketAddr>().unwrap())
        );
    }

    #[test]
    fn bind_must_be_a_socket_address() {
        assert_only_error(
            "[metrics]\nbind = 9464",
            "metrics.bind",
            "must be a string like \"127.0.0.1:9464\" (got an integer)",
        );
        assert_only_error(
            "[metrics]\nbind = \"localhost:9464\"",
            "metrics.bind",
            "must be an IP address and port like \"127.0.0.1:9464\" or \"[::]:9464\" (got \"localhost:9464\")",
        );
    }

    #[test]
    fn metrics_must_be_a_table_without_unknown_keys() {
        assert_only_error(
            "metrics = true",
            "metrics",
            "must be a table like [metrics] (got a boolean)",
        );
        assert_only_error(
            "[metrics]\npath = \"/m\"",
            "metrics.path",
            "unknown setting (allowed: bind)",
        );
    }
}
