//! Which addresses Baton may be asked to call. A stranger can hand Baton a URL (a webhook for
//! its pushes), so a URL that reaches into Baton's own network (loopback, private ranges, cloud
//! metadata, link-local) is refused unless the operator allows it, in every spelling: a
//! domain that means this host, and every IPv6 form that carries an IPv4 address.
//!
//! Pure: the caller resolves names and checks each address it would connect to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Domains that name this host whatever DNS says.
const LOCAL_DOMAINS: [&str; 4] = [
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
];

/// Whether `host` names this host or its private network: a local domain, or an address in a
/// range Baton never calls on a stranger's behalf. A domain that is not local is not judged here:
/// the caller checks the addresses it resolves to.
pub fn is_internal_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(domain) => is_local_domain(domain),
        Host::Ipv4(ip) => is_internal_ip(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => is_internal_ip(IpAddr::V6(*ip)),
    }
}

/// `localhost` and its kin, any case, with or without the final dot, and every name under
/// `.localhost`.
pub fn is_local_domain(domain: &str) -> bool {
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    LOCAL_DOMAINS.contains(&domain.as_str()) || domain.ends_with(".localhost")
}

/// Whether `ip` is loopback, private, link-local (cloud metadata), shared (CGNAT), reserved,
/// multicast or unspecified; an IPv6 address also when the IPv4 address it embeds (mapped,
/// compatible, NAT64, 6to4) is.
pub fn is_internal_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    if ip.is_loopback() || ip.is_unspecified() || ip.is_multicast() {
        return true;
    }
    let unique_local = (segments[0] & 0xfe00) == 0xfc00;
    let link_local = (segments[0] & 0xffc0) == 0xfe80;
    let site_local = (segments[0] & 0xffc0) == 0xfec0;
    if unique_local || link_local || site_local {
        return true;
    }
    embedded_v4(ip).is_some_and(is_internal_v4)
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
/// (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`, and the
/// local-use `64:ff9b:1::/48`), 6to4 (`2002:aabb:ccdd::`) and Teredo (`2001:0::`, whose client
/// address is stored inverted).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return Some(mapped);
    }
    let translated = s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0;
    if s[..6] == [0; 6] || translated {
        return Some(low(s[6], s[7]));
    }
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
    let nat64_local = s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1;
    if nat64 || nat64_local {
        return Some(low(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(low(s[1], s[2]));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(low(!s[6], !s[7]));
    }
    None
}

/// Whether `url` is this agent's own push receiver for one stand-in,
/// `<base>/a2a/push/<stand-in id>`: same scheme, host and port as `base`, and a path of exactly
/// one segment under the receiver's. `url` is compared as parsed, so `..` and the like cannot
/// walk out of it.
pub fn is_own_push_receiver(url: &Url, base: &Url) -> bool {
    let same_origin = url.scheme() == base.scheme()
        && url.host() == base.host()
        && url.port_or_known_default() == base.port_or_known_default();
    let prefix = format!("{}/a2a/push/", base.path().trim_end_matches('/'));
    let rest = url.path().strip_prefix(&prefix);
    same_origin
        && url.query().is_none()
        && url.fragment().is_none()
        && rest.is_some_and(|segment| !segment.is_empty() && !segment.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_of(url: &str) -> bool {
        let url = Url::parse(url).unwrap();
        is_internal_host(&url.host().unwrap())
    }

    #[test]
    fn every_spelling_of_this_host_and_its_network_is_internal() {
        for url in [
            "http://localhost/",
            "http://LOCALHOST./",
            "http://localhost.localdomain/",
            "http://api.localhost/",
            "http://api.localhost./",
            "http://ip6-localhost/",
            "http://127.0.0.1/",
            "http://127.1.2.3/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0.0.0.0/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/",
            "http://100.64.0.1/",
            "http://192.0.0.8/",
            "http://198.18.0.1/",
            "http://224.0.0.1/",
            "http://240.0.0.1/",
            "http://255.255.255.255/",
            "http://[::1]/",
            "http://[::]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[fec0::1]/",
            "http://[ff02::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[::ffff:0:127.0.0.1]/",
            "http://[::ffff:0:a9fe:a9fe]/",
            "http://[64:ff9b:1::7f00:1]/",
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:7f00:1::]/",
            "http://[2002:a9fe:a9fe::1]/",
        ] {
            assert!(host_of(url), "{url}");
        }
    }

    #[test]
    fn public_hosts_are_not() {
        for url in [
            "https://hooks.example.com/",
            "https://localhost.example.com/",
            "http://203.0.113.7/",
            "http://8.8.8.8/",
            "http://[2001:db8::1]/",
            "http://[2606:4700::1111]/",
            "http://[::ffff:8.8.8.8]/",
            "http://[::ffff:0:8.8.8.8]/",
            "http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/",
            "http://[64:ff9b::808:808]/",
            "http://[2002:808:808::]/",
        ] {
            assert!(!host_of(url), "{url}");
        }
    }

    #[test]
    fn only_one_stand_in_s_path_under_the_own_receiver_is_the_own_receiver() {
        let base = Url::parse("http://127.0.0.1:8080/agents/desk").unwrap();
        for own in [
            "http://127.0.0.1:8080/agents/desk/a2a/push/t-1.1",
            "http://127.0.0.1:8080/agents/desk/a2a/push/t-1.1%2Fx",
        ] {
            assert!(
                is_own_push_receiver(&Url::parse(own).unwrap(), &base),
                "{own}"
            );
        }
        for other in [
            "http://127.0.0.1:8080/agents/desk/a2a/push/x/../../../",
            "http://127.0.0.1:8080/agents/desk/a2a/push/",
            "http://127.0.0.1:8080/agents/desk/a2a/push/a/b",
            "http://127.0.0.1:8080/agents/desk/a2a/push/t?x=1",
            "http://127.0.0.1:8081/agents/desk/a2a/push/t",
            "https://127.0.0.1:8080/agents/desk/a2a/push/t",
            "http://localhost:8080/agents/desk/a2a/push/t",
            "http://127.0.0.1:8080/agents/deskx/a2a/push/t",
            "http://127.0.0.1:8080/a2a/push/t",
        ] {
            assert!(
                !is_own_push_receiver(&Url::parse(other).unwrap(), &base),
                "{other}"
            );
        }
        let root = Url::parse("https://desk.example.com").unwrap();
        let own = Url::parse("https://desk.example.com:443/a2a/push/t-9").unwrap();
        assert!(is_own_push_receiver(&own, &root));
    }
}
