//! Who is calling, by address: the connection's peer, or, when that peer is a trusted proxy
//! (`server.trusted_proxies`), the client the proxies' `Forwarded` (RFC 7239) or
//! `X-Forwarded-For` headers name. The nearest address not itself a trusted proxy wins, so a
//! client cannot pick its address by sending the headers itself: only what trusted hops
//! appended is believed.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use axum::http::header::FORWARDED;
use ipnet::IpNet;

const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's address for a request from `peer` with `headers`.
pub(crate) fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |address: &IpAddr| trusted.iter().any(|network| network.contains(address));
    if !is_trusted(&peer) {
        return peer;
    }
    let chain = forwarded_for(headers).unwrap_or_else(|| x_forwarded_for(headers));
    // From the nearest hop outwards: the first address no trusted proxy has is the client. An
    // entry that is no address (`unknown`, an obfuscated name) ends the walk at the hop that
    // reported it.
    let mut client = peer;
    for entry in chain.iter().rev() {
        match entry {
            Some(address) if is_trusted(address) => client = *address,
            Some(address) => return *address,
            None => return client,
        }
    }
    client
}

/// The `for=` addresses of every `Forwarded` element, in order; none when no header is there.
fn forwarded_for(headers: &HeaderMap) -> Option<Vec<Option<IpAddr>>> {
    let mut chain = Vec::new();
    let mut present = false;
    for value in headers.get_all(FORWARDED) {
        present = true;
        let Ok(value) = value.to_str() else {
            chain.push(None);
            continue;
        };
        for element in value.split(',') {
            let node = element.split(';').find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                name.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| value.trim())
            });
            if let Some(node) = node {
                chain.push(node_address(node.trim_matches('"')));
            }
        }
    }
    present.then_some(chain)
}

/// The addresses of every `X-Forwarded-For` entry, in order.
fn x_forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all(X_FORWARDED_FOR)
        .iter()
        .flat_map(|value| {
            value
                .to_str()
                .map(|text| {
                    text.split(',')
                        .map(|entry| node_address(entry.trim()))
                        .collect()
                })
                .unwrap_or_else(|_| vec![None])
        })
        .collect()
}

/// An address, with or without a port (`192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]:4711`,
/// `2001:db8::1`); none for anything else.
fn node_address(node: &str) -> Option<IpAddr> {
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
        .or_else(|| {
            node.strip_prefix('[')
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|inner| inner.parse().ok())
        })
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn trusted() -> Vec<IpNet> {
        vec![
            "10.0.0.0/8".parse().unwrap(),
            "2001:db8:1::/48".parse().unwrap(),
        ]
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let said = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=203.0.113.9"),
        ]);
        assert_eq!(
            client_address(ip("198.51.100.4"), &said, &trusted()),
            ip("198.51.100.4")
        );
        assert_eq!(client_address(ip("10.0.0.2"), &said, &[]), ip("10.0.0.2"));
    }

    #[test]
    fn behind_trusted_proxies_the_nearest_untrusted_address_is_the_client() {
        // The client prepended a forged address; the ingress appended the real one.
        let chain = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &chain, &trusted()),
            ip("203.0.113.9")
        );
        // Split over two header lines, in order.
        let lines = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &lines, &trusted()),
            ip("203.0.113.9")
        );
        // Only trusted hops: the farthest of them.
        let inside = headers(&[("x-forwarded-for", "10.9.9.9, 10.1.1.1")]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &inside, &trusted()),
            ip("10.9.9.9")
        );
        // No header: the proxy itself.
        assert_eq!(
            client_address(ip("10.0.0.2"), &HeaderMap::new(), &trusted()),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn forwarded_is_read_before_x_forwarded_for_with_ports_quotes_and_ipv6() {
        let both = headers(&[
            (
                "forwarded",
                r#"for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711""#,
            ),
            ("x-forwarded-for", "198.51.100.1"),
        ]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &both, &trusted()),
            ip("2001:db8:cafe::17")
        );
        let ported = headers(&[("forwarded", "for=192.0.2.60:8080, for=10.3.3.3")]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &ported, &trusted()),
            ip("192.0.2.60")
        );
    }

    #[test]
    fn an_entry_that_is_no_address_stops_at_the_hop_that_reported_it() {
        let unknown = headers(&[("forwarded", "for=unknown, for=10.4.4.4")]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &unknown, &trusted()),
            ip("10.4.4.4")
        );
        let hidden = headers(&[("x-forwarded-for", "_hidden")]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &hidden, &trusted()),
            ip("10.0.0.2")
        );
    }
}
