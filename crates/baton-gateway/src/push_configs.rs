//! The four push-config calls for Baton's own tasks. Configs live with the task (in its
//! workflow); the workflow pushes each change with the `deliver_push` activity. A webhook URL
//! must be http or https, and may not point at a loopback, private or link-local address unless
//! `server.allow_private_push_urls` says so: a caller must not make Baton call into its network.

use crate::config::GatewayConfig;
use a2a::{A2AError, AuthenticationInfo, TaskPushNotificationConfig};
use baton_core::deployment_key::DeploymentKey;
use baton_core::derived_id::derived_id;
use baton_core::network::{is_internal_host, is_own_push_receiver};
use baton_proto::{PushAuthentication, PushConfig};
use url::Url;

/// Checks a webhook URL a caller wants Baton to push to: http or https, and not into this
/// network (every spelling of loopback, private, link-local and the like) unless
/// `allow_private` says so or it is this agent's own push receiver under `public_url`. The
/// delivery checks again the addresses the name resolves to when it pushes.
pub fn check_url(url: &str, public_url: &Url, allow_private: bool) -> Result<(), A2AError> {
    let parsed = Url::parse(url)
        .map_err(|e| A2AError::invalid_params(format!("the push URL {url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(A2AError::invalid_params(format!(
            "the push URL must be http or https (got {:?})",
            parsed.scheme()
        )));
    }
    if allow_private || is_own_push_receiver(&parsed, public_url) {
        return Ok(());
    }
    if parsed.host().is_none_or(|host| is_internal_host(&host)) {
        return Err(A2AError::invalid_params(format!(
            "the push URL {url:?} points at a loopback or private address; set server.allow_private_push_urls = true to allow it"
        )));
    }
    Ok(())
}

/// The config kept with the task: its token and credentials sealed, so that history, the Web UI
/// and anyone who can read them never see the secrets; the push opens them when it sends.
pub fn from_a2a(
    config: &TaskPushNotificationConfig,
    id: String,
    key: &DeploymentKey,
) -> PushConfig {
    PushConfig {
        id,
        url: config.url.clone(),
        token: config
            .token
            .as_deref()
            .filter(|t| !t.is_empty())
            .map(|t| key.seal(t)),
        authentication: config.authentication.as_ref().map(|a| PushAuthentication {
            scheme: a.scheme.clone(),
            credentials: a.credentials.as_deref().map(|c| key.seal(c)),
        }),
    }
}

/// A config as a caller reads it back: never with its token or credentials, which only the
/// webhook needs to see.
pub fn to_a2a(task_id: &str, config: &PushConfig) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        url: config.url.clone(),
        id: Some(config.id.clone()),
        task_id: task_id.to_string(),
        token: None,
        authentication: config.authentication.as_ref().map(|a| AuthenticationInfo {
            scheme: a.scheme.clone(),
            credentials: None,
        }),
        tenant: None,
    }
}

/// A webhook a caller asks for on `task_id`, checked: its URL may not reach into this
/// network unless allowed, and an inline config may not name another task.
pub fn checked(
    config: &GatewayConfig,
    task_id: &str,
    req: &TaskPushNotificationConfig,
) -> Result<PushConfig, A2AError> {
    if !req.task_id.is_empty() && req.task_id != task_id {
        return Err(A2AError::invalid_params(format!(
            "the push config names task {} but the message goes to task {task_id}",
            req.task_id
        )));
    }
    check_url(&req.url, &config.public_url, config.allow_private_push_urls)?;
    let id = req
        .id
        .clone()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| derived_id(&[task_id, &req.url]));
    Ok(from_a2a(req, id, &config.deployment))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(url: &str, allow_private: bool) -> Result<(), A2AError> {
        let own = Url::parse("http://127.0.0.1:8080/desk").unwrap();
        check_url(url, &own, allow_private)
    }

    #[test]
    fn public_http_and_https_urls_are_accepted() {
        assert!(check("https://hooks.example.com/a2a", false).is_ok());
        assert!(check("http://203.0.113.7:8080/hook", false).is_ok());
    }

    #[test]
    fn the_own_receiver_is_accepted_on_its_private_address_and_only_it() {
        assert!(check("http://127.0.0.1:8080/desk/a2a/push/t-1.1", false).is_ok());
        for url in [
            "http://127.0.0.1:8080/desk/a2a/push/x/../../../",
            "http://127.0.0.1:8080/desk/a2a/push/t-1.1/more",
            "http://127.0.0.1:8080/other/a2a/push/t-1.1",
            "http://127.0.0.1:9090/desk/a2a/push/t-1.1",
        ] {
            assert!(check(url, false).is_err(), "{url}");
        }
    }

    #[test]
    fn secrets_are_kept_sealed_and_never_read_back() {
        let key = DeploymentKey::from_secret("a deployment secret");
        let asked: TaskPushNotificationConfig = serde_json::from_value(serde_json::json!({
            "taskId": "t-1", "url": "https://hooks.example.com/a2a", "token": "tok-123",
            "authentication": {"scheme": "Bearer", "credentials": "cred-456"}
        }))
        .unwrap();
        let kept = from_a2a(&asked, "c-1".into(), &key);
        let stored = serde_json::to_string(&kept).unwrap();
        assert!(
            !stored.contains("tok-123") && !stored.contains("cred-456"),
            "{stored}"
        );
        assert_eq!(key.open(kept.token.as_deref().unwrap()).unwrap(), "tok-123");
        let credentials = kept.authentication.as_ref().unwrap().credentials.as_deref();
        assert_eq!(key.open(credentials.unwrap()).unwrap(), "cred-456");
        let read_back = to_a2a("t-1", &kept);
        assert_eq!(read_back.token, None);
        assert_eq!(read_back.authentication.unwrap().credentials, None);
        assert_eq!(read_back.url, "https://hooks.example.com/a2a");
    }

    #[test]
    fn other_schemes_are_refused() {
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/x",
            "gopher://x",
            "not a url",
        ] {
            assert!(check(url, true).is_err(), "{url}");
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
            "http://localhost./hook",
            "http://localhost.localdomain/hook",
            "http://[64:ff9b::7f00:1]/hook",
            "http://[::127.0.0.1]/hook",
        ] {
            let refused = check(url, false).unwrap_err();
            assert!(
                refused.message.contains("allow_private_push_urls"),
                "{url}: {refused:?}"
            );
            assert!(check(url, true).is_ok(), "{url}");
        }
    }
}
