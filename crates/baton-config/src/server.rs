//! `[server]`: the A2A gateway's address, limits and callers.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use ipnet::IpNet;
use url::Url;

use crate::auth::{self, AuthSettings};
use crate::error::Errors;
use crate::urls::base_url;
use crate::walk::{Field, UniqueIds};

/// `[server]`: the A2A gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// Where the gateway listens; default `127.0.0.1:8080`.
    pub bind: SocketAddr,
    /// The public URL, for the agent card and push callbacks.
    pub base_url: Option<Url>,
    /// Participant ids trusted to brief a new task fully on its first message.
    pub delegators: Vec<String>,
    /// The largest request body the gateway reads; default 1 MiB.
    pub max_request_bytes: usize,
    /// Requests per minute from one peer address; 0 turns the limit off. Default 600.
    pub rate_limit_per_minute: u32,
    /// The proxies (addresses or CIDR ranges) whose `Forwarded` and `X-Forwarded-For` headers
    /// name the client: from any other peer those headers are ignored. Empty by default.
    pub trusted_proxies: Vec<IpNet>,
    /// Whether push-notification webhooks may point at loopback or private addresses. Off by
    /// default: a caller must not make Baton call into its own network.
    pub allow_private_push_urls: bool,
    /// The longest one call from the gateway to Temporal may take before the caller gets a
    /// retryable error; default 10 s.
    pub temporal_timeout: Duration,
    /// The longest a blocking SendMessage waits for its task to settle before it answers with
    /// the task as it stands; default 60 s.
    pub blocking_timeout: Duration,
    /// Connections open at once; more wait until one closes. Default 1024.
    pub max_connections: usize,
    /// How long a new connection may take to send its first request's headers; default 10 s.
    pub header_timeout: Duration,
    /// How long a stopping process lets the requests under way finish (streams are ended at
    /// once, so their clients reconnect elsewhere) before it cuts them; default 5 s.
    pub drain_timeout: Duration,
    /// A2A requests worked on at once; more are refused as unavailable, to retry. Default 256.
    pub max_concurrent_requests: usize,
    /// Parts one message may carry; more are refused before the message is parsed. Default 64.
    pub max_message_parts: usize,
    /// `[server.auth]`: how a caller is known.
    pub auth: AuthSettings,
}

impl ServerSettings {
    /// Where other agents reach this one: `base_url`, else `http://<bind>`.
    pub fn public_url(&self) -> Url {
        self.base_url.clone().unwrap_or_else(|| {
            Url::parse(&format!("http://{}", self.bind))
                .expect("a socket address always makes a valid http URL")
        })
    }
}

const KEYS: [&str; 15] = [
    "bind",
    "base_url",
    "delegators",
    "max_request_bytes",
    "rate_limit_per_minute",
    "trusted_proxies",
    "allow_private_push_urls",
    "temporal_timeout",
    "blocking_timeout",
    "max_connections",
    "header_timeout",
    "drain_timeout",
    "max_concurrent_requests",
    "max_message_parts",
    "auth",
];
const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 256;
const DEFAULT_MAX_MESSAGE_PARTS: usize = 64;
const DEFAULT_MAX_CONNECTIONS: usize = 1024;
const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_TEMPORAL_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_BLOCKING_TIMEOUT: Duration = Duration::from_secs(60);
const DEFAULT_MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;
const DEFAULT_RATE_LIMIT_PER_MINUTE: u32 = 600;
const DEFAULT_BIND: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8080);

pub(crate) fn read(
    field: Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> ServerSettings {
    let section = field.section("a table like [server]", errors);
    section.refuse_unknown(&KEYS, errors);
    ServerSettings {
        bind: read_bind(&section.field("bind"), "8080", errors).unwrap_or(DEFAULT_BIND),
        base_url: base_url(
            &section.field("base_url"),
            "https://baton.example.com",
            errors,
        ),
        delegators: read_delegators(&section.field("delegators"), errors),
        trusted_proxies: read_trusted_proxies(&section.field("trusted_proxies"), errors),
        max_request_bytes: read_max_request_bytes(&section.field("max_request_bytes"), errors)
            .unwrap_or(DEFAULT_MAX_REQUEST_BYTES),
        rate_limit_per_minute: read_rate_limit(&section.field("rate_limit_per_minute"), errors)
            .unwrap_or(DEFAULT_RATE_LIMIT_PER_MINUTE),
        allow_private_push_urls: section
            .field("allow_private_push_urls")
            .boolean(errors)
            .unwrap_or(false),
        temporal_timeout: section
            .field("temporal_timeout")
            .duration_up_to(Some((Duration::from_secs(300), "5 minutes")), errors)
            .unwrap_or(DEFAULT_TEMPORAL_TIMEOUT),
        blocking_timeout: section
            .field("blocking_timeout")
            .duration_up_to(Some((Duration::from_secs(3600), "1 hour")), errors)
            .unwrap_or(DEFAULT_BLOCKING_TIMEOUT),
        max_connections: read_max_connections(&section.field("max_connections"), errors)
            .unwrap_or(DEFAULT_MAX_CONNECTIONS),
        header_timeout: section
            .field("header_timeout")
            .duration_up_to(Some((Duration::from_secs(300), "5 minutes")), errors)
            .unwrap_or(DEFAULT_HEADER_TIMEOUT),
        drain_timeout: section
            .field("drain_timeout")
            .duration_up_to(Some((Duration::from_secs(300), "5 minutes")), errors)
            .unwrap_or(DEFAULT_DRAIN_TIMEOUT),
        max_concurrent_requests: read_count(
            &section.field("max_concurrent_requests"),
            "requests like 256",
            (1, 65_536),
            errors,
        )
        .unwrap_or(DEFAULT_MAX_CONCURRENT_REQUESTS),
        max_message_parts: read_count(
            &section.field("max_message_parts"),
            "parts like 64",
            (1, 10_000),
            errors,
        )
        .unwrap_or(DEFAULT_MAX_MESSAGE_PARTS),
        auth: auth::read(section.field("auth"), env, errors),
    }
}

fn read_max_connections(field: &Field<'_>, errors: &mut Errors) -> Option<usize> {
    read_count(field, "connections like 1024", (1, 65_536), errors)
}

/// A whole number within `bounds`; `what` names the unit with an example.
fn read_count(
    field: &Field<'_>,
    what: &str,
    bounds: (i64, i64),
    errors: &mut Errors,
) -> Option<usize> {
    field.count_between(&format!("an integer number of {what}"), bounds, "", errors)
}

fn read_max_request_bytes(field: &Field<'_>, errors: &mut Errors) -> Option<usize> {
    field.count_between(
        "an integer number of bytes like 1048576",
        (1024, 64 * 1024 * 1024),
        " bytes",
        errors,
    )
}

fn read_rate_limit(field: &Field<'_>, errors: &mut Errors) -> Option<u32> {
    let value = field.integer("an integer like 600 (0 turns the limit off)", errors)?;
    match u32::try_from(value) {
        Ok(limit) => Some(limit),
        Err(_) => {
            field.fail(
                errors,
                format!(
                    "must be 0 (no limit) or a positive number of requests a minute (got {value})"
                ),
            );
            None
        }
    }
}

/// An address to listen on; `port` is the port the messages give as an example.
pub(crate) fn read_bind(field: &Field<'_>, port: &str, errors: &mut Errors) -> Option<SocketAddr> {
    let text = field.string(&format!("a string like \"127.0.0.1:{port}\""), errors)?;
    let bind = text.parse().ok();
    if bind.is_none() {
        field.fail(
            errors,
            format!(
                "must be an IP address and port like \"127.0.0.1:{port}\" or \"[::]:{port}\" (got {text:?})"
            ),
        );
    }
    bind
}

/// A section whose one setting is `bind` (`[metrics]`, `[health]`): its address, if set.
/// `expected` describes the section; `port` is the port the messages give as an example.
pub(crate) fn read_bind_section(
    field: Field<'_>,
    expected: &str,
    port: &str,
    errors: &mut Errors,
) -> Option<SocketAddr> {
    let section = field.section(expected, errors);
    section.refuse_unknown(&["bind"], errors);
    read_bind(&section.field("bind"), port, errors)
}

/// `server.trusted_proxies`: addresses (`10.0.0.7`, a network of one) or CIDR ranges
/// (`10.0.0.0/8`).
fn read_trusted_proxies(field: &Field<'_>, errors: &mut Errors) -> Vec<IpNet> {
    let expected = "an address or a CIDR range like \"10.0.0.0/8\"";
    field
        .items(
            "an array of addresses or CIDR ranges like [\"10.0.0.0/8\"]",
            errors,
        )
        .iter()
        .filter_map(|item| {
            let text = item.required_text(expected, errors)?;
            let parsed = text
                .parse::<IpNet>()
                .or_else(|_| text.parse::<IpAddr>().map(IpNet::from));
            match parsed {
                Ok(network) => Some(network.trunc()),
                Err(_) => {
                    item.fail(errors, format!("must be {expected} (got {text:?})"));
                    None
                }
            }
        })
        .collect()
}

fn read_delegators(field: &Field<'_>, errors: &mut Errors) -> Vec<String> {
    let mut ids = UniqueIds::default();
    let mut delegators = Vec::new();
    for item in field.items("an array of strings like [\"front-desk\"]", errors) {
        if let Some(id) = item.required_text("a string like \"front-desk\"", errors) {
            ids.check(id, item.path(), &item, errors);
            delegators.push(id.to_owned());
        }
    }
    delegators
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::Duration;

    use crate::test_support::*;

    #[test]
    fn defaults() {
        let server = parse("").unwrap().server;
        assert_eq!(server.bind, "127.0.0.1:8080".parse::<SocketAddr>().unwrap());
        assert_eq!(server.base_url, None);
        assert!(server.delegators.is_empty());
        assert_eq!(server.max_request_bytes, 8 * 1024 * 1024);
        assert_eq!(server.rate_limit_per_minute, 600);
        assert!(!server.allow_private_push_urls);
        assert_eq!(server.temporal_timeout, Duration::from_secs(10));
        assert_eq!(server.blocking_timeout, Duration::from_secs(60));
        assert_eq!(server.max_connections, 1024);
        assert_eq!(server.header_timeout, Duration::from_secs(10));
        assert_eq!(server.drain_timeout, Duration::from_secs(5));
        assert_eq!(server.max_concurrent_requests, 256);
        assert_eq!(server.max_message_parts, 64);
    }

    #[test]
    fn the_work_limits_are_read_and_bounded() {
        let server = parse("[server]\nmax_concurrent_requests = 8\nmax_message_parts = 3")
            .unwrap()
            .server;
        assert_eq!(
            (server.max_concurrent_requests, server.max_message_parts),
            (8, 3)
        );
        assert_only_error(
            "[server]\nmax_concurrent_requests = 0",
            "server.max_concurrent_requests",
            "must be between 1 and 65536 (got 0)",
        );
        assert_only_error(
            "[server]\nmax_message_parts = 10001",
            "server.max_message_parts",
            "must be between 1 and 10000 (got 10001)",
        );
        assert_only_error(
            "[server]\nmax_message_parts = \"many\"",
            "server.max_message_parts",
            "must be an integer number of parts like 64 (got a string)",
        );
    }

    #[test]
    fn the_connection_limits_are_read_and_bounded() {
        let server = parse("[server]\nmax_connections = 64\nheader_timeout = \"3s\"")
            .unwrap()
            .server;
        assert_eq!(
            (server.max_connections, server.header_timeout),
            (64, Duration::from_secs(3))
        );
        assert_only_error(
            "[server]\nmax_connections = 0",
            "server.max_connections",
            "must be between 1 and 65536 (got 0)",
        );
        assert_only_error(
            "[server]\nheader_timeout = \"1h\"",
            "server.header_timeout",
            "must be at most 5 minutes (got \"1h\")",
        );
    }

    #[test]
    fn the_call_bounds_are_read_and_bounded() {
        let server = parse("[server]\ntemporal_timeout = \"3s\"\nblocking_timeout = \"15m\"")
            .unwrap()
            .server;
        assert_eq!(server.temporal_timeout, Duration::from_secs(3));
        assert_eq!(server.blocking_timeout, Duration::from_secs(900));
        assert_only_error(
            "[server]\ntemporal_timeout = \"10m\"",
            "server.temporal_timeout",
            "must be at most 5 minutes (got \"10m\")",
        );
        assert_only_error(
            "[server]\nblocking_timeout = \"0s\"",
            "server.blocking_timeout",
            "must be at least 1 second (got \"0s\")",
        );
    }

    #[test]
    fn the_request_limits_are_read_and_bounded() {
        let server = parse("[server]\nmax_request_bytes = 2048\nrate_limit_per_minute = 0")
            .unwrap()
            .server;
        assert_eq!(
            (server.max_request_bytes, server.rate_limit_per_minute),
            (2048, 0)
        );
        assert_only_error(
            "[server]\nmax_request_bytes = 10",
            "server.max_request_bytes",
            "must be between 1024 and 67108864 bytes (got 10)",
        );
        assert_only_error(
            "[server]\nrate_limit_per_minute = -1",
            "server.rate_limit_per_minute",
            "must be 0 (no limit) or a positive number of requests a minute (got -1)",
        );
    }

    #[test]
    fn every_field_is_read() {
        let server = parse(
            "[server]\nbind = \"[::]:9000\"\nbase_url = \"https://desk.example.com/a2a\"\n\
             delegators = [\"front-desk\", \"ops\"]\n\
             trusted_proxies = [\"10.0.0.0/8\", \"192.168.1.7\", \"fd00::1/64\"]",
        )
        .unwrap()
        .server;
        let trusted: Vec<String> = server
            .trusted_proxies
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(trusted, ["10.0.0.0/8", "192.168.1.7/32", "fd00::/64"]);
        assert_eq!(server.bind, "[::]:9000".parse::<SocketAddr>().unwrap());
        assert_eq!(
            server.base_url.unwrap().as_str(),
            "https://desk.example.com/a2a"
        );
        assert_eq!(server.delegators, ["front-desk", "ops"]);
    }

    #[test]
    fn a_trusted_proxy_that_is_no_address_is_refused() {
        for bad in ["proxy.internal", "10.0.0.0/33", ""] {
            assert_only_error(
                &format!("[server]\ntrusted_proxies = [{bad:?}]"),
                "server.trusted_proxies[0]",
                &if bad.is_empty() {
                    "must not be blank".to_string()
                } else {
                    format!("must be an address or a CIDR range like \"10.0.0.0/8\" (got {bad:?})")
                },
            );
        }
    }

    #[test]
    fn bind_must_be_a_socket_address() {
        assert_only_error(
            "[server]\nbind = 8080",
            "server.bind",
            "must be a string like \"127.0.0.1:8080\" (got an integer)",
        );
        for bad in ["localhost:8080", "127.0.0.1", ":8080", "127.0.0.1:99999"] {
            assert_only_error(
                &format!("[server]\nbind = {bad:?}"),
                "server.bind",
                &format!(
                    "must be an IP address and port like \"127.0.0.1:8080\" or \"[::]:8080\" (got {bad:?})"
                ),
            );
        }
    }

    #[test]
    fn base_url_must_be_absolute_http_or_https_without_query() {
        assert_only_error(
            "[server]\nbase_url = \"desk.example.com\"",
            "server.base_url",
            "must be an absolute http or https URL like \"https://baton.example.com\" (got \"desk.example.com\")",
        );
        assert_only_error(
            "[server]\nbase_url = \"https://desk.example.com/?x=1\"",
            "server.base_url",
            "must not have a query or fragment (got \"https://desk.example.com/?x=1\")",
        );
    }

    #[test]
    fn delegators_are_non_blank_unique_strings() {
        assert_only_error(
            "[server]\ndelegators = \"front-desk\"",
            "server.delegators",
            "must be an array of strings like [\"front-desk\"] (got a string)",
        );
        assert_only_error(
            "[server]\ndelegators = [\"a\", \" \"]",
            "server.delegators[1]",
            "must not be blank",
        );
        assert_only_error(
            "[server]\ndelegators = [\"a\", 2]",
            "server.delegators[1]",
            "must be a string like \"front-desk\" (got an integer)",
        );
        assert_only_error(
            "[server]\ndelegators = [\"a\", \"b\", \"a\"]",
            "server.delegators[2]",
            "duplicate id \"a\" (also server.delegators[0])",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            "[server]\nport = 8080",
            "server.port",
            "unknown setting (allowed: bind, base_url, delegators, max_request_bytes, rate_limit_per_minute, trusted_proxies, allow_private_push_urls, temporal_timeout, blocking_timeout, max_connections, header_timeout, drain_timeout, max_concurrent_requests, max_message_parts, auth)",
        );
    }
}
