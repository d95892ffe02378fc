//! The four push-config calls for Baton's own tasks. Configs live with the task (in its
//! workflow); the workflow pushes each change with the `deliver_push` activity. A webhook URL
//! must be http or https, and may not point at a loopback, private or link-local address unless
//! `server.allow_private_push_urls` says so: a caller must not make Baton call into its network.

use std::net::IpAddr;

use a2a::{A2AError, AuthenticationInfo, TaskPushNotificationConfig};
use baton_proto::{PushAuthentication, PushConfig};
use url::{Host, Url};

/// Checks a webhook URL a caller wants Baton to push to.
pub fn check_url(url: &str, allow_private: bool) -> Result<(), A2AError> {
    let parsed = Url::parse(url)
        .map_err(|e| A2AError::invalid_params(format!("the push URL {url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(A2AError::invalid_params(format!(
            "the push URL must be http or https (got {:?})",
            parsed.scheme()
        )));
    }
    if allow_private {
        return Ok(());
    }
    let private = match parsed.host() {
        None => true,
        Some(Host::Domain(domain)) => {
            let domain = domain.to_ascii_lowercase();
            domain == "localhost" || domain.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => is_private(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => is_private(IpAddr::V6(ip)),
    };
    if private {
        return Err(A2AError::invalid_params(format!(
            "the push URL {url:?} points at a loopback or private address; set server.allow_private_push_urls = true to allow it"
        )));
    }
    Ok(())
}

fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.octets()[0] == 100 && (64..128).contains(&v4.octets()[1])
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

pub fn from_a2a(config: &TaskPushNotificationConfig, id: String) -> PushConfig {
    PushConfig {
        id,
        url: config.url.clone(),
        token: config.token.clone().filter(|t| !t.is_empty()),
        authentication: config.authentication.as_ref().map(|a| PushAuthentication {
            scheme: a.scheme.clone(),
            credentials: a.credentials.clone(),
        }),
    }
}

pub fn to_a2a(task_id: &str, config: &PushConfig) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        url: config.url.clone(),
        id: Some(config.id.clone()),
        task_id: task_id.to_string(),
        token: config.token.clone(),
        authentication: config.authentication.as_ref().map(|a| AuthenticationInfo {
            scheme: a.scheme.clone(),
            credentials: a.credentials.clone(),
        }),
        tenant: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_http_and_https_urls_are_accepted() {
        assert!(check_url("https://hooks.example.com/a2a", false).is_ok());
        assert!(check_url("http://203.0.113.7:8080/hook", false).is_ok());
    }

    #[test]
    fn other_schemes_are_refused() {
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/x",
            "gopher://x",
            "not a url",
        ] {
            assert!(check_url(url, true).is_err(), "{url}");
        }
    }

    #[test]
    fn loopback_private_and_link_local_addresses_are_refused_unless_allowed() {
        for url in [
            "http://127.0.0.1:9000/hook",
            "http://localhost/hook",
            "http://api.localhost/hook",
            "http://10.1.2.3/hook",
            "http://172.16.0.1/hook",
            "http://192.168.1.1/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1/hook",
            "http://0.0.0.0/hook",
            "http://[::1]/hook",
            "http://[fd00::1]/hook",
            "http://[fe80::1]/hook",
            "http://[::ffff:127.0.0.1]/hook",
        ] {
            let refused = check_url(url, false).unwrap_err();
            assert!(
                refused.message.contains("allow_private_push_urls"),
                "{url}: {refused:?}"
            );
            assert!(check_url(url, true).is_ok(), "{url}");
        }
    }
}
